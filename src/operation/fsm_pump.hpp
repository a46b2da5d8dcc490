// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_FSM_PUMP_HPP
#define REDLOCK_SRC_OPERATION_FSM_PUMP_HPP

#include <cstddef>

#include <boost/container/small_vector.hpp>

#include "operation/fsm_vocabulary.hpp"

namespace redlock::detail {

/// @brief What every driver does with its machine's events (shared by acquire_op and
/// extend_op): hand them over one at a time. An event raised while an action is being carried
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

}  // namespace redlock::detail

#endif
