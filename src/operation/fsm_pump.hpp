// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_FSM_PUMP_HPP
#define REDLOCK_SRC_OPERATION_FSM_PUMP_HPP

#include <cstddef>
#include <cstdint>

#include <boost/container/small_vector.hpp>

#include "algorithm/quorum.hpp"
#include "operation/fsm_vocabulary.hpp"

namespace redlock::detail {

/// @brief What every driver does with its machine's events (acquire_op, extend_op, unlock_op,
/// check_op): hand them over one at a time. An event raised while an action is being carried
/// out (a round that finishes inside its own start(), when every master is down) is queued and
/// handed over once that action is done, so a machine is never re-entered.
class fsm_pump
{
public:
    /// Gives `ev` to `machine` and `execute`s the action it returns, then any events queued
    /// meanwhile. The caller keeps itself alive across the call (an action may complete it).
    template <class Machine, class Execute>
    void drive(Machine& machine, const fsm_event& ev, Execute&& execute)
    {
        queued_.push_back(ev);
        if (driving_)
            return;  // handled by the loop below, once the action under way is done
        driving_ = true;
        for (std::size_t i = 0; i < queued_.size(); ++i)
            execute(machine.resume(queued_[i]));
        queued_.clear();
        driving_ = false;
    }

private:
    boost::container::small_vector<fsm_event, 4> queued_;
    bool driving_ = false;
};

/// Hands `drive` a reply event for every outcome `q` holds so far, tagged `round_id`: what a
/// driver does when a round says its outcome is decided or that it is over. The order does not
/// matter (a decision depends only on the counts), and a machine ignores a master's second
/// answer, so reporting the same outcomes again later is harmless.
template <class Drive>
void report_outcomes(const quorum_tracker& q, std::uint64_t round_id, fsm_event::time_point now, Drive&& drive)
{
    for (std::size_t i = 0; i < q.masters(); ++i)
        if (q.outcome(i) != master_outcome::pending)
            drive(fsm_event::reply(round_id, i, q.outcome(i), now));
}

}  // namespace redlock::detail

#endif
