// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The release machine of async_unlock (src/fsm/unlock_fsm.hpp): stepped by hand through
// its paths with a failure and a cancellation injected at every step, then fed random event
// sequences against invariants an oracle checks with its own counts (REDLOCK_PROPERTY_* as in
// property_check.hpp).
#include "fsm/unlock_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fsm_test_words.hpp"
#include "property_check.hpp"

using namespace redlock_test::fsm;
using redlock::detail::unlock_fsm;

namespace {

// A machine started at t_start (release_timeout 100 ms); `id` is its release round.
struct started
{
    unlock_fsm m;
    std::uint64_t id = 0;

    explicit started(std::size_t masters, time_point valid_until = {})
        : m(100ms, masters, valid_until)
    {
        const auto a = m.resume(fsm_event::start(t_start));
        REQUIRE(a.type == ak::send_release);
        CHECK(a.deadline == t_start + 100ms);
        CHECK(a.awaited->count() == masters);  // an unlock waits for every master
        id = a.round_id;
    }

    fsm_action reply(std::size_t i, master_outcome o, std::chrono::milliseconds at = 1ms)
    {
        return m.resume(fsm_event::reply(id, i, o, t_start + at));
    }
};

}  // namespace

TEST_CASE(
    "unlock_fsm: a majority deleted and the rest handed off answers at the quorum, then drains",
    "[unlock_fsm]")
{
    started s(5);
    CHECK(s.m.resume(fsm_event::handed_off(s.id, t_start)).type == ak::none);
    CHECK(s.reply(0, master_outcome::granted).type == ak::none);
    CHECK(s.reply(3, master_outcome::granted).type == ak::none);
    const auto a = s.reply(1, master_outcome::granted);
    REQUIRE(a.type == ak::complete);
    CHECK_FALSE(a.ec);
    CHECK(s.m.completed());
    CHECK_FALSE(s.m.done());  // the two other masters are still awaited, without the caller
    // A cancellation now is not the caller's: ignored, and the round goes on.
    CHECK(s.m.resume(fsm_event::cancel(t_start + 2ms)).type == ak::none);
    CHECK_FALSE(s.m.done());
    CHECK(s.reply(2, master_outcome::failed).type == ak::none);
    CHECK(s.reply(4, master_outcome::held_by_other).type == ak::none);
    CHECK(s.m.done());  // every master answered: nothing more, and no second answer
    CHECK(s.m.outcomes().granted() == 3);
}

TEST_CASE("unlock_fsm: without the hand-off a majority is not enough: it waits for every master",
          "[unlock_fsm]")
{
    started s(3);
    CHECK(s.reply(0, master_outcome::granted).type == ak::none);
    CHECK(s.reply(1, master_outcome::granted).type == ak::none);
    CHECK_FALSE(s.m.completed());
    const auto a = s.reply(2, master_outcome::granted, 5ms);
    REQUIRE(a.type == ak::complete);
    CHECK_FALSE(a.ec);
    CHECK(s.m.done());
}

TEST_CASE("unlock_fsm: a hand-off after the quorum answers at once", "[unlock_fsm]")
{
    started s(3);
    CHECK(s.reply(0, master_outcome::granted).type == ak::none);
    CHECK(s.reply(1, master_outcome::granted).type == ak::none);
    // A hand-off of another round says nothing about this one.
    CHECK(s.m.resume(fsm_event::handed_off(s.id + 1, t_start + 2ms)).type == ak::none);
    const auto a = s.m.resume(fsm_event::handed_off(s.id, t_start + 2ms));
    REQUIRE(a.type == ak::complete);
    CHECK_FALSE(a.ec);
    CHECK_FALSE(s.m.done());
    // The deadline ends the background part.
    CHECK(s.m.resume(fsm_event::deadline(s.id, t_start + 100ms)).type == ak::none);
    CHECK(s.m.done());
}

TEST_CASE("unlock_fsm: the verdict when the release falls short of a majority", "[unlock_fsm]")
{
    SECTION("too few still had our token: lock_lost")
    {
        started s(3);
        s.reply(0, master_outcome::granted);
        s.reply(1, master_outcome::held_by_other);
        const auto a = s.reply(2, master_outcome::held_by_other);
        REQUIRE(a.type == ak::complete);
        CHECK(a.ec == error::lock_lost);
        CHECK(s.m.done());
    }
    SECTION("too few still had our token after the lock's validity ended: lock_expired")
    {
        // Valid until t_start (or before): expired when the release starts. Valid until just
        // after it: lost, as above.
        for (const auto& [valid_until, expected] :
             {std::pair{t_start - 1ms, error::lock_expired},
              std::pair{t_start, error::lock_expired}, std::pair{t_start + 1ms, error::lock_lost}})
        {
            started s(3, valid_until);
            s.reply(0, master_outcome::held_by_other);
            s.reply(1, master_outcome::held_by_other);
            const auto a = s.reply(2, master_outcome::granted);
            REQUIRE(a.type == ak::complete);
            CHECK(a.ec == expected);
        }
    }
    SECTION("too many failed or stayed silent: no_quorum, at the deadline")
    {
        started s(5);
        s.reply(0, master_outcome::granted);
        s.reply(1, master_outcome::failed);
        s.reply(2, master_outcome::held_by_other);
        CHECK(s.m.resume(fsm_event::deadline(s.id + 7, t_start + 100ms)).type ==
              ak::none);  // stale
        const auto a = s.m.resume(fsm_event::deadline(s.id, t_start + 100ms));
        REQUIRE(a.type == ak::complete);
        CHECK(a.ec == error::no_quorum);  // 1 failed + 2 timed out > 5 - 3
        CHECK(s.m.outcomes().outcome(3) == master_outcome::timed_out);
        CHECK(s.m.done());
    }
    SECTION("deleted where it answered, one holder silent: no_quorum, not lock_lost")
    {
        // Taken on exactly 3 of 5; at the release, two of the three delete it, the third is
        // down, the other two never had it: the deletes and the silent master could make a
        // majority, so nobody else can have held it, and lost is not what is known.
        started s(5);
        s.reply(0, master_outcome::granted);
        s.reply(1, master_outcome::granted);
        s.reply(2, master_outcome::failed);
        s.reply(3, master_outcome::held_by_other);
        const auto a = s.reply(4, master_outcome::held_by_other);
        REQUIRE(a.type == ak::complete);
        CHECK(a.ec == error::no_quorum);
    }
    SECTION("the client closed meanwhile: connection_closed, not the masters' fault")
    {
        started s(3);
        s.reply(0, master_outcome::granted);
        CHECK(s.m.resume(fsm_event::closed(t_start + 2ms)).type == ak::none);
        s.reply(1, master_outcome::failed);
        const auto a = s.reply(2, master_outcome::failed);
        REQUIRE(a.type == ak::complete);
        CHECK(a.ec == error::connection_closed);
    }
    SECTION("a majority deleted although the client closed: success")
    {
        started s(3);
        s.m.resume(fsm_event::closed(t_start));
        s.reply(0, master_outcome::granted);
        s.reply(1, master_outcome::granted);
        const auto a = s.reply(2, master_outcome::failed);
        REQUIRE(a.type == ak::complete);
        CHECK_FALSE(a.ec);
    }
}

TEST_CASE("unlock_fsm: a failure injected at every step", "[unlock_fsm]")
{
    // Five masters answer in order; the reply at step k fails instead. One failure never costs
    // the majority: the verdict is success, early (at the third grant) when handed off.
    for (const bool handed_off : {false, true})
        for (std::size_t k = 0; k < 5; ++k)
        {
            INFO("failure at step " << k << ", handed off " << handed_off);
            started s(5);
            if (handed_off)
                REQUIRE(s.m.resume(fsm_event::handed_off(s.id, t_start)).type == ak::none);
            std::size_t answered_at = 99, grants = 0;
            for (std::size_t i = 0; i < 5; ++i)
            {
                const auto o = i == k ? master_outcome::failed : master_outcome::granted;
                grants += o == master_outcome::granted ? 1 : 0;
                const auto a = s.reply(i, o);
                if (a.type == ak::complete)
                {
                    CHECK(answered_at == 99);
                    CHECK_FALSE(a.ec);
                    answered_at = i;
                    CHECK(grants >= 3);
                }
            }
            CHECK(answered_at == (handed_off ? (k < 3 ? 3u : 2u) : 4u));
            CHECK(s.m.done());
        }
}

TEST_CASE("unlock_fsm: a cancellation at every step", "[unlock_fsm]")
{
    for (std::size_t k = 0; k <= 3; ++k)
    {
        INFO("cancelled after " << k << " replies");
        started s(3);
        s.m.resume(fsm_event::handed_off(s.id, t_start));
        bool answered = false;
        for (std::size_t i = 0; i < k; ++i)
            answered = s.reply(i, master_outcome::granted).type == ak::complete || answered;
        const auto a = s.m.resume(fsm_event::cancel(t_start + 5ms));
        if (k >= 2)
        {
            CHECK(answered);  // answered at the quorum: the cancellation comes too late
            CHECK(a.type == ak::none);
        }
        else
        {
            REQUIRE(a.type == ak::complete);
            CHECK(a.ec == aborted);
            CHECK(s.m.done());  // nothing more: the driver stops the round
        }
    }
}

TEST_CASE("unlock_fsm: before start, and what it ignores", "[unlock_fsm]")
{
    CHECK_THROWS_AS(unlock_fsm(100ms, 0), std::invalid_argument);
    {
        unlock_fsm m(100ms, 3);
        CHECK(m.resume(fsm_event::reply(1, 0, master_outcome::granted, t_start)).type == ak::none);
        const auto a = m.resume(fsm_event::closed(t_start));
        REQUIRE(a.type == ak::complete);
        CHECK(a.ec == error::connection_closed);
        CHECK(m.done());
        CHECK(m.resume(fsm_event::start(t_start)).type == ak::none);
    }
    {
        unlock_fsm m(100ms, 3);
        const auto a = m.resume(fsm_event::cancel(t_start));
        REQUIRE(a.type == ak::complete);
        CHECK(a.ec == aborted);
    }
    {
        started s(3);
        // Stale round, a second answer of one master, a pending "answer", a stray index.
        CHECK(s.m.resume(fsm_event::reply(s.id + 1, 0, master_outcome::granted, t_start)).type ==
              ak::none);
        CHECK(s.reply(0, master_outcome::granted).type == ak::none);
        CHECK(s.reply(0, master_outcome::held_by_other).type == ak::none);
        CHECK(s.reply(1, master_outcome::pending).type == ak::none);
        CHECK(s.reply(9, master_outcome::granted).type == ak::none);
        CHECK(s.m.outcomes().granted() == 1);
        CHECK(s.m.outcomes().pending() == 2);
        CHECK(s.m.resume(fsm_event::start(t_start)).type == ak::none);  // no second release
    }
}

// ---- Random event sequences ---------------------------------------------------------------------

namespace {

/// Runs one random sequence; returns an empty string, or what went wrong.
std::string run_unlock_sequence(std::uint64_t seed)
{
    event_dice pick(seed);
    static constexpr std::size_t sizes[] = {1, 2, 3, 4, 5, 7};
    const std::size_t n = sizes[pick(0, 5)];
    const std::size_t quorum = n / 2 + 1;
    unlock_fsm m(std::chrono::milliseconds(pick(1, 200)), n);

    time_point now = t_start;
    std::uint64_t id = 0;
    first_answers answer(n, -1);
    bool answered = false, done = false, handed_off = false, closed = false,
         deadline_passed = false;
    auto count = [&](master_outcome o) { return count_answers(answer, o); };
    auto all_answered = [&] {
        for (const auto x : answer)
            if (x < 0)
                return false;
        return true;
    };

    auto check_action = [&](const fsm_action& a, const fsm_event& ev) -> std::string {
        if (done && a.type != ak::none)
            return "an action once done";
        if (m.done() && !done)
        {
            done = true;
            if (id != 0 && !answered && a.type != ak::complete)
                return "done without answering";
        }
        switch (a.type)
        {
        case ak::none: return {};
        case ak::send_attempt:
        case ak::send_commit:
        case ak::send_watch:
        case ak::wait_until: return "an unlock only releases";
        case ak::send_release:
            if (id != 0)
                return "a second release";
            id = a.round_id;
            return a.awaited->count() == n ? "" : "the release does not await every master";
        case ak::complete:
        {
            if (answered)
                return "answered twice";
            answered = true;
            if (id == 0)
                return a.ec == boost::asio::error::operation_aborted ||
                               a.ec == error::connection_closed
                           ? ""
                           : "answered before start without a cause";
            if (ev.type == ek::cancel)
                return a.ec == boost::asio::error::operation_aborted && m.done()
                           ? ""
                           : "a cancellation not aborted and done";
            const bool over = deadline_passed || all_answered();
            const std::size_t grants = count(master_outcome::granted);
            if (!a.ec)
            {
                if (grants < quorum)
                    return "success without a majority of deletes";
                if (!over && !handed_off)
                    return "success before the end of the round without the hand-off";
                if (!over && m.done())
                    return "answered at the quorum but not draining";
                return {};
            }
            if (!over)
                return "a failure before every master answered or the deadline";
            if (grants >= quorum)
                return "a failure with a majority of deletes";
            if (closed)
                return a.ec == error::connection_closed ? "" : "closed but not connection_closed";
            // lock_lost only when a majority said our token is not there; deleted and
            // unanswered masters that could make a majority leave it unknown: no_quorum.
            const error_code expect =
                count(master_outcome::held_by_other) + count(master_outcome::held_in_part) >= quorum
                    ? error_code(error::lock_lost)
                    : error_code(error::no_quorum);
            return a.ec == expect ? "" : "the wrong verdict";
        }
        }
        return "unknown action";
    };

    const int steps = static_cast<int>(pick(1, 30));
    for (int s = 0; s <= steps && !done; ++s)
    {
        now += std::chrono::microseconds(pick(0, 30'000));
        const auto ev = roll_event(pick, s, 6, now, [&](std::int64_t r) {
            if (r < 10)
                return fsm_event::deadline(pick(0, 3) == 0 ? id + 9 : id, now);
            if (r < 20)
                return fsm_event::handed_off(pick(0, 3) == 0 ? id + 5 : id, now);
            return pick.reply(id, id + 17, n, now);
        });
        // What the oracle learns from the event, as the machine should.
        if (id != 0)
        {
            if (ev.type == ek::closed)
                closed = true;
            if (ev.type == ek::handed_off && ev.round_id == id)
                handed_off = true;
            if (ev.type == ek::deadline && ev.round_id == id)
                deadline_passed = true;
            note_answer(answer, id, ev);
        }
        if (auto why = feed(m, ev, check_action); !why.empty())
            return why;
    }
    // Liveness: the deadline the driver echoes ends it.
    if (id != 0 && !done)
    {
        now += 1s;
        deadline_passed = true;
        time_out_silent(answer);
        if (auto why = feed(m, fsm_event::deadline(id, now), check_action); !why.empty())
            return why;
        if (!m.done())
            return "not done after the deadline";
    }
    if (!answered)
        return "never answered";
    return {};
}

}  // namespace

TEST_CASE("unlock_fsm: random event sequences keep every invariant", "[unlock_fsm][property]")
{
    redlock_test::check_property("unlock_fsm", 20261124, run_unlock_sequence);
}
