// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Acceptance: an acquisition that waits for the release (lock_options::wait) is woken by it,
// whoever releases, and its process's waiters take their turns in order.
//
// Each case waits less than the holder's TTL: the fallback (the keys' PTTL) would come too
// late, so success can only come from a wake-up. The cases assert outcomes, not durations.
#include "client_fixture.hpp"

#include "driver/waiting_room.hpp"
#include "protocol/scripts.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

using namespace redlock;
using namespace redlock::test;

namespace {

// A holder's TTL far longer than any wait below.
constexpr auto holder_ttl = std::chrono::milliseconds(20000);

lock_options holder_options()
{
    auto o = lasting(holder_ttl);
    return o;
}

// Waits up to `wait`, with a single attempt for anything but holders' refusals.
lock_options waiting(std::chrono::milliseconds wait)
{
    lock_options o;
    o.wait = wait;
    o.max_attempts = 1;
    return o;
}

// Waits up to `wait` like waiting(), and holds as long as a holder: a hand-off is allowed by
// the TTLs.
lock_options waiting_to_hold(std::chrono::milliseconds wait)
{
    auto o = waiting(wait);
    o.ttl = holder_ttl;
    return o;
}

// A key set by hand on masters [0, count) with `px` ms to live: a holder this process does not
// know, e.g. one that was SIGKILLed and left its keys to expire.
void set_by_hand(local_masters& m, std::string_view key, std::size_t count, std::string_view px)
{
    for (std::size_t i = 0; i < count; ++i)
        REQUIRE(m.command(i, {"SET", key, "someone-else", "NX", "PX", px}) == "+OK\r\n");
}

// Deletes `key` by hand on masters [first, last), after `delay`, while the io_context runs.
asio::awaitable<void> delete_by_hand_after(local_masters& m, std::string key,
                                           std::chrono::milliseconds delay, std::size_t first,
                                           std::size_t last)
{
    co_await sleep_for(delay);
    for (std::size_t i = first; i < last; ++i)
        CHECK(m.command(i, {"DEL", key}) == ":1\r\n");
}

// Restarts master `i` (empty) after `delay`, while the io_context runs.
asio::awaitable<void> restart_after(local_masters& m, std::size_t i,
                                    std::chrono::milliseconds delay)
{
    co_await sleep_for(delay);
    m.restart(i);
}

// Takes `resource` waiting as `o` says, failing the test (with the lock's diagnostics) if it
// cannot, then releases it.
asio::awaitable<void> wait_lock_unlock(client& c, std::string resource, lock_options o)
{
    auto [ec, l] = co_await c.async_lock(std::move(resource), o, tuple_awaitable);
    INFO(l.describe());
    REQUIRE_FALSE(ec);
    auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
    CHECK_FALSE(uec);
}

/// Checks that `next` was set anew after `before` was released (not handed over): a validity
/// that ends later, its token on every master; then releases it and checks that no key is left.
asio::awaitable<void> expect_taken_anew(client& c, const local_masters& m, const lock& next,
                                        const lock& before)
{
    CHECK(next.valid_until() > before.valid_until());
    CHECK(on_every_master(m, next.key(), next.token()));
    co_await unlock_and_expect_no_keys(c, next, m);
}

/// masters_rig<5> whose test body runs with `resource` held on every master by a holder this
/// process does not know, with `px` ms to live (set_by_hand).
struct vanished_holder_rig : masters_rig<5>
{
    template <class Body>
    void run_held_by_hand(std::string resource, std::string px, Body body)
    {
        run(
            [&]() -> asio::awaitable<void> {
                set_by_hand(m, resource, m.size(), px);
                co_await body();
            },
            20s);
    }
};

}  // namespace

TEST_CASE_METHOD(vanished_holder_rig, "wait: a DEL by hand wakes the waiting acquisition",
                 "[live][wait]")
{
    run_held_by_hand("w-del", "20000", [&]() -> asio::awaitable<void> {
        asio::co_spawn(io, delete_by_hand_after(m, "w-del", 150ms, 0, 5), asio::detached);
        co_await wait_lock_unlock(c, "w-del", waiting(5000ms));
        CHECK(co_await settled_keys(m) == 0);
    });
}

TEST_CASE_METHOD(vanished_holder_rig,
                 "wait: the expiry of a vanished holder's keys wakes the waiter", "[live][wait]")
{
    run_held_by_hand("w-expiry", "600", [&]() -> asio::awaitable<void> {
        // Without waiting, one attempt would fail: the keys have 600 ms left.
        co_await wait_lock_unlock(c, "w-expiry", waiting(4000ms));
    });
}

TEST_CASE_METHOD(rivals_rig<5>, "wait: another client's release wakes the waiter", "[live][wait]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock held = co_await acquired(theirs, "w-rival", holder_options());
            asio::co_spawn(
                io,
                [&]() -> asio::awaitable<void> {
                    co_await sleep_for(150ms);
                    auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
                    CHECK_FALSE(uec);
                },
                asio::detached);
            co_await wait_lock_unlock(c, "w-rival", waiting(5000ms));
        },
        15s);
}

TEST_CASE_METHOD(vanished_holder_rig, "wait: the wait ends with contended when nobody releases",
                 "[live][wait]")
{
    run_held_by_hand("w-never", "20000", [&]() -> asio::awaitable<void> {
        auto [ec, l] = co_await c.async_lock("w-never", waiting(300ms), tuple_awaitable);
        CHECK(ec == error::contended);
        CHECK_FALSE(l.held());
        for (std::size_t i = 0; i < m.size(); ++i)
            CHECK(get_on(m, i, "w-never") == std::string("someone-else"));
    });
}

TEST_CASE_METHOD(rivals_rig<5>, "wait: one client's waiters take the lock in the order they asked",
                 "[live][wait]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock held = co_await acquired(theirs, "w-fifo", holder_options());
            std::vector<long> sets_before;
            for (std::size_t i = 0; i < m.size(); ++i)
                sets_before.push_back(command_calls(m, i, "set"));
            constexpr int waiters = 5;
            std::vector<int> order;
            int finished = 0;
            for (int k = 0; k < waiters; ++k)
                c.async_lock("w-fifo", waiting(10000ms), [&, k](error_code ec, lock l) {
                    CHECK_FALSE(ec);
                    order.push_back(k);
                    // Held a moment, then released: the next waiter is woken by this release.
                    asio::co_spawn(
                        io,
                        [&, l = std::move(l)]() mutable -> asio::awaitable<void> {
                            co_await sleep_for(10ms);
                            co_await c.async_unlock(l, tuple_awaitable);
                            ++finished;
                        },
                        asio::detached);
                });
            co_await sleep_for(100ms);
            // Only the first waiter competes with the other process: one SET per master so far
            // (its attempt), where five attempting waiters would have sent five.
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                INFO("master " << i);
                CHECK(command_calls(m, i, "set") == sets_before[i] + 1);
            }
            auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
            CHECK_FALSE(uec);
            REQUIRE(co_await eventually([&] { return finished == waiters; }, 8s));
            CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
            CHECK(co_await settled_keys(m) == 0);
        },
        20s);
}

TEST_CASE_METHOD(vanished_holder_rig, "wait: a multi-resource lock waits for all of its resources",
                 "[live][wait]")
{
    // Made outside the coroutine: GCC 12 rejects a braced list of literals inside one.
    const std::vector<std::string> both{"w-multi-a", "w-multi-b"};
    run_held_by_hand("w-multi-b", "20000", [&]() -> asio::awaitable<void> {
        asio::co_spawn(io, delete_by_hand_after(m, "w-multi-b", 150ms, 0, 5), asio::detached);
        auto [ec, l] = co_await c.async_lock_all(both, waiting(5000ms), tuple_awaitable);
        INFO(l.describe());
        REQUIRE_FALSE(ec);
        CHECK(on_every_master(m, "w-multi-a", l.token()));
        co_await c.async_unlock(l, tuple_awaitable);
        CHECK(co_await settled_keys(m) == 0);
    });
}

TEST_CASE_METHOD(vanished_holder_rig,
                 "wait: with a minority of masters paused, a release still wakes the waiter",
                 "[live][wait]")
{
    run_held_by_hand("w-paused", "20000", [&]() -> asio::awaitable<void> {
        m.pause(4);
        asio::co_spawn(io, delete_by_hand_after(m, "w-paused", 150ms, 0, 4), asio::detached);
        auto o = waiting(5000ms);
        o.attempt_timeout = 100ms;
        co_await wait_lock_unlock(c, "w-paused", o);
        // Master 4 still holds the hand-set key: our SET there failed (NX), and our release
        // there leaves the other owner's key alone.
        m.resume(4);
        co_await sleep_for(100ms);
        CHECK(get_on(m, 4, "w-paused") == std::string("someone-else"));
        for (std::size_t i = 0; i < 4; ++i)
            CHECK(keys_on(m, i).empty());
    });
}

TEST_CASE_METHOD(vanished_holder_rig,
                 "wait: a master restarted while waiting does not lose the wake-up", "[live][wait]")
{
    run_held_by_hand("w-restart", "20000", [&]() -> asio::awaitable<void> {
        // Master 0 restarts empty (the key is gone there, and the watch with the connection);
        // the other four let go later.
        asio::co_spawn(io, restart_after(m, 0, 100ms), asio::detached);
        asio::co_spawn(io, delete_by_hand_after(m, "w-restart", 400ms, 1, 5), asio::detached);
        co_await wait_lock_unlock(c, "w-restart", waiting(8000ms));
        CHECK(co_await settled_keys(m) == 0);
    });
}

TEST_CASE_METHOD(vanished_holder_rig,
                 "wait: a cancelled waiter leaves no key, and the next one is not held up",
                 "[live][wait]")
{
    run_held_by_hand("w-cancel", "20000", [&]() -> asio::awaitable<void> {
        asio::cancellation_signal sig;
        bool first_done = false;
        error_code first_ec;
        c.async_lock("w-cancel", waiting(10000ms),
                     asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, lock) {
                         first_ec = ec;
                         first_done = true;
                     }));
        // A second waiter queues behind the first (same client, same resource).
        bool second_done = false;
        error_code second_ec;
        lock second;
        c.async_lock("w-cancel", waiting(10000ms), [&](error_code ec, lock l) {
            second_ec = ec;
            second = std::move(l);
            second_done = true;
        });
        co_await sleep_for(150ms);
        sig.emit(asio::cancellation_type::terminal);
        REQUIRE(co_await eventually([&] { return first_done; }));
        CHECK(first_ec == asio::error::operation_aborted);
        for (std::size_t i = 0; i < m.size(); ++i)
            CHECK(get_on(m, i, "w-cancel") == std::string("someone-else"));
        // The second has the turn now and is woken by the release.
        for (std::size_t i = 0; i < m.size(); ++i)
            CHECK(m.command(i, {"DEL", "w-cancel"}) == ":1\r\n");
        REQUIRE(co_await eventually([&] { return second_done; }, 5s));
        CHECK_FALSE(second_ec);
        co_await c.async_unlock(second, tuple_awaitable);
        CHECK(co_await settled_keys(m) == 0);
    });
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: a long row of local hand-offs, some of which yield, loses no wake-up",
                 "[live][wait]")
{
    // More waiters than two yields' worth (waiting_room::yield_every): the yielded hand-offs
    // wake their waiter when the release is decided, the others at once. Each holds its lock
    // with a TTL longer than the waits, so a lost wake-up would end a wait with contended.
    // With hand-offs (the keys keep a TTL of 20 s: every waiter takes its predecessor's lock,
    // but for the yields) and without (each release then SET NX).
    const bool handoff = GENERATE(true, false);
    run(
        [&]() -> asio::awaitable<void> {
            lock first = co_await acquired(c, "w-row", holder_options());
            constexpr int waiters = 2 * static_cast<int>(detail::waiting_room::yield_every) + 2;
            auto o = waiting_to_hold(15000ms);
            o.handoff = handoff;
            std::vector<int> order;
            int finished = 0;
            for (int k = 0; k < waiters; ++k)
                c.async_lock("w-row", o, [&, k](error_code ec, lock l) {
                    INFO(l.describe());
                    CHECK_FALSE(ec);
                    order.push_back(k);
                    asio::co_spawn(
                        io,
                        [&, l = std::move(l)]() mutable -> asio::awaitable<void> {
                            co_await sleep_for(1ms);
                            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                            CHECK_FALSE(uec);
                            ++finished;
                        },
                        asio::detached);
                });
            co_await sleep_for(50ms);
            auto [uec] = co_await c.async_unlock(first, tuple_awaitable);
            CHECK_FALSE(uec);
            REQUIRE(co_await eventually([&] { return finished == waiters; }, 12s));
            std::vector<int> expected(waiters);
            for (int k = 0; k < waiters; ++k)
                expected[static_cast<std::size_t>(k)] = k;
            CHECK(order == expected);
            CHECK(co_await settled_keys(m) == 0);
        },
        30s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: through a row of local hand-offs the key is never absent: a foreign SET NX "
                 "racing them is refused on every master",
                 "[live][wait][handoff]")
{
    // Six hand-offs in a row (fewer than waiting_room::yield_every, so none yields), each
    // holder keeping the lock 2 ms. Meanwhile another client, which knows nothing of them,
    // sends SET NX on every master in a loop: a hand-over that deleted the key before setting
    // the next token (a DEL then a SET PXAT) would let one in.
    static_assert(detail::waiting_room::yield_every > 6);
    std::vector<std::unique_ptr<redlock::connection>> raw;
    for (std::size_t i = 0; i < m.size(); ++i)
        raw.push_back(std::make_unique<redlock::connection>(io.get_executor(), m.uri(i)));
    run(
        [&]() -> asio::awaitable<void> {
            for (auto& r : raw)
                REQUIRE_FALSE(std::get<0>(
                    co_await r->async_wait_connected(asio::as_tuple(asio::use_awaitable))));
            lock first = co_await acquired(c, "w-stream", holder_options());
            constexpr int waiters = 6;
            auto o = waiting_to_hold(10000ms);
            int finished = 0;
            int handed_over = 0;
            bool racing = true;
            for (int k = 0; k < waiters; ++k)
                c.async_lock("w-stream", o, [&, k](error_code ec, lock l) {
                    CHECK_FALSE(ec);
                    handed_over += l.valid_until() == first.valid_until() ? 1 : 0;
                    asio::co_spawn(
                        io,
                        [&, k, l = std::move(l)]() mutable -> asio::awaitable<void> {
                            co_await sleep_for(2ms);
                            // The last holder keeps it until the intruders have stopped: its
                            // release rightly lets a SET NX in.
                            while (k == waiters - 1 && racing)
                                co_await sleep_for(1ms);
                            if (k == waiters - 1)
                                co_await sleep_for(20ms);  // their last replies
                            co_await c.async_unlock(l, tuple_awaitable);
                            ++finished;
                        },
                        asio::detached);
                });
            co_await sleep_for(50ms);

            long tries = 0, intruded = 0;
            const redlock::command intrude("SET", "w-stream", "intruder", "NX", "PX", "60000");
            auto intruder = [&](redlock::connection& r) -> asio::awaitable<void> {
                while (racing)
                {
                    auto [ec, reply] =
                        co_await r.async_exec(intrude, asio::as_tuple(asio::use_awaitable));
                    ++tries;
                    if (!ec && reply.size() == 1 && reply[0].value == "OK")
                        ++intruded;
                }
            };
            for (auto& r : raw)
                asio::co_spawn(io, intruder(*r), asio::detached);
            auto [uec] = co_await c.async_unlock(first, tuple_awaitable);  // the first hand-off
            CHECK_FALSE(uec);
            const bool chain_done =
                co_await eventually([&] { return finished == waiters - 1; }, 8s);
            racing = false;
            INFO(finished << " finished, " << handed_over << " handed over, " << intruded
                          << " intruded");
            REQUIRE(chain_done);
            INFO(tries << " SET NX sent");
            CHECK(tries > 50);
            CHECK(intruded == 0);
            CHECK(handed_over == waiters);  // every waiter took its predecessor's lock
            REQUIRE(co_await eventually([&] { return finished == waiters; }, 2s));
            CHECK(co_await settled_keys(m) == 0);
        },
        20s);
    for (auto& r : raw)
        r->close();
    io.restart();
    io.run_for(100ms);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: an endless row of one client's hand-offs yields: a waiter of another "
                 "process gets the resource",
                 "[live][wait][handoff]")
{
    // Our client keeps a waiter queued behind every holder (each holder queues the next, which
    // is waiting by the time it releases): without the yield every waiting_room::yield_every
    // hand-offs, the resource would go round this client for ever. A waiter of another client,
    // on its own io_context and thread as another process would be, must get it. It races our
    // next waiter at each yield, so it may lose a few, but not 50 in a row.
    constexpr int max_handoffs = 400;
    // Three waiters of ours always queued, or one at a time (each holder's next asks while it
    // holds: its first attempt is refused by our own keys, which must not end the row, and
    // the release of that attempt is no hand-off of the row).
    const int queued = GENERATE(3, 1);
    CAPTURE(queued);
    asio::io_context other_io;
    client other(other_io.get_executor(), config_for(m));
    std::atomic<bool> their_done{false};
    std::atomic<int> their_turn{-1};
    error_code their_ec = error::server_error;  // written on the other thread before their_done
    std::atomic<int> acquired_here{0};
    // The other process's thread: its client closed and the thread joined on every way out,
    // a failed REQUIRE included (a joinable std::thread destroyed would terminate the run).
    struct other_process
    {
        asio::io_context& io;
        client& c;
        asio::executor_work_guard<asio::io_context::executor_type> keep_running{io.get_executor()};
        std::thread thread{[this] { io.run(); }};
        ~other_process()
        {
            asio::post(io, [this] { c.close(); });
            keep_running.reset();
            thread.join();
        }
    } other_process{other_io, other};
    {
        std::promise<error_code> connected;
        other.async_wait_connected([&](error_code ec, std::size_t) { connected.set_value(ec); });
        REQUIRE_FALSE(connected.get_future().get());
    }
    run(
        [&]() -> asio::awaitable<void> {
            lock first = co_await acquired(c, "w-yield", holder_options());
            auto o = waiting_to_hold(20000ms);
            int handed = 0, finished = 0, started = 0;
            lock::clock::time_point last_valid_until = first.valid_until();
            std::function<void()> queue_one;
            queue_one = [&] {
                ++started;
                c.async_lock("w-yield", o, [&](error_code ec, lock l) {
                    CHECK_FALSE(ec);
                    ++acquired_here;
                    handed += l.valid_until() == last_valid_until ? 1 : 0;  // a hand-off keeps it
                    last_valid_until = l.valid_until();
                    asio::co_spawn(
                        io,
                        [&, l = std::move(l)]() mutable -> asio::awaitable<void> {
                            // The next one asks while this one holds, and is waiting (its attempt
                            // refused by our own keys) by the time this one releases.
                            if (!their_done && acquired_here < max_handoffs)
                                queue_one();
                            co_await sleep_for(5ms);
                            co_await c.async_unlock(l, tuple_awaitable);
                            ++finished;
                        },
                        asio::detached);
                });
            };
            for (int k = 0; k < queued; ++k)
                queue_one();
            co_await sleep_for(50ms);
            other.async_lock("w-yield", waiting(20000ms), [&](error_code ec, lock l) {
                their_ec = ec;
                their_turn = acquired_here.load();
                their_done = true;
                other.async_unlock(l, [](error_code) {});
            });
            co_await sleep_for(100ms);  // the other waiter is refused and watches
            co_await c.async_unlock(first, tuple_awaitable);
            REQUIRE(co_await eventually([&] { return their_done || acquired_here >= max_handoffs; },
                                        20s));
            INFO("the other client's waiter got the resource after "
                 << their_turn << " of our acquisitions, " << handed << " of them hand-offs");
            REQUIRE(their_done);
            CHECK_FALSE(their_ec);
            CHECK(handed >= 1);  // a row of hand-offs did form before a yield let it in
            their_done = true;
            REQUIRE(co_await eventually([&] { return finished == started; }, 20s));
            CHECK(co_await settled_keys(m) == 0);
        },
        60s);
}

namespace {

// PEXPIRETIME of `key` on every master (Redis 7): when each copy expires, in Unix ms.
std::vector<std::string> expiry_times(const local_masters& m, std::string_view key)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m.size(); ++i)
    {
        out.push_back(m.command(i, {"PEXPIRETIME", key}));
        REQUIRE(out.back().starts_with(":1"));  // a time, not an error or -1/-2
    }
    return out;
}

// Releases `holder`, which a waiter started by start_waiter waits behind, and waits for the
// waiter to take the lock (`ec` and `next` are its outcome).
asio::awaitable<void> release_to_waiter(client& c, const lock& holder,
                                        const std::optional<error_code>& ec, const lock& next)
{
    auto [uec] = co_await c.async_unlock(holder, tuple_awaitable);
    CHECK_FALSE(uec);
    REQUIRE(co_await eventually([&] { return ec.has_value(); }, 5s));
    INFO(next.describe());
    REQUIRE_FALSE(*ec);
}

/// Starts the first waiter of `c` for `resource`, with `o`, behind `holder` (start_waiter), then
/// releases `holder` and waits for the waiter to take the lock (release_to_waiter): its lock.
asio::awaitable<lock> released_to_first_waiter(client& c, const local_masters& m,
                                               std::string resource, lock_options o,
                                               const lock& holder)
{
    std::optional<error_code> ec;
    lock next;
    co_await start_waiter(c, m, std::move(resource), o, true, ec, next);
    co_await release_to_waiter(c, holder, ec, next);
    co_return next;
}

}  // namespace

TEST_CASE_METHOD(
    masters_rig<5>,
    "wait: a holder hands its lock to the next waiter of its client: a new token on every master, "
    "the same expiry, and the holder's copy of the lock holds nothing, however long the hand-over "
    "waits for a write",
    "[live][wait][handoff]")
{
    // The hand-over written at once, after the default wait for a shared write, and after the
    // longest (client_config::handover_write_delay).
    const auto delay = GENERATE(std::chrono::microseconds(0), client_config{}.handover_write_delay,
                                std::chrono::microseconds(10000));
    auto cfg = config_for(m);
    cfg.handover_write_delay = delay;
    client hc(io.get_executor(), cfg);
    run(
        [&]() -> asio::awaitable<void> {
            co_await require_connected(hc);
            lock first = co_await acquired(hc, "w-hand", holder_options());
            const auto expiry = expiry_times(m, "w-hand");
            const auto o = waiting_to_hold(10000ms);
            const lock next = co_await released_to_first_waiter(hc, m, "w-hand", o, first);
            INFO(next.describe());
            // Taken over, not taken anew: the holder's validity, a token of its own.
            CHECK(next.valid_until() == first.valid_until());
            CHECK(next.token() != first.token());
            CHECK(next.token().size() == first.token().size());
            CHECK(next.ttl() == first.ttl());
            REQUIRE(co_await eventually([&] { return on_every_master(m, "w-hand", next.token()); },
                                        2s));
            CHECK(expiry_times(m, "w-hand") == expiry);  // the keys' expiry did not move

            // The holder's lock is gone from the keys: it can neither release nor extend them.
            auto [again] = co_await hc.async_unlock(first, tuple_awaitable);
            CHECK(again == error::lock_lost);
            auto [xec, xl] = co_await hc.async_extend(first, holder_ttl, tuple_awaitable);
            CHECK(xec);
            auto [cec, seen] = co_await hc.async_check(first, tuple_awaitable);
            CHECK_FALSE(cec);
            CHECK(seen.holding == 0);
            CHECK(on_every_master(m, "w-hand", next.token()));

            co_await unlock_and_expect_no_keys(hc, next, m);
        },
        20s);
    drain(io, hc);
}

TEST_CASE("wait: on masters whose ACL refuses CLIENT TRACKING, the waiter polls at retry_delay",
          "[live][wait]")
{
    // The client logs in as a user that may not run CLIENT (so no client name is sent either):
    // no tracking, hence no wake-up; the wait goes on by attempts every retry_delay, and ends
    // with the lock once the key set by hand expires (600 ms). (Redis 7 lets any user run
    // HELLO: the refusal is CLIENT TRACKING's.)
    local_masters m({.count = 3, .extra_config = {"user limited on >pw ~* +@all -client"}});
    asio::io_context io;
    auto cfg = config_for(m);
    for (std::size_t i = 0; i < m.size(); ++i)
        cfg.masters[i] = "redis://limited:pw@127.0.0.1:" + std::to_string(m.port(i));
    cfg.connection.client_name.clear();
    client c(io.get_executor(), cfg);
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            set_by_hand(m, "w-poll", 3, "600");
            const long sets_before = command_calls(m, 0, "set");
            auto o = waiting(5000ms);
            o.retry_delay = 50ms;
            o.retry_jitter = 0ms;
            const auto t0 = steady::now();
            auto [ec, l] = co_await c.async_lock("w-poll", o, tuple_awaitable);
            const auto took = steady::now() - t0;
            INFO(l.describe() << "; took " << ms(took) << " ms");
            REQUIRE_FALSE(ec);
            CHECK(took >= 500ms);  // not before the key expired
            // Polled: about one SET per 50 ms while the key lived (a tracked waiter sends two).
            const long sets = command_calls(m, 0, "set") - sets_before;
            CHECK(sets >= 5);
            // The connection was never put in tracking mode (no `t` among its flags).
            const auto list = m.command(0, {"CLIENT", "LIST"});
            INFO(list);
            const auto at = list.find("user=limited");
            REQUIRE(at != std::string::npos);
            const auto line_start = list.rfind('\n', at) + 1;  // (npos + 1 = 0: the first line)
            const auto line = list.substr(line_start, list.find('\n', at) - line_start);
            const auto flags_at = line.find(" flags=");
            REQUIRE(flags_at != std::string::npos);
            const auto flags =
                line.substr(flags_at + 7, line.find(' ', flags_at + 7) - flags_at - 7);
            CHECK(flags.find('t') == std::string::npos);
            co_await c.async_unlock(l, tuple_awaitable);
        },
        15s);
    c.close();
    io.run_for(500ms);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: a multi-resource waiter is never handed a lock: it takes every key anew",
                 "[live][wait][handoff]")
{
    // Made outside the coroutine: GCC 12 rejects a braced list of literals inside one.
    const std::vector<std::string> both{"w-multi-anew", "w-multi-anew-b"};
    run(
        [&]() -> asio::awaitable<void> {
            lock first = co_await acquired(c, "w-multi-anew", holder_options());
            std::optional<error_code> ec;
            lock next;
            auto o = waiting_to_hold(10000ms);  // a hand-off would be allowed by the TTLs
            c.async_lock_all(both, o, [&](error_code e, lock l) {
                ec = e;
                next = std::move(l);
            });
            co_await sleep_for(100ms);
            CHECK_FALSE(ec.has_value());  // waiting
            auto [uec] = co_await c.async_unlock(first, tuple_awaitable);
            CHECK_FALSE(uec);
            REQUIRE(co_await eventually([&] { return ec.has_value(); }, 5s));
            REQUIRE_FALSE(*ec);
            INFO(next.describe());
            // Set anew after the release (a hand-off keeps the holder's validity): later.
            CHECK(next.valid_until() > first.valid_until());
            CHECK(on_every_master(m, "w-multi-anew", next.token()));
            CHECK(on_every_master(m, "w-multi-anew-b", next.token()));
            co_await c.async_unlock(next, tuple_awaitable);
            CHECK(co_await settled_keys(m) == 0);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: no hand-off when the waiter declines it (handoff off) or less than half "
                 "its ttl is left: it "
                 "takes the lock anew after the release",
                 "[live][wait][handoff]")
{
    const bool handoff_off = GENERATE(true, false);
    run(
        [&]() -> asio::awaitable<void> {
            // Off: the same TTLs as a hand-off would take. On: the holder's 20 s are less than half
            // of the waiter's 60 s.
            lock first = co_await acquired(c, "w-anew", holder_options());
            auto o = waiting(10000ms);
            o.ttl = handoff_off ? holder_ttl : 3 * holder_ttl;
            o.handoff = !handoff_off;
            const lock next = co_await released_to_first_waiter(c, m, "w-anew", o, first);
            INFO(next.describe());
            CHECK(next.ttl() == o.ttl);
            co_await expect_taken_anew(c, m, next, first);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: a waiter with an identity declines the hand-off and takes the lock anew "
                 "after the release, its identity in the keys, and a holder with an identity hands "
                 "over to a waiter without one",
                 "[live][wait][handoff][identity]")
{
    // How many masters hold `l`'s value in the key.
    const auto holding = [&](const lock& l) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < m.size(); ++i)
            n += get_on(m, i, "w-ident") == std::string(l.token()) ? 1 : 0;
        return n;
    };
    run(
        [&]() -> asio::awaitable<void> {
            // The TTLs allow a hand-off: only the waiter's identity declines it.
            lock first = co_await acquired(c, "w-ident", holder_options());
            auto o = waiting_to_hold(10000ms);
            o.identity = "waiter-1";
            const lock next = co_await released_to_first_waiter(c, m, "w-ident", o, first);
            INFO(next.describe());
            CHECK(next.identity() == "waiter-1");
            CHECK(next.valid_until() > first.valid_until());  // set anew, not handed over
            CHECK(holding(next) >= 3);

            // That holder, with its identity, hands over to a waiter without one: the keys then
            // hold the waiter's bare token, with the holder's expiry.
            const auto plain = waiting_to_hold(10000ms);
            const lock bare = co_await released_to_first_waiter(c, m, "w-ident", plain, next);
            INFO(bare.describe());
            CHECK(bare.valid_until() == next.valid_until());  // handed over
            CHECK(bare.identity().empty());
            CHECK(bare.token().size() == 40);
            REQUIRE(co_await eventually([&] { return holding(bare) >= 3; }, 2s));
            co_await unlock_and_expect_no_keys(c, bare, m);
        },
        20s);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "wait: a lock no longer held is never handed over: a second release of the holder's copy, or a "
    "release after its extension failed, releases, and the next waiter goes on waiting",
    "[live][wait][handoff]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto o = waiting_to_hold(15000ms);
            lock first = co_await acquired(c, "w-dead", holder_options());
            std::optional<error_code> ec1, ec2;
            lock l1, l2;
            co_await start_waiter(c, m, "w-dead", o, true, ec1, l1);
            co_await start_waiter(c, m, "w-dead", o, false, ec2, l2);

            // Handed to the first waiter. The holder's copy released again: the keys hold the
            // first waiter's token, and the second waiter must not be handed anything.
            auto [uec] = co_await c.async_unlock(first, tuple_awaitable);
            CHECK_FALSE(uec);
            REQUIRE(co_await eventually([&] { return ec1.has_value(); }, 5s));
            REQUIRE_FALSE(*ec1);
            auto [again] = co_await c.async_unlock(first, tuple_awaitable);
            CHECK(again == error::lock_lost);
            CHECK_FALSE(
                ec2.has_value());  // a hand-off's completion would have run before this answer
            CHECK(on_every_master(m, "w-dead", l1.token()));

            // The first waiter's keys taken over by hand on a majority: its extension fails (lock_lost),
            // and its release afterwards finds a dead claim: the second waiter keeps waiting.
            for (std::size_t i = 0; i < 3; ++i)
                REQUIRE(m.command(i, {"SET", "w-dead", "someone-else", "XX"}) == "+OK\r\n");
            auto [xec, xl] = co_await c.async_extend(l1, holder_ttl, tuple_awaitable);
            CHECK(xec == error::lock_lost);
            auto [rec] = co_await c.async_unlock(l1, tuple_awaitable);
            CHECK(rec == error::lock_lost);
            CHECK_FALSE(ec2.has_value());

            // Once the keys are gone, the second waiter takes the lock anew.
            for (std::size_t i = 0; i < 3; ++i)
                CHECK(m.command(i, {"DEL", "w-dead"}) == ":1\r\n");
            REQUIRE(co_await eventually([&] { return ec2.has_value(); }, 5s));
            INFO(l2.describe());
            REQUIRE_FALSE(*ec2);
            co_await expect_taken_anew(c, m, l2, l1);
        },
        30s);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "wait: the hand-over goes as EVAL, never EVALSHA, even with its script cached on every master, "
    "and the lock handed over has the ttl its waiter asked for",
    "[live][wait][handoff]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // Cached: an EVALSHA would find it. A resent EVAL (after NOSCRIPT, or at the deadline)
            // could land after the new holder's release, so the hand-over never goes as EVALSHA.
            for (std::size_t i = 0; i < m.size(); ++i)
                REQUIRE(m.command(i, {"SCRIPT", "LOAD", detail::handover_script().body})
                            .starts_with("$40\r\n"));
            lock first = co_await acquired(c, "w-eval", holder_options());
            std::optional<error_code> ec;
            lock next;
            auto o = waiting(10000ms);
            o.ttl =
                holder_ttl + holder_ttl / 2;  // at most twice the holder's: it takes the hand-off
            co_await start_waiter(c, m, "w-eval", o, true, ec, next);
            // What the masters ran so far (the waiter's refused attempt may have sent a release).
            std::vector<long> evals, evalshas;
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                evals.push_back(command_calls(m, i, "eval"));
                evalshas.push_back(command_calls(m, i, "evalsha"));
            }

            co_await release_to_waiter(c, first, ec, next);
            INFO(next.describe());
            CHECK(next.valid_until() == first.valid_until());  // handed over
            CHECK(next.ttl() == o.ttl);                        // the waiter's, not the holder's
            CHECK(first.ttl() == holder_ttl);
            REQUIRE(co_await eventually([&] { return on_every_master(m, "w-eval", next.token()); },
                                        2s));
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                INFO("master " << i);
                CHECK(command_calls(m, i, "eval") == evals[i] + 1);
                CHECK(command_calls(m, i, "evalsha") == evalshas[i]);
            }

            co_await unlock_and_expect_no_keys(c, next, m);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "wait: a lock rebuilt by lock_from_parts is never handed over, extended or not: "
                 "its release deletes "
                 "the keys, and the waiter takes the lock anew",
                 "[live][wait][handoff]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock first = co_await acquired(c, "w-parts", holder_options());
            // Rebuilt from its parts (as a process that did not acquire it would), then extended:
            // a validity proven since, but the keys may be anyone's claim, so nothing is handed
            // over.
            auto [xec, rebuilt] =
                co_await c.async_extend(c.lock_from_parts("w-parts", first.token(), first.ttl()),
                                        holder_ttl, tuple_awaitable);
            REQUIRE_FALSE(xec);
            REQUIRE(rebuilt.valid_until() > first.valid_until());
            const auto o = waiting_to_hold(10000ms);
            const lock next = co_await released_to_first_waiter(c, m, "w-parts", o, rebuilt);
            INFO(next.describe());
            co_await expect_taken_anew(c, m, next, rebuilt);
        },
        20s);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "wait: a lock held by async_with_lock is handed to the next waiter when the work ends",
    "[live][wait][handoff]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto o = waiting_to_hold(10000ms);
            std::optional<error_code> ec;
            lock next;
            lock held;  // the work's lock
            std::vector<std::string> expiry;
            auto work = [&](lock l) -> asio::awaitable<void> {
                held = l;
                expiry = expiry_times(m, "w-held");
                co_await start_waiter(c, m, "w-held", o, true, ec, next);
            };
            // A TTL of 20 s: the hold does not extend while the work starts the waiter (at most 5 s).
            const error_code wec = co_await c.async_with_lock("w-held", holder_options(), {}, work);
            CHECK_FALSE(wec);
            REQUIRE(co_await eventually([&] { return ec.has_value(); }, 5s));
            INFO(next.describe());
            REQUIRE_FALSE(*ec);
            CHECK(next.valid_until() == held.valid_until());
            CHECK(next.token() != held.token());
            REQUIRE(co_await eventually([&] { return on_every_master(m, "w-held", next.token()); },
                                        2s));
            CHECK(expiry_times(m, "w-held") == expiry);
            co_await unlock_and_expect_no_keys(c, next, m);
        },
        20s);
}
