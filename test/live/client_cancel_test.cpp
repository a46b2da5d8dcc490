// Acceptance: per-operation cancellation of async_lock, in an attempt and in a backoff delay.
#include "client_fixture.hpp"
#include "fake_server.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <optional>
#include <variant>

using namespace redlock;
using namespace redlock::test;

namespace {

/// An async_lock whose terminal cancellation is emitted right after its initiation returned;
/// `done` and `result` say how it completed.
struct cancelled_at_once
{
    asio::cancellation_signal sig;
    bool done = false;
    error_code result = redlock::error::server_error;
    steady::time_point t0{};

    void start(client& c, const std::string& resource, const lock_options& o)
    {
        t0 = steady::now();
        c.async_lock(resource, o,
                     asio::bind_cancellation_slot(sig.slot(), [this](error_code ec, lock) {
                         result = ec;
                         done = true;
                     }));
        sig.emit(asio::cancellation_type::terminal);
    }
};

/// How an async_lock cancelled by a timer completed: its outcome, when it started, when the
/// signal was emitted and when it completed.
struct timed_cancellation
{
    error_code ec;
    lock l;
    steady::time_point t0{};
    steady::time_point emitted{};
    steady::time_point done{};

    /// "completed X ms after the start, Y ms after the signal: <diagnostics>"
    std::string describe() const
    {
        return "completed " + std::to_string(ms(done - t0)) + " ms after the start, " +
               std::to_string(ms(done - emitted)) + " ms after the signal: " + l.describe();
    }
};

/// async_lock of `resource` with `o` on `c`, whose cancellation signal a timer emits (of type
/// `type`) `delay` after the start.
asio::awaitable<timed_cancellation> lock_cancelled_after(client& c, std::string resource,
                                                         lock_options o, steady::duration delay,
                                                         asio::cancellation_type type)
{
    timed_cancellation out;
    asio::cancellation_signal sig;
    asio::steady_timer t(co_await asio::this_coro::executor, delay);
    t.async_wait([&](error_code e) {
        if (e)
            return;  // the timer went with the operation, which completed first
        out.emitted = steady::now();
        sig.emit(type);
    });
    out.t0 = steady::now();
    auto [ec, l] = co_await c.async_lock(std::move(resource), o,
                                         asio::bind_cancellation_slot(sig.slot(), tuple_awaitable));
    out.done = steady::now();
    out.ec = ec;
    out.l = std::move(l);
    co_return out;
}

}  // namespace

TEST_CASE_METHOD(masters_rig<5>,
                 "client: cancellation during an attempt completes promptly with operation_aborted",
                 "[live][client]")
{
    lock_options opts;
    opts.attempt_timeout = 2000ms;  // far beyond the cancellation: only the signal can end it
    opts.release_timeout = 200ms;
    opts.max_attempts = 3;

    run(
        [&]() -> asio::awaitable<void> {
            for (std::size_t i = 0; i < m.size(); ++i)
                m.pause(i);

            const auto op = co_await lock_cancelled_after(c, "cancel-attempt", opts, 50ms,
                                                          asio::cancellation_type::terminal);
            INFO(op.describe());
            CHECK(op.ec == asio::error::operation_aborted);
            CHECK_FALSE(op.l.held());
            // The release after the cancelled attempt keeps its own deadline (200 ms).
            CHECK(ms(op.done - op.emitted) <= 200.0 + 100.0);
            CHECK(ms(op.done - op.t0) < 1000.0);

            co_await expect_no_keys_after_resume(m);
        },
        10s);
}

TEST_CASE_METHOD(rivals_rig<5>, "client: cancellation during a backoff delay completes at once",
                 "[live][client]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock held = co_await acquired_everywhere(theirs, m, "cancel-backoff");

            for (const auto type : every_cancellation_type)
            {
                INFO("cancellation type " << static_cast<int>(type));
                // Refused at once, then a delay of 1 s before the next attempt: the signal
                // (200 ms) comes during it.
                const auto op = co_await lock_cancelled_after(ours, "cancel-backoff",
                                                              retrying(10, 1000ms), 200ms, type);
                INFO(op.describe());
                CHECK(op.ec == asio::error::operation_aborted);
                CHECK(op.emitted != steady::time_point{});
                CHECK(ms(op.done - op.emitted) < 100.0);
            }

            // Only the holder's key is there.
            for (std::size_t i = 0; i < m.size(); ++i)
                CHECK(get_on(m, i, "cancel-backoff") == std::string(held.token()));
            auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(uec);
        },
        10s);
}

TEST_CASE_METHOD(rivals_rig<3>, "client: awaitable_operators || with a timer times out a lock",
                 "[live][client]")
{
    using namespace asio::experimental::awaitable_operators;

    auto opts = retrying(100, 20ms, 20ms);

    run(
        [&]() -> asio::awaitable<void> {
            lock held = co_await acquired(theirs, "or-timer");

            // Contended: the timer wins, and the lock operation is cancelled.
            {
                asio::steady_timer timer(co_await asio::this_coro::executor, 150ms);
                const auto t0 = steady::now();
                auto result = co_await (ours.async_lock("or-timer", opts, asio::use_awaitable) ||
                                        timer.async_wait(asio::use_awaitable));
                const auto elapsed = ms(steady::now() - t0);
                INFO("took " << elapsed << " ms");
                CHECK(result.index() == 1);
                CHECK(elapsed < 150.0 + 100.0);
            }
            co_await unlock_and_expect_no_keys(theirs, held, m);

            // Free: the lock wins and the timer is cancelled.
            {
                asio::steady_timer timer(co_await asio::this_coro::executor, 5s);
                auto result = co_await (ours.async_lock("or-timer", opts, asio::use_awaitable) ||
                                        timer.async_wait(asio::use_awaitable));
                REQUIRE(result.index() == 0);
                lock l = std::get<0>(result);
                CHECK(l.held());
                co_await ours.async_unlock(l);
            }
            CHECK(co_await settled_keys(m) == 0);
        },
        10s);
}

// Asio's rule: an operation honours a cancellation emitted at any time after its initiating
// function has returned. The slot must therefore be connected during initiation.
TEST_CASE_METHOD(rivals_rig<3>, "client: a cancellation emitted right after initiation is honoured",
                 "[live][client]")
{
    auto opts = retrying(5, 200ms);

    run(
        [&]() -> asio::awaitable<void> {
            lock held = co_await acquired(theirs, "early-cancel");

            cancelled_at_once op;
            op.start(ours, "early-cancel", opts);
            while (!op.done && steady::now() - op.t0 < 3s)
                co_await sleep_for(2ms);
            const auto elapsed = ms(steady::now() - op.t0);
            INFO("completed after " << elapsed << " ms with " << op.result.message());
            REQUIRE(op.done);
            CHECK(op.result == asio::error::operation_aborted);
            // Without the cancellation: 5 attempts and 4 delays of 200 ms, then contended.
            CHECK(elapsed < 100.0);

            auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(uec);
        },
        10s);
}

// client.hpp: async_try_lock's cancellation is async_lock's: a cancellation during its one
// attempt completes with operation_aborted, and the keys it may have set are released.
TEST_CASE_METHOD(
    masters_rig<3>,
    "client: async_try_lock honours a cancellation during its attempt, and leaves no key",
    "[live][client]")
{
    REDLOCK_EACH_CANCELLATION_TYPE(type);
    run(
        [&]() -> asio::awaitable<void> {
            asio::cancellation_signal sig;
            bool done = false;
            error_code result = error::server_error;
            std::optional<lock> got;
            c.async_try_lock(
                "try-cancel",
                asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, std::optional<lock> l) {
                    result = ec;
                    got = std::move(l);
                    done = true;
                }));
            // The attempt needs a round trip: the cancellation comes while it waits for it.
            sig.emit(type);
            CHECK(co_await eventually([&] { return done; }, 2s));
            CHECK(result == asio::error::operation_aborted);
            CHECK_FALSE(got);
            CHECK(co_await eventually([&] { return total_keys(m) == 0; }, 2s));
        },
        10s);
}

// The same, initiated from a thread that is not running the io_context (so the initiation
// cannot run the operation inline), e.g. the caller of a use_future operation.
TEST_CASE_METHOD(
    rivals_rig<3>,
    "client: a cancellation emitted right after initiation from outside the io_context",
    "[live][client]")
{
    auto opts = retrying(5, 200ms);

    lock held;
    run_connected(
        io, ours,
        [&]() -> asio::awaitable<void> {
            co_await require_connected(theirs);
            lock l = co_await acquired(theirs, "early-cancel");
            held = l;
        },
        10s);

    // Not inside io.run(): the initiation cannot complete inline.
    cancelled_at_once op;
    op.start(ours, "early-cancel", opts);

    const auto deadline = steady::now() + 5s;
    while (!op.done && steady::now() < deadline)
        io.run_one_until(deadline);
    const auto elapsed = ms(steady::now() - op.t0);
    INFO("completed after " << elapsed << " ms with " << op.result.message());
    REQUIRE(op.done);
    CHECK(op.result == asio::error::operation_aborted);
    CHECK(elapsed < 100.0);

    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(uec);
        }(),
        10s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: unlock and extend honour a cancellation emitted right after initiation",
                 "[live][client]")
{
    lock held;
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "early-cancel");
            held = l;
        }(),
        10s);

    auto run_until = [&](const bool& done) {
        const auto deadline = steady::now() + 5s;
        while (!done && steady::now() < deadline)
            io.run_one_until(deadline);
        REQUIRE(done);
    };

    {
        asio::cancellation_signal sig;
        bool done = false;
        error_code result = error::server_error;
        lock extended;
        c.async_extend(held, 20000ms,
                       asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, lock l) {
                           result = ec;
                           extended = l;
                           done = true;
                       }));
        sig.emit(asio::cancellation_type::terminal);
        run_until(done);
        CHECK(result == asio::error::operation_aborted);
        // "The lock is left as it was."
        CHECK(extended.valid_until() == held.valid_until());
    }
    {
        asio::cancellation_signal sig;
        bool done = false;
        error_code result = error::server_error;
        c.async_unlock(held, asio::bind_cancellation_slot(sig.slot(), [&](error_code ec) {
                           result = ec;
                           done = true;
                       }));
        sig.emit(asio::cancellation_type::terminal);
        run_until(done);
        CHECK(result == asio::error::operation_aborted);
    }
    // "The release requests already sent still execute on the masters": whether they were
    // sent before the cancellation arrived is not specified, so a second release may find
    // the keys gone.
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [uec] = co_await c.async_unlock(held, tuple_awaitable);
            CHECK((!uec || uec == error::lock_lost));
        }(),
        10s);
    CHECK(settled_keys_sync(io, m) == 0);
}

// client.hpp: async_wait_connected, per-operation cancellation: completes at once with
// operation_aborted and the masters connected so far; the connections go on.
TEST_CASE("client: async_wait_connected honours a cancellation while the masters' handshakes go "
          "unanswered",
          "[live][client]")
{
    REDLOCK_EACH_CANCELLATION_TYPE(type);
    // The handshakes are answered 1.5 s late: the cancellation comes while they wait.
    fake_server m[3];
    fake_script late;
    late.any().normal().after(1500ms);
    for (auto& s : m)
        s.set_default(late);
    client_config cfg;
    cfg.masters = {m[0].uri(), m[1].uri(), m[2].uri()};
    cfg.connection.connect_timeout = 60s;
    asio::io_context io;
    client c(io.get_executor(), cfg);
    asio::cancellation_signal sig;
    bool done = false;
    error_code result = error::server_error;
    std::size_t ready = 99;
    c.async_wait_connected(
        asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, std::size_t n) {
            result = ec;
            ready = n;
            done = true;
        }));
    auto run_until = [&](auto pred) {
        const auto deadline = steady::now() + 5s;
        while (!pred() && steady::now() < deadline)
            io.run_one_until(std::min(deadline, steady::now() + 10ms));
        return pred();
    };
    // Every master's handshake has reached its server, unanswered: the operation waits.
    REQUIRE(run_until([&] {
        return std::all_of(std::begin(m), std::end(m), [](const fake_server& s) {
            return s.connections() == 1 && !s.commands(0).empty();
        });
    }));
    REQUIRE_FALSE(done);
    sig.emit(type);
    REQUIRE(run_until([&] { return done; }));
    CHECK(result == asio::error::operation_aborted);
    CHECK(ready == 0);
    // The connections go on, and connect once the handshakes are answered.
    CHECK(run_until([&] {
        const auto states = c.master_states();
        return std::all_of(states.begin(), states.end(),
                           [](const master_info& i) { return i.state == master_state::ready; });
    }));
}
