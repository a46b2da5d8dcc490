// Acceptance: interoperation with plain SET NX users of the same keys; outcomes and errors.
#include "client_fixture.hpp"

#include <boost/system/system_error.hpp>

using namespace redlock;
using namespace redlock::test;

namespace {

/// Unlocking `l` with `c` fails with `expected` (lock_lost, or lock_expired for a lock whose
/// validity had ended), and every master still holds `resource` with `token` (compare-and-delete
/// left the holder's key alone).
asio::awaitable<void> unlock_is_lost_keeping(client& c, const lock& l, const local_masters& m,
                                             std::string resource, std::string token,
                                             error_code expected = error::lock_lost)
{
    auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
    CHECK(uec == expected);
    for (std::size_t i = 0; i < m.size(); ++i)
        CHECK(get_on(m, i, resource) == token);
}

}  // namespace

TEST_CASE_METHOD(masters_rig<5>, "client: interoperates with raw SET NX PX on the same key",
                 "[live][client]")
{
    auto opts = retrying(2, 10ms, 10ms);

    run(
        [&]() -> asio::awaitable<void> {
            // Somebody else's key, set with the spec's own command, blocks us...
            for (std::size_t i = 0; i < m.size(); ++i)
                REQUIRE(m.command(i, {"SET", "interop", "othervalue", "NX", "PX", "10000"}) ==
                        "+OK\r\n");
            {
                const lock l = co_await refused_as_contended(c, "interop", opts);
                INFO(l.describe());
                CHECK_FALSE(l.held());
                CHECK(l.token().empty());
            }
            // ...and is left alone.
            for (std::size_t i = 0; i < m.size(); ++i)
                CHECK(get_on(m, i, "interop") == std::string("othervalue"));
            for (std::size_t i = 0; i < m.size(); ++i)
                REQUIRE(m.command(i, {"DEL", "interop"}) == ":1\r\n");

            // Our key is the resource name itself, holding our token, and blocks a plain SET NX.
            lock l = co_await acquired(c, "interop", opts);
            CHECK(l.key() == "interop");
            REQUIRE(co_await eventually([&] { return on_every_master(m, "interop", l.token()); }));
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                CHECK(get_on(m, i, "interop") == std::string(l.token()));
                const std::string raw = m.command(i, {"SET", "interop", "x", "NX"});
                CHECK((raw == "$-1\r\n" || raw == "_\r\n"));
                const std::string pttl = m.command(i, {"PTTL", "interop"});
                REQUIRE(pttl[0] == ':');
                CHECK(std::stol(pttl.substr(1)) > 0);
                CHECK(std::stol(pttl.substr(1)) <= 10000);
            }
            co_await unlock_and_expect_no_keys(c, l, m);
        },
        10s);
}

TEST_CASE("client: key_prefix is prepended to the resource", "[live][client]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    auto cfg = config_for(m);
    cfg.key_prefix = "app:";
    client c(io.get_executor(), cfg);

    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "res");
            CHECK(l.resource() == "res");
            CHECK(l.key() == "app:res");
            // On the masters that granted (the last one may still be on its way).
            for (std::size_t i = 0; i < m.size(); ++i)
                if (l.masters()[i].status == master_status::granted)
                    CHECK(keys_on(m, i) == std::vector<std::string>{"app:res"});
            CHECK(count_status(l, master_status::granted) >= 2);
            co_await unlock_and_expect_no_keys(c, l, m);
        }(),
        10s);
}

TEST_CASE_METHOD(rivals_rig<3>, "client: outcomes and errors of lock, try_lock, unlock and extend",
                 "[live][client]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // try_lock contention is an outcome, not an error.
            lock held = co_await acquired(theirs, "errors");
            REQUIRE(
                co_await eventually([&] { return on_every_master(m, "errors", held.token()); }));
            {
                auto [ec, l] = co_await ours.async_try_lock("errors", tuple_awaitable);
                CHECK(ec == error_code{});
                CHECK_FALSE(l.has_value());
            }
            // Unlock with a lock of the same key but another token: lock_lost, their key stays
            // (compare-and-delete).
            {
                const auto forged = ours.lock_from_parts("errors", std::string(40, 'f'), 10s);
                co_await unlock_is_lost_keeping(ours, forged, m, "errors",
                                                std::string(held.token()));
            }
            {
                auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
                CHECK_FALSE(uec);
            }
            CHECK(co_await settled_keys(m) == 0);

            // Unlock of an expired lock: lock_expired.
            {
                auto o = lasting(30ms);
                lock l = co_await acquired(ours, "errors", o);
                co_await sleep_for(60ms);
                auto [uec] = co_await ours.async_unlock(l, tuple_awaitable);
                CHECK(uec == error::lock_expired);
            }
            // Unlock of a lock that expired and was taken by somebody else: lock_expired, and their
            // key stays.
            {
                auto o = lasting(30ms);
                lock l = co_await acquired(ours, "errors", o);
                co_await sleep_for(60ms);
                lock their = co_await acquired_everywhere(theirs, m, "errors");
                co_await unlock_is_lost_keeping(ours, l, m, "errors", std::string(their.token()),
                                                error::lock_expired);
                auto [uec2] = co_await theirs.async_unlock(their, tuple_awaitable);
                CHECK_FALSE(uec2);
            }
            // A default-constructed lock: invalid_argument, for unlock and extend.
            {
                auto [uec] = co_await ours.async_unlock(lock{}, tuple_awaitable);
                CHECK(uec == error::invalid_argument);
                auto [eec, el] = co_await ours.async_extend(lock{}, 1000ms, tuple_awaitable);
                CHECK(eec == error::invalid_argument);
            }
            // Bad per-call options: invalid_option (validate(lock_options)); bad arguments:
            // invalid_argument.
            {
                auto bad = lasting(0ms);
                auto [ec, l] = co_await ours.async_lock("errors", bad, tuple_awaitable);
                CHECK(ec == error::invalid_option);
                auto [tec, tl] = co_await ours.async_try_lock("errors", bad, tuple_awaitable);
                CHECK(tec == error::invalid_option);
                CHECK_FALSE(tl.has_value());

                lock_options no_attempts;
                no_attempts.max_attempts = 0;
                auto [aec, al] = co_await ours.async_lock("errors", no_attempts, tuple_awaitable);
                CHECK(aec == error::invalid_option);

                auto [rec, rl] = co_await ours.async_lock("", tuple_awaitable);
                CHECK(rec == error::invalid_argument);
                // A key over max_key_size, alone or in a multi-resource lock.
                const std::string huge(redlock::max_key_size + 1, std::string::value_type{'k'});
                auto [kec, kl] = co_await ours.async_lock(huge, tuple_awaitable);
                CHECK(kec == error::invalid_argument);
                std::vector<std::string> with_huge{"a",
                                                   huge};  // built outside the co_await (GCC 12)
                auto [mec, ml] = co_await ours.async_lock_all(with_huge, ours.default_options(),
                                                              tuple_awaitable);
                CHECK(mec == error::invalid_argument);
                // A TTL shorter than the (derived) attempt timeout.
                auto tiny = lasting(3ms);
                auto [tyec, tyl] = co_await ours.async_lock("errors", tiny, tuple_awaitable);
                CHECK(tyec == error::invalid_option);
            }
            // A zero extension: invalid_argument, and the lock stays held.
            lock good = co_await acquired(ours, "errors");
            auto [eec, el] = co_await ours.async_extend(good, 0ms, tuple_awaitable);
            CHECK(eec == error::invalid_argument);
            CHECK(good.held());
            co_await unlock_and_expect_no_keys(ours, good, m);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: immediate errors never complete inside the initiating function",
                 "[live][client]")
{
    int completed = 0;
    bool initiating = true;
    c.async_unlock(lock{}, [&](error_code ec) {
        CHECK_FALSE(initiating);
        CHECK(ec == error::invalid_argument);
        ++completed;
    });
    auto bad = lasting(0ms);
    c.async_lock("x", bad, [&](error_code ec, lock) {
        CHECK_FALSE(initiating);
        CHECK(ec == error::invalid_option);
        ++completed;
    });
    c.async_try_lock("", [&](error_code ec, std::optional<lock>) {
        CHECK_FALSE(initiating);
        CHECK(ec == error::invalid_argument);
        ++completed;
    });
    initiating = false;
    const auto deadline = steady::now() + 5s;
    while (completed < 3 && steady::now() < deadline)
        io.run_one_until(deadline);
    CHECK(completed == 3);

    // Also when initiated from a completion handler of the client, which runs on its strand.
    bool nested_initiating = false;
    c.async_lock("nested", [&](error_code ec, lock l) {
        CHECK_FALSE(ec);
        nested_initiating = true;
        c.async_unlock(lock{}, [&](error_code uec) {
            CHECK_FALSE(nested_initiating);
            CHECK(uec == error::invalid_argument);
            ++completed;
        });
        c.async_unlock(l, [&](error_code uec) {
            CHECK_FALSE(nested_initiating);
            CHECK_FALSE(uec);
            ++completed;
        });
        nested_initiating = false;
    });
    while (completed < 5 && steady::now() < deadline)
        io.run_one_until(deadline);
    CHECK(completed == 5);
    CHECK(settled_keys_sync(io, m) == 0);
}

TEST_CASE("client: bad configuration throws system_error at construction", "[live][client]")
{
    asio::io_context io;
    auto code_of = [&](const client_config& cfg) -> error_code {
        try
        {
            client c(io.get_executor(), cfg);
        }
        catch (const boost::system::system_error& e)
        {
            return e.code();
        }
        return {};
    };

    client_config bad_uri;
    bad_uri.masters = {"redis://127.0.0.1:6379", "http://127.0.0.1:6380", "redis://127.0.0.1:6381"};
    CHECK(code_of(bad_uri) == error::invalid_uri);

    client_config bad_port;
    bad_port.masters = {"redis://127.0.0.1:99999"};
    CHECK(code_of(bad_port) == error::invalid_uri);

    client_config no_masters;
    CHECK(code_of(no_masters) == error::invalid_option);

    client_config bad_ttl;
    bad_ttl.masters = {"redis://127.0.0.1:6379"};
    bad_ttl.defaults.ttl = 0ms;
    CHECK(code_of(bad_ttl) == error::invalid_option);

    client_config bad_connection;
    bad_connection.masters = {"redis://127.0.0.1:6379"};
    bad_connection.connection.client_name = "has space";
    CHECK(code_of(bad_connection) == error::invalid_option);

    // The message names the problem but never the password.
    client_config secret;
    secret.masters = {"redis://user:s3cret@127.0.0.1:6379/notadb"};
    try
    {
        client c(io.get_executor(), secret);
        FAIL("a bad db was accepted");
    }
    catch (const boost::system::system_error& e)
    {
        CHECK(e.code() == error::invalid_uri);
        CHECK(std::string(e.what()).find("s3cret") == std::string::npos);
    }
}
