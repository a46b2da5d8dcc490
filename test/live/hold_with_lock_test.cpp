// Acceptance: client::async_with_lock — every completion style, the work's exception, loss
// cancelling the work (keys stolen, a majority paused), per-operation cancellation, and the
// acquisition's own errors. After every completion the keys are gone from every master: the
// release is awaited before the operation completes.
#include "hold_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>

#include <boost/asio/post.hpp>

#include <future>
#include <stdexcept>
#include <thread>
#include <type_traits>

// GCC 12's false -Wmismatched-new-delete on inlined Asio coroutine frames (see hold_test.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace redlock::test {

namespace {

/// Work that checks it holds its key on every master, then returns `value`.
auto checking_work(const local_masters& m, int value, bool& ran)
{
    return [&m, value, &ran](lock l) -> asio::awaitable<int> {
        ran = true;
        CHECK(l.held());
        CHECK(masters_holding(m, l.key(), l.token()) >= 3);
        co_return value;
    };
}

/// What a work that waits for a long time saw: when it started, when it lost its lock (if it
/// did that itself), when its wait ended, how.
struct waiting_work_log
{
    steady::time_point started{};
    steady::time_point lost{};
    steady::time_point ended{};
    error_code ec;
    lock l;
};

/// How a work takes its own lock from a majority (masters 0-2) behind the client's back.
enum class majority_loss
{
    keys_deleted,    ///< DEL of the key there
    masters_paused,  ///< SIGSTOP (the caller resumes them)
};

/// The body of a work that loses its lock `l` as `how` says, then waits 30 s, which only the
/// work's cancellation cuts short; `log` records its start, the loss, and when and how the
/// wait ended. The cancellation comes as an exception (co_await's natural style), which this
/// lets out when `rethrow`, or catches.
asio::awaitable<void> lose_then_wait(local_masters& m, majority_loss how, lock l,
                                     waiting_work_log& log, bool rethrow)
{
    log.started = steady::now();
    log.l = l;
    for (std::size_t i = 0; i < 3; ++i)
    {
        if (how == majority_loss::keys_deleted)
            del_on(m, i, l.key());
        else
            m.pause(i);
    }
    log.lost = steady::now();
    asio::steady_timer t(co_await asio::this_coro::executor, 30s);
    try
    {
        co_await t.async_wait(asio::use_awaitable);
    }
    catch (const boost::system::system_error& e)
    {
        log.ended = steady::now();
        log.ec = e.code();
        if (rethrow)
            throw;
    }
}

/// An async_with_lock that a cancellation signal (`sig`) can cut: what it completed with, once
/// `done`.
struct cancellable_with_lock
{
    asio::cancellation_signal sig;
    std::exception_ptr ep;
    error_code ec;
    bool done = false;

    template <class Work>
    void start(client& c, std::string resource, const lock_options& o, Work work)
    {
        c.async_with_lock(std::move(resource), o, {}, std::move(work),
                          asio::bind_cancellation_slot(
                              sig.slot(), [this](std::exception_ptr e, error_code r, int) {
                                  ep = e;
                                  ec = r;
                                  done = true;
                              }));
    }
};

}  // namespace

TEST_CASE_METHOD(masters_rig<5>, "with_lock: every completion style delivers the work's result",
                 "[live][hold]")
{
    const auto opts = short_lock();

    run(
        [&]() -> asio::awaitable<void> {
            bool ran = false;

            // co_await with the default token (use_awaitable): a tuple of (error_code, R); an
            // exception of the work would be rethrown.
            {
                auto r =
                    co_await c.async_with_lock("wl:styles", opts, {}, checking_work(m, 1, ran));
                static_assert(std::is_same_v<decltype(r), std::tuple<error_code, int>>);
                CHECK_FALSE(std::get<0>(r));
                CHECK(std::get<1>(r) == 1);
                CHECK(ran);
                CHECK(dbsize_all(m) == 0);
            }
            // use_awaitable.
            {
                ran = false;
                auto [ec, v] = co_await c.async_with_lock(
                    "wl:styles", opts, {}, checking_work(m, 2, ran), asio::use_awaitable);
                CHECK_FALSE(ec);
                CHECK(v == 2);
                CHECK(ran);
                CHECK(dbsize_all(m) == 0);
            }
            // A plain callback: (exception_ptr, error_code, R).
            {
                ran = false;
                bool done = false;
                c.async_with_lock("wl:styles", opts, {}, checking_work(m, 3, ran),
                                  [&](std::exception_ptr e, error_code ec, int v) {
                                      CHECK_FALSE(e);
                                      CHECK_FALSE(ec);
                                      CHECK(v == 3);
                                      done = true;
                                  });
                CHECK(co_await eventually([&] { return done; }, 5s));
                CHECK(ran);
                CHECK(dbsize_all(m) == 0);
            }
            // use_future: future<tuple<error_code, R>>; an exception of the work would be set on it.
            {
                ran = false;
                std::future<std::tuple<error_code, int>> f = c.async_with_lock(
                    "wl:styles", opts, {}, checking_work(m, 4, ran), asio::use_future);
                CHECK(co_await eventually(
                    [&] { return f.wait_for(0s) == std::future_status::ready; }, 5s));
                auto [ec, v] = f.get();
                CHECK_FALSE(ec);
                CHECK(v == 4);
                CHECK(ran);
                CHECK(dbsize_all(m) == 0);
            }
            // asio::deferred: an operation launched later, here with use_awaitable. (On Boost 1.81 a
            // deferred operation of this signature cannot be co_awaited directly; see client.hpp.)
            {
                ran = false;
                auto op = c.async_with_lock("wl:styles", opts, {}, checking_work(m, 6, ran),
                                            asio::deferred);
                CHECK_FALSE(ran);
                auto [ec, v] = co_await std::move(op)(asio::use_awaitable);
                CHECK_FALSE(ec);
                CHECK(v == 6);
                CHECK(ran);
                CHECK(dbsize_all(m) == 0);
            }
            // A work returning awaitable<void>: co_await yields the error_code alone.
            {
                ran = false;
                auto ec = co_await c.async_with_lock("wl:styles", opts, {},
                                                     [&](lock l) -> asio::awaitable<void> {
                                                         ran = l.held();
                                                         co_return;
                                                     });
                static_assert(std::is_same_v<decltype(ec), error_code>);
                CHECK_FALSE(ec);
                CHECK(ran);
            }
            // The client's default options.
            {
                ran = false;
                auto [ec, v] = co_await c.async_with_lock("wl:styles", checking_work(m, 5, ran));
                CHECK_FALSE(ec);
                CHECK(v == 5);
                CHECK(dbsize_all(m) == 0);
            }
        },
        20s);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "with_lock: an exception thrown by the work is propagated and the keys are released",
    "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto throwing = [&](lock l) -> asio::awaitable<int> {
                CHECK(masters_holding(m, l.key(), l.token()) >= 3);
                throw std::runtime_error("work failed");
                co_return 0;
            };

            bool caught = false;
            try
            {
                (void)co_await c.async_with_lock("wl:throw", short_lock(), {}, throwing);
            }
            catch (const std::runtime_error& e)
            {
                caught = std::string(e.what()) == "work failed";
            }
            CHECK(caught);
            CHECK(dbsize_all(m) == 0);

            // A callback sees it as its exception_ptr.
            std::exception_ptr seen;
            bool done = false;
            c.async_with_lock("wl:throw", short_lock(), {}, throwing,
                              [&](std::exception_ptr e, error_code, int) {
                                  seen = e;
                                  done = true;
                              });
            CHECK(co_await eventually([&] { return done; }, 5s));
            CHECK(seen);
            CHECK(dbsize_all(m) == 0);

            // use_future: the exception is set on the future, once the keys were released.
            std::future<std::tuple<error_code, int>> f =
                c.async_with_lock("wl:throw", short_lock(), {}, throwing, asio::use_future);
            CHECK(co_await eventually([&] { return f.wait_for(0s) == std::future_status::ready; },
                                      5s));
            CHECK(dbsize_all(m) == 0);
            bool thrown = false;
            try
            {
                (void)f.get();
            }
            catch (const std::runtime_error& e)
            {
                thrown = std::string(e.what()) == "work failed";
            }
            CHECK(thrown);
        },
        20s);
}

TEST_CASE("with_lock: async_with_lock(resource, work) takes the client's default lock options",
          "[live][hold]")
{
    // Defaults that differ from lock_options{}: an overload that ignored them would give a
    // 10 s lock, one attempt fewer would not be noticed, but the TTL is.
    auto defaults = lasting(7777ms);
    live_client live({.count = 3}, defaults);
    auto& c = live.c;
    live.run(
        [&]() -> asio::awaitable<void> {
            const std::string resource = "wl:defaults";
            auto work = [&](lock l) -> asio::awaitable<std::int64_t> { co_return l.ttl().count(); };
            auto [ec, ttl] = co_await c.async_with_lock(resource, std::move(work));
            CHECK_FALSE(ec);
            CHECK(ttl == 7777);
            // The keys were set with it: their PTTL is at most 7777 ms (10,000 with lock_options{}).
            auto probe = [&](lock l) -> asio::awaitable<std::int64_t> {
                co_return std::stoll(live.m.command(0, {"PTTL", std::string(l.key())}).substr(1));
            };
            auto [pec, pttl] = co_await c.async_with_lock(resource, std::move(probe));
            CHECK_FALSE(pec);
            CHECK(pttl > 0);
            CHECK(pttl <= 7777);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "with_lock: keys stolen on a majority cancel the work within one extension "
                 "interval with lock_lost",
                 "[live][hold]")
{
    // Whether the work lets the cancellation's exception out (the natural co_await style) or
    // catches it and returns.
    const bool rethrow = GENERATE(true, false);
    CAPTURE(rethrow);

    run(
        [&]() -> asio::awaitable<void> {
            waiting_work_log log;
            auto work = [&](lock l) -> asio::awaitable<int> {
                co_await lose_then_wait(m, majority_loss::keys_deleted, l, log, rethrow);
                co_return 7;
            };

            std::exception_ptr ep;
            error_code ec;
            int v = -1;
            bool done = false;
            c.async_with_lock("wl:steal", short_lock(), {}, work,
                              [&](std::exception_ptr e, error_code r, int value) {
                                  ep = e;
                                  ec = r;
                                  v = value;
                                  done = true;
                              });
            REQUIRE(co_await eventually([&] { return done; }, 5s));
            const auto completed = steady::now();
            INFO("work cancelled "
                 << ms(log.ended - log.lost) << " ms after DEL on 3 of 5 (interval "
                 << ms(short_lock_interval) << " ms), completed " << ms(completed - log.ended)
                 << " ms later with " << ec.message());
            CHECK_FALSE(ep);
            CHECK(ec == error::lock_lost);
            CHECK(log.ec == asio::error::operation_aborted);
            CHECK(log.ended - log.lost <= short_lock_interval + 50ms);
            CHECK(log.ended < log.l.valid_until());
            if (!rethrow)
                CHECK(v == 7);
            CHECK(dbsize_all(m) == 0);
            WARN("with_lock steal: work cancelled "
                 << ms(log.ended - log.lost) << " ms after the DEL, operation completed "
                 << ms(completed - log.ended) << " ms later: " << ec.message());
        },
        20s);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "with_lock: a majority paused cancels the work by the end of validity with lock_lost",
    "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            waiting_work_log log;
            auto work = [&](lock l) -> asio::awaitable<void> {
                co_await lose_then_wait(m, majority_loss::masters_paused, l, log, false);
            };
            const auto ec = co_await c.async_with_lock("wl:pause", short_lock(), {}, work);
            const auto completed = steady::now();
            for (std::size_t i = 0; i < 3; ++i)
                m.resume(i);
            INFO("work cancelled "
                 << ms(log.ended - log.lost) << " ms after the pause, "
                 << ms(log.l.valid_until() - log.ended) << " ms before validity end; completed "
                 << ms(completed - log.ended) << " ms later with " << ec.message());
            CHECK(ec == error::lock_lost);
            CHECK(log.ec == asio::error::operation_aborted);
            CHECK(log.ended <= log.l.valid_until() + 25ms);
            CHECK(log.ended >= log.l.valid_until() - 333ms);
            // The release waits for the two live masters and gives up on the paused ones at its
            // deadline (release_timeout, 200 ms).
            CHECK(completed - log.ended <= 300ms);
            WARN("with_lock pause: work cancelled "
                 << ms(log.ended - log.lost) << " ms after SIGSTOP of 3/5, "
                 << ms(log.l.valid_until() - log.ended) << " ms before validity end; completed "
                 << ms(completed - log.ended) << " ms later");
            CHECK(co_await no_keys_within(m, 2s));
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "with_lock: CPU-bound work that yields between steps is stopped by the loss",
                 "[live][hold]")
{

    run(
        [&]() -> asio::awaitable<void> {
            steady::time_point stolen{}, stopped{};
            std::size_t steps = 0;
            auto work = [&](lock l) -> asio::awaitable<void> {
                for (std::size_t i = 0; i < 3; ++i)
                    del_on(m, i, l.key());
                stolen = steady::now();
                for (;;)
                {
                    const auto until = steady::now() + 1ms;  // one step: 1 ms of CPU
                    while (steady::now() < until)
                    {}
                    ++steps;
                    stopped = steady::now();
                    // Lets the extension's replies and the loss signal in; throws operation_aborted
                    // once the lock is lost.
                    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
                }
            };
            const auto ec = co_await c.async_with_lock("wl:cpu", short_lock(), {}, work);
            INFO(steps << " steps; stopped " << ms(stopped - stolen)
                       << " ms after the keys were deleted");
            CHECK(ec == error::lock_lost);
            CHECK(stopped - stolen <= short_lock_interval + 50ms);
            CHECK(steps > 100);
            CHECK(dbsize_all(m) == 0);
        },
        20s);
}

TEST_CASE(
    "with_lock: a work that computes does not stop the client's extensions on a second thread",
    "[live][hold]")
{
    // The work runs on a strand of its own: with two threads, the client keeps extending its
    // other locks while a step of the work computes (were the work on the client's strand, the
    // other lock would expire during the step).
    local_masters m({.count = 5});
    asio::io_context io;
    client c(io.get_executor(), config_for(m));
    struct
    {
        bool connected = false;
        error_code lock_ec, with_ec, status_after;
        std::uint32_t extensions_before = 0, extensions_after = 0;
        bool held_after = false;
        steady::duration computed{};
    } out;
    std::exception_ptr failure;
    bool finished = false;

    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            auto [cec, n] = co_await c.async_wait_connected(tuple_awaitable);
            out.connected = !cec && n == m.size();
            // 500 ms: an extension every 327 ms.
            auto [ec, l] = co_await c.async_lock("wl:other", short_lock(500ms), tuple_awaitable);
            out.lock_ec = ec;
            if (ec)
                co_return;
            lock_holder other(c, l, co_await asio::this_coro::executor);
            out.extensions_before = other.extensions();
            out.with_ec = co_await c.async_with_lock("wl:compute", short_lock(), {},
                                                     [&](lock) -> asio::awaitable<void> {
                                                         const auto t0 = steady::now();
                                                         while (steady::now() - t0 < 800ms)
                                                         {
                                                             // one long step, no yield
                                                         }
                                                         out.computed = steady::now() - t0;
                                                         co_return;
                                                     });
            out.extensions_after = other.extensions();
            out.held_after = other.held();
            out.status_after = other.status();
            co_await other.async_release(tuple_awaitable);
        },
        [&](std::exception_ptr e) {
            failure = e;
            finished = true;
            io.stop();
        });
    std::thread second([&] { io.run_for(20s); });
    io.run_for(20s);
    io.stop();
    second.join();

    if (failure)
        std::rethrow_exception(failure);
    REQUIRE(finished);
    REQUIRE(out.connected);
    REQUIRE_FALSE(out.lock_ec);
    INFO("the work computed for " << ms(out.computed) << " ms; the other lock: "
                                  << out.extensions_before << " -> " << out.extensions_after
                                  << " extensions, status " << out.status_after.message());
    CHECK_FALSE(out.with_ec);
    CHECK(out.held_after);
    CHECK_FALSE(out.status_after);
    CHECK(out.extensions_after >= out.extensions_before + 2);
    CHECK(dbsize_all(m) == 0);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "with_lock: per-operation cancellation during the work cancels it, releases, operation_aborted",
    "[live][hold]")
{
    REDLOCK_EACH_CANCELLATION_TYPE(type);

    run(
        [&]() -> asio::awaitable<void> {
            waiting_work_log log;
            auto work = [&](lock l) -> asio::awaitable<int> {
                log.started = steady::now();
                log.l = l;
                asio::steady_timer t(co_await asio::this_coro::executor, 5s);
                co_await t.async_wait(asio::use_awaitable);  // throws when cancelled
                log.ended = steady::now();
                co_return 1;
            };

            asio::steady_timer trigger(co_await asio::this_coro::executor);
            steady::time_point emitted{};
            cancellable_with_lock op;
            op.start(c, "wl:cancel", short_lock(), work);
            REQUIRE(co_await eventually([&] { return log.started != steady::time_point{}; }, 2s));
            co_await sleep_for(100ms);
            emitted = steady::now();
            op.sig.emit(type);
            REQUIRE(co_await eventually([&] { return op.done; }, 6s));
            const auto completed = steady::now();
            INFO("completed " << ms(completed - emitted) << " ms after the signal with "
                              << op.ec.message());
            CHECK_FALSE(op.ep);
            CHECK(op.ec == asio::error::operation_aborted);
            CHECK(completed - emitted < 100ms);
            CHECK(dbsize_all(m) == 0);
        },
        20s);
}

TEST_CASE_METHOD(
    rivals_rig<5>,
    "with_lock: cancellation during the acquisition, acquisition errors do not run the work",
    "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto [hec, held] =
                co_await theirs.async_lock("wl:busy", short_lock(5000ms), tuple_awaitable);
            REQUIRE_FALSE(hec);

            bool ran = false;
            auto [ec, v] = co_await ours.async_with_lock("wl:busy", short_lock(), {},
                                                         checking_work(m, 9, ran));
            CHECK(ec == error::contended);
            CHECK(v == 0);  // default-constructed
            CHECK_FALSE(ran);

            // Retrying in backoff delays, then cancelled, with each type of cancellation.
            lock_options patient = short_lock();
            patient.max_attempts = 100;
            patient.retry_delay = 100ms;
            for (const auto type : every_cancellation_type)
            {
                INFO("cancellation type " << static_cast<int>(type));
                cancellable_with_lock op;
                op.start(ours, "wl:busy", patient, checking_work(m, 9, ran));
                co_await sleep_for(250ms);
                op.sig.emit(type);
                REQUIRE(co_await eventually([&] { return op.done; }, 2s));
                CHECK(op.ec == asio::error::operation_aborted);
                CHECK_FALSE(ran);
            }

            auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(dbsize_all(m) == 0);

            // In an attempt (three masters paused, so it waits for them), with each type: aborted
            // at once, and the attempt's keys released once the masters answer.
            lock_options slow = short_lock();
            slow.attempt_timeout = 900ms;
            for (const auto type : every_cancellation_type)
            {
                INFO("cancellation type " << static_cast<int>(type));
                for (std::size_t i = 0; i < 3; ++i)
                    m.pause(i);
                cancellable_with_lock op;
                op.start(ours, "wl:attempt", slow, checking_work(m, 9, ran));
                co_await sleep_for(100ms);
                CHECK_FALSE(op.done);
                op.sig.emit(type);
                for (std::size_t i = 0; i < 3; ++i)
                    m.resume(i);
                REQUIRE(co_await eventually([&] { return op.done; }, 2s));
                CHECK(op.ec == asio::error::operation_aborted);
                CHECK_FALSE(ran);
                CHECK(co_await no_keys_within(m, 2s));
            }
        },
        30s);
}

}  // namespace redlock::test
