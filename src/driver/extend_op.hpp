// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_EXTEND_OP_HPP
#define REDLOCK_SRC_OPERATION_EXTEND_OP_HPP

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithm/attempt_timeout.hpp"
#include "driver/lock_op_driver.hpp"
#include "fsm/extend_fsm.hpp"

namespace redlock::detail {

/// @brief The Asio side of async_extend: it runs extend_fsm, which makes every decision, and
/// carries out its actions with two rounds (the compare-and-PEXPIRE and, after a failure, the
/// release of what is still ours). What it adds: the new TTL's validation and the lock handed
/// out.
class extend_op final : public lock_op_driver<extend_op, extend_fsm, void(error_code, lock)>
{
public:
    extend_op(std::shared_ptr<op_context> c, lock l, std::chrono::milliseconds ttl, handler h)
        : lock_op_driver(std::move(c), std::move(l), std::move(h)),
          ttl_(ttl)
    {}

    void start()
    {
        lock_options o = c_->cfg.defaults;
        o.ttl = ttl_;
        error_code vec;
        std::string why;
        validate(o, vec, why);
        if (answered_ || !state() || state()->token.empty())
            return (void)admitted();  // cancelled before it started, or no token: refused there
        if (vec)
        {
            // The lock is left as it was; the returned copy says why nothing was done.
            auto why_st = lock_state::derive(state());
            why_st->reason = "the new TTL is refused: " + why;
            return answer(error::invalid_argument, access::make(std::move(why_st)));
        }
        if (!admitted())
            return;
        c_->note_ttl(ttl_);
        run(lock_timing::of(o), c_->size(), state()->claim().valid_until);
    }

    void abandon() noexcept override
    {
        extend_.stop();
        release_.stop();
        answered_ = true;
    }

private:
    friend lock_op_driver;
    friend driver_base;

    void execute(const fsm_action& a)
    {
        const auto& st = state();
        switch (a.type)
        {
        case fsm_action::kind::none:
        case fsm_action::kind::wait_until:
        case fsm_action::kind::send_commit:
        case fsm_action::kind::send_watch:
            return;  // (no retry delay, fencing or waiting in an extension)
        case fsm_action::kind::send_attempt:
            extend_id_ = a.round_id;
            extend_.start(*c_, row_of(st->kind).extend, st->extend_span(), st->token, ttl_.count(),
                          a.deadline - a.at, this, nullptr, nullptr, a.deadline, a.at);
            return;
        case fsm_action::kind::send_release:
            st->claim().over = true;  // the extension failed: its keys are being deleted
            release_id_ = a.round_id;
            diagnostics_ = extend_.diagnostics();
            extend_.stop();
            // Every master gets the release (a.to); those that timed out get it queued behind
            // their PEXPIRE, only `a.awaited` are waited for.
            release_.start(*c_, row_of(st->kind).release, st->release_span(), st->token, {},
                           c_->cfg.defaults.release_timeout, this, a.to, a.awaited, a.deadline,
                           a.at);
            return;
        case fsm_action::kind::complete:
            extend_.stop();
            release_.stop();
            if (a.ec == asio::error::operation_aborted)
                return answer(a.ec, l_);  // cancelled: the lock is left as it was
            if (a.ec)
            {
                st->claim().over = true;
                return answer(a.ec, access::make(st->unheld(std::move(diagnostics_))));
            }
            {
                st->claim().valid_until = a.valid_until;  // the latest proof, shorter or not
                auto ns = lock_state::derive(st);
                ns->valid_until = a.valid_until;
                ns->ttl = ttl_;
                ns->masters = extend_.take_diagnostics();
                ns->reason.clear();
                answer({}, access::make(std::move(ns)));
            }
            return;
        }
    }

    void refuse(error_code ec)
    {
        if (ec == error::invalid_argument)
        {
            // The lock is left as it was; the returned copy says why nothing was done.
            auto why_st = state() ? lock_state::derive(state()) : std::make_shared<lock_state>();
            why_st->reason = "the lock was never acquired (no token)";
            return answer(ec, access::make(std::move(why_st)));
        }
        answer(ec, l_);
    }

    void on_round_outcome(round& r, std::size_t i) override
    {
        if (&r != &extend_ || fsm_->done())
            return;  // (the release's end is its round's)
        // The machine decides; the time is now, as validity is judged by it.
        drive_outcome(r, i, extend_id_, clock::now());
    }

    void on_round_finished(round& r) override
    {
        if (&r != &release_)
            return;
        drive(ended_events(c_->closed, release_id_, clock::now()));
    }

    void answer(error_code ec, lock result)
    {
        if (c_->observed())
            c_->report(ec ? event_kind::extend_failed : event_kind::extended, l_.resource(), ec,
                       l_.identity());
        deliver(ec, std::move(result));
        c_->untrack(*this);
    }

    std::chrono::milliseconds ttl_;
    round extend_;
    round release_;
    std::uint64_t extend_id_ = 0;
    std::uint64_t release_id_ = 0;
    diagnostic_list diagnostics_;
};

}  // namespace redlock::detail

#endif
