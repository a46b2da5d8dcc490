// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_UNLOCK_OP_HPP
#define REDLOCK_SRC_OPERATION_UNLOCK_OP_HPP

#include <cstdint>

#include "driver/lock_op_driver.hpp"
#include "fsm/unlock_fsm.hpp"

namespace redlock::detail {

/// @brief The Asio side of async_unlock: it runs unlock_fsm, which makes every decision, and
/// carries out its one action with a release round. What it adds: the operation's life until
/// the machine is done() (after an answer at the quorum, the round goes on in the background).
class unlock_op final : public lock_op_driver<unlock_op, unlock_fsm, void(error_code)>
{
public:
    using lock_op_driver::lock_op_driver;

    void start()
    {
        if (admitted())
            run(c_->cfg.defaults.release_timeout, c_->size(), state()->claim().valid_until);
    }

    void abandon() noexcept override
    {
        release_.stop();
        answered_ = true;
    }

private:
    friend lock_op_driver;
    friend driver_base;

    void execute(const fsm_action& a)
    {
        switch (a.type)
        {
        case fsm_action::kind::send_release:
            release_id_ = a.round_id;
            // A release, or the hand-over of the lock to this client's next waiter for it.
            release_.start_release(*c_, *state(), c_->cfg.defaults.release_timeout, this,
                                   a.deadline, a.at);
            break;
        case fsm_action::kind::complete: refuse(a.ec); break;
        default: break;  // (an unlock sends no attempt and never waits to retry)
        }
        if (fsm_->done())
        {
            release_.stop();
            c_->untrack(*this);
        }
    }

    void refuse(error_code ec)
    {
        if (c_->observed())
            c_->report(ec ? event_kind::release_failed : event_kind::released, l_.resource(), ec,
                       l_.identity());
        deliver(ec);
    }

    // The machine decides: it is told each outcome as it comes. Once it counts a quorum, and
    // the deletes still awaited have left this process, it learns that too (a majority's
    // answer may then be enough); otherwise it can only answer at the end of the round.
    // (The events' time is the round's: nothing here depends on it, and the clock is not read
    // again on the hot path.)
    void on_round_outcome(round& r, std::size_t i) override
    {
        if (fsm_->completed())
            return;  // answered: only the round's end matters now (on_round_finished)
        const auto now = r.last_outcome_at();
        drive_outcome(r, i, release_id_, now);
        if (!fsm_ || fsm_->outcomes().state() != quorum_state::reached)
            return;
        r.decided();  // a yielded hand-off's notice need not wait for the slowest master
        if (!handed_off_told_ && !fsm_->done() && r.runs_without_us())
        {
            handed_off_told_ = true;
            drive(fsm_event::handed_off(release_id_, now));
        }
    }

    void on_round_finished(round& r) override
    {
        drive(ended_events(c_->closed, release_id_, r.last_outcome_at()));
    }

    round release_;
    std::uint64_t release_id_ = 0;
    bool handed_off_told_ = false;
};

}  // namespace redlock::detail

#endif
