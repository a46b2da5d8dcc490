// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_UNIT_ACQUIRE_TEST_WORDS_HPP
#define REDLOCK_TEST_UNIT_ACQUIRE_TEST_WORDS_HPP

// The names the acquisition machine's tests speak in: its events and actions, the options it
// takes and the outcomes masters answer with.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "fsm/acquire_fsm.hpp"

namespace redlock_test::acquire {

using namespace std::chrono_literals;
using redlock::lock_options;
using redlock::detail::acquire_action;
using redlock::detail::acquire_event;
using redlock::detail::acquire_fsm;
using redlock::detail::master_outcome;
using time_point = std::chrono::steady_clock::time_point;
using kind = acquire_action::kind;

inline constexpr auto granted = master_outcome::granted;
inline constexpr auto held = master_outcome::held_by_other;
inline constexpr auto failed = master_outcome::failed;

/// The set of `members` among `masters` masters.
inline redlock::detail::master_set set_of(std::size_t masters,
                                          std::initializer_list<std::size_t> members)
{
    redlock::detail::master_set s(masters);
    for (const auto m : members)
        s.insert(m);
    return s;
}

/// Times are offsets from an arbitrary epoch: the machine only ever subtracts them.
inline time_point at(std::chrono::steady_clock::duration d) { return time_point{} + 1h + d; }

/// Feeds one reply and returns the action.
inline acquire_action answer(acquire_fsm& f, std::uint64_t round, std::size_t master,
                             master_outcome o, time_point now)
{
    return f.resume(acquire_event::reply(round, master, o, now));
}

}  // namespace redlock_test::acquire

#endif
