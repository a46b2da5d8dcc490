// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_EXTEND_FSM_HPP
#define REDLOCK_SRC_OPERATION_EXTEND_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <redlock/error.hpp>

#include "algorithm/lock_timing.hpp"
#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"
#include "fsm/master_set.hpp"

namespace redlock::detail {

/// @brief The decisions of one async_extend, as a sans-io state machine: `resume(event) ->
/// action`, in the vocabulary of fsm_vocabulary.hpp, driven by extend_op.
///
/// - start: t0 is the event's time; send_attempt (the compare-and-PEXPIRE to every master)
///   with a deadline at t0 + attempt_timeout; at that deadline every master still pending
///   counts as timed_out.
/// - The quorum_tracker decides as early as certain. Reached with remaining_validity(ttl,
///   now - t0, drift_factor) > 0: complete with valid_until = validity_deadline(t0, ttl,
///   drift_factor). Reached too late: the reason is error::validity_expired. Failed because
///   the keys hold another token or are gone on enough masters: error::lock_expired when the
///   lock's validity had already ended when the extension started, else error::lock_lost
///   (taken over, or dropped by a master). Failed because too many masters failed or timed
///   out: error::no_quorum, as for an acquisition (nobody knows what they hold).
/// - A failed extension is always followed by a release on every master (the keys still ours
///   must not linger on a minority until their TTL), awaiting the masters that did not time
///   out, with its own deadline (now + release_timeout). When it is over: the reason, or
///   connection_closed if the client was closed meanwhile.
/// - cancel, before completion: completes at once with operation_aborted and nothing more;
///   the lock is left as it was (a PEXPIRE already sent may still apply, which only lengthens a
///   lock the caller holds). closed, while extending: the extension fails (released as above,
///   which the closed connections refuse at once), then connection_closed.
///
/// Stale replies and deadlines (another round's id), a second answer of one master, and any
/// event after completion are ignored. The machine completes exactly once.
class extend_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// @param masters N, at least 1.
    /// @param valid_until the validity of the lock being extended; the epoch when unknown (a
    /// lock rebuilt by lock_from_parts), which never counts as expired.
    /// @throws std::invalid_argument if masters is 0.
    extend_fsm(const lock_timing& timing, std::size_t masters, time_point valid_until = {});

    fsm_action resume(const fsm_event& ev);

    bool done() const noexcept { return phase_ == phase::done; }

    /// The outcomes of the extension round as they stood when it was decided.
    const quorum_tracker& last_attempt() const noexcept { return round_outcomes_; }

private:
    enum class phase : std::uint8_t
    {
        idle,
        extending,
        releasing,
        done
    };

    fsm_action on_decided(time_point now);
    fsm_action release(error_code reason, time_point now);
    fsm_action complete(error_code ec, time_point valid_until = {});

    lock_timing timing_;
    quorum_tracker round_outcomes_;
    master_set release_waiting_;
    master_set all_;  // where a release goes: every master
    std::uint64_t round_ = 0;
    time_point t0_{};
    time_point valid_until_;
    error_code reason_;
    phase phase_ = phase::idle;
    bool closed_ = false;
    bool expired_ = false;  // the lock's validity had ended when the extension started
};

}  // namespace redlock::detail

#endif
