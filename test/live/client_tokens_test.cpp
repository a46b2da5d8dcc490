// Acceptance: every completion-token style of async_lock / async_unlock.
#include "client_fixture.hpp"
#include "io_helpers.hpp"

#include <boost/asio/deferred.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <thread>

using namespace redlock;
using namespace redlock::test;

TEST_CASE_METHOD(masters_rig<3>, "client: completion tokens: default (deferred) co_awaited",
                 "[live][client]")
{
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            lock l = co_await c.async_lock("tok-default");
            CHECK(l.held());
            CHECK(
                co_await eventually([&] { return on_every_master(m, "tok-default", l.token()); }));
            co_await c.async_unlock(l);
            CHECK(co_await settled_keys(m) == 0);

            // try_lock and extend with the default token as well.
            std::optional<lock> t = co_await c.async_try_lock("tok-default");
            REQUIRE(t.has_value());
            lock e = co_await c.async_extend(*t, 20000ms);
            CHECK(e.remaining() > 15s);
            co_await c.async_unlock(e);

            // The error of a default-token operation is thrown as system_error.
            bool threw = false;
            try
            {
                co_await c.async_unlock(lock{});
            }
            catch (const boost::system::system_error& ex)
            {
                threw = true;
                CHECK(ex.code() == error::invalid_argument);
            }
            CHECK(threw);
        }(),
        10s);
}

TEST_CASE_METHOD(masters_rig<3>, "client: completion tokens: use_awaitable", "[live][client]")
{
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            lock l = co_await c.async_lock("tok-awaitable", asio::use_awaitable);
            CHECK(l.held());
            CHECK(co_await eventually(
                [&] { return on_every_master(m, "tok-awaitable", l.token()); }));
            co_await c.async_unlock(l, asio::use_awaitable);
            CHECK(co_await settled_keys(m) == 0);
        }(),
        10s);
}

TEST_CASE_METHOD(masters_rig<3>, "client: completion tokens: plain callback", "[live][client]")
{
    bool locked = false;
    bool unlocked = false;
    bool initiating = true;
    error_code lock_ec = error::server_error;
    error_code unlock_ec = error::server_error;
    lock held;
    c.async_lock("tok-callback", [&](error_code ec, lock l) {
        CHECK_FALSE(initiating);
        lock_ec = ec;
        held = l;
        locked = true;
        c.async_unlock(l, [&](error_code uec) {
            unlock_ec = uec;
            unlocked = true;
        });
    });
    initiating = false;

    run_until(
        io, [&] { return unlocked; }, 10s);
    REQUIRE(locked);
    REQUIRE(unlocked);
    CHECK_FALSE(lock_ec);
    CHECK(held.token().size() == 40);
    CHECK_FALSE(unlock_ec);
    CHECK(settled_keys_sync(io, m) == 0);
}

TEST_CASE("client: completion tokens: use_future with the io_context on another thread",
          "[live][client]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread runner([&] { io.run(); });
    struct joiner
    {
        asio::io_context& io;
        std::thread& t;
        ~joiner()
        {
            io.stop();
            t.join();
        }
    } join_at_exit{io, runner};

    client c(io.get_executor(), config_for(m));

    std::future<lock> f = c.async_lock("tok-future", asio::use_future);
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    lock l = f.get();
    CHECK(l.held());
    for (std::size_t i = 0; i < m.size(); ++i)
        if (l.masters()[i].status == redlock::master_status::granted)
            CHECK(get_on(m, i, "tok-future") == std::string(l.token()));

    std::future<void> u = c.async_unlock(l, asio::use_future);
    REQUIRE(u.wait_for(10s) == std::future_status::ready);
    CHECK_NOTHROW(u.get());
    CHECK(settled_keys_sync(m) == 0);

    // An error is delivered as an exception from get().
    std::future<void> bad = c.async_unlock(lock{}, asio::use_future);
    REQUIRE(bad.wait_for(10s) == std::future_status::ready);
    try
    {
        bad.get();
        FAIL("unlock of a default lock succeeded");
    }
    catch (const boost::system::system_error& ex)
    {
        CHECK(ex.code() == error::invalid_argument);
    }
}

TEST_CASE_METHOD(
    masters_rig<3>,
    "client: completion tokens: the default token composed by hand gives (exception_ptr, lock)",
    "[live][client]")
{
    run_bounded(io, require_connected(c), 5s);

    // Success: a null exception_ptr and the lock.
    bool done = false;
    std::exception_ptr ep;
    lock got;
    c.async_lock("tok-default")([&](std::exception_ptr e, lock l) {
        ep = e;
        got = std::move(l);
        done = true;
    });
    REQUIRE(run_until(
        io, [&] { return done; }, 10s));
    CHECK_FALSE(ep);
    CHECK(got.held());

    // Failure: the exception is an operation_error with the code and the masters' outcomes.
    done = false;
    c.async_lock("tok-default")([&](std::exception_ptr e, lock) {
        ep = e;
        done = true;
    });
    REQUIRE(run_until(
        io, [&] { return done; }, 10s));
    REQUIRE(ep);
    try
    {
        std::rethrow_exception(ep);
    }
    catch (const operation_error& e)
    {
        CHECK(e.code() == error::contended);
        CHECK(e.masters().size() == 3);
    }
    c.close();
    io.restart();
    io.run_for(200ms);
}

TEST_CASE_METHOD(masters_rig<3>, "client: completion tokens: asio::deferred composed",
                 "[live][client]")
{
    SECTION("co_await a stored deferred operation")
    {
        run_bounded(
            io,
            [&]() -> asio::awaitable<void> {
                auto op = c.async_lock("tok-deferred", asio::deferred);
                // Nothing is sent before the operation is launched.
                co_await sleep_for(20ms);
                CHECK(co_await settled_keys(m) == 0);
                lock l = co_await std::move(op);
                CHECK(l.held());
                auto unlock_op = c.async_unlock(l, asio::deferred);
                co_await std::move(unlock_op);
                CHECK(co_await settled_keys(m) == 0);
            }(),
            10s);
    }
    SECTION("launch a deferred operation with a handler")
    {
        bool done = false;
        error_code lock_ec = error::server_error;
        error_code unlock_ec = error::server_error;
        auto op = c.async_lock("tok-deferred", asio::deferred);
        std::move(op)([&](error_code ec, lock l) {
            lock_ec = ec;
            c.async_unlock(l, asio::deferred)([&](error_code uec) {
                unlock_ec = uec;
                done = true;
            });
        });
        REQUIRE(run_until(
            io, [&] { return done; }, 10s));
        CHECK_FALSE(lock_ec);
        CHECK_FALSE(unlock_ec);
        CHECK(settled_keys_sync(io, m) == 0);
    }
    SECTION("deferred composition: lock, then unlock, as one operation")
    {
        auto both =
            c.async_lock("tok-deferred", asio::deferred)(asio::deferred([&](error_code ec, lock l) {
                return asio::deferred.when(!ec)
                    .then(c.async_unlock(l, asio::deferred))
                    .otherwise(asio::deferred.values(ec));
            }));
        bool done = false;
        error_code result = error::server_error;
        std::move(both)([&](error_code ec) {
            result = ec;
            done = true;
        });
        REQUIRE(run_until(
            io, [&] { return done; }, 10s));
        CHECK_FALSE(result);
        CHECK(settled_keys_sync(io, m) == 0);
    }
}
