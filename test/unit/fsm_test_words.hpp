// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_UNIT_FSM_TEST_WORDS_HPP
#define REDLOCK_TEST_UNIT_FSM_TEST_WORDS_HPP

// The names every operation machine's test speaks in: the vocabulary's events and actions, a
// start time (the machines only ever subtract times), and the error codes they complete with.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>

#include <boost/asio/error.hpp>

#include <redlock/error.hpp>

#include "operation/fsm_vocabulary.hpp"

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
        const auto master = static_cast<std::size_t>((*this)(0, static_cast<std::int64_t>(masters) - 1));
        const auto outcome = static_cast<master_outcome>((*this)(1, 4));
        return fsm_event::reply((*this)(0, 5) == 0 ? stale : current, master, outcome, now);
    }

private:
    std::mt19937_64 rng_;
};

}  // namespace redlock_test::fsm

#endif
