// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_UNLOCK_OP_HPP
#define REDLOCK_SRC_OPERATION_UNLOCK_OP_HPP

#include <memory>
#include <optional>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "operation/fsm_pump.hpp"
#include "operation/unlock_fsm.hpp"
#include "round.hpp"

namespace redlock::detail {

/// @brief The Asio side of async_unlock: it runs unlock_fsm, which makes every decision, and
/// carries out its one action with a release round. What it adds: the lock's keys and token,
/// the handler, and the operation's life until the machine is done() (after an answer at the
/// quorum, the round goes on in the background).
class unlock_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<unlock_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code)>;
    using clock = std::chrono::steady_clock;

    unlock_op(std::shared_ptr<client_impl> c, lock l, handler h)
        : c_(std::move(c)), l_(std::move(l)), h_(std::move(h))
    {}

    void start()
    {
        if (answered_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        if (!st || st->token.empty())
            return answer(error::invalid_argument, true);
        if (c_->closed)
            return answer(error::connection_closed, true);
        c_->track(*this, shared_from_this());
        fsm_.emplace(c_->cfg.defaults.release_timeout, c_->size());
        initiating_ = true;
        drive(fsm_event::start(clock::now()));
        initiating_ = false;
    }

    void cancel()
    {
        if (answered_)
            return;
        if (!fsm_)
            return answer(asio::error::operation_aborted, false);  // before start()
        drive(fsm_event::cancel(clock::now()));
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        release_.stop();
        answered_ = true;
    }

private:
    void drive(const fsm_event& ev)
    {
        auto keep = hold();  // an action may end the operation and let it go
        pump_.drive(*fsm_, ev, [this](const fsm_action& a) { execute(a); });
        if (fsm_->done())
        {
            release_.stop();
            c_->untrack(*this);
        }
    }

    void execute(const fsm_action& a)
    {
        const auto& st = access::state(l_);
        switch (a.type)
        {
        case fsm_action::kind::send_release:
            release_id_ = a.round_id;
            release_.start(*c_, round::kind::release, st->key_span(), st->token, {}, a.deadline - clock::now(), this,
                           nullptr, a.deadline);
            return;
        case fsm_action::kind::complete: return answer(a.ec, initiating_);
        default: return;  // (an unlock sends no attempt and never waits to retry)
        }
    }

    // The round's outcome is certain: the machine learns whether the deletes still awaited
    // have left this process (then a majority's answer is enough) and the outcomes so far.
    void on_round_decided(round& r) override
    {
        const auto now = clock::now();
        if (r.runs_without_us())
            drive(fsm_event::handed_off(release_id_, now));
        report_outcomes(r.tracker(), release_id_, now, [this](const fsm_event& ev) { drive(ev); });
    }

    void on_round_finished(round& r) override
    {
        const auto now = clock::now();
        if (c_->closed)
            drive(fsm_event::closed(now));  // close() failed the requests, not the masters
        report_outcomes(r.tracker(), release_id_, now, [this](const fsm_event& ev) { drive(ev); });
        drive(fsm_event::deadline(release_id_, now));  // every master answered or timed out
    }

    void answer(error_code ec, bool immediate)
    {
        answered_ = true;
        if (c_->observed())
            c_->report(ec ? event_kind::release_failed : event_kind::released, l_.resource(), ec);
        if (immediate)
            post_completion(h_, c_->strand, ec);
        else
            dispatch_completion(h_, c_->strand, ec);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    handler h_;
    std::optional<unlock_fsm> fsm_;
    fsm_pump pump_;
    round release_;
    std::uint64_t release_id_ = 0;
    bool answered_ = false;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
