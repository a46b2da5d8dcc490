// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_UNIT_FSM_TEST_WORDS_HPP
#define REDLOCK_TEST_UNIT_FSM_TEST_WORDS_HPP

// The names every operation machine's test speaks in: the vocabulary's events and actions, a
// start time (the machines only ever subtract times), and the error codes they complete with.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <boost/asio/error.hpp>

#include <redlock/error.hpp>

#include "fsm/fsm_vocabulary.hpp"

namespace redlock_test::fsm {

using namespace std::chrono_literals;
using redlock::error;
using redlock::error_code;
using redlock::detail::fsm_action;
using redlock::detail::fsm_event;
using redlock::detail::master_outcome;
using time_point = std::chrono::steady_clock::time_point;
using ak = fsm_action::kind;
using ek = fsm_event::kind;

inline const time_point t_start{std::chrono::seconds(1000)};
inline const error_code aborted = boost::asio::error::operation_aborted;

/// The random choices of a machine's property test, all from one seed (so a seed replays its
/// sequence).
class event_dice
{
public:
    explicit event_dice(std::uint64_t seed) : rng_(seed) {}

    /// An integer in [lo, hi].
    std::int64_t operator()(std::int64_t lo, std::int64_t hi)
    {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
    }

    /// A reply of any of `masters` masters with any outcome, to round `current` or, one time in
    /// six, to round `stale`.
    fsm_event reply(std::uint64_t current, std::uint64_t stale, std::size_t masters, time_point now)
    {
        const auto master =
            static_cast<std::size_t>((*this)(0, static_cast<std::int64_t>(masters) - 1));
        const auto outcome = static_cast<master_outcome>((*this)(1, 4));
        return fsm_event::reply((*this)(0, 5) == 0 ? stale : current, master, outcome, now);
    }

private:
    std::mt19937_64 rng_;
};

/// Step `step`'s event of a random sequence, from a roll in [0, 99] drawn here: at step 0 a start
/// (or, 3 and 2 rolls in 100, a cancel or a close before it); later a cancel (rolls below 3), a
/// close (rolls below `closes_below`), else `other(roll)`.
template <class Other>
fsm_event roll_event(event_dice& pick, int step, std::int64_t closes_below, time_point now,
                     Other other)
{
    const auto r = pick(0, 99);
    if (step == 0)
        return r < 3 ? fsm_event::cancel(now)
                     : (r < 5 ? fsm_event::closed(now) : fsm_event::start(now));
    if (r < 3)
        return fsm_event::cancel(now);
    if (r < closes_below)
        return fsm_event::closed(now);
    return other(r);
}

/// Feeds `ev` to the machine `m` and returns what `check(action, ev)` finds wrong in the action
/// (empty: nothing).
template <class Machine, class Check>
std::string feed(Machine& m, const fsm_event& ev, Check& check)
{
    return check(m.resume(ev), ev);
}

/// An oracle's record of one round: per master -1 (no answer yet) or its first outcome.
using first_answers = std::vector<int>;

/// Every master yet to answer timed out (what a round's deadline tells).
inline void time_out_silent(first_answers& answer)
{
    for (auto& x : answer)
        if (x < 0)
            x = static_cast<int>(master_outcome::timed_out);
}

/// How many masters answered `o` first.
inline std::size_t count_answers(const first_answers& answer, master_outcome o)
{
    std::size_t c = 0;
    for (const auto x : answer)
        c += x == static_cast<int>(o) ? 1 : 0;
    return c;
}

/// What `ev` teaches the record of round `round`: a reply's outcome, if the master's first; the
/// round's deadline: every master yet to answer timed out.
inline void note_answer(first_answers& answer, std::uint64_t round, const fsm_event& ev)
{
    if (ev.round_id != round)
        return;
    if (ev.type == ek::reply && answer[ev.master] < 0)
        answer[ev.master] = static_cast<int>(ev.outcome);
    if (ev.type == ek::deadline)
        time_out_silent(answer);
}

}  // namespace redlock_test::fsm

#endif
