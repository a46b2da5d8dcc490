// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// A waiting acquisition (lock_options::wait) stepped by hand: refused by holders, it watches
// the masters that refused it and tries again when a quorum is possible, or at the fallback.
#include "fsm/acquire_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>

#include "acquire_test_words.hpp"

using namespace redlock_test::acquire;

namespace {

using redlock::error;

// N = 5, ttl 10 s (attempt timeout 200 ms), retry 50 ms + [0, 80] ms, a wait of 30 s.
lock_options waiting_options()
{
    lock_options o;
    o.ttl = 10s;
    o.max_attempts = 3;
    o.retry_delay = 50ms;
    o.retry_jitter = 80ms;  // the fallback's jitter: 1 ms + [0, 10] ms
    o.release_timeout = 200ms;
    o.wait = 30s;
    return o;
}

constexpr std::size_t wait_masters = 5;
constexpr std::uint64_t wait_seed = 7;

// An attempt (round `attempt`) answered at `now`: masters 0-2 held by another owner, 3 and 4
// granted. Its release is answered by every master 1 ms later. Returns the action that
// follows the release.
acquire_action refused_by_three(acquire_fsm& f, std::uint64_t attempt, time_point now)
{
    for (std::size_t m = 3; m < wait_masters; ++m)
        REQUIRE(answer(f, attempt, m, granted, now).type == kind::none);
    REQUIRE(answer(f, attempt, 0, held, now).type == kind::none);
    REQUIRE(answer(f, attempt, 1, held, now).type == kind::none);
    const auto rel = answer(f, attempt, 2, held, now);
    REQUIRE(rel.type == kind::send_release);
    acquire_action a;
    for (std::size_t m = 0; m < wait_masters; ++m)
        a = answer(f, rel.round_id, m, granted, now + 1ms);
    return a;
}

// Starts the machine at 0 ms and drives its first attempt to the watch.
acquire_action first_watch(acquire_fsm& f)
{
    const auto a = f.resume(acquire_event::start(at(0ms)));
    REQUIRE(a.type == kind::send_attempt);
    const auto w = refused_by_three(f, a.round_id, at(5ms));
    REQUIRE(w.type == kind::send_watch);
    return w;
}

bool jittered(time_point t, time_point base) { return t >= base + 1ms && t <= base + 11ms; }

}  // namespace

TEST_CASE("acquire_fsm wait: refused by holders, it watches exactly the masters that refused",
          "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    const auto w = first_watch(f);
    CHECK(*w.awaited == set_of(wait_masters, {0, 1, 2}));
    // Before any PTTL is known, the fallback is a TTL (plus jitter) after the release ended.
    CHECK(jittered(w.until, at(6ms) + 10s));
    CHECK_FALSE(f.done());
}

TEST_CASE("acquire_fsm wait: it tries again once enough masters let go for a quorum",
          "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    const auto w = first_watch(f);
    // 3 blocked of 5: one release makes 3 possible.
    CHECK(f.resume(acquire_event::watched(w.round_id, 0, granted, 4000, true, at(7ms))).type ==
          kind::wait_until);
    const auto a = f.resume(acquire_event::invalidated(1, at(20ms)));
    CHECK(a.type == kind::send_attempt);
    CHECK(a.new_token);
    CHECK(a.deadline == at(20ms) + 200ms);
    CHECK(f.attempts() == 2);
}

TEST_CASE("acquire_fsm wait: what one master's answer to the watch does", "[acquire_fsm][wait]")
{
    struct example
    {
        std::int64_t pttl;
        bool tracked;
        kind expected;
        std::chrono::milliseconds fallback;  // wait_until: from the answer's time, before jitter
    };
    const example examples[] = {
        {-2, true, kind::send_attempt, {}},     // the key went before the watch read it: a release
        {900, true, kind::wait_until, 900ms},   // the fallback moves to the key's expiry
        {9000, false, kind::wait_until, 50ms},  // no invalidation will come: polled at retry_delay
        {-1, true, kind::none, {}},             // a key without expiry moves nothing
    };
    for (const auto& e : examples)
    {
        INFO("pttl " << e.pttl << (e.tracked ? " tracked" : " untracked"));
        acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
        const auto w = first_watch(f);
        const auto a =
            f.resume(acquire_event::watched(w.round_id, 0, granted, e.pttl, e.tracked, at(7ms)));
        CHECK(a.type == e.expected);
        if (a.type == kind::wait_until)
            CHECK(jittered(a.until, at(7ms) + e.fallback));
    }
}

TEST_CASE("acquire_fsm wait: the fallback follows the smallest PTTL, and comes",
          "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    const auto w = first_watch(f);
    const auto a = f.resume(acquire_event::watched(w.round_id, 0, granted, 900, true, at(7ms)));
    REQUIRE(a.type == kind::wait_until);
    CHECK(f.resume(acquire_event::watched(w.round_id, 1, granted, 5000, true, at(8ms))).type ==
          kind::none);
    // At the fallback it tries again even though no master said it let go.
    CHECK(f.resume(acquire_event::backoff_elapsed(a.until)).type == kind::send_attempt);
}

TEST_CASE("acquire_fsm wait: stale and unrelated news is ignored", "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    const auto w = first_watch(f);
    // Another round's watch, a master that granted (not watched), a failed watch.
    CHECK(f.resume(acquire_event::watched(w.round_id + 7, 0, granted, -2, true, at(7ms))).type ==
          kind::none);
    CHECK(f.resume(acquire_event::watched(w.round_id, 3, granted, -2, true, at(7ms))).type ==
          kind::none);
    CHECK(f.resume(acquire_event::watched(w.round_id, 0, failed, -2, true, at(7ms))).type ==
          kind::none);
    CHECK(f.resume(acquire_event::invalidated(4, at(8ms))).type == kind::none);
    // One blocked master letting go makes a quorum possible (2 of 5 still hold it) ...
    CHECK(f.resume(acquire_event::invalidated(0, at(9ms))).type == kind::send_attempt);
    // ... and news while the attempt runs changes nothing.
    CHECK(f.resume(acquire_event::invalidated(1, at(9ms))).type == kind::none);
    CHECK(f.resume(acquire_event::watched(w.round_id, 2, granted, -2, true, at(9ms))).type ==
          kind::none);
}

TEST_CASE("acquire_fsm wait: refusals do not use up max_attempts, the end of the wait does",
          "[acquire_fsm][wait]")
{
    auto o = waiting_options();
    o.max_attempts = 1;
    o.wait = 2s;
    acquire_fsm f(o, wait_masters, wait_seed, false);
    auto w = first_watch(f);
    auto now = at(6ms);
    for (int round = 0; round < 4; ++round)
    {
        now += 100ms;
        const auto a = f.resume(acquire_event::invalidated(0, now));
        REQUIRE(f.resume(acquire_event::invalidated(1, now)).type == kind::none);  // already trying
        REQUIRE(a.type == kind::send_attempt);
        w = refused_by_three(f, a.round_id, now + 1ms);
        REQUIRE(w.type == kind::send_watch);
        now += 2ms;
    }
    CHECK(f.attempts() == 5);
    // The fallback is capped by the wait's end (start + 2 s), where the machine gives up.
    CHECK(w.until == at(0ms) + 2s);
    const auto c = f.resume(acquire_event::backoff_elapsed(w.until));
    REQUIRE(c.type == kind::complete);
    CHECK(c.ec == error::contended);
    CHECK(f.done());
}

TEST_CASE("acquire_fsm wait: max_wait bounds the wait too", "[acquire_fsm][wait]")
{
    auto o = waiting_options();
    o.max_wait = 500ms;
    acquire_fsm f(o, wait_masters, wait_seed, false);
    const auto w = first_watch(f);
    CHECK(w.until == at(0ms) + 500ms);
}

TEST_CASE("acquire_fsm wait: a cancellation or a close while watching completes at once",
          "[acquire_fsm][wait]")
{
    const bool cancel = GENERATE(true, false);
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    (void)first_watch(f);
    const auto c =
        f.resume(cancel ? acquire_event::cancel(at(50ms)) : acquire_event::closed(at(50ms)));
    REQUIRE(c.type == kind::complete);
    CHECK(c.ec == (cancel ? redlock::error_code(boost::asio::error::operation_aborted)
                          : redlock::error_code(error::connection_closed)));
    CHECK(f.resume(acquire_event::invalidated(0, at(51ms))).type == kind::none);
}

TEST_CASE("acquire_fsm wait: an attempt failing for another reason is retried as without waiting",
          "[acquire_fsm][wait]")
{
    auto o = waiting_options();
    o.max_attempts = 2;
    acquire_fsm f(o, wait_masters, wait_seed, false);
    const auto a = f.resume(acquire_event::start(at(0ms)));
    // Three masters fail (no quorum, not contention): a retry delay, not a watch.
    REQUIRE(answer(f, a.round_id, 3, granted, at(3ms)).type == kind::none);
    for (std::size_t m = 0; m < 2; ++m)
        REQUIRE(answer(f, a.round_id, m, failed, at(3ms)).type == kind::none);
    const auto rel = answer(f, a.round_id, 2, failed, at(3ms));
    REQUIRE(rel.type == kind::send_release);
    acquire_action w;
    for (std::size_t m = 0; m < wait_masters; ++m)
        if (rel.awaited->contains(m))
            w = answer(f, rel.round_id, m, granted, at(4ms));
    REQUIRE(w.type == kind::wait_until);
    CHECK(w.until >= at(4ms) + 50ms);
    CHECK(w.until <= at(4ms) + 130ms);
}

TEST_CASE("acquire_fsm wait: try mode never waits", "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, true);
    const auto a = f.resume(acquire_event::start(at(0ms)));
    const auto c = refused_by_three(f, a.round_id, at(5ms));
    REQUIRE(c.type == kind::complete);
    CHECK(c.ec == error::contended);
}

TEST_CASE("acquire_fsm wait: queued behind others of its process, it waits for its turn",
          "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    const auto q = f.resume(acquire_event::queued(at(0ms)));
    REQUIRE(q.type == kind::wait_until);
    CHECK(q.until == at(0ms) + 30s);
    CHECK(f.resume(acquire_event::invalidated(0, at(1ms))).type == kind::none);
    const auto a = f.resume(acquire_event::turn(at(40ms)));
    CHECK(a.type == kind::send_attempt);
    CHECK(a.deadline == at(40ms) + 200ms);
}

TEST_CASE("acquire_fsm wait: the wait can end, or be cancelled, before the turn comes",
          "[acquire_fsm][wait]")
{
    const bool cancel = GENERATE(true, false);
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    const auto q = f.resume(acquire_event::queued(at(0ms)));
    const auto c =
        f.resume(cancel ? acquire_event::cancel(at(5ms)) : acquire_event::backoff_elapsed(q.until));
    REQUIRE(c.type == kind::complete);
    CHECK(c.ec == (cancel ? redlock::error_code(boost::asio::error::operation_aborted)
                          : redlock::error_code(error::contended)));
    CHECK(f.resume(acquire_event::turn(at(6ms))).type == kind::none);
}

TEST_CASE("acquire_fsm wait: a turn after the one before took the lock waits for its release",
          "[acquire_fsm][wait]")
{
    acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
    (void)f.resume(acquire_event::queued(at(0ms)));
    // No watch (the keys are this process's own): the fallback is their TTL.
    const auto w = f.resume(acquire_event::turn(at(30ms), true));
    REQUIRE(w.type == kind::wait_until);
    CHECK(jittered(w.until, at(30ms) + 10s));
    CHECK(f.attempts() == 0);
    // Its own process's release, master after master: a quorum of them is needed.
    CHECK(f.resume(acquire_event::invalidated(0, at(40ms))).type == kind::none);
    CHECK(f.resume(acquire_event::invalidated(1, at(40ms))).type == kind::none);
    const auto a = f.resume(acquire_event::invalidated(2, at(40ms)));
    CHECK(a.type == kind::send_attempt);
    CHECK(f.attempts() == 1);
}

TEST_CASE("acquire_fsm wait: a lock handed over by a holder of the process is taken between "
          "rounds, and only then",
          "[acquire_fsm][wait][handoff]")
{
    // The holder's lock ends at 7 s: more than half of the 10 s TTL after 1 s, less after 3 s.
    const auto offered_until = at(7000ms);
    SECTION("queued behind the holder: taken at once, with the holder's validity")
    {
        acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
        REQUIRE(f.resume(acquire_event::queued(at(0ms))).type == kind::wait_until);
        const auto a = f.resume(acquire_event::handed(at(1000ms), offered_until));
        CHECK(a.type == kind::complete);
        CHECK_FALSE(a.ec);
        CHECK(a.valid_until == offered_until);
        CHECK(f.done());
        CHECK(f.attempts() == 0);
    }
    SECTION("waiting for the release after a refusal: taken")
    {
        acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
        first_watch(f);
        const auto a = f.resume(acquire_event::handed(at(1000ms), offered_until));
        CHECK(a.type == kind::complete);
        CHECK(a.valid_until == offered_until);
    }
    SECTION("backing off after a failed attempt: taken")
    {
        acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
        const auto s = f.resume(acquire_event::start(at(0ms)));
        // Every master fails: no holder refused it, so it backs off as without waiting.
        acquire_action rel;
        for (std::size_t m = 0; m < wait_masters && rel.type == kind::none; ++m)
            rel = answer(f, s.round_id, m, master_outcome::failed, at(5ms));
        REQUIRE(rel.type == kind::send_release);
        acquire_action next;
        for (std::size_t m = 0; m < wait_masters && next.type == kind::none; ++m)
            next = answer(f, rel.round_id, m, granted, at(6ms));
        REQUIRE(next.type == kind::wait_until);
        CHECK(f.resume(acquire_event::handed(at(10ms), offered_until)).type == kind::complete);
    }
    SECTION("declined with less than half its TTL left: it goes on waiting")
    {
        acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
        REQUIRE(f.resume(acquire_event::queued(at(0ms))).type == kind::wait_until);
        CHECK(f.resume(acquire_event::handed(at(2001ms), offered_until)).type == kind::none);
        CHECK(f.resume(acquire_event::handed(at(2000ms), offered_until)).type == kind::complete);
    }
    SECTION("declined during an attempt, whose keys may be granted somewhere")
    {
        acquire_fsm f(waiting_options(), wait_masters, wait_seed, false);
        const auto s = f.resume(acquire_event::start(at(0ms)));
        REQUIRE(s.type == kind::send_attempt);
        CHECK(f.resume(acquire_event::handed(at(1ms), offered_until)).type == kind::none);
        CHECK_FALSE(f.done());
        // The attempt goes on as before: refused by three, it watches.
        CHECK(refused_by_three(f, s.round_id, at(5ms)).type == kind::send_watch);
    }
    SECTION("declined once the wait is over")
    {
        auto o = waiting_options();
        o.wait = 500ms;
        acquire_fsm f(o, wait_masters, wait_seed, false);
        REQUIRE(f.resume(acquire_event::queued(at(0ms))).type == kind::wait_until);
        CHECK(f.resume(acquire_event::handed(at(500ms), offered_until)).type == kind::none);
    }
}

TEST_CASE("acquire_fsm wait: a fenced lock, one with handoff off, and a try never take a lock "
          "handed over",
          "[acquire_fsm][wait][handoff]")
{
    auto fenced = waiting_options();
    fenced.fencing = true;
    auto off = waiting_options();
    off.handoff = false;
    for (const auto& [o, name] : {std::pair{fenced, "fenced"}, std::pair{off, "handoff off"}})
    {
        INFO(name);
        acquire_fsm f(o, wait_masters, wait_seed, false);
        REQUIRE(f.resume(acquire_event::queued(at(0ms))).type == kind::wait_until);
        CHECK(f.resume(acquire_event::handed(at(1ms), at(9000ms))).type == kind::none);
        CHECK_FALSE(f.done());
    }
    acquire_fsm t(waiting_options(), wait_masters, wait_seed, true);
    const auto s = t.resume(acquire_event::start(at(0ms)));
    REQUIRE(s.type == kind::send_attempt);
    acquire_action rel;
    for (std::size_t m = 0; m < wait_masters && rel.type == kind::none; ++m)
        rel = answer(t, s.round_id, m, held, at(1ms));
    REQUIRE(rel.type == kind::send_release);
    CHECK(t.resume(acquire_event::handed(at(2ms), at(9000ms))).type == kind::none);
}
