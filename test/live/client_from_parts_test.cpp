// client::lock_from_parts: a lock rebuilt from (resource, token, ttl) by another client (as a
// restarted process would) extends, checks and releases what the first one took.
#include "client_fixture.hpp"

#include <boost/system/system_error.hpp>

namespace redlock::test {

TEST_CASE(
    "client: a lock rebuilt from its parts is extended, checked and released by another client",
    "[live][client]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    client_config cfg = config_for(m);
    cfg.key_prefix = "app:";
    client first(io.get_executor(), cfg);
    client second(io.get_executor(), cfg);  // the restarted process

    run_connected(
        io, first,
        [&]() -> asio::awaitable<void> {
            co_await require_connected(second);
            auto original = co_await first.async_lock("job", asio::use_awaitable);
            const std::string token(original.token());

            auto rebuilt = second.lock_from_parts("job", token, original.ttl());
            CHECK(rebuilt.key() == "app:job");
            CHECK(rebuilt.token() == token);
            CHECK_FALSE(rebuilt.held());  // the validity is not known until an extension

            auto [cec, seen] = co_await second.async_check(rebuilt, tuple_awaitable);
            REQUIRE_FALSE(cec);
            CHECK(seen.holding == m.size());

            auto [eec, extended] = co_await second.async_extend(rebuilt, 5s, tuple_awaitable);
            REQUIRE_FALSE(eec);
            CHECK(extended.held());
            CHECK(extended.remaining() > 4s);

            // A wrong token touches nothing: lock_lost, the keys stay.
            auto wrong = second.lock_from_parts("job", std::string(40, '0'), 5s);
            auto [wec] = co_await second.async_unlock(wrong, tuple_awaitable);
            CHECK(wec == error::lock_lost);
            CHECK(on_every_master(m, "app:job", token));

            co_await unlock_and_expect_no_keys(second, extended, m);

            // A multi-resource lock, the same way.
            std::vector<std::string> both{"a", "b"};
            auto multi =
                co_await first.async_lock_all(both, first.default_options(), asio::use_awaitable);
            auto rebuilt_multi = second.lock_from_parts(both, multi.token(), multi.ttl());
            CHECK(rebuilt_multi.keys().size() == 2);
            co_await unlock_and_expect_no_keys(second, rebuilt_multi, m);
        },
        10s);
}

TEST_CASE("client: lock_from_parts rejects what cannot be a lock, naming the part",
          "[live][client]")
{
    asio::io_context io;
    client_config cfg;
    cfg.masters = {"redis://127.0.0.1:1"};  // never reached: nothing here talks to a master
    client c(io.get_executor(), cfg);
    auto message_of = [&](auto&& call) -> std::string {
        try
        {
            call();
        }
        catch (const boost::system::system_error& e)
        {
            CHECK(e.code() == error::invalid_argument);
            return e.what();
        }
        return "(accepted)";
    };
    CHECK_THAT(message_of([&] { (void)c.lock_from_parts("", "t", 1s); }),
               Catch::Contains("resource 0 is empty"));
    CHECK_THAT(message_of([&] { (void)c.lock_from_parts("r", "", 1s); }), Catch::Contains("token"));
    CHECK_THAT(message_of([&] { (void)c.lock_from_parts("r", "t", 0s); }), Catch::Contains("TTL"));
    const std::vector<std::string> twice{"a", "a"};
    CHECK_THAT(message_of([&] { (void)c.lock_from_parts(twice, "t", 1s); }),
               Catch::Contains("repeats"));
    CHECK_THAT(
        message_of([&] { (void)c.lock_from_parts(std::string(max_key_size + 1, 'k'), "t", 1s); }),
        Catch::Contains("max_key_size"));
    CHECK(message_of([&] { (void)c.lock_from_parts("r", "t", 1s); }) == "(accepted)");
}

}  // namespace redlock::test
