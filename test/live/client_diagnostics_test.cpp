// Acceptance: what a failed operation says — the exception of exception-based tokens names the
// operation, the resource, the reason and each master's outcome (never a password), and a
// per-operation invalid option says which field and why (issue 11, items 7 and 8).
#include "client_fixture.hpp"
#include "io_helpers.hpp"

#include <boost/asio/deferred.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <string>
#include <thread>

using namespace redlock;
using namespace redlock::test;

namespace {

/// Three masters behind a password; the two last are killed, so every attempt fails with
/// no_quorum and the diagnostics show two masters in error.
struct one_of_three
{
    static constexpr std::string_view password = "diag-Secret-42";

    local_masters m{{.count = 3,
                     .extra_config = {"requirepass " + std::string(password)},
                     .admin_password = std::string(password)}};
    asio::io_context io;
    std::optional<client> c;

    one_of_three()
    {
        client_config cfg;
        for (std::size_t i = 0; i < m.size(); ++i)
            cfg.masters.push_back("redis://:" + std::string(password) +
                                  "@127.0.0.1:" + std::to_string(m.port(i)));
        cfg.defaults.max_attempts = 1;
        m.kill(1);
        m.kill(2);
        c.emplace(io.get_executor(), std::move(cfg));
    }

    /// The what() of a failed operation must name the operation, the resource, the error, and
    /// the masters (0 granted and released, 1 and 2 failed), and never the password.
    static void check_message(const operation_error& e, std::string_view op,
                              std::string_view resource, bool with_masters = true)
    {
        const std::string_view what = e.what();
        INFO(what);
        CHECK(e.code() == error::no_quorum);
        CHECK(contains(what, op));
        CHECK(contains(what, "'" + std::string(resource) + "'"));
        CHECK(contains(what, e.code().message()));
        CHECK_FALSE(contains(what, password));
        REQUIRE(e.resources().size() == 1);
        CHECK(e.resources()[0] == resource);
        if (!with_masters)
            return;
        CHECK(contains(what, "[1] error"));
        CHECK(contains(what, "[2] error"));
        REQUIRE(e.masters().size() == 3);
        CHECK(e.masters()[1].status == master_status::error);
    }
};

}  // namespace

TEST_CASE("client: diagnostics: the default token's exception names the resource and the masters",
          "[live][client][diagnostics]")
{
    one_of_three f;
    run_bounded(
        f.io,
        [&]() -> asio::awaitable<void> {
            bool threw = false;
            try
            {
                co_await f.c->async_lock("diag-default");
            }
            catch (const operation_error& e)
            {
                threw = true;
                one_of_three::check_message(e, "async_lock", "diag-default");
            }
            CHECK(threw);

            // try_lock, whose optional is empty on failure, names its resource but has no
            // per-master outcome to show.
            threw = false;
            try
            {
                co_await f.c->async_try_lock("diag-try");
            }
            catch (const operation_error& e)
            {
                threw = true;
                one_of_three::check_message(e, "async_try_lock", "diag-try", false);
            }
            CHECK(threw);

            // A system_error handler still catches it, with the same code.
            threw = false;
            try
            {
                co_await f.c->async_lock("diag-default", asio::use_awaitable);
            }
            catch (const boost::system::system_error& e)
            {
                threw = true;
                CHECK(e.code() == error::no_quorum);
                CHECK(contains(e.what(), "diag-default"));
            }
            CHECK(threw);
        }(),
        20s);
}

TEST_CASE("client: diagnostics: use_future's exception names the resource and the masters",
          "[live][client][diagnostics]")
{
    one_of_three f;
    std::thread runner([&] {
        auto guard = asio::make_work_guard(f.io);
        f.io.run_for(20s);
    });
    std::future<lock> fut = f.c->async_lock("diag-future", asio::use_future);
    bool threw = false;
    try
    {
        (void)fut.get();
    }
    catch (const operation_error& e)
    {
        threw = true;
        one_of_three::check_message(e, "async_lock", "diag-future");
    }
    CHECK(threw);
    f.c->close();
    f.io.stop();
    runner.join();
}

TEST_CASE("client: diagnostics: with_diagnostics around a callback", "[live][client][diagnostics]")
{
    one_of_three f;
    std::exception_ptr failure;
    bool called = false;
    f.c->async_lock("diag-callback", redlock::with_diagnostics([&](std::exception_ptr e, lock l) {
                        called = true;
                        failure = e;
                        CHECK_FALSE(l.held());
                    }));
    // Until the handler has run: the client's timers keep the io_context busy, so that
    // run_for(20s) would always take the whole 20 s.
    REQUIRE(run_until(
        f.io, [&] { return called; }, 20s));
    REQUIRE(failure);
    try
    {
        std::rethrow_exception(failure);
    }
    catch (const operation_error& e)
    {
        one_of_three::check_message(e, "async_lock", "diag-callback");
    }
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: diagnostics: an invalid per-operation option says which field and why",
                 "[live][client][diagnostics]")
{
    auto bad =
        lasting(std::chrono::milliseconds(3));  // the derived 10 ms attempt timeout is longer
    const std::vector<std::string> repeated{"a", "b", "a"};  // (built outside: GCC 12 coroutines)
    const lock_options defaults;  // (named: a lock_options owns a string, GCC 12 coroutines)

    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            // Handlers that take the error_code find the reason in the lock.
            auto [ec, l] = co_await c.async_lock("diag-option", bad, tuple_awaitable);
            CHECK(ec == error::invalid_option);
            CHECK(contains(l.reason(), "lock_options::attempt_timeout"));
            CHECK(contains(l.describe(), "lock_options::attempt_timeout"));

            // The exception carries it, for async_lock and for async_try_lock (no lock there).
            for (int round = 0; round < 2; ++round)  // (no initializer list: GCC 12 coroutines)
            {
                const bool try_mode = round == 1;
                bool threw = false;
                try
                {
                    if (try_mode)
                        co_await c.async_try_lock("diag-option", bad);
                    else
                        co_await c.async_lock("diag-option", bad);
                }
                catch (const operation_error& e)
                {
                    threw = true;
                    INFO(e.what());
                    CHECK(e.code() == error::invalid_option);
                    CHECK(contains(e.what(), "lock_options::attempt_timeout"));
                    CHECK(contains(e.what(), "must not be longer than lock_options::ttl"));
                }
                CHECK(threw);
            }

            // An extension to an unusable TTL says why, and leaves the lock as it was.
            lock held = co_await acquired(c, "diag-extend");
            auto [xec, same] =
                co_await c.async_extend(held, std::chrono::milliseconds(3), tuple_awaitable);
            CHECK(xec == error::invalid_argument);
            CHECK(contains(same.reason(), "lock_options::attempt_timeout"));
            CHECK(same.token() == held.token());
            auto [rec] = co_await c.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(rec);

            // An invalid resource says which one and why.
            auto [aec, al] = co_await c.async_lock_all(repeated, defaults, tuple_awaitable);
            CHECK(aec == error::invalid_argument);
            CHECK(al.reason() == "resource 2 repeats resource 0");
            auto [eec, el] = co_await c.async_lock("", tuple_awaitable);
            CHECK(eec == error::invalid_argument);
            CHECK(contains(el.reason(), "empty"));
            CHECK(co_await settled_keys(m) == 0);
        }(),
        10s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: diagnostics: an acquisition on a closed client says so in reason()",
                 "[live][client][diagnostics]")
{
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            c.close();
            auto [ec, l] = co_await c.async_lock("diag-closed", tuple_awaitable);
            CHECK(ec == error::connection_closed);
            CHECK(l.reason() == "the client was closed before the operation started");
            CHECK(contains(l.describe(), "closed before the operation started"));
        },
        10s);
}
