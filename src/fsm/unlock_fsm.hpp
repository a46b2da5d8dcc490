// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_UNLOCK_FSM_HPP
#define REDLOCK_SRC_OPERATION_UNLOCK_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <redlock/error.hpp>

#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"
#include "fsm/master_set.hpp"

namespace redlock::detail {

/// @brief The decisions of one async_unlock, as a sans-io state machine: `resume(event) ->
/// action`, in the vocabulary of fsm_vocabulary.hpp, driven by unlock_op.
///
/// - start: send_release (compare-and-delete) to every master, all awaited, with a deadline
///   at now + release_timeout.
/// - A reply counts as granted when the master deleted our key, held_by_other when it held
///   another token or none, failed on an error. The caller is answered **at the quorum**
///   (success) once a majority deleted the key and the driver has said the round is
///   handed_off (every other delete left this process and needs nothing more from it): from
///   then on nobody can be refused the lock for our sake. The round then goes on without the
///   caller (the machine is not done()) until every master answered or the deadline passed,
///   and ends with no action.
/// - Otherwise the caller is answered when every master answered or at the deadline (the
///   silent ones count as timed out), with release_verdict(): success with a majority;
///   connection_closed if the client was closed meanwhile; no_quorum when too many failed;
///   when enough answered and too few still had our token, lock_expired if the lock's
///   validity had ended when the release started, else lock_lost.
/// - cancel, before the answer: completes at once with operation_aborted and is done (the
///   deletes already sent still execute on the masters). closed before start: connection_closed.
///
/// Stale replies and deadlines (another round's id), a second answer of one master, and any
/// event once done() are ignored. The machine answers exactly once.
class unlock_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// @param masters N, at least 1.
    /// @param valid_until the validity of the lock being released; the epoch when unknown (a
    /// lock rebuilt by lock_from_parts), which never counts as expired.
    /// @throws std::invalid_argument if masters is 0.
    unlock_fsm(std::chrono::milliseconds release_timeout, std::size_t masters,
               time_point valid_until = {});

    fsm_action resume(const fsm_event& ev);

    /// The caller has been answered (complete was returned).
    bool completed() const noexcept { return phase_ == phase::draining || phase_ == phase::done; }
    /// Nothing more to do: the driver may stop the round and let the operation go.
    bool done() const noexcept { return phase_ == phase::done; }

    /// Every master's outcome so far.
    const quorum_tracker& outcomes() const noexcept { return outcomes_; }

private:
    enum class phase : std::uint8_t
    {
        idle,
        releasing,  ///< awaiting the masters; the caller not answered yet
        draining,   ///< answered at the quorum; awaiting the rest in the background
        done
    };

    fsm_action on_reply(const fsm_event& ev);
    fsm_action finish();
    fsm_action complete(error_code ec);

    std::chrono::milliseconds release_timeout_;
    quorum_tracker outcomes_;
    master_set all_;  // what the release awaits: every master
    std::uint64_t round_ = 0;
    phase phase_ = phase::idle;
    bool handed_off_ = false;
    time_point valid_until_;
    bool expired_ = false;  // the lock's validity had ended when the release started
    bool closed_ = false;
};

}  // namespace redlock::detail

#endif
