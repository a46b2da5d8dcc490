// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The acquisition machine fed random event sequences, against invariants checked by an oracle
// that keeps its own count of what the masters said (it does not use quorum_tracker).
//
// REDLOCK_PROPERTY_ITERATIONS=n runs n sequences instead of the default (and prints the rate);
// REDLOCK_PROPERTY_SEED=s starts from another base seed. A failure names the sequence's seed
// and replays it with every event and action printed.
#include "fsm/acquire_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "acquire_test_words.hpp"
#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"
#include "property_check.hpp"

using namespace redlock_test::acquire;

namespace {

using duration = std::chrono::steady_clock::duration;
using ak = acquire_action::kind;
using ek = acquire_event::kind;

// One random scenario: the masters, the options, and how the masters tend to answer.
struct scenario
{
    std::size_t masters = 3;
    lock_options o;
    bool try_mode = false;
    std::uint64_t fsm_seed = 0;
    // Relative weights of granted / held_by_other / failed answers.
    unsigned w_grant = 1, w_held = 1, w_fail = 1;
    // Largest time step between two events, in microseconds.
    std::int64_t max_step_us = 1000;
};

scenario make_scenario(std::mt19937_64& rng)
{
    static constexpr std::size_t sizes[] = {1, 2, 3, 4, 5, 7};
    auto pick = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    scenario s;
    s.masters = sizes[pick(0, 5)];
    // Short TTLs next to slow steps make the validity run out now and then.
    s.o.ttl = std::chrono::milliseconds(pick(5, 2000));
    s.o.attempt_timeout = pick(0, 1) ? 0ms : std::chrono::milliseconds(pick(1, 500));
    s.o.drift_factor = static_cast<double>(pick(0, 5)) / 100.0;
    s.o.max_attempts = static_cast<std::uint32_t>(pick(1, 4));
    s.o.retry_delay = std::chrono::milliseconds(pick(0, 60));
    s.o.retry_jitter = std::chrono::milliseconds(pick(0, 60));
    s.o.max_wait = pick(0, 2) ? 0ms : std::chrono::milliseconds(pick(1, 400));
    s.o.release_timeout = std::chrono::milliseconds(pick(1, 300));
    s.try_mode = pick(0, 4) == 0;
    s.o.fencing = pick(0, 2) == 0;
    // Waiting for the release (lock_options::wait) in a third of the sequences; short, so that
    // a sequence ends within its events.
    s.o.wait = pick(0, 2) == 0 ? std::chrono::milliseconds(pick(1, 200)) : 0ms;
    // Offered a holder's lock of this process now and then (handed events); mostly on.
    s.o.handoff = pick(0, 4) != 0;
    s.fsm_seed = rng();
    s.w_grant = static_cast<unsigned>(pick(0, 8));
    s.w_held = static_cast<unsigned>(pick(0, 4));
    s.w_fail = static_cast<unsigned>(pick(0, 4));
    if (s.w_grant + s.w_held + s.w_fail == 0)
        s.w_grant = 1;
    static constexpr std::int64_t steps_us[] = {10, 1000, 20000, 100000};
    s.max_step_us = steps_us[pick(0, 3)];
    return s;
}

// How often the sequences reached the situations worth reaching: a run that never meets one
// proves nothing about it.
struct coverage
{
    std::size_t success = 0, contended = 0, no_quorum = 0, validity_expired = 0, aborted = 0,
                closed = 0;
    std::size_t retried = 0;              // completions after more than one attempt
    std::size_t release_awaits_none = 0;  // every master timed out
    std::size_t release_partial = 0;      // some timed out, some awaited
    std::size_t interrupted[3] = {};      // cancel or close during attempt / release / backoff
    std::size_t fenced_success = 0;       // granted after a commit round
    std::size_t fenced_one_round = 0;     // granted by the attempt: its counters agreed
    std::size_t commit_failed = 0;        // a commit round that ended in a release
    std::size_t watched = 0;              // a wait for the release began
    std::size_t woken = 0;                // an attempt started by the masters' news, not a timer
    std::size_t handed = 0;               // completed with a holder's lock offered to it
    std::size_t handed_declined = 0;      // an offer declined while waiting or backing off
};

// What the oracle knows of the round in progress, from the events and actions alone.
struct oracle_round
{
    std::uint64_t id = 0;
    time_point deadline{};
    std::vector<master_outcome> answers;  // first answer per master; pending if none
    std::vector<std::int64_t> counters;   // an attempt's: the counter each granting master sent
    std::vector<bool> awaited;            // release: the masters it waits for
    bool deadline_delivered = false;
};

// The first fencing token of an action, 0 when it has none.
std::uint64_t first_fence(const acquire_action& a) { return a.fences.empty() ? 0 : a.fences[0]; }

// Checks every (event, action) pair against the properties; the first violation is kept.
class oracle
{
public:
    oracle(const scenario& s, coverage& cov) : s_(s), cov_(cov), quorum_(s.masters / 2 + 1) {}

    // Before resume: record what the event tells the masters' side of the story.
    void before(const acquire_event& ev)
    {
        ++events_;
        if (ev.type == ek::cancel)
            cancelled_ = true;
        if (ev.type == ek::closed)
            closed_ = true;
        if ((ev.type == ek::cancel || ev.type == ek::closed) && !completed_)
        {
            if (phase_ == ak::send_attempt)
                ++cov_.interrupted[0];
            else if (phase_ == ak::send_release)
                ++cov_.interrupted[1];
            else if (phase_ == ak::wait_until)
                ++cov_.interrupted[2];
        }
        unblocked_now_ = false;
        if (phase_ == ak::send_watch && !completed_)
        {
            const bool watched_gone = ev.type == ek::watched && ev.round_id == round_.id &&
                                      ev.outcome == master_outcome::granted && ev.value == -2;
            if ((watched_gone || ev.type == ek::invalidated) && ev.master < s_.masters &&
                blocked_[ev.master])
            {
                blocked_[ev.master] = false;
                unblocked_now_ = true;
            }
        }
        auto& r = round_;
        if (ev.type == ek::reply && r.id != 0 && ev.round_id == r.id && ev.master < s_.masters &&
            ev.outcome != master_outcome::pending &&
            r.answers[ev.master] == master_outcome::pending)
        {
            r.answers[ev.master] = ev.outcome;
            // (A grant without a counter, which no driver sends: -1, a counter that agrees
            // with no other.)
            r.counters[ev.master] = ev.counters.empty() ? -1 : ev.counters[0];
        }
        if (ev.type == ek::deadline && r.id != 0 && ev.round_id == r.id)
        {
            r.deadline_delivered = true;
            if (phase_ == ak::send_attempt || phase_ == ak::send_commit)
                for (auto& a : r.answers)
                    if (a == master_outcome::pending)
                        a = master_outcome::timed_out;
        }
    }

    // After resume: is `a` allowed after `ev`?
    void after(const acquire_event& ev, const acquire_action& a)
    {
        if (!violation_.empty())
            return;
        if (completed_)
        {
            if (a.type != ak::none)
                fail(a.type == ak::complete ? "completed twice" : "an action after completion");
            return;
        }
        if (ev.type == ek::handed)
            return check_handed(ev, a);
        switch (a.type)
        {
        case ak::none: check_keeps_waiting(ev); break;
        case ak::send_attempt: check_attempt(ev, a); break;
        case ak::send_release: check_release(ev, a); break;
        case ak::wait_until:
            phase_ == ak::send_watch ? check_fallback(ev, a) : check_wait(ev, a);
            break;
        case ak::complete: check_complete(ev, a); break;
        case ak::send_commit: check_commit(ev, a); break;
        case ak::send_watch: check_watch(ev, a); break;
        }
    }

    bool completed() const { return completed_; }
    const std::string& violation() const { return violation_; }
    std::uint64_t current_round() const { return round_.id; }
    const oracle_round& round() const { return round_; }
    ak phase() const { return phase_; }
    time_point wait_until() const { return until_; }
    // The instant at which the current attempt's validity reaches zero.
    time_point validity_edge() const
    {
        return t0_ + duration(s_.o.ttl) -
               duration(redlock::detail::clock_drift(s_.o.ttl, s_.o.drift_factor));
    }
    const std::vector<std::uint64_t>& old_rounds() const { return old_rounds_; }
    std::size_t events() const { return events_; }

private:
    void fail(std::string what)
    {
        if (violation_.empty())
            violation_ = std::move(what) + " (after event " + std::to_string(events_) + ")";
    }

    std::size_t count(master_outcome o) const
    {
        std::size_t n = 0;
        for (auto x : round_.answers)
            n += x == o ? 1 : 0;
        return n;
    }
    bool quorum_granted() const { return count(master_outcome::granted) >= quorum_; }
    bool quorum_impossible() const
    {
        return count(master_outcome::granted) + count(master_outcome::pending) < quorum_;
    }
    bool validity_left(time_point now) const
    {
        return redlock::detail::remaining_validity(s_.o.ttl, now - t0_, s_.o.drift_factor) >
               duration::zero();
    }
    // Its deadline came, or every awaited master answered (when none is awaited, only the
    // deadline ends it, as the action documents).
    bool release_over() const
    {
        if (round_.deadline_delivered)
            return true;
        bool any = false;
        for (std::size_t i = 0; i < s_.masters; ++i)
        {
            if (!round_.awaited[i])
                continue;
            any = true;
            if (round_.answers[i] == master_outcome::pending)
                return false;
        }
        return any;
    }

    void new_round(std::uint64_t id, time_point deadline)
    {
        for (auto old : old_rounds_)
            if (old == id)
                fail("a round id used twice");
        if (id == 0 || id == round_.id)
            fail("a round id that is 0 or repeated");
        if (round_.id != 0)
            old_rounds_.push_back(round_.id);
        round_ = oracle_round{id,
                              deadline,
                              std::vector<master_outcome>(s_.masters, master_outcome::pending),
                              std::vector<std::int64_t>(s_.masters, 0),
                              std::vector<bool>(s_.masters, false),
                              false};
    }

    // "none" is only right when no decision is due yet: decided as early as certain.
    void check_keeps_waiting(const acquire_event& ev)
    {
        if (phase_ == ak::send_attempt || phase_ == ak::send_commit)
        {
            if (quorum_granted() || quorum_impossible())
                fail("the round's outcome was certain, yet the machine kept waiting");
            if (ev.type == ek::cancel || ev.type == ek::closed)
                fail("a cancel or close during an attempt did not fail it");
        }
        else if (phase_ == ak::send_release && release_over() && ev.round_id == round_.id &&
                 (ev.type == ek::reply || ev.type == ek::deadline))
            fail("the release was over, yet the machine kept waiting");
        else if (phase_ == ak::wait_until && (ev.type == ek::cancel || ev.type == ek::closed))
            fail("a cancel or close during the backoff did not complete at once");
        else if (phase_ == ak::wait_until && ev.type == ek::backoff_elapsed)
            fail("the backoff ended without a new attempt");
        else if (phase_ == ak::send_watch)
        {
            if (ev.type == ek::cancel || ev.type == ek::closed)
                fail("a cancel or close while waiting for the release did not complete at once");
            else if (ev.type == ek::backoff_elapsed)
                fail("the fallback came without a new attempt");
            else if (unblocked_now_ && quorum_possible_while_waiting())
                fail("enough masters let go for a quorum, yet the machine kept waiting");
        }
    }

    std::size_t blocked_count() const
    {
        std::size_t n = 0;
        for (const bool b : blocked_)
            n += b ? 1 : 0;
        return n;
    }
    bool quorum_possible_while_waiting() const { return s_.masters - blocked_count() >= quorum_; }

    // Why the round just failed, as the machine's quorum tracker would say it.
    bool failed_for_contention() const
    {
        const auto held = count(master_outcome::held_by_other);
        return quorum_impossible() && held > 0 &&
               held >= count(master_outcome::failed) + count(master_outcome::timed_out);
    }

    // A holder of this process offers its lock: taken exactly when the operation is between
    // rounds (waiting for the release or backing off), waits, hands off, is not fenced, its
    // wait is not over and at least half its TTL is left; then with the offer's validity.
    // Declined otherwise, with no action at all.
    void check_handed(const acquire_event& ev, const acquire_action& a)
    {
        const bool between_rounds = phase_ == ak::send_watch || phase_ == ak::wait_until;
        const bool take = between_rounds && waits_ && s_.o.handoff && !s_.o.fencing &&
                          ev.now < wait_end_ && ev.until - ev.now >= duration(s_.o.ttl) / 2;
        if (!take)
        {
            if (a.type != ak::none)
                fail("an offered lock that must be declined was not (or the offer moved the "
                     "operation)");
            else if (between_rounds)
                ++cov_.handed_declined;
            return;
        }
        if (a.type != ak::complete || a.ec)
            return fail("an offered lock that must be taken was not");
        if (a.valid_until != ev.until)
            fail("an offered lock taken with another validity than the offer's");
        completed_ = true;
        ++cov_.handed;
    }

    // After the release of a failed attempt: a watch of the masters that refused it.
    void check_watch(const acquire_event& ev, const acquire_action& a)
    {
        if (!waits_)
            return fail("a watch, but the scenario does not wait (lock_options::wait 0)");
        if (phase_ != ak::send_release || !release_over())
            return fail("a watch before the failed attempt's release was over");
        if (!last_failure_contended_)
            return fail("a watch after an attempt that did not fail for contention");
        if (cancelled_ || closed_)
            return fail("a watch after a cancel or close");
        if (ev.now >= wait_end_)
            return fail("a watch after the wait's end");
        std::vector<bool> expected(s_.masters, false);
        for (std::size_t i = 0; i < s_.masters; ++i)
        {
            expected[i] = refused_[i];
            if (a.awaited->contains(i) != expected[i])
                fail("the watch is not of exactly the masters that refused");
        }
        blocked_ = expected;
        // A TTL away; the retry delay when a quorum is possible with these masters held (failed
        // masters, not holders, stopped the attempt).
        const auto base =
            ev.now +
            (quorum_possible_while_waiting() ? duration(s_.o.retry_delay) : duration(s_.o.ttl)) +
            1ms;
        const auto lo = std::min(base, wait_end_),
                   hi = std::min(base + s_.o.retry_jitter / 8, wait_end_);
        if (a.until < lo || a.until > hi)
            fail("the first fallback is not a TTL (or the retry delay) plus jitter away, within "
                 "the wait");
        ++cov_.watched;
        phase_ = ak::send_watch;
        new_round(a.round_id, a.until);
        until_ = a.until;
    }

    // While waiting: the fallback moves earlier, never later, never past the wait's end.
    void check_fallback(const acquire_event& ev, const acquire_action& a)
    {
        if (ev.type != ek::watched || ev.round_id != round_.id)
            return fail("the fallback moved without a watch's answer");
        if (a.until >= until_ || a.until < ev.now || a.until > wait_end_)
            return fail("the fallback moved later, into the past, or past the wait's end");
        const auto base =
            ev.now + (ev.tracked ? std::chrono::milliseconds(ev.value) : s_.o.retry_delay) + 1ms;
        if (a.until != wait_end_ && (a.until < base || a.until > base + s_.o.retry_jitter / 8))
            fail("the fallback is not the PTTL seen (or the retry delay) plus jitter");
        until_ = a.until;
    }

    void check_attempt(const acquire_event& ev, const acquire_action& a)
    {
        if (phase_ == ak::send_attempt || phase_ == ak::send_commit || phase_ == ak::send_release)
            fail("a new attempt before the failed one was released");
        const bool from_wait = phase_ == ak::send_watch;
        if (!(ev.type == ek::start && phase_ == ak::none) &&
            !(ev.type == ek::backoff_elapsed && phase_ == ak::wait_until) && !from_wait)
            fail(
                "an attempt not started by start, the end of a backoff, or a wait for the release");
        if (ev.type == ek::backoff_elapsed && phase_ == ak::wait_until && ev.now < until_)
            fail("an attempt before the backoff's end");
        if (from_wait)
        {
            // Woken by news (a quorum possible now), or by a timer (the fallback, or an early
            // stale one: an extra attempt, never a wrong one); never after the wait's end.
            if (ev.type == ek::backoff_elapsed)
            {
                if (ev.now >= wait_end_)
                    fail("an attempt after the wait's end");
            }
            else if (!unblocked_now_ || !quorum_possible_while_waiting())
                fail("woken before enough masters let go for a quorum");
            else
                ++cov_.woken;
        }
        if (ev.type == ek::start)
        {
            start_ = ev.now;
            wait_end_ = ev.now + duration(s_.o.wait);
            if (s_.o.max_wait > 0ms)
                wait_end_ = std::min(wait_end_, ev.now + duration(s_.o.max_wait));
        }
        if (!from_wait)
            ++limited_attempts_;
        if (!a.new_token)
            fail("an attempt without a new token");
        if (a.deadline != ev.now + redlock::detail::attempt_timeout_of(s_.o))
            fail("the attempt's deadline is not t0 + attempt_timeout");
        ++attempts_;
        // Attempts woken from a wait for the release do not count toward max_attempts.
        if (limited_attempts_ > (s_.try_mode ? 1u : s_.o.max_attempts))
            fail("more attempts than allowed");
        phase_ = ak::send_attempt;
        t0_ = ev.now;
        new_round(a.round_id, a.deadline);
    }

    // The token: 1 + the largest counter of the masters whose grants made the quorum of
    // `attempt` (all the grants so far: the machine decides at the grant that completes the
    // quorum).
    std::uint64_t expected_fence(const oracle_round& attempt) const
    {
        std::int64_t largest = 0;
        for (std::size_t i = 0; i < s_.masters; ++i)
            if (attempt.answers[i] == master_outcome::granted)
                largest = std::max(largest, attempt.counters[i]);
        return static_cast<std::uint64_t>(largest) + 1;
    }

    // Whether every grant of `attempt` read the same counter: its round moved them all to the
    // token, and no commit round is needed.
    bool counters_agree(const oracle_round& attempt) const
    {
        std::optional<std::int64_t> seen;
        for (std::size_t i = 0; i < s_.masters; ++i)
            if (attempt.answers[i] == master_outcome::granted)
            {
                if (attempt.counters[i] < 0 || (seen && *seen != attempt.counters[i]))
                    return false;
                seen = attempt.counters[i];
            }
        return true;
    }

    void check_commit(const acquire_event& ev, const acquire_action& a)
    {
        if (!s_.o.fencing)
            return fail("a commit round without fencing");
        if (phase_ != ak::send_attempt)
            return fail("a commit round that follows no attempt");
        if (!quorum_granted())
            return fail("a commit round without a quorum of grants");
        if (!validity_left(ev.now))
            return fail("a commit round with no validity left");
        if (counters_agree(round_))
            return fail("a commit round though the quorum's counters agree");
        attempt_ = round_;
        if (a.fences.size() != 1 || a.fences[0] != expected_fence(attempt_))
            fail("the token is not 1 + the quorum's largest counter: " +
                 std::to_string(first_fence(a)) + " vs " +
                 std::to_string(expected_fence(attempt_)));
        if (a.deadline !=
            std::min(ev.now + redlock::detail::attempt_timeout_of(s_.o), validity_edge()))
            fail("the commit's deadline is not min(now + attempt_timeout, validity's end)");
        fence_ = first_fence(a);
        phase_ = ak::send_commit;
        new_round(a.round_id, a.deadline);
    }

    void check_release(const acquire_event& ev, const acquire_action& a)
    {
        if (phase_ != ak::send_attempt && phase_ != ak::send_commit)
        {
            fail("a release that follows no attempt");
            return;
        }
        const bool interrupted = ev.type == ek::cancel || ev.type == ek::closed;
        // In the attempt, a quorum with validity left goes on to the commit, not to a release.
        const bool too_late = quorum_granted() && !validity_left(ev.now);
        if (!interrupted && !quorum_impossible() && !too_late)
            fail("an attempt failed that could still succeed (or had succeeded)");
        last_failure_contended_ = !interrupted && failed_for_contention();
        std::vector<bool> refused(s_.masters, false);
        for (std::size_t i = 0; i < s_.masters; ++i)
            refused[i] = round_.answers[i] ==
                         master_outcome::held_by_other;  // the commit's, or the attempt's
        if (phase_ == ak::send_commit)
        {
            ++cov_.commit_failed;
            round_ = attempt_;  // the release is judged against the attempt's outcomes
            for (std::size_t i = 0; i < s_.masters; ++i)
                refused[i] = refused[i] || round_.answers[i] == master_outcome::held_by_other;
        }
        refused_ = std::move(refused);
        if (a.awaited->masters() != s_.masters)
            fail("the release's set is not over N masters");
        std::vector<bool> awaited(s_.masters);
        for (std::size_t i = 0; i < s_.masters; ++i)
        {
            awaited[i] = a.awaited->contains(i);
            // Every master where our key may stand: not one that refused (nothing of ours
            // there), and not waited for when it timed out (it gets the release all the same).
            const auto answer = round_.answers[i];
            if (awaited[i] !=
                (answer != master_outcome::timed_out && answer != master_outcome::held_by_other))
                fail("the release awaits a timed-out or refusing master, or skips one where our "
                     "key may stand");
        }
        if (a.awaited->empty())
            ++cov_.release_awaits_none;
        else if (a.awaited->count() < s_.masters)
            ++cov_.release_partial;
        const auto expected_deadline = a.awaited->empty() ? ev.now : ev.now + s_.o.release_timeout;
        if (a.deadline != expected_deadline)
            fail("the release's deadline is not now + release_timeout");
        phase_ = ak::send_release;
        new_round(a.round_id, a.deadline);
        round_.awaited = std::move(awaited);
    }

    void check_wait(const acquire_event& ev, const acquire_action& a)
    {
        if (phase_ == ak::send_attempt)
            fail("a backoff after a failed attempt that was not released");
        else if (phase_ != ak::send_release || !release_over())
            fail("a backoff before the release was over");
        if (s_.try_mode)
            fail("a retry in try mode");
        if (waits_ && last_failure_contended_)
            fail("a blind retry delay after a refusal, in a waiting acquisition");
        if (waits_ && a.until >= wait_end_)
            fail("a retry delay past the wait's end");
        if (cancelled_ || closed_)
            fail("a retry after a cancel or close");
        const auto delay = a.until - ev.now;
        if (delay < s_.o.retry_delay || delay > s_.o.retry_delay + s_.o.retry_jitter)
            fail("a delay outside [retry_delay, retry_delay + jitter]");
        phase_ = ak::wait_until;
        until_ = a.until;
    }

    void check_complete(const acquire_event& ev, const acquire_action& a)
    {
        completed_ = true;
        namespace e = boost::asio::error;
        using redlock::error;
        cov_.retried += attempts_ > 1 ? 1 : 0;
        (!a.ec                             ? cov_.success
         : a.ec == error::contended        ? cov_.contended
         : a.ec == error::no_quorum        ? cov_.no_quorum
         : a.ec == error::validity_expired ? cov_.validity_expired
         : a.ec == e::operation_aborted    ? cov_.aborted
                                           : cov_.closed)++;
        if (!a.ec)
        {
            // A fenced lock is decided by its commit round, or by its attempt when the
            // quorum's counters agreed (the attempt moved them to the token).
            const bool one_round =
                s_.o.fencing && phase_ == ak::send_attempt && counters_agree(round_);
            if (one_round)
                fence_ = expected_fence(round_);
            const ak deciding = s_.o.fencing && !one_round ? ak::send_commit : ak::send_attempt;
            if (phase_ != deciding || ev.type != ek::reply || ev.round_id != round_.id)
                fail(s_.o.fencing ? "fenced success not decided by a reply of the commit "
                                    "round, nor by one of an attempt whose counters agreed"
                                  : "success not decided by a reply of the current attempt");
            if (!quorum_granted())
                fail("success without a quorum of the deciding round");
            if (a.fences.size() != (s_.o.fencing ? 1u : 0u) ||
                first_fence(a) != (s_.o.fencing ? fence_ : 0))
                fail("the lock's token is not the committed one");
            cov_.fenced_success += s_.o.fencing && !one_round ? 1 : 0;
            cov_.fenced_one_round += one_round ? 1 : 0;
            if (!validity_left(ev.now))
                fail("success with no validity left");
            const auto drift = redlock::detail::clock_drift(s_.o.ttl, s_.o.drift_factor);
            if (a.valid_until != t0_ + duration(s_.o.ttl) - duration(drift))
                fail("valid_until is not t0 + ttl - drift");
            return;
        }
        // Every failed attempt is released first; a backoff or the start may be cut short.
        if (phase_ == ak::send_attempt || phase_ == ak::send_commit)
            fail("an error completion without releasing the failed attempt");
        if (phase_ == ak::send_release && !release_over())
            fail("an error completion before the release was over");
        if (phase_ == ak::none || phase_ == ak::wait_until)
        {
            if (ev.type != ek::cancel && ev.type != ek::closed)
                fail("an error completion before an attempt or in a backoff without cancel or "
                     "close");
        }
        if (phase_ == ak::send_watch && ev.type != ek::cancel && ev.type != ek::closed &&
            !(ev.type == ek::backoff_elapsed && ev.now >= wait_end_))
            fail("a wait for the release that ended before its end without cancel or close");
        if (waits_ && !cancelled_ && !closed_ && phase_ == ak::send_release &&
            last_failure_contended_ && ev.now < wait_end_)
            fail("a refused waiting acquisition gave up before the wait's end");
        if (a.ec == e::operation_aborted       ? !cancelled_
            : a.ec == error::connection_closed ? !closed_
                                               : false)
            fail("aborted without a cancel, or closed without a close");
        if (cancelled_ && !closed_ && a.ec != e::operation_aborted)
            fail("cancelled but not operation_aborted");
        if (closed_ && !cancelled_ && a.ec != error::connection_closed)
            fail("closed but not connection_closed");
        if (!cancelled_ && !closed_)
        {
            if (a.ec != error::contended && a.ec != error::no_quorum &&
                a.ec != error::validity_expired)
                fail("a failure with an unexpected error: " + a.ec.message());
            if (!s_.try_mode && !waits_ && s_.o.max_wait == 0ms && attempts_ != s_.o.max_attempts)
                fail("gave up with attempts left");
        }
    }

    const scenario& s_;
    coverage& cov_;
    std::size_t quorum_;
    oracle_round round_;
    oracle_round attempt_;  // with fencing: the attempt's outcomes, kept through the commit
    std::uint64_t fence_ = 0;
    std::vector<std::uint64_t> old_rounds_;
    ak phase_ = ak::none;  // the last non-none action: where the operation stands
    time_point t0_{};
    time_point until_{};
    std::uint32_t attempts_ = 0;
    std::uint32_t limited_attempts_ = 0;  // those that count toward max_attempts
    std::size_t events_ = 0;
    // Waiting for the release.
    bool waits_ = !s_.try_mode && s_.o.wait > 0ms;
    time_point start_{};
    time_point wait_end_{};
    bool last_failure_contended_ = false;
    std::vector<bool> refused_;  // the masters that refused the last failed attempt (or its commit)
    std::vector<bool> blocked_;  // ... and have not let go since the watch
    bool unblocked_now_ = false;  // the event being checked let one of them go
    bool cancelled_ = false;
    bool closed_ = false;
    bool completed_ = false;
    std::string violation_;
};

std::string to_string(const acquire_event& ev, time_point origin)
{
    static constexpr const char* names[] = {
        "start",   "reply",  "deadline", "backoff_elapsed", "cancel",      "closed", "handed_off",
        "release", "queued", "turn",     "watched",         "invalidated", "handed"};
    static constexpr const char* outcomes[] = {"pending", "granted", "held", "failed", "timed_out"};
    std::ostringstream os;
    os << std::chrono::duration_cast<std::chrono::microseconds>(ev.now - origin).count() << "us "
       << names[static_cast<int>(ev.type)];
    if (ev.type == ek::reply)
        os << " r" << ev.round_id << " m" << ev.master << " "
           << outcomes[static_cast<int>(ev.outcome)];
    if (ev.type == ek::deadline)
        os << " r" << ev.round_id;
    if (ev.type == ek::watched)
        os << " r" << ev.round_id << " m" << ev.master << " "
           << outcomes[static_cast<int>(ev.outcome)] << " pttl " << ev.value
           << (ev.tracked ? " tracked" : " untracked");
    if (ev.type == ek::invalidated)
        os << " m" << ev.master;
    if (ev.type == ek::handed)
        os << " until "
           << std::chrono::duration_cast<std::chrono::microseconds>(ev.until - origin).count()
           << "us";
    return os.str();
}

std::string to_string(const acquire_action& a, time_point origin)
{
    auto us = [&](time_point t) {
        return std::to_string(
                   std::chrono::duration_cast<std::chrono::microseconds>(t - origin).count()) +
               "us";
    };
    switch (a.type)
    {
    case ak::none: return "none";
    case ak::send_attempt:
        return "send_attempt r" + std::to_string(a.round_id) + " deadline " + us(a.deadline);
    case ak::send_release:
        return "send_release r" + std::to_string(a.round_id) + " awaiting " +
               std::to_string(a.awaited->count()) + " deadline " + us(a.deadline);
    case ak::send_commit:
        return "send_commit r" + std::to_string(a.round_id) + " fence " +
               std::to_string(first_fence(a));
    case ak::wait_until: return "wait_until " + us(a.until);
    case ak::send_watch:
        return "send_watch r" + std::to_string(a.round_id) + " until " + us(a.until);
    case ak::complete:
        return "complete " + (a.ec ? a.ec.message() : "ok valid_until " + us(a.valid_until));
    }
    return "?";
}

// Far more than any sequence needs: noise is about one event in eight, and the useful events
// are bounded (see the end of run_sequence).
constexpr std::size_t max_events = 5000;

// Runs one sequence; returns the violation, empty if none. `log` (may be null) gets a line per
// event and action.
std::string run_sequence(std::uint64_t seed, coverage& cov, std::string* log)
{
    std::mt19937_64 rng(seed);
    const scenario s = make_scenario(rng);
    acquire_fsm fsm(s.o, s.masters, s.fsm_seed, s.try_mode);
    oracle check(s, cov);
    if (log)
        *log += "N=" + std::to_string(s.masters) + " ttl=" + std::to_string(s.o.ttl.count()) +
                "ms attempts=" + std::to_string(s.o.max_attempts) + (s.try_mode ? " try" : "") +
                "\n";

    auto chance = [&](unsigned per_mille) { return rng() % 1000 < per_mille; };
    auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    const time_point origin = time_point{} + 1h;
    time_point now = origin;
    // Cancels and closes are rare: a few per hundred sequences reach each phase.
    const unsigned cancel_rate = chance(300) ? 15 : 0;
    const unsigned close_rate = chance(200) ? 10 : 0;

    auto deliver = [&](const acquire_event& ev) {
        check.before(ev);
        const auto a = fsm.resume(ev);
        check.after(ev, a);
        if (log)
            *log += to_string(ev, origin) + " -> " + to_string(a, origin) + "\n";
    };
    // A granting master's fence counter: half the time the masters' common value (counters
    // that agree), else small, now and then large.
    // (Kept in a deque: each event points to its counter, one resource's.)
    std::deque<std::int64_t> counter_store;
    auto random_counter = [&] {
        counter_store.push_back(static_cast<std::int64_t>(chance(500)   ? 7
                                                          : chance(100) ? below(1000000)
                                                                        : below(20)));
        return std::span<const std::int64_t>(&counter_store.back(), 1);
    };
    auto random_outcome = [&] {
        const auto r = below(s.w_grant + s.w_held + s.w_fail);
        return r < s.w_grant              ? master_outcome::granted
               : r < s.w_grant + s.w_held ? master_outcome::held_by_other
                                          : master_outcome::failed;
    };

    bool started = false;
    // Events that move the operation on (start, an answer of a silent master, a due deadline,
    // the end of a backoff), as opposed to noise.
    std::size_t useful = 0;
    std::size_t completed_at = 0;
    for (std::size_t n = 0; n < max_events && check.violation().empty(); ++n)
    {
        if (check.completed())
        {
            if (completed_at == 0)
                completed_at = n;
            // After completion any event may come, and nothing may come back: a few more.
            if (n > completed_at + 20)
                break;
        }
        now += std::chrono::microseconds(
            static_cast<std::int64_t>(below(static_cast<std::size_t>(s.max_step_us) + 1)));
        if (chance(cancel_rate))
        {
            deliver(acquire_event::cancel(now));
            continue;
        }
        if (chance(close_rate))
        {
            deliver(acquire_event::closed(now));
            continue;
        }
        // A holder of this process releasing: its offer, in any phase, with a validity around
        // half the TTL from now (exactly half now and then).
        if (started && chance(15))
        {
            const auto half = duration(s.o.ttl) / 2;
            const duration offsets[] = {half,     half - 1us,    half + 1us, duration(s.o.ttl),
                                        half / 2, -duration(1ms)};
            deliver(acquire_event::handed(now, now + offsets[below(std::size(offsets))]));
            continue;
        }
        if (!started || chance(5))
        {
            useful += started ? 0 : 1;
            started = true;
            deliver(acquire_event::start(now));
            continue;
        }
        // Noise: stale rounds, duplicates, strays.
        if (chance(120))
        {
            const auto& old = check.old_rounds();
            const auto m = below(s.masters + 1);  // one past the end now and then
            switch (below(4))
            {
            case 0:
                if (!old.empty())
                    deliver(acquire_event::reply(old[below(old.size())], m, random_outcome(), now));
                break;
            case 1:
                if (!old.empty())
                    deliver(acquire_event::deadline(old[below(old.size())], now));
                break;
            case 2:
                deliver(acquire_event::reply(check.current_round(), m, random_outcome(), now));
                break;
            default:
                if (check.phase() != ak::wait_until)
                    deliver(acquire_event::backoff_elapsed(now));
                break;
            }
            continue;
        }
        const auto& r = check.round();
        if (!check.completed())
            ++useful;
        switch (check.phase())
        {
        case ak::send_attempt:
        case ak::send_commit:
        case ak::send_release:
        {
            // The deadline once due, or an answer of a master still silent (in a release, one
            // the release awaits; the others are noise above).
            std::vector<std::size_t> silent;
            for (std::size_t i = 0; i < s.masters; ++i)
                if (r.answers[i] == master_outcome::pending &&
                    (check.phase() != ak::send_release || r.awaited[i]))
                    silent.push_back(i);
            // Now and then an answer exactly when the validity runs out: zero left is no lock.
            if (check.phase() != ak::send_release && now < check.validity_edge() && chance(50))
                now = check.validity_edge();
            if (silent.empty() || (now >= r.deadline && chance(500)) || chance(30))
            {
                now = std::max(now, r.deadline);
                deliver(acquire_event::deadline(r.id, now));
            }
            else
            {
                deliver(acquire_event::reply(r.id, silent[below(silent.size())], random_outcome(),
                                             now, random_counter()));
            }
            break;
        }
        case ak::wait_until:
            now = std::max(now, check.wait_until());
            deliver(acquire_event::backoff_elapsed(now));
            break;
        case ak::send_watch:
        {
            // The fallback, a master's news, or a watch's answer (the key gone, a PTTL, no
            // tracking, a failure); masters out of range now and then.
            const auto m = below(s.masters + (chance(20) ? 1 : 0));
            const auto pick = below(10);
            if (pick < 3)
            {
                now = std::max(now, check.wait_until());
                deliver(acquire_event::backoff_elapsed(now));
            }
            else if (pick < 6)
                deliver(acquire_event::invalidated(m, now));
            else
            {
                const std::int64_t values[] = {-2, -1, static_cast<std::int64_t>(below(300))};
                deliver(acquire_event::watched(
                    r.id, m, chance(5) ? master_outcome::failed : master_outcome::granted,
                    values[below(3)], !chance(5), now));
            }
            break;
        }
        default: break;
        }
    }
    if (check.violation().empty() && !check.completed())
        return "no completion within " + std::to_string(max_events) + " events";
    if (check.violation().empty() && !fsm.done())
        return "the machine does not say it is done";
    // Each attempt takes at most N events (N answers, or fewer and its deadline), so does its
    // release, and the backoff one: the operation cannot linger.
    const auto attempts = s.try_mode ? 1 : s.o.max_attempts;
    const auto rounds = s.o.fencing ? 3u : 2u;  // attempt, [commit,] release
    const bool waits =
        !s.try_mode && s.o.wait > 0ms;  // refused attempts repeat until the wait ends
    if (check.violation().empty() && !waits && useful > attempts * (rounds * s.masters + 1) + 1)
        return "completion took " + std::to_string(useful) + " useful events";
    return check.violation();
}

}  // namespace

TEST_CASE("acquire_fsm property: random event sequences keep the invariants",
          "[acquire_fsm][property]")
{
    const auto budget = redlock_test::property_budget::read(20260401);
    const auto iterations = budget.iterations;
    const auto base = budget.base_seed;
    std::size_t failures = 0;
    coverage cov;
    for (std::uint64_t i = 0; i < iterations; ++i)
    {
        const auto seed = base + i;
        const auto violation = run_sequence(seed, cov, nullptr);
        if (violation.empty())
            continue;
        std::string log;
        coverage ignored;
        run_sequence(seed, ignored, &log);
        INFO("sequence seed " << seed << ": " << violation << "\n" << log);
        CHECK(violation.empty());
        if (++failures == 3)
            break;  // three replays are enough to read
    }
    CHECK(failures == 0);
    INFO("success " << cov.success << ", contended " << cov.contended << ", no_quorum "
                    << cov.no_quorum << ", validity_expired " << cov.validity_expired
                    << ", aborted " << cov.aborted << ", closed " << cov.closed << ", retried "
                    << cov.retried << ", releases awaiting none " << cov.release_awaits_none
                    << ", partial " << cov.release_partial
                    << ", interrupted in attempt/release/backoff " << cov.interrupted[0] << "/"
                    << cov.interrupted[1] << "/" << cov.interrupted[2] << ", fenced success "
                    << cov.fenced_success << ", in one round " << cov.fenced_one_round
                    << ", commit failed " << cov.commit_failed << ", watched " << cov.watched
                    << ", woken " << cov.woken << ", handed " << cov.handed << ", handed declined "
                    << cov.handed_declined);
    if (iterations >= 20000)
    {
        // The default run must reach every outcome and every phase of an interruption.
        const std::pair<const char*, std::size_t> reached[] = {
            {"success", cov.success},
            {"contended", cov.contended},
            {"no_quorum", cov.no_quorum},
            {"validity_expired", cov.validity_expired},
            {"aborted", cov.aborted},
            {"closed", cov.closed},
            {"retried", cov.retried},
            {"release awaiting none", cov.release_awaits_none},
            {"partial release", cov.release_partial},
            {"fenced success", cov.fenced_success},
            {"fenced in one round", cov.fenced_one_round},
            {"commit failed", cov.commit_failed},
            {"watched", cov.watched},
            {"woken", cov.woken},
            {"handed", cov.handed},
            {"handed declined", cov.handed_declined},
            {"interrupted in attempt", cov.interrupted[0]},
            {"interrupted in release", cov.interrupted[1]},
            {"interrupted in backoff", cov.interrupted[2]},
        };
        for (const auto& [what, n] : reached)
        {
            INFO(what);
            CHECK(n > 0);
        }
    }
    budget.report("acquire_fsm property");
    if (budget.from_env)
    {
        std::printf(
            "acquire_fsm property: success %zu contended %zu no_quorum %zu validity_expired %zu "
            "aborted %zu closed %zu retried %zu; releases awaiting none %zu, partial %zu; "
            "interrupted in attempt %zu, release %zu, backoff %zu\n",
            cov.success, cov.contended, cov.no_quorum, cov.validity_expired, cov.aborted,
            cov.closed, cov.retried, cov.release_awaits_none, cov.release_partial,
            cov.interrupted[0], cov.interrupted[1], cov.interrupted[2]);
    }
}
