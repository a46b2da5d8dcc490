// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The extension machine (src/fsm/extend_fsm.hpp): stepped by hand through its paths with
// a failure injected at every step, then fed random event sequences against invariants an
// oracle checks with its own counts (it does not use quorum_tracker or validity.hpp).
//
// REDLOCK_PROPERTY_ITERATIONS and REDLOCK_PROPERTY_SEED: see property_check.hpp. A failure names
// the sequence's seed.
#include "fsm/extend_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <vector>

#include "fsm_test_words.hpp"
#include "property_check.hpp"

using namespace redlock_test::fsm;
using redlock::detail::extend_fsm;

namespace {

extend_fsm make(std::size_t masters, std::chrono::milliseconds ttl = 1000ms)
{
    return extend_fsm(
        {.ttl = ttl, .drift_factor = 0.0, .attempt_timeout = 50ms, .release_timeout = 100ms},
        masters);
}

}  // namespace

TEST_CASE("extend_fsm: a quorum of extensions in time completes with the new validity",
          "[extend_fsm]")
{
    auto m = make(3);
    auto a = m.resume(fsm_event::start(t_start));
    REQUIRE(a.type == ak::send_attempt);
    CHECK(a.deadline == t_start + 50ms);
    const auto id = a.round_id;
    CHECK(m.resume(fsm_event::reply(id, 0, master_outcome::granted, t_start + 1ms)).type ==
          ak::none);
    a = m.resume(fsm_event::reply(id, 2, master_outcome::granted, t_start + 2ms));
    REQUIRE(a.type == ak::complete);
    CHECK_FALSE(a.ec);
    CHECK(a.valid_until == t_start + 1000ms - 2ms);  // ttl - drift (0 x ttl + 2 ms)
    CHECK(m.done());
    // Nothing after completion: the late answer, a cancellation.
    CHECK(m.resume(fsm_event::reply(id, 1, master_outcome::granted, t_start + 3ms)).type ==
          ak::none);
    CHECK(m.resume(fsm_event::cancel(t_start + 4ms)).type == ak::none);
}

TEST_CASE("extend_fsm: extended where it answered, one holder down, the rest another's: "
          "no_quorum, not lock_lost",
          "[extend_fsm]")
{
    // Taken on exactly 3 of 5, one of the 3 down at the extension: 2 extended, 1 failed, 2 not
    // ours. The failed master may still hold our token, so no majority is known not to.
    auto m = make(5);
    const auto id = m.resume(fsm_event::start(t_start)).round_id;
    const master_outcome answers[] = {master_outcome::granted, master_outcome::granted,
                                      master_outcome::failed, master_outcome::held_by_other,
                                      master_outcome::held_by_other};
    fsm_action rel;
    for (std::size_t i = 0; i < 5 && rel.type == ak::none; ++i)
        rel = m.resume(fsm_event::reply(id, i, answers[i], t_start + 1ms));
    REQUIRE(rel.type == ak::send_release);
    fsm_action end;
    for (std::size_t i = 0; i < 5; ++i)
        if (rel.awaited->contains(i))
            end =
                m.resume(fsm_event::reply(rel.round_id, i, master_outcome::granted, t_start + 2ms));
    REQUIRE(end.type == ak::complete);
    CHECK(end.ec == error::no_quorum);
}

TEST_CASE("extend_fsm: a lost majority is lock_lost, an unreachable one no_quorum, after releasing "
          "what is ours",
          "[extend_fsm]")
{
    // For each master count and each way a master can fail, at each position: the outcome
    // needs the release, and the release awaits the masters that did not time out.
    for (const std::size_t n : {1u, 3u, 5u})
    {
        for (const auto bad : {master_outcome::held_by_other, master_outcome::failed})
        {
            INFO("masters " << n << ", bad outcome " << static_cast<int>(bad));
            auto m = make(n);
            auto a = m.resume(fsm_event::start(t_start));
            const auto id = a.round_id;
            const std::size_t good = n / 2;  // one short of the quorum
            for (std::size_t i = 0; i < good; ++i)
                REQUIRE(m.resume(fsm_event::reply(id, i, master_outcome::granted, t_start + 1ms))
                            .type == ak::none);
            fsm_action rel;
            for (std::size_t i = good; i < n; ++i)
            {
                rel = m.resume(fsm_event::reply(id, i, bad, t_start + 2ms));
                if (rel.type != ak::none)
                    break;
            }
            REQUIRE(rel.type == ak::send_release);
            CHECK(rel.round_id != id);
            CHECK(rel.deadline == t_start + 2ms + 100ms);
            // A stale answer of the extension round changes nothing now.
            CHECK(m.resume(fsm_event::reply(id, 0, master_outcome::granted, t_start + 3ms)).type ==
                  ak::none);
            // The release ends when every awaited master answered (or at its deadline).
            fsm_action end;
            for (std::size_t i = 0; i < n; ++i)
            {
                if (!rel.awaited->contains(i))
                    continue;
                end = m.resume(
                    fsm_event::reply(rel.round_id, i, master_outcome::granted, t_start + 4ms));
            }
            REQUIRE(end.type == ak::complete);
            CHECK(end.ec ==
                  (bad == master_outcome::held_by_other ? error::lock_lost : error::no_quorum));
        }
    }
}

TEST_CASE("extend_fsm: a lock whose validity had ended is lock_expired when its keys are gone",
          "[extend_fsm]")
{
    // The same refusal by a majority, for a lock valid until `valid_until`: started at or after
    // it, lock_expired; before it, lock_lost; a lock of unknown validity (the epoch: rebuilt
    // by lock_from_parts) is never taken for expired.
    struct case_t
    {
        time_point valid_until;
        error_code expected;
    };
    for (const auto& [valid_until, expected] :
         {case_t{t_start - 1ms, error::lock_expired}, case_t{t_start, error::lock_expired},
          case_t{t_start + 1ms, error::lock_lost}, case_t{time_point{}, error::lock_lost}})
    {
        INFO("valid_until - start " << (valid_until - t_start).count());
        extend_fsm m(
            {.ttl = 1000ms, .drift_factor = 0.0, .attempt_timeout = 50ms, .release_timeout = 100ms},
            3, valid_until);
        const auto id = m.resume(fsm_event::start(t_start)).round_id;
        m.resume(fsm_event::reply(id, 0, master_outcome::held_by_other, t_start + 1ms));
        const auto rel =
            m.resume(fsm_event::reply(id, 1, master_outcome::held_by_other, t_start + 1ms));
        REQUIRE(rel.type == ak::send_release);
        const auto end = m.resume(fsm_event::deadline(rel.round_id, t_start + 200ms));
        REQUIRE(end.type == ak::complete);
        CHECK(end.ec == expected);
    }
    // A majority that still holds the token extends it all the same: the new validity is proven
    // by this round, whatever the old one was.
    extend_fsm m(
        {.ttl = 1000ms, .drift_factor = 0.0, .attempt_timeout = 50ms, .release_timeout = 100ms}, 3,
        t_start - 500ms);
    const auto id = m.resume(fsm_event::start(t_start)).round_id;
    m.resume(fsm_event::reply(id, 0, master_outcome::granted, t_start + 1ms));
    const auto done = m.resume(fsm_event::reply(id, 1, master_outcome::granted, t_start + 1ms));
    REQUIRE(done.type == ak::complete);
    CHECK_FALSE(done.ec);
    CHECK(done.valid_until == t_start + 1000ms - 2ms);  // ttl - drift (0 x ttl + 2 ms)
}

TEST_CASE("extend_fsm: a quorum reached too late is validity_expired, released", "[extend_fsm]")
{
    auto m = make(3, 100ms);  // validity 100 - 2 ms
    const auto id = m.resume(fsm_event::start(t_start)).round_id;
    m.resume(fsm_event::reply(id, 0, master_outcome::granted, t_start + 97ms));
    auto rel = m.resume(fsm_event::reply(id, 1, master_outcome::granted, t_start + 98ms));
    REQUIRE(rel.type == ak::send_release);
    const auto end = m.resume(fsm_event::deadline(rel.round_id, t_start + 200ms));
    REQUIRE(end.type == ak::complete);
    CHECK(end.ec == error::validity_expired);
}

TEST_CASE("extend_fsm: at the deadline the silent masters count as timed out and are not awaited",
          "[extend_fsm]")
{
    auto m = make(5);
    const auto id = m.resume(fsm_event::start(t_start)).round_id;
    m.resume(fsm_event::reply(id, 0, master_outcome::granted, t_start + 1ms));
    m.resume(fsm_event::reply(id, 1, master_outcome::granted, t_start + 1ms));
    // A deadline of another round is stale.
    CHECK(m.resume(fsm_event::deadline(id + 7, t_start + 50ms)).type == ak::none);
    const auto rel = m.resume(fsm_event::deadline(id, t_start + 50ms));
    REQUIRE(rel.type == ak::send_release);
    CHECK(rel.awaited->count() == 2);
    CHECK(rel.awaited->contains(0));
    CHECK(rel.awaited->contains(1));
    m.resume(fsm_event::reply(rel.round_id, 0, master_outcome::granted, t_start + 51ms));
    const auto end =
        m.resume(fsm_event::reply(rel.round_id, 1, master_outcome::held_by_other, t_start + 52ms));
    REQUIRE(end.type == ak::complete);
    CHECK(end.ec == error::no_quorum);  // three silent masters: nobody knows what they hold
}

TEST_CASE(
    "extend_fsm: cancellation at any step completes at once, closed ends in connection_closed",
    "[extend_fsm]")
{
    SECTION("cancel before start, while extending, while releasing")
    {
        for (int step = 0; step < 3; ++step)
        {
            INFO("step " << step);
            auto m = make(3);
            if (step >= 1)
            {
                const auto id = m.resume(fsm_event::start(t_start)).round_id;
                if (step == 2)
                {
                    m.resume(fsm_event::reply(id, 0, master_outcome::held_by_other, t_start + 1ms));
                    REQUIRE(m.resume(fsm_event::reply(id, 1, master_outcome::held_by_other,
                                                      t_start + 1ms))
                                .type == ak::send_release);
                }
            }
            const auto a = m.resume(fsm_event::cancel(t_start + 2ms));
            REQUIRE(a.type == ak::complete);
            CHECK(a.ec == boost::asio::error::operation_aborted);
            CHECK(m.done());
        }
    }
    SECTION("closed while extending: released, then connection_closed")
    {
        auto m = make(3);
        m.resume(fsm_event::start(t_start));
        const auto rel = m.resume(fsm_event::closed(t_start + 1ms));
        REQUIRE(rel.type == ak::send_release);
        const auto end = m.resume(fsm_event::deadline(rel.round_id, t_start + 1ms));
        REQUIRE(end.type == ak::complete);
        CHECK(end.ec == error::connection_closed);
    }
    SECTION("closed while releasing a lost lock: connection_closed")
    {
        auto m = make(1);
        const auto id = m.resume(fsm_event::start(t_start)).round_id;
        const auto rel = m.resume(fsm_event::reply(id, 0, master_outcome::failed, t_start + 1ms));
        REQUIRE(rel.type == ak::send_release);
        CHECK(m.resume(fsm_event::closed(t_start + 2ms)).type == ak::none);
        const auto end =
            m.resume(fsm_event::reply(rel.round_id, 0, master_outcome::failed, t_start + 3ms));
        REQUIRE(end.type == ak::complete);
        CHECK(end.ec == error::connection_closed);
    }
}

// ---- Random event sequences ---------------------------------------------------------------------

namespace {

/// Runs one random sequence; returns an empty string, or what went wrong.
std::string run_extend_sequence(std::uint64_t seed)
{
    event_dice pick(seed);
    static constexpr std::size_t sizes[] = {1, 2, 3, 4, 5, 7};
    static constexpr double drifts[] = {0.0, 0.25,
                                        0.5};  // exact in binary: the oracle's sums are exact
    const std::size_t n = sizes[pick(0, 5)];
    const auto ttl = std::chrono::milliseconds(pick(3, 400));
    const double drift = drifts[pick(0, 2)];
    const auto attempt_timeout = std::chrono::milliseconds(pick(1, 200));
    const auto release_timeout = std::chrono::milliseconds(pick(1, 200));
    extend_fsm m({.ttl = ttl,
                  .drift_factor = drift,
                  .attempt_timeout = attempt_timeout,
                  .release_timeout = release_timeout},
                 n);
    const std::size_t quorum = n / 2 + 1;
    // The oracle's validity: ttl - elapsed - (ttl * drift + 2 ms), in microseconds.
    const std::int64_t budget_us =
        ttl.count() * 1000 -
        static_cast<std::int64_t>(static_cast<double>(ttl.count()) * 1000.0 * drift) - 2000;

    time_point now = t_start, t0{};
    std::uint64_t ext_id = 0, rel_id = 0;
    first_answers ext_answer(n, -1);
    std::vector<bool> awaited(n, false);
    bool released = false, completed = false, cancelled = false, closed = false;
    time_point rel_deadline{};

    auto check_action = [&](const fsm_action& a, const fsm_event& ev) -> std::string {
        if (completed && a.type != ak::none)
            return "an action after completion";
        switch (a.type)
        {
        case ak::none: return {};
        case ak::wait_until: return "an extension never waits";
        case ak::send_commit: return "an extension never commits a fencing token";
        case ak::send_watch: return "an extension never waits for a release";
        case ak::send_attempt:
            if (ext_id != 0)
                return "a second extension round";
            ext_id = a.round_id;
            t0 = ev.now;
            if (a.deadline != ev.now + attempt_timeout)
                return "the extension's deadline is not t0 + attempt_timeout";
            return {};
        case ak::send_release:
        {
            if (released)
                return "a second release";
            if (ext_id == 0)
                return "a release before the extension";
            released = true;
            rel_id = a.round_id;
            if (rel_id == ext_id)
                return "the release reuses the extension's round id";
            // Awaited: every master that did not time out in the extension (one still silent
            // answers the release queued behind its PEXPIRE).
            for (std::size_t i = 0; i < n; ++i)
            {
                const bool expected = ext_answer[i] != static_cast<int>(master_outcome::timed_out);
                if (a.awaited->contains(i) != expected)
                    return "the release awaits the wrong masters";
                awaited[i] = expected;
            }
            rel_deadline = a.deadline;
            return {};
        }
        case ak::complete:
        {
            completed = true;
            if (ext_id == 0)  // before start: only a cancellation or a close ends it
                return a.ec == boost::asio::error::operation_aborted ||
                               a.ec == error::connection_closed
                           ? ""
                           : "completed before start without a cause";
            if (cancelled)
                return a.ec == boost::asio::error::operation_aborted
                           ? ""
                           : "cancel did not complete aborted";
            if (!a.ec)
            {
                if (released)
                    return "success after a release";
                if (count_answers(ext_answer, master_outcome::granted) < quorum)
                    return "success without a quorum of extensions";
                const auto elapsed_us =
                    std::chrono::duration_cast<std::chrono::microseconds>(ev.now - t0).count();
                if (budget_us - elapsed_us <= 0)
                    return "success with no validity left";
                if (a.valid_until != t0 + std::chrono::microseconds(budget_us))
                    return "valid_until is not t0 + ttl - drift";
                return {};
            }
            if (!released)
                return "failed without releasing what is ours";
            if (closed != (a.ec == error::connection_closed))
                return "closed and connection_closed disagree";
            if (!closed && a.ec != error::lock_lost && a.ec != error::no_quorum &&
                a.ec != error::validity_expired)
                return "an unexpected error";
            // lock_lost needs a majority that said the key is not ours (known_not_held),
            // no_quorum a master that failed (the sequences start before the lock's validity
            // ends: never lock_expired).
            if (a.ec == error::lock_lost &&
                count_answers(ext_answer, master_outcome::held_by_other) +
                        count_answers(ext_answer, master_outcome::held_in_part) <
                    n / 2 + 1)
                return "lock_lost without a majority holding another token";
            // no_quorum needs a master that failed, or too few refusals to know the lock lost
            // (an even count of masters split in halves).
            if (a.ec == error::no_quorum &&
                count_answers(ext_answer, master_outcome::failed) +
                        count_answers(ext_answer, master_outcome::timed_out) ==
                    0 &&
                count_answers(ext_answer, master_outcome::held_by_other) +
                        count_answers(ext_answer, master_outcome::held_in_part) >=
                    n / 2 + 1)
                return "no_quorum although a majority answered without our token";
            // The release was over: every awaited master answered, or its deadline came.
            if (ev.type == ek::reply)
                for (std::size_t i = 0; i < n; ++i)
                    if (awaited[i])
                        return "completed before every awaited master answered the release";
            return {};
        }
        }
        return "unknown action";
    };

    // Start (or, rarely, cancel or close before it).
    std::vector<fsm_event> script;
    const int steps = static_cast<int>(pick(1, 40));
    for (int s = 0; s <= steps && !completed; ++s)
    {
        now += std::chrono::microseconds(pick(0, 30'000));
        const auto ev = roll_event(pick, s, 5, now, [&](std::int64_t r) {
            const auto round = released ? rel_id : ext_id;
            return r < 12 ? fsm_event::deadline(pick(0, 3) == 0 ? ext_id + rel_id + 9 : round, now)
                          : pick.reply(round, ext_id + 17, n, now);
        });
        // What the oracle learns from the event, as the machine should.
        if (ev.type == ek::cancel && !completed)
            cancelled = true;
        if (ev.type == ek::closed && !completed && ext_id != 0)
            closed = true;
        if (ext_id != 0 && !released)
            note_answer(ext_answer, ext_id, ev);
        if (ev.type == ek::reply && released && ev.round_id == rel_id)
            awaited[ev.master] = false;
        if (auto why = feed(m, ev, check_action); !why.empty())
            return why;
        (void)rel_deadline;
    }
    // Liveness: the deadlines the driver would echo end it.
    for (int k = 0; k < 2 && !completed; ++k)
    {
        now += 1s;
        const auto ev = fsm_event::deadline(released ? rel_id : ext_id, now);
        if (!released && ext_id != 0)
            time_out_silent(ext_answer);
        if (auto why = feed(m, ev, check_action); !why.empty())
            return why;
    }
    if (ext_id != 0 && !completed)
        return "the machine never completed";
    return {};
}

}  // namespace

TEST_CASE("extend_fsm: random event sequences keep every invariant", "[extend_fsm][property]")
{
    redlock_test::check_property("extend_fsm", 20261124, run_extend_sequence);
}
