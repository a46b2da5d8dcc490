// Acceptance: lock_holder — automatic extension, loss reaching the holder's work through its
// loss slot, the extension limits, release stopping the extension, guards released on
// destruction (also in bulk), and extensions of many locks leaving together.
#include "hold_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <time.h>

#include <algorithm>
#include <limits>

// GCC 12 reports a false -Wmismatched-new-delete when it inlines the deallocation of an Asio
// coroutine frame (awaitable_frame_base's own operator new/delete); which test bodies trigger it
// depends on inlining only.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace redlock::test {

namespace {

/// Acquires `n` locks "<prefix><i>" at once (all started from one handler); fails the test
/// unless every one is acquired.
asio::awaitable<std::vector<lock>> lock_many(client& c, const std::string& prefix, std::size_t n,
                                             lock_options o)
{
    std::vector<lock> locks(n);
    std::size_t done = 0;
    std::size_t failed = 0;
    for (std::size_t i = 0; i < n; ++i)
        c.async_lock(prefix + std::to_string(i), o, [&, i](error_code ec, lock l) {
            ++done;
            failed += ec ? 1 : 0;
            locks[i] = std::move(l);
        });
    const bool all = co_await eventually([&] { return done == n; }, 10s);
    REQUIRE(all);
    REQUIRE(failed == 0);
    co_return locks;
}

/// CPU time consumed by the calling thread.
steady::duration thread_cpu_now()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

/// Waits on a timer of `limit` bound to `h`'s loss slot; returns when it completed and how.
struct loss_wait
{
    error_code ec;
    steady::time_point at;
};

asio::awaitable<loss_wait> wait_for_loss(lock_holder& h, steady::duration limit)
{
    asio::steady_timer work(co_await asio::this_coro::executor, limit);
    auto [ec] =
        co_await work.async_wait(asio::bind_cancellation_slot(h.loss_slot(), tuple_awaitable));
    co_return loss_wait{ec, steady::now()};
}

/// masters_rig<5> whose test body runs with a lock_holder (with `ho`) of our lock on `resource`
/// (acquired with `o`), started on the body's executor once the lock is acquired.
struct holding_rig : masters_rig<5>
{
    template <class Body>
    void run_holding(std::string resource, Body body, lock_options o = short_lock(),
                     hold_options ho = {})
    {
        run(
            [&]() -> asio::awaitable<void> {
                lock l = co_await acquired(c, resource, o);
                lock_holder h(c, l, ho, co_await asio::this_coro::executor);
                co_await body(h);
            },
            20s);
    }
};

}  // namespace

TEST_CASE_METHOD(holding_rig, "hold: auto-extension keeps a 1 s lock held for 10 s", "[live][hold]")
{
    run_holding("hold:keep", [&](lock_holder& h) -> asio::awaitable<void> {
        const auto t0 = steady::now();

        // Every ~50 ms, between awaits: the PTTL of the key on every master, the holder's view.
        std::size_t samples = 0;
        std::size_t fewest_alive = m.size();
        std::int64_t lowest_pttl = std::numeric_limits<std::int64_t>::max();
        steady::duration least_remaining = steady::duration::max();
        while (steady::now() - t0 < 10s)
        {
            co_await sleep_for(50ms);
            std::size_t alive = 0;
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                const auto p = pttl_on(m, i, "hold:keep");
                alive += p > 0 ? 1 : 0;
                lowest_pttl = std::min(lowest_pttl, p);
            }
            fewest_alive = std::min(fewest_alive, alive);
            least_remaining = std::min(least_remaining, h.current().remaining());
            ++samples;
            INFO("sample " << samples << " at " << ms(steady::now() - t0) << " ms: " << alive
                           << " masters with PTTL > 0, status " << h.status().message());
            REQUIRE(alive >= 3);
            REQUIRE(h.held());
        }
        INFO(samples << " samples; fewest masters alive " << fewest_alive << ", lowest PTTL "
                     << lowest_pttl << " ms, least validity left " << ms(least_remaining) << " ms, "
                     << h.extensions() << " extensions (one every " << ms(short_lock_interval)
                     << " ms expected)");
        CHECK(samples >= 150);
        CHECK(fewest_alive == m.size());  // nothing failed: every master kept the key
        CHECK(lowest_pttl > 0);
        CHECK(ms(least_remaining) > 0);
        CHECK_FALSE(h.status());
        // 10 s / 655 ms = 15.3: at least 14 even with a late start.
        CHECK(h.extensions() >= static_cast<std::uint32_t>(10s / short_lock_interval) - 1);
        CHECK(h.extensions() <= static_cast<std::uint32_t>(10s / short_lock_interval) + 1);
        WARN("auto-extension: " << h.extensions() << " extensions in 10 s, lowest PTTL seen "
                                << lowest_pttl << " ms, least validity left " << ms(least_remaining)
                                << " ms");

        auto [rec] = co_await h.async_release(tuple_awaitable);
        CHECK_FALSE(rec);
        CHECK(h.status() == error::released);
        CHECK(dbsize_all(m) == 0);
    });
}

TEST_CASE_METHOD(
    holding_rig,
    "hold: keys stolen on a majority cancel the holder's work within one extension interval",
    "[live][hold]")
{
    run_holding(
        "hold:steal", [&](lock_holder& h) -> asio::awaitable<void> {
            co_await sleep_for(100ms);

            for (std::size_t i = 0; i < 3; ++i)
                del_on(m, i, "hold:steal");
            const auto stolen = steady::now();
            const auto valid_until_then = h.current().valid_until();
            CHECK(h.held());  // nobody has told it yet: the next extension will

            const auto loss = co_await wait_for_loss(h, 30s);
            INFO("work cancelled "
                 << ms(loss.at - stolen) << " ms after the keys were deleted (interval "
                 << ms(short_lock_interval) << " ms), " << ms(valid_until_then - loss.at)
                 << " ms before the end of validity; status " << h.status().message());
            CHECK(loss.ec == asio::error::operation_aborted);
            CHECK(loss.at - stolen <= short_lock_interval + 50ms);
            CHECK(loss.at < valid_until_then);  // known before the deadline: the extension said so
            CHECK(h.status() == error::lock_lost);
            CHECK_FALSE(h.held());
            WARN("steal: work cancelled " << ms(loss.at - stolen) << " ms after DEL on 3/5, "
                                          << ms(valid_until_then - loss.at)
                                          << " ms before validity end");

            // The two masters that still had the key are released; nothing is re-created.
            CHECK(co_await no_keys_within(m, 1s));
            co_await sleep_for(short_lock_interval);
            CHECK(dbsize_all(m) == 0);
            auto [rec] = co_await h.async_release(tuple_awaitable);
            CHECK(rec == error::lock_lost);
        });
}

TEST_CASE_METHOD(holding_rig,
                 "hold: a majority paused cancels the holder's work by the end of validity",
                 "[live][hold]")
{
    run_holding("hold:pause", [&](lock_holder& h) -> asio::awaitable<void> {
        // Wait for one extension, so that the loss is not just the first lock's deadline.
        REQUIRE(co_await eventually([&] { return h.extensions() == 1; }, 2s));
        co_await sleep_for(100ms);

        for (std::size_t i = 0; i < 3; ++i)
            m.pause(i);
        const auto paused = steady::now();
        const auto valid_until_then = h.current().valid_until();
        const auto loss = co_await wait_for_loss(h, 30s);
        const auto status = h.status();
        for (std::size_t i = 0; i < 3; ++i)
            m.resume(i);

        INFO("work cancelled " << ms(loss.at - paused) << " ms after the pause, "
                               << ms(valid_until_then - loss.at)
                               << " ms before the end of validity; status " << status.message());
        CHECK(loss.ec == asio::error::operation_aborted);
        // Retried until no round fits (no_quorum) or the deadline came first (lock_expired).
        CHECK((status == error::no_quorum || status == error::lock_expired));
        // (A few ms of tolerance: a loaded machine runs timers late.)
        CHECK(loss.at <= valid_until_then + 25ms);
        // Not before the extension that found the masters silent was due.
        CHECK(loss.at >= valid_until_then - 333ms);
        CHECK(h.extensions() == 1);
        WARN("pause: work cancelled " << ms(loss.at - paused) << " ms after SIGSTOP of 3/5, "
                                      << ms(valid_until_then - loss.at)
                                      << " ms before validity end (" << status.message() << ")");

        // Once resumed, the masters run what was queued: the extensions, then the release.
        CHECK(co_await no_keys_within(m, 2s));
    });
}

TEST_CASE_METHOD(
    holding_rig,
    "hold: a majority of masters killed: the extension fails without spinning, the holder is told",
    "[live][hold]")
{
    // The killed masters' connections are down (reconnecting), so their part of each extension
    // round fails at once. Retrying such a round at once, from its own callback, recursed until
    // the stack overflowed (fixed in hold.cpp): at most one round per attempt_timeout now.

    run_holding("hold:killed", [&](lock_holder& h) -> asio::awaitable<void> {
        const auto evals_before = calls_all(m, "eval");
        for (std::size_t i = 0; i < 3; ++i)
            m.kill(i);
        const auto killed = steady::now();
        const auto valid_until_then = h.current().valid_until();
        const auto loss = co_await wait_for_loss(h, 5s);
        INFO("lost " << ms(loss.at - killed) << " ms after the kill, "
                     << ms(valid_until_then - loss.at)
                     << " ms before the end of validity: " << h.status().message());
        CHECK(loss.ec == asio::error::operation_aborted);
        CHECK(h.status() == error::no_quorum);
        CHECK(loss.at <= valid_until_then + 25ms);
        // Rounds of 50 ms from the extension time (333 ms before the end) to the last one that
        // fits: about 6 EVALs per live master, not thousands.
        for (std::size_t i = 3; i < 5; ++i)
        {
            const auto evals = calls_on(m, i, "eval") - evals_before[i];
            INFO("master " << i << " received " << evals << " EVALs");
            CHECK(evals >= 1);
            CHECK(evals <= 10);
        }
    });
}

TEST_CASE_METHOD(holding_rig,
                 "hold: max_extensions or max_hold lets the lock lapse and tells the holder",
                 "[live][hold]")
{
    // The limit: two extensions (max_extensions), or a hold of 1.5 s (max_hold). Extensions are
    // due every 655 ms: at ~655 and ~1310 ms; with max_hold, the next one (~1965 ms) would
    // start after max_hold and is not made. Either way the lock lapses at ~1310 + 988 ms.
    const bool max_extensions = GENERATE(true, false);
    CAPTURE(max_extensions);
    hold_options ho;
    if (max_extensions)
        ho.max_extensions = 2;
    else
        ho.max_hold = 1500ms;

    run_holding(
        "hold:limit",
        [&](lock_holder& h) -> asio::awaitable<void> {
            // Acquired (SET), not yet extended: the first extension is due in 655 ms.
            const auto pexpire_before = calls_all(m, "pexpire");
            const auto t0 = steady::now();

            const auto loss = co_await wait_for_loss(h, 30s);
            const auto valid_until = h.current().valid_until();
            INFO("lost after " << ms(loss.at - t0) << " ms, " << ms(loss.at - valid_until)
                               << " ms after the last validity end, " << h.extensions()
                               << " extensions; status " << h.status().message());
            CHECK(loss.ec == asio::error::operation_aborted);
            CHECK(h.status() == error::extension_limit);
            CHECK(h.extensions() == 2);
            CHECK_FALSE(h.held());
            // Kept until its last validity ran out, not dropped early.
            CHECK(loss.at >= valid_until);
            CHECK(loss.at <= valid_until + 25ms);
            CHECK(loss.at - t0 >= 2 * short_lock_interval + 900ms);
            if (!max_extensions)
                CHECK(loss.at - t0 <= 1500ms + 1000ms);  // max_hold + at most one TTL

            CHECK(co_await no_keys_within(m, 500ms));
            const auto pexpire_after = calls_all(m, "pexpire");
            for (std::size_t i = 0; i < m.size(); ++i)
                CHECK(pexpire_after[i] - pexpire_before[i] == 2);
            auto [rec] = co_await h.async_release(tuple_awaitable);
            CHECK(rec == error::lock_lost);
        },
        short_lock(), ho);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "hold: release stops the extension at once, no extension is sent after it",
                 "[live][hold]")
{
    // How the release is asked for: async_release, release(), or the guard's destructor.
    const int how = GENERATE(0, 1, 2);
    CAPTURE(how);

    run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "hold:release", short_lock());
            auto h = std::make_unique<lock_holder>(c, l, co_await asio::this_coro::executor);
            REQUIRE(co_await eventually([&] { return h->extensions() == 1; }, 2s));
            // Release just before the next extension is due: 333 ms before the end of validity.
            const auto due = h->current().valid_until() - 333ms;
            asio::steady_timer t(co_await asio::this_coro::executor, due - 3ms);
            co_await t.async_wait(tuple_awaitable);
            const auto pexpire_before = calls_all(m, "pexpire");

            // A loss signal must not be emitted on release: a wait bound to it runs to its end.
            // (Not with the destructor: what is bound to the loss slot must end before the guard.)
            bool loss_emitted = false;
            asio::steady_timer loss_probe(co_await asio::this_coro::executor,
                                          3 * short_lock_interval);
            if (how != 2)
                loss_probe.async_wait(
                    asio::bind_cancellation_slot(h->loss_slot(), [&](error_code e) {
                        loss_emitted = e == asio::error::operation_aborted;
                    }));

            if (how == 0)
            {
                auto [rec] = co_await h->async_release(tuple_awaitable);
                CHECK_FALSE(rec);
                CHECK(h->status() == error::released);
                CHECK_FALSE(h->held());
                CHECK(dbsize_all(m) == 0);  // the release waits for every master
            }
            else if (how == 1)
            {
                h->release();  // returns at once; the release runs on the client's strand
                CHECK(co_await no_keys_within(m, 1s));
                CHECK(h->status() == error::released);
            }
            else
            {
                h.reset();
                CHECK(co_await no_keys_within(m, 1s));
            }
            // Settled: the release's own EVAL (NOSCRIPT fallback) has run by now.
            co_await sleep_for(50ms);
            const auto eval_after = calls_all(m, "eval");
            const auto pexpire_after = calls_all(m, "pexpire");
            CHECK(pexpire_after == pexpire_before);

            co_await sleep_for(3 * short_lock_interval);
            INFO("EVAL calls per master after release " << eval_after[0] << ".." << eval_after[4]);
            CHECK(calls_all(m, "eval") == eval_after);
            CHECK(calls_all(m, "pexpire") == pexpire_before);
            CHECK(dbsize_all(m) == 0);
            CHECK_FALSE(loss_emitted);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "hold: a guard given an expired lock holds nothing and extends nothing",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "hold:expired", short_lock(100ms));
            co_await sleep_for(150ms);
            REQUIRE_FALSE(l.held());
            const auto pexpire_before = calls_all(m, "pexpire");
            lock_holder h(c, l, co_await asio::this_coro::executor);
            co_await sleep_for(100ms);
            CHECK_FALSE(h.held());
            CHECK(h.status() == error::lock_expired);
            CHECK(calls_all(m, "pexpire") == pexpire_before);
            CHECK(dbsize_all(m) == 0);

            lock_holder empty;
            CHECK_FALSE(empty.held());
            auto [rec] = co_await empty.async_release(tuple_awaitable);
            CHECK(rec == error::invalid_argument);
        },
        10s);
}

// hold.hpp: async_release, per-operation cancellation: the caller's wait completes at once with
// operation_aborted; the release goes on (it is what frees the lock for others), and the other
// waiters still hear its outcome.
TEST_CASE_METHOD(masters_rig<3>,
                 "hold: a cancelled async_release completes with operation_aborted, and the lock "
                 "is still released",
                 "[live][hold]")
{
    REDLOCK_EACH_CANCELLATION_TYPE(type);
    run(
        [&]() -> asio::awaitable<void> {
            // A TTL far longer than the test: only the release can remove the keys in time.
            lock l = co_await acquired(c, "hold:cancel-release", short_lock(60s));
            lock_holder h(c, l, co_await asio::this_coro::executor);
            asio::cancellation_signal sig;
            bool done = false, other_done = false;
            error_code result = error::server_error, other = error::server_error;
            h.async_release(asio::bind_cancellation_slot(sig.slot(), [&](error_code ec) {
                result = ec;
                done = true;
            }));
            h.async_release([&](error_code ec) {
                other = ec;
                other_done = true;
            });
            // Emitted before the release could have had its replies: they need a round trip.
            sig.emit(type);
            CHECK(co_await eventually([&] { return done; }, 2s));
            CHECK(result == asio::error::operation_aborted);
            // The release went on, and the waiter that was not cancelled hears that it succeeded.
            CHECK(co_await eventually([&] { return other_done; }, 2s));
            CHECK_FALSE(other);
            CHECK(dbsize_all(m) == 0);
            CHECK(h.status() == error::released);
        },
        10s);
}

// hold.hpp: release() is idempotent: two calls and then the destructor send one release.
TEST_CASE_METHOD(masters_rig<3>, "hold: release() twice, then the destructor, send one release",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto scripts = [&] {
                std::int64_t n = 0;
                for (const auto v : calls_all(m, "eval"))
                    n += v;
                for (const auto v : calls_all(m, "evalsha"))
                    n += v;
                return n;
            };
            lock l = co_await acquired(c, "hold:idempotent", short_lock(60s));
            auto ex = co_await asio::this_coro::executor;
            std::int64_t before = 0;
            {
                lock_holder h(c, l, ex);
                before = scripts();
                h.release();
                h.release();
            }
            CHECK(co_await no_keys_within(m, 2s));
            // An acquisition after them on the same connections: any second release would have
            // reached the masters before its SET.
            lock after = co_await acquired(c, "hold:idempotent-after", short_lock(60s));
            CHECK(scripts() - before == static_cast<std::int64_t>(m.size()));
            co_await c.async_unlock(after, tuple_awaitable);
        },
        10s);
}

// usage.md, "What holding a lock means": after a loss, the holder deletes the keys that still
// hold its token. A 60 s TTL: only that deletion, not the keys' expiry, can clear them in time.
TEST_CASE_METHOD(holding_rig, "hold: after a loss the holder deletes its keys left on the minority",
                 "[live][hold]")
{
    hold_options ho;
    ho.extend_before = 59500ms;  // the first extension 0.5 s after the acquisition
    run_holding(
        "hold:loss-cleanup",
        [&](lock_holder& h) -> asio::awaitable<void> {
            const lock l = h.current();
            for (std::size_t i = 0; i < 3; ++i)
                set_on(m, i, "hold:loss-cleanup", "someone-else");
            const auto loss = co_await wait_for_loss(h, 10s);
            CHECK(loss.ec == asio::error::operation_aborted);
            CHECK(h.status() == error::lock_lost);
            // The two masters that still held our token are cleared; the others' keys are left.
            CHECK(co_await eventually(
                [&] { return masters_holding(m, "hold:loss-cleanup", l.token()) == 0; }, 2s));
            for (std::size_t i = 0; i < 3; ++i)
                CHECK(get_on(m, i, "hold:loss-cleanup") ==
                      std::optional<std::string>("someone-else"));
            for (std::size_t i = 3; i < 5; ++i)
                CHECK_FALSE(get_on(m, i, "hold:loss-cleanup"));
        },
        short_lock(60s), ho);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "hold: moving a guard keeps one owner, assigning over a guard releases its lock",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto [ea, la] = co_await c.async_lock("hold:move-a", short_lock(), tuple_awaitable);
            auto [eb, lb] = co_await c.async_lock("hold:move-b", short_lock(), tuple_awaitable);
            REQUIRE_FALSE(ea);
            REQUIRE_FALSE(eb);
            lock_holder a(c, la);
            lock_holder moved(std::move(a));
            CHECK_FALSE(a.held());  // NOLINT(bugprone-use-after-move): moved-from holds nothing
            CHECK(moved.held());
            lock_holder b(c, lb);
            b = std::move(moved);  // releases "hold:move-b", takes over "hold:move-a"
            CHECK(co_await eventually([&] { return masters_with_ttl(m, "hold:move-b") == 0; }, 1s));
            // The surviving guard keeps extending past the first TTL.
            co_await sleep_for(1500ms);
            CHECK(b.held());
            CHECK(b.extensions() >= 1);
            CHECK(masters_holding(m, "hold:move-a", la.token()) == m.size());
        },
        10s);
}

TEST_CASE("hold: closing or destroying the client tells the holder, the guard outliving it is safe",
          "[live][hold]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    auto c = std::make_unique<client>(io.get_executor(), config_for(m));

    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            co_await require_connected(*c);
            auto [ea, la] = co_await c->async_lock("hold:close-a", short_lock(), tuple_awaitable);
            auto [eb, lb] = co_await c->async_lock("hold:close-b", short_lock(), tuple_awaitable);
            REQUIRE_FALSE(ea);
            REQUIRE_FALSE(eb);
            lock_holder a(*c, la, co_await asio::this_coro::executor);
            {
                lock_holder b(*c, lb, co_await asio::this_coro::executor);
                c->close();
                const auto loss = co_await wait_for_loss(a, 5s);
                CHECK(loss.ec == asio::error::operation_aborted);
                CHECK(a.status() == error::connection_closed);
                CHECK(co_await eventually([&] { return b.status() == error::connection_closed; },
                                          1s));
            }           // b destroyed after the close: nothing to release, nothing blocks
            c.reset();  // the client goes before the guard `a`
            auto [rec] = co_await a.async_release(tuple_awaitable);
            CHECK(rec == error::lock_lost);
            // Nobody could release them: the keys expire by their TTL.
            CHECK(dbsize_all(m) > 0);
            CHECK(co_await no_keys_within(m, 1500ms));
        }(),
        10s);
}

// Sanitizer builds run this path 10 to 100 times slower (the destroying handler runs the
// releases it dispatches inline: 10,000 encodes); the bound is about blocking, not speed.
// The timer's lateness is checked in plain builds only: under ThreadSanitizer the 10,000
// release replies, parsed in a few reads' handlers between two turns of the reactor, took
// 260 ms of the io thread's CPU by themselves (a fresh-clone CI run of 62e4d4e), which measures
// the sanitizer, not a blocked executor.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr auto bulk_destroy_bound = std::chrono::milliseconds(250);
constexpr bool timer_lateness_checked = false;
#else
constexpr auto bulk_destroy_bound = std::chrono::milliseconds(50);
constexpr bool timer_lateness_checked = true;
#endif

TEST_CASE_METHOD(masters_rig<5>,
                 "hold: destroying 2,000 guards in one handler does not block the executor",
                 "[live][hold]")
{
    constexpr std::size_t count = 2000;

    run(
        [&]() -> asio::awaitable<void> {
            lock_options o = short_lock(30000ms);  // no extension falls due during the test
            // 2,000 acquisitions started at once are set-up, not what is measured: under TSan
            // some took longer than the default attempt timeout (41 of 2,000 failed once), so
            // they get a long one and a retry.
            o.attempt_timeout = 5000ms;
            o.max_attempts = 3;
            auto locks = co_await lock_many(c, "bulk:", count, o);
            std::vector<lock_holder> holders;
            holders.reserve(count);
            for (auto& l : locks)
                holders.emplace_back(c, l);
            locks.clear();
            REQUIRE(co_await eventually(
                [&] { return dbsize_all(m) == static_cast<std::int64_t>(count * m.size()); }, 2s));

            // One handler: a timer due in 20 ms, then every guard destroyed.
            steady::time_point fired{};
            steady::duration cpu_until_fired{};
            asio::steady_timer probe(co_await asio::this_coro::executor, 20ms);
            const auto due = probe.expiry();
            const auto cpu0 = thread_cpu_now();
            probe.async_wait([&](error_code) {
                fired = steady::now();
                cpu_until_fired = thread_cpu_now() - cpu0;
            });
            const auto t0 = steady::now();
            holders.clear();
            const auto destroy = steady::now() - t0;

            REQUIRE(co_await eventually([&] { return fired != steady::time_point{}; }, 2s));
            const auto late = fired - due;
            const auto gone = co_await no_keys_within(m, 2s);
            const auto all_released = steady::now() - t0;
            INFO("destroying " << count << " guards took " << ms(destroy)
                               << " ms; the 20 ms timer fired " << ms(late)
                               << " ms late, the io thread having run for " << ms(cpu_until_fired)
                               << " ms of CPU by then; all keys gone after " << ms(all_released)
                               << " ms");
            CHECK(destroy < bulk_destroy_bound);
            // On time, give or take what the machine does to us: a timer is late by the time the io
            // thread spent in handlers past its due time, which is at most its CPU time minus the
            // 20 ms it had to wait. Preemption by other processes shows in the wall clock only.
            if constexpr (timer_lateness_checked)
                CHECK(std::min(late, cpu_until_fired -
                                         std::min(cpu_until_fired, steady::duration(20ms))) <
                      bulk_destroy_bound);
            CHECK(gone);
            WARN("bulk guards: destroying "
                 << count << " took " << ms(destroy) << " ms, timer " << ms(late)
                 << " ms late (io thread CPU " << ms(cpu_until_fired) << " ms), all "
                 << count * m.size() << " keys gone within " << ms(all_released) << " ms");
        },
        60s);
}

TEST_CASE_METHOD(masters_rig<5>, "hold: extensions of many locks due together leave together",
                 "[live][hold]")
{
    // The observable: each master's INFO stats total_reads_processed, the number of reads its
    // event loop made from client sockets. 200 extensions sent one write each arrive as ~200
    // reads; sent in one pipelined write (~45 KB), they arrive in a handful of 16 KB reads.
    constexpr std::size_t count = 200;
    // Coalesced means fewer reads than half the extensions. How many reads a batch takes
    // depends on timing, not on the build: the master's reads cut a write where they catch it,
    // and the extensions are due as their acquisitions completed, spread over the time the
    // 200 acquisitions took to start (2 ms in an optimised build, 41 ms under TSan), so timers
    // that fire while a write is in flight leave in the next one (9 to 10 reads were seen in an
    // optimised build, 16 under ASan, 19 at -Og on a loaded machine, 35 to 38 under TSan).
    // Uncoalesced, one write per extension, it is about 200. The bound sits between the two,
    // at a distance from the coalesced figures that no load has reached; the decision itself
    // (rounds started in one handler share a write) is the connection's, stepped in
    // test/unit/multiplexer_test.cpp.
    constexpr std::int64_t coalesced_reads_bound = count / 2;
    const auto ttl = 2000ms;
    const auto interval = default_extension_interval(ttl, 100ms);  // 2000 - 22 - 666 = 1312 ms

    run(
        [&]() -> asio::awaitable<void> {
            const auto t0 = steady::now();
            auto locks = co_await lock_many(c, "together:", count, short_lock(ttl));
            auto [first, last] =
                std::minmax_element(locks.begin(), locks.end(), [](const lock& a, const lock& b) {
                    return a.valid_until() < b.valid_until();
                });
            const auto acquired_spread = last->valid_until() - first->valid_until();
            // All created in this handler, with identical options.
            std::vector<lock_holder> holders;
            holders.reserve(count);
            for (auto& l : locks)
                holders.emplace_back(c, l);

            asio::steady_timer t(co_await asio::this_coro::executor, t0 + interval - 200ms);
            co_await t.async_wait(tuple_awaitable);
            REQUIRE(std::all_of(holders.begin(), holders.end(),
                                [](auto& h) { return h.extensions() == 0; }));
            std::vector<std::int64_t> reads_before;
            for (std::size_t i = 0; i < m.size(); ++i)
                reads_before.push_back(info_field(m, i, "stats", "total_reads_processed"));
            const auto pexpire_before = calls_all(m, "pexpire");

            REQUIRE(co_await eventually(
                [&] {
                    return std::all_of(holders.begin(), holders.end(),
                                       [](auto& h) { return h.extensions() >= 1; });
                },
                2s));
            co_await sleep_for(20ms);  // the slower masters' replies
            std::vector<std::int64_t> reads;
            for (std::size_t i = 0; i < m.size(); ++i)
                reads.push_back(info_field(m, i, "stats", "total_reads_processed") -
                                reads_before[i]);
            const auto pexpire_after = calls_all(m, "pexpire");

            steady::time_point lo = steady::time_point::max(), hi = steady::time_point::min();
            for (auto& h : holders)
            {
                const auto v = h.current().valid_until();  // t_ext + ttl - drift
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
            std::string per_master;
            for (std::size_t i = 0; i < m.size(); ++i)
                per_master += std::to_string(reads[i]) + " ";
            INFO("acquisitions spread over "
                 << ms(acquired_spread) << " ms; extensions started within " << ms(hi - lo)
                 << " ms; reads per master for " << count << " extensions: " << per_master);
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                CHECK(pexpire_after[i] - pexpire_before[i] == static_cast<std::int64_t>(count));
                // INFO itself and a health-check PING add a read or two.
                CHECK(reads[i] <= coalesced_reads_bound);
            }
            // That they left together is what the reads above show, without a clock. The spread
            // of their starts is that one deadline handler's running time (2 to 3 ms in an
            // optimised build, 6 to 20 ms under ASan on a loaded machine): reported, not bounded.
            WARN("coalescing: " << count << " extensions, reads per master: " << per_master
                                << "; extension starts spread over " << ms(hi - lo)
                                << " ms (acquisitions " << ms(acquired_spread) << " ms)");
        },
        30s);
}

}  // namespace redlock::test
