// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The acquisition's decisions stepped by hand: every event is written out, time included.
#include "fsm/acquire_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "acquire_test_words.hpp"
#include "algorithm/backoff.hpp"
#include "fsm_test_words.hpp"

using namespace redlock_test::acquire;

namespace {

using redlock::error;
using redlock::detail::master_set;
using redlock::detail::retry_policy;
using redlock::detail::retry_schedule;
using redlock_test::fsm::aborted;

// ttl 10 s: attempt timeout 200 ms (ttl / 20 clamped), drift 10 ms * 10 + 2 ms = 102 ms.
lock_options options()
{
    lock_options o;
    o.ttl = 10s;
    o.drift_factor = 0.01;
    o.max_attempts = 3;
    o.retry_delay = 50ms;
    o.retry_jitter = 150ms;
    o.release_timeout = 200ms;
    return o;
}

constexpr std::uint64_t acquire_seed = 42;

// Feeds the same outcome from each of `masters` in order, all at `now`; every reply but the
// last must leave the machine waiting. Returns the last action.
acquire_action answer_all(acquire_fsm& f, std::uint64_t round,
                          std::initializer_list<std::size_t> masters, master_outcome o,
                          time_point now)
{
    acquire_action a;
    std::size_t left = masters.size();
    for (const auto m : masters)
    {
        a = answer(f, round, m, o, now);
        if (--left > 0)
            REQUIRE(a.type == kind::none);
    }
    return a;
}

// Drives N = 3 to a failed first attempt (two held_by_other), asserting the release it asks
// for, and returns that release.
acquire_action contended_first_attempt(acquire_fsm& f, time_point t0)
{
    const auto a = f.resume(acquire_event::start(t0));
    REQUIRE(a.type == kind::send_attempt);
    const auto rel = answer_all(f, a.round_id, {0, 1}, held, t0 + 5ms);
    REQUIRE(rel.type == kind::send_release);
    REQUIRE(rel.round_id != a.round_id);
    REQUIRE(*rel.awaited == set_of(3, {2}));
    REQUIRE(rel.deadline == t0 + 5ms + 200ms);
    return rel;
}

// Every master the release `rel` awaits grants it at `now`, which must complete the machine;
// returns the completion.
acquire_action complete_release(acquire_fsm& f, const acquire_action& rel, time_point now)
{
    acquire_action c;
    for (std::size_t m = 0; m < rel.awaited->masters(); ++m)
        if (rel.awaited->contains(m))
        {
            REQUIRE(c.type == kind::none);
            c = answer(f, rel.round_id, m, granted, now);
        }
    REQUIRE(c.type == kind::complete);
    return c;
}

// The second attempt after a contended first one (N = 3) whose release every master answered
// with `release_answer` at 6 ms: the end of the backoff and the attempt sent then.
struct retry
{
    time_point at;
    acquire_action attempt;
};

retry retry_after_contention(acquire_fsm& f, master_outcome release_answer)
{
    const auto rel = contended_first_attempt(f, at(0ms));
    const auto w = answer_all(f, rel.round_id, {0, 1, 2}, release_answer, at(6ms));
    REQUIRE(w.type == kind::wait_until);
    return {w.until, f.resume(acquire_event::backoff_elapsed(w.until))};
}

// Feeds the deadline of `rel`'s round, which must complete the machine; returns the completion.
acquire_action complete_at_deadline(acquire_fsm& f, const acquire_action& rel)
{
    const auto c = f.resume(acquire_event::deadline(rel.round_id, rel.deadline));
    REQUIRE(c.type == kind::complete);
    return c;
}

}  // namespace

TEST_CASE("acquire_fsm: start sends the first attempt with its deadline", "[acquire_fsm]")
{
    struct example
    {
        std::chrono::milliseconds ttl;
        std::chrono::milliseconds attempt_timeout;
        std::chrono::milliseconds expected;
    };
    // attempt_timeout 0 derives ttl / 20 clamped to [10 ms, 200 ms]; a set value is used as is.
    const example examples[] = {
        {10s, 0ms, 200ms}, {1s, 0ms, 50ms}, {100ms, 0ms, 10ms}, {10s, 70ms, 70ms}};
    for (const auto& e : examples)
    {
        auto o = options();
        o.ttl = e.ttl;
        o.attempt_timeout = e.attempt_timeout;
        acquire_fsm f(o, 5, acquire_seed, false);
        CHECK_FALSE(f.done());
        const auto a = f.resume(acquire_event::start(at(0ms)));
        CHECK(a.type == kind::send_attempt);
        CHECK(a.round_id != 0);
        CHECK(a.new_token);
        CHECK(a.deadline == at(0ms) + e.expected);
        CHECK(f.attempts() == 1);
        CHECK(f.attempt_started() == at(0ms));
        // A second start is not a new operation.
        CHECK(f.resume(acquire_event::start(at(1ms))).type == kind::none);
    }
}

TEST_CASE("acquire_fsm: success at the quorum, before the slow masters answer", "[acquire_fsm]")
{
    acquire_fsm f(options(), 5, acquire_seed, false);
    const auto t0 = at(0ms);
    const auto a = f.resume(acquire_event::start(t0));
    CHECK(answer(f, a.round_id, 4, granted, t0 + 1ms).type == kind::none);
    CHECK(answer(f, a.round_id, 1, held, t0 + 2ms).type == kind::none);
    CHECK(answer(f, a.round_id, 0, granted, t0 + 3ms).type == kind::none);
    const auto c = answer(f, a.round_id, 2, granted, t0 + 4ms);
    REQUIRE(c.type == kind::complete);
    CHECK(!c.ec);
    // t0 + ttl - drift, counted from the attempt's start, not from the decisive reply.
    CHECK(c.valid_until == t0 + 10s - 102ms);
    CHECK(f.done());

    const auto& q = f.last_attempt();
    CHECK(q.granted() == 3);
    CHECK(q.held_by_other() == 1);
    CHECK(q.outcome(3) == master_outcome::pending);

    // The slow master and the attempt's deadline change nothing.
    CHECK(answer(f, a.round_id, 3, granted, t0 + 5ms).type == kind::none);
    CHECK(f.resume(acquire_event::deadline(a.round_id, a.deadline)).type == kind::none);
    CHECK(f.last_attempt().outcome(3) == master_outcome::pending);
}

TEST_CASE("acquire_fsm: a single master is its own quorum", "[acquire_fsm]")
{
    acquire_fsm f(options(), 1, acquire_seed, false);
    const auto a = f.resume(acquire_event::start(at(0ms)));
    const auto c = answer(f, a.round_id, 0, granted, at(1ms));
    REQUIRE(c.type == kind::complete);
    CHECK(!c.ec);
}

TEST_CASE("acquire_fsm: a quorum reached with no validity left fails the attempt", "[acquire_fsm]")
{
    // ttl 100 ms: drift 1 ms + 2 ms, so the validity left is 97 ms - elapsed.
    auto o = options();
    o.ttl = 100ms;
    o.attempt_timeout = 1s;
    o.max_attempts = 1;

    SECTION("97 ms elapsed: nothing left")
    {
        acquire_fsm f(o, 3, acquire_seed, false);
        const auto a = f.resume(acquire_event::start(at(0ms)));
        const auto rel = answer_all(f, a.round_id, {0, 2}, granted, at(97ms));
        REQUIRE(rel.type == kind::send_release);
        // The silent master is awaited: it did not time out, it was just not needed.
        CHECK(*rel.awaited == set_of(3, {0, 1, 2}));
        CHECK(rel.deadline == at(97ms) + 200ms);
        CHECK(answer_all(f, rel.round_id, {2, 1}, granted, at(98ms)).type == kind::none);
        const auto c = answer(f, rel.round_id, 0, held, at(99ms));
        REQUIRE(c.type == kind::complete);
        CHECK(c.ec == error::validity_expired);
        CHECK(f.last_attempt().granted() == 2);
    }
    SECTION("96 ms elapsed: 1 ms left is a lock")
    {
        acquire_fsm f(o, 3, acquire_seed, false);
        const auto a = f.resume(acquire_event::start(at(0ms)));
        const auto c = answer_all(f, a.round_id, {0, 2}, granted, at(96ms));
        REQUIRE(c.type == kind::complete);
        CHECK(!c.ec);
        CHECK(c.valid_until == at(97ms));
    }
}

TEST_CASE("acquire_fsm: contended, release, backoff, then a new attempt with a new token",
          "[acquire_fsm]")
{
    acquire_fsm f(options(), 3, acquire_seed, false);
    const auto t0 = at(0ms);
    const auto rel = contended_first_attempt(f, t0);
    // Masters 0 and 1 refused: nothing of ours there, no release awaited from them.
    CHECK(answer_all(f, rel.round_id, {0, 1}, granted, t0 + 6ms).type == kind::none);
    const auto w = answer(f, rel.round_id, 2, granted, t0 + 7ms);
    REQUIRE(w.type == kind::wait_until);

    // The delay is the retry_schedule's, seeded with the same value.
    retry_schedule expected(retry_policy{3, 50ms, 150ms, 0ms}, acquire_seed);
    CHECK(w.until == t0 + 7ms + *expected.next_delay(7ms));
    CHECK(w.until - (t0 + 7ms) >= 50ms);
    CHECK(w.until - (t0 + 7ms) <= 200ms);

    // Nothing of the first attempt or its release counts any more.
    CHECK(answer(f, rel.round_id - 1, 2, granted, w.until - 1ms).type == kind::none);
    CHECK(f.resume(acquire_event::deadline(rel.round_id, w.until - 1ms)).type == kind::none);

    const auto t1 = w.until;
    const auto a2 = f.resume(acquire_event::backoff_elapsed(t1));
    REQUIRE(a2.type == kind::send_attempt);
    CHECK(a2.new_token);
    CHECK(a2.round_id != rel.round_id);
    CHECK(a2.deadline == t1 + 200ms);
    CHECK(f.attempts() == 2);
    CHECK(f.attempt_started() == t1);

    const auto c = answer_all(f, a2.round_id, {1, 2}, granted, t1 + 3ms);
    REQUIRE(c.type == kind::complete);
    CHECK(!c.ec);
    CHECK(c.valid_until == t1 + 10s - 102ms);
}

TEST_CASE("acquire_fsm: no attempt left completes with the last attempt's reason", "[acquire_fsm]")
{
    auto o = options();
    o.max_attempts = 2;
    SECTION("contended twice")
    {
        acquire_fsm f(o, 3, acquire_seed, false);
        const auto [t1, a2] = retry_after_contention(f, granted);
        const auto rel2 = answer_all(f, a2.round_id, {2, 1}, held, t1 + 1ms);
        REQUIRE(rel2.type == kind::send_release);
        CHECK(complete_release(f, rel2, t1 + 2ms).ec == error::contended);
        CHECK(f.attempts() == 2);
    }
    SECTION("contended, then no quorum: the last reason wins")
    {
        acquire_fsm f(o, 3, acquire_seed, false);
        const auto [t1, a2] = retry_after_contention(f, failed);
        CHECK(answer(f, a2.round_id, 0, granted, t1 + 1ms).type == kind::none);
        const auto rel2 = answer_all(f, a2.round_id, {1, 2}, failed, t1 + 1ms);
        REQUIRE(rel2.type == kind::send_release);
        CHECK(complete_release(f, rel2, t1 + 2ms).ec == error::no_quorum);
        CHECK(f.last_attempt().granted() == 1);
        CHECK(f.last_attempt().failed() == 2);
    }
    SECTION("the time budget is spent: no wait that would only end in giving up")
    {
        o.max_attempts = 5;
        o.max_wait = 40ms;  // less than the smallest delay (retry_delay 50 ms)
        acquire_fsm f(o, 3, acquire_seed, false);
        const auto rel = contended_first_attempt(f, at(0ms));
        CHECK(complete_release(f, rel, at(6ms)).ec == error::contended);
    }
}

TEST_CASE("acquire_fsm: try mode makes one attempt", "[acquire_fsm]")
{
    // max_attempts is ignored in try mode, as by async_try_lock; the contended error is left
    // for its driver to turn into an empty optional.
    acquire_fsm f(options(), 3, acquire_seed, true);
    const auto rel = contended_first_attempt(f, at(0ms));
    CHECK(complete_release(f, rel, at(6ms)).ec == error::contended);
    CHECK(f.attempts() == 1);
}

TEST_CASE("acquire_fsm: the attempt deadline times out the pending masters", "[acquire_fsm]")
{
    acquire_fsm f(options(), 5, acquire_seed, false);
    const auto t0 = at(0ms);
    const auto a = f.resume(acquire_event::start(t0));
    CHECK(answer_all(f, a.round_id, {0, 3}, granted, t0 + 2ms).type == kind::none);

    SECTION("the release waits only for the masters that answered")
    {
        const auto rel = f.resume(acquire_event::deadline(a.round_id, a.deadline));
        REQUIRE(rel.type == kind::send_release);
        CHECK(*rel.awaited == set_of(5, {0, 3}));
        CHECK(rel.deadline == a.deadline + 200ms);
        const auto& q = f.last_attempt();
        CHECK(q.outcome(1) == master_outcome::timed_out);
        CHECK(q.outcome(2) == master_outcome::timed_out);
        CHECK(q.outcome(4) == master_outcome::timed_out);
        CHECK(q.outcome(0) == granted);

        // An answer from a master the release does not await ends nothing.
        CHECK(answer(f, rel.round_id, 1, granted, a.deadline + 1ms).type == kind::none);
        CHECK(answer(f, rel.round_id, 0, granted, a.deadline + 1ms).type == kind::none);
        const auto w = answer(f, rel.round_id, 3, held, a.deadline + 2ms);
        CHECK(w.type == kind::wait_until);
    }
    SECTION("the release's own deadline ends it when an awaited master stays silent")
    {
        const auto rel = f.resume(acquire_event::deadline(a.round_id, a.deadline));
        CHECK(answer(f, rel.round_id, 0, granted, a.deadline + 1ms).type == kind::none);
        // The attempt's deadline, delivered late, belongs to a finished round.
        CHECK(f.resume(acquire_event::deadline(a.round_id, a.deadline + 2ms)).type == kind::none);
        CHECK(f.resume(acquire_event::deadline(rel.round_id, rel.deadline)).type ==
              kind::wait_until);
    }
    SECTION("the decision does not wait for the deadline once no quorum is possible")
    {
        // Two grants and two failures leave a majority possible; the third failure does not.
        CHECK(answer_all(f, a.round_id, {1, 2}, failed, t0 + 3ms).type == kind::none);
        const auto rel = answer(f, a.round_id, 4, failed, t0 + 4ms);
        REQUIRE(rel.type == kind::send_release);
        CHECK(*rel.awaited == set_of(5, {0, 1, 2, 3, 4}));
        CHECK(f.last_attempt().failure_reason() == error::no_quorum);
    }
}

TEST_CASE("acquire_fsm: a release that awaits nobody ends at a deadline due at once",
          "[acquire_fsm]")
{
    auto o = options();
    o.max_attempts = 1;
    acquire_fsm f(o, 3, acquire_seed, false);
    const auto a = f.resume(acquire_event::start(at(0ms)));
    const auto rel = f.resume(acquire_event::deadline(a.round_id, a.deadline));
    REQUIRE(rel.type == kind::send_release);
    CHECK(rel.awaited->empty());
    CHECK(rel.awaited->masters() == 3);
    CHECK(rel.deadline == a.deadline);
    const auto c = complete_at_deadline(f, rel);
    CHECK(c.ec == error::no_quorum);
    CHECK(f.last_attempt().failed() == 3);
}

TEST_CASE("acquire_fsm: cancelled or closed in each phase", "[acquire_fsm][cancel][close]")
{
    // The two interruptions take the same paths and differ in the error they complete with.
    struct interruption
    {
        const char* name;
        acquire_event (*event)(time_point);
        redlock::error_code ec;
    };
    const auto which = GENERATE(0, 1);
    const interruption in =
        which == 0 ? interruption{"cancel", &acquire_event::cancel, aborted}
                   : interruption{"close", &acquire_event::closed, error::connection_closed};
    INFO(in.name);
    const auto t0 = at(0ms);
    acquire_fsm f(options(), 3, acquire_seed, false);  // afresh for each section

    SECTION("before start: at once")
    {
        const auto c = f.resume(in.event(t0));
        REQUIRE(c.type == kind::complete);
        CHECK(c.ec == in.ec);
        CHECK(f.resume(acquire_event::start(t0)).type == kind::none);
    }
    SECTION("attempting: release every master, then complete")
    {
        const auto a = f.resume(acquire_event::start(t0));
        CHECK(answer(f, a.round_id, 0, granted, t0 + 1ms).type == kind::none);
        const auto rel = f.resume(in.event(t0 + 2ms));
        REQUIRE(rel.type == kind::send_release);
        CHECK(*rel.awaited == set_of(3, {0, 1, 2}));
        CHECK(rel.deadline == t0 + 2ms + 200ms);
        // A grant after the interruption is for the old round: it cannot make a lock.
        CHECK(answer(f, a.round_id, 1, granted, t0 + 3ms).type == kind::none);
        // Attempts are left, yet no retry. (After a close the connections fail the release.)
        const auto c =
            answer_all(f, rel.round_id, {0, 1, 2}, which == 0 ? granted : failed, t0 + 4ms);
        REQUIRE(c.type == kind::complete);
        CHECK(c.ec == in.ec);
    }
    SECTION("releasing: the release is not cut short")
    {
        const auto rel = contended_first_attempt(f, t0);
        CHECK(f.resume(in.event(t0 + 6ms)).type == kind::none);
        CHECK(f.resume(in.event(t0 + 6ms)).type == kind::none);
        CHECK(answer_all(f, rel.round_id, {0, 1}, granted, t0 + 7ms).type == kind::none);
        CHECK(complete_at_deadline(f, rel).ec == in.ec);
    }
    SECTION("releasing, then the other interruption too: the cancellation is reported")
    {
        const auto rel = contended_first_attempt(f, t0);
        CHECK(f.resume(in.event(t0 + 6ms)).type == kind::none);
        CHECK(
            f.resume((which == 0 ? acquire_event::closed : acquire_event::cancel)(t0 + 6ms)).type ==
            kind::none);
        CHECK(complete_at_deadline(f, rel).ec == aborted);
    }
    SECTION("backing off: at once")
    {
        const auto rel = contended_first_attempt(f, t0);
        const auto w = answer_all(f, rel.round_id, {0, 1, 2}, granted, t0 + 6ms);
        REQUIRE(w.type == kind::wait_until);
        const auto c = f.resume(in.event(t0 + 7ms));
        REQUIRE(c.type == kind::complete);
        CHECK(c.ec == in.ec);
        // The first attempt's outcomes stay the diagnostics.
        CHECK(f.last_attempt().held_by_other() == 2);
        CHECK(f.resume(acquire_event::backoff_elapsed(w.until)).type == kind::none);
    }
    SECTION("after completion: nothing")
    {
        const auto a = f.resume(acquire_event::start(t0));
        const auto c = answer_all(f, a.round_id, {0, 1}, granted, t0 + 1ms);
        REQUIRE(c.type == kind::complete);
        CHECK(f.resume(in.event(t0 + 2ms)).type == kind::none);
        CHECK(f.done());
        CHECK(!c.ec);
    }
}

TEST_CASE("acquire_fsm: stale and stray events are ignored", "[acquire_fsm]")
{
    acquire_fsm f(options(), 3, acquire_seed, false);
    const auto t0 = at(0ms);
    const auto a1 = f.resume(acquire_event::start(t0));
    // Round 0 is never used; an index out of range names no master; pending is no answer.
    CHECK(answer(f, 0, 0, granted, t0).type == kind::none);
    CHECK(answer(f, a1.round_id + 1, 0, granted, t0).type == kind::none);
    CHECK(answer(f, a1.round_id, 3, granted, t0).type == kind::none);
    CHECK(answer(f, a1.round_id, 0, master_outcome::pending, t0).type == kind::none);
    CHECK(f.resume(acquire_event::backoff_elapsed(t0)).type == kind::none);
    CHECK(f.resume(acquire_event::deadline(a1.round_id + 1, t0)).type == kind::none);
    CHECK(f.last_attempt().pending() == 3);

    const auto rel = answer_all(f, a1.round_id, {0, 1}, held, t0 + 1ms);
    REQUIRE(rel.type == kind::send_release);
    // The attempt's late grants during its release: the round is over.
    CHECK(answer(f, a1.round_id, 2, granted, t0 + 2ms).type == kind::none);
    CHECK(f.last_attempt().outcome(2) == master_outcome::pending);
    const auto w = answer_all(f, rel.round_id, {0, 1, 2}, granted, t0 + 3ms);
    REQUIRE(w.type == kind::wait_until);
    CHECK(answer(f, rel.round_id, 0, granted, t0 + 4ms).type == kind::none);

    const auto a2 = f.resume(acquire_event::backoff_elapsed(w.until));
    REQUIRE(a2.type == kind::send_attempt);
    // Grants of the first attempt and answers of its release do not count toward the second.
    CHECK(answer(f, a1.round_id, 0, granted, w.until + 1ms).type == kind::none);
    CHECK(answer(f, a1.round_id, 1, granted, w.until + 1ms).type == kind::none);
    CHECK(answer(f, rel.round_id, 1, granted, w.until + 1ms).type == kind::none);
    CHECK(f.resume(acquire_event::deadline(a1.round_id, w.until + 1ms)).type == kind::none);
    CHECK(f.resume(acquire_event::deadline(rel.round_id, w.until + 1ms)).type == kind::none);
    CHECK(f.last_attempt().pending() == 3);
    CHECK(answer(f, a2.round_id, 1, granted, w.until + 2ms).type == kind::none);
    CHECK(answer(f, a2.round_id, 0, granted, w.until + 2ms).type == kind::complete);
}

TEST_CASE("acquire_fsm: a master's second answer is ignored", "[acquire_fsm]")
{
    acquire_fsm f(options(), 3, acquire_seed, false);
    const auto a = f.resume(acquire_event::start(at(0ms)));
    CHECK(answer(f, a.round_id, 0, granted, at(1ms)).type == kind::none);
    // Counted twice it would make the quorum of 2.
    CHECK(answer(f, a.round_id, 0, granted, at(2ms)).type == kind::none);
    CHECK(f.last_attempt().granted() == 1);
    // Nor does a master change its mind.
    CHECK(answer(f, a.round_id, 0, held, at(2ms)).type == kind::none);
    const auto rel = answer_all(f, a.round_id, {1, 2}, held, at(3ms));
    REQUIRE(rel.type == kind::send_release);
    CHECK(f.last_attempt().granted() == 1);

    CHECK(answer(f, rel.round_id, 1, granted, at(4ms)).type == kind::none);
    CHECK(answer(f, rel.round_id, 1, granted, at(4ms)).type == kind::none);
    CHECK(answer(f, rel.round_id, 2, granted, at(4ms)).type == kind::none);
    CHECK(answer(f, rel.round_id, 0, granted, at(4ms)).type == kind::wait_until);
}

// ---- a failure injected at every step (Boost.MySQL's check_network_errors) -------------------

namespace {

// A driver with scripted answers: every master answers in index order, 1 ms apart, with the
// outcome `script` gives for (step, is_release); backoffs are waited out exactly. Records the
// kinds of the actions in order.
struct conversation
{
    std::vector<kind> actions;
    acquire_action last;
    std::size_t steps = 0;
    std::optional<std::size_t> injected_master;  // the master that answered at the injected step
};

conversation converse(acquire_fsm& f, std::size_t masters,
                      const std::function<master_outcome(std::size_t step, bool release)>& script,
                      std::size_t inject_at)
{
    conversation c;
    auto now = at(0ms);
    auto a = f.resume(acquire_event::start(now));
    while (a.type != kind::complete)
    {
        c.actions.push_back(a.type);
        REQUIRE(c.actions.size() < 100);
        if (a.type == kind::wait_until)
        {
            now = a.until;
            a = f.resume(acquire_event::backoff_elapsed(now));
            continue;
        }
        REQUIRE((a.type == kind::send_attempt || a.type == kind::send_release));
        const bool release = a.type == kind::send_release;
        const auto round = a;
        // A copy: the action's set is the machine's, which changes as the masters answer.
        const auto awaited = release ? *round.awaited : master_set();
        a = {};
        for (std::size_t m = 0; m < masters && a.type == kind::none; ++m)
        {
            if (release && !awaited.contains(m))
                continue;
            if (c.steps == inject_at)
                c.injected_master = m;
            now += 1ms;
            a = f.resume(acquire_event::reply(round.round_id, m, script(c.steps++, release), now));
        }
        if (a.type == kind::none)
            a = f.resume(acquire_event::deadline(round.round_id, round.deadline));
    }
    c.actions.push_back(a.type);
    c.last = a;
    return c;
}

}  // namespace

TEST_CASE("acquire_fsm: a failed master at every step of a 5-master conversation",
          "[acquire_fsm][inject]")
{
    // Nominal: attempt 1 is refused by every master (decided after 3 answers), its release
    // hears the 2 that had not answered (the 3 that refused hold nothing of ours), attempt 2 is
    // granted by every master (decided after 3): 8 steps.
    auto o = options();
    o.max_attempts = 2;
    const std::vector<kind> nominal_actions = {kind::send_attempt, kind::send_release,
                                               kind::wait_until, kind::send_attempt,
                                               kind::complete};
    constexpr std::size_t nominal_steps = 8;
    constexpr std::size_t release_from = 3;
    constexpr std::size_t second_attempt_from = 5;

    for (std::size_t k = 0; k <= nominal_steps; ++k)
    {
        INFO("failure injected at step " << k);
        {
            // One master fails at step k: a single failure among five changes no decision,
            // only (in the second attempt) which answer reaches the quorum.
            acquire_fsm f(o, 5, acquire_seed, false);
            std::size_t attempt = 1;
            auto script = [&](std::size_t step, bool release) {
                if (release)
                    attempt = 2;
                if (step == k)
                    return failed;
                return release ? granted : attempt == 1 ? held : granted;
            };
            const auto c = converse(f, 5, script, k);
            CHECK(c.actions == nominal_actions);
            CHECK(!c.last.ec);
            CHECK(c.last.valid_until == f.attempt_started() + 10s - 102ms);
            CHECK(f.attempts() == 2);
            if (k >= second_attempt_from && k < nominal_steps)
            {
                REQUIRE(c.injected_master);
                CHECK(f.last_attempt().outcome(*c.injected_master) == failed);
                CHECK(c.steps == nominal_steps + 1);
            }
            else if (k < release_from)
            {
                // A master that failed rather than refused may hold our key: its release is
                // awaited too.
                CHECK(c.steps == nominal_steps + 1);
            }
            else
            {
                CHECK(c.steps == nominal_steps);
            }
        }
        {
            // The network goes down at step k: every answer from then on is a failure.
            acquire_fsm f(o, 5, acquire_seed, false);
            std::size_t attempt = 1;
            auto script = [&](std::size_t step, bool release) {
                if (release)
                    attempt = 2;
                if (step >= k)
                    return failed;
                return release ? granted : attempt == 1 ? held : granted;
            };
            const auto c = converse(f, 5, script, k);
            CHECK(f.attempts() == 2);
            if (k >= nominal_steps)
            {
                CHECK(c.actions == nominal_actions);
                CHECK(!c.last.ec);
            }
            else
            {
                // Every failed attempt is released before the next step, whatever failed.
                CHECK(c.actions == std::vector<kind>{kind::send_attempt, kind::send_release,
                                                     kind::wait_until, kind::send_attempt,
                                                     kind::send_release, kind::complete});
                // The second attempt saw grants and failures only.
                CHECK(c.last.ec == error::no_quorum);
                CHECK(f.last_attempt().held_by_other() == 0);
            }
        }
    }
}
