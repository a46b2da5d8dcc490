// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_CHECK_OP_HPP
#define REDLOCK_SRC_OPERATION_CHECK_OP_HPP

#include <cstdint>

#include <redlock/hold.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "driver/lock_op_driver.hpp"
#include "fsm/check_fsm.hpp"

namespace redlock::detail {

/// @brief The Asio side of async_check: it runs check_fsm, which decides when the census is
/// over and what it means, and carries out its one action with a check round. What it adds:
/// the smallest PTTL (read from the round).
class check_op final : public lock_op_driver<check_op, check_fsm, void(error_code, check_result)>
{
public:
    using lock_op_driver::lock_op_driver;

    void start()
    {
        if (!admitted())
            return;
        lock_options o = c_->cfg.defaults;
        if (state()->ttl.count() > 0)
            o.ttl = state()->ttl;
        timeout_ = attempt_timeout_of(o);
        run(timeout_, c_->size());
    }

    void abandon() noexcept override
    {
        check_.stop();
        answered_ = true;
    }

private:
    friend lock_op_driver;
    friend driver_base;

    void execute(const fsm_action& a)
    {
        switch (a.type)
        {
        case fsm_action::kind::send_attempt:
            check_id_ = a.round_id;
            check_.start(*c_, row_of(state()->kind).check, state()->key_span(), state()->token, {},
                         timeout_, this, nullptr, nullptr, a.deadline, a.at);
            return;
        case fsm_action::kind::complete:
        {
            check_result res;
            if (!a.ec)
            {
                res.holding = fsm_->outcomes().granted();
                for (std::size_t i = 0; i < c_->size(); ++i)
                {
                    const auto v = check_.value(i);
                    if (v >= 0 && (res.min_pttl.count() < 0 || v < res.min_pttl.count()))
                        res.min_pttl = std::chrono::milliseconds(v);
                }
            }
            const auto& d = check_.diagnostics();
            res.masters.assign(d.begin(), d.end());
            check_.stop();
            deliver(a.ec, std::move(res));
            c_->untrack(*this);
            return;
        }
        default: return;  // (a check sends nothing else)
        }
    }

    void refuse(error_code ec) { deliver(ec, check_result{}); }

    void on_round_outcome(round&, std::size_t) override {}  // a census waits for every master

    void on_round_finished(round& r) override
    {
        drive(finished_events(r, c_->closed, check_id_, r.last_outcome_at()));
    }

    round check_;
    std::chrono::milliseconds timeout_{0};
    std::uint64_t check_id_ = 0;
};

}  // namespace redlock::detail

#endif
