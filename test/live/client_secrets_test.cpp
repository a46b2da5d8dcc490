// Secrets stay secret: a lock's token is never in describe(), reason() or the exception of a
// failed operation, and a master's password never in master_states() (docs/guarantees.md,
// rows 133, 197 and 198). Whoever knows a token can release the lock; logs and metrics are
// read by many.
#include "client_fixture.hpp"

#include <boost/asio/use_awaitable.hpp>

#include <string>

using namespace redlock;
using namespace redlock::test;

namespace {

// The message of the operation_error that `op` (an awaitable that throws) throws; empty if none.
template <class Awaitable>
asio::awaitable<std::string> thrown(Awaitable op)
{
    try
    {
        co_await std::move(op);
    }
    catch (const operation_error& e)
    {
        co_return e.what();
    }
    co_return std::string();
}

}  // namespace

TEST_CASE("client: no token in describe(), reason() or a failed operation's exception, no password "
          "in master_states()",
          "[live][client]")
{
    const std::string password = "s3cret-pw-8d2f";
    local_masters m(
        {.count = 3, .extra_config = {"requirepass " + password}, .admin_password = password});
    client_config cfg;
    for (std::size_t i = 0; i < m.size(); ++i)
        cfg.masters.push_back("redis://:" + password + "@127.0.0.1:" + std::to_string(m.port(i)));
    asio::io_context io;
    client c(io.get_executor(), cfg);
    const auto npos = std::string::npos;
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [ec, held] = co_await c.async_lock("secret:a", tuple_awaitable);
            REQUIRE_FALSE(ec);
            REQUIRE_FALSE(held.token().empty());
            CHECK(held.describe().find(held.token()) == npos);
            lock_options fenced;
            fenced.fencing = true;
            auto [fec, fl] = co_await c.async_lock("secret:f", fenced, tuple_awaitable);
            REQUIRE_FALSE(fec);
            CHECK(fl.describe().find(fl.token()) == npos);

            // A failed acquisition of the held resource: neither its own token nor the holder's.
            lock_options once;
            once.max_attempts = 1;
            auto [cec, failed] = co_await c.async_lock("secret:a", once, tuple_awaitable);
            CHECK(cec == error::contended);
            CHECK(failed.describe().find(held.token()) == npos);
            CHECK(failed.reason().find(held.token()) == npos);
            if (!failed.token().empty())
                CHECK(failed.describe().find(failed.token()) == npos);
            const auto lock_what =
                co_await thrown(c.async_lock("secret:a", once, asio::use_awaitable));
            CHECK_FALSE(lock_what.empty());
            CHECK(lock_what.find(held.token()) == npos);

            // Operations on a lock that is gone fail, naming the lock but not its token.
            auto [uec] = co_await c.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(uec);
            const auto extend_what =
                co_await thrown(c.async_extend(held, 5000ms, asio::use_awaitable));
            const auto unlock_what = co_await thrown(c.async_unlock(held, asio::use_awaitable));
            CHECK_FALSE(extend_what.empty());
            CHECK_FALSE(unlock_what.empty());
            CHECK(extend_what.find(held.token()) == npos);
            CHECK(unlock_what.find(held.token()) == npos);
            co_await c.async_unlock(fl, tuple_awaitable);
        }(),
        20s);

    const auto states = c.master_states();
    REQUIRE(states.size() == 3);
    for (const auto& info : states)
    {
        CHECK(info.endpoint.find(password) == npos);
        CHECK(info.endpoint.find("***") != npos);
    }
}
