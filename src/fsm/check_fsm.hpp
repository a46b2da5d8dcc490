// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_CHECK_FSM_HPP
#define REDLOCK_SRC_OPERATION_CHECK_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <redlock/error.hpp>

#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"

namespace redlock::detail {

/// @brief The decisions of one async_check, as a sans-io state machine: `resume(event) ->
/// action`, in the vocabulary of fsm_vocabulary.hpp, driven by check_op.
///
/// - start: send_attempt (the read of every key's token and PTTL) to every master, with a
///   deadline at now + timeout (the lock's attempt timeout).
/// - A check is a census, not a vote: it waits for every master (granted: the master holds
///   our token; held_by_other: it does not; failed: no answer) or the deadline (the silent
///   ones count as timed out), then completes with success. The driver reads the count of
///   holders from outcomes().
/// - cancel, before completion: operation_aborted at once. closed, before start or during the
///   census: connection_closed (a census cut short by close() would count the closed
///   connections as masters that lost the lock).
///
/// Stale replies and deadlines, a second answer of one master, and any event after
/// completion are ignored. The machine completes exactly once.
class check_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// @param masters N, at least 1.
    /// @throws std::invalid_argument if masters is 0.
    check_fsm(std::chrono::milliseconds timeout, std::size_t masters);

    fsm_action resume(const fsm_event& ev);

    bool done() const noexcept { return phase_ == phase::done; }

    /// Every master's outcome so far.
    const quorum_tracker& outcomes() const noexcept { return outcomes_; }

private:
    enum class phase : std::uint8_t
    {
        idle,
        checking,
        done
    };

    fsm_action complete(error_code ec);

    std::chrono::milliseconds timeout_;
    quorum_tracker outcomes_;
    std::uint64_t round_ = 0;
    phase phase_ = phase::idle;
    bool closed_ = false;
};

}  // namespace redlock::detail

#endif
