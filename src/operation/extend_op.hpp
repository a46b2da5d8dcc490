// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_EXTEND_OP_HPP
#define REDLOCK_SRC_OPERATION_EXTEND_OP_HPP

#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "operation/extend_fsm.hpp"
#include "operation/fsm_pump.hpp"
#include "round.hpp"

namespace redlock::detail {

/// @brief The Asio side of async_extend: it runs extend_fsm, which makes every decision, and
/// carries out its actions with two rounds (the compare-and-PEXPIRE and, after a failure, the
/// release of what is still ours). What it adds: the lock handed out and the handler.
class extend_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<extend_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, lock)>;
    using clock = std::chrono::steady_clock;

    extend_op(std::shared_ptr<client_impl> c, lock l, std::chrono::milliseconds ttl, handler h)
        : c_(std::move(c)), l_(std::move(l)), ttl_(ttl), h_(std::move(h))
    {}

    void start()
    {
        if (done_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        lock_options o = c_->cfg.defaults;
        o.ttl = ttl_;
        error_code vec;
        std::string why;
        validate(o, vec, why);
        if (!st || st->token.empty() || vec)
        {
            // The lock is left as it was; the returned copy says why nothing was done.
            auto why_st = st ? std::make_shared<lock_state>(*st) : std::make_shared<lock_state>();
            why_st->reason = !st || st->token.empty() ? "the lock was never acquired (no token)"
                                                      : "the new TTL is refused: " + why;
            return finish(error::invalid_argument, access::make(std::move(why_st)), true);
        }
        if (c_->closed)
            return finish(error::connection_closed, {}, true);
        c_->track(*this, shared_from_this());
        fsm_.emplace(ttl_, o.drift_factor, attempt_timeout_of(o), o.release_timeout, c_->size());
        initiating_ = true;
        drive(fsm_event::start(clock::now()));
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        if (!fsm_)
            return finish(asio::error::operation_aborted, {}, false);  // before start()
        drive(fsm_event::cancel(clock::now()));
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        extend_.stop();
        release_.stop();
        done_ = true;
    }

private:
    void drive(const fsm_event& ev)
    {
        auto keep = hold();  // an action may complete the operation and let it go
        pump_.drive(*fsm_, ev, [this](const fsm_action& a) { execute(a); });
    }

    void execute(const fsm_action& a)
    {
        const auto& st = access::state(l_);
        switch (a.type)
        {
        case fsm_action::kind::none:
        case fsm_action::kind::wait_until: return;  // (no retry delay in an extension)
        case fsm_action::kind::send_attempt:
            extend_id_ = a.round_id;
            extend_.start(*c_, round::kind::extend, st->key_span(), st->token, ttl_,
                          a.deadline - clock::now(), this, nullptr, a.deadline);
            return;
        case fsm_action::kind::send_release:
            release_id_ = a.round_id;
            diagnostics_ = extend_.diagnostics();
            extend_.stop();
            // Every master gets the release; those that timed out get it queued behind their
            // PEXPIRE (round::start's `previous`), only `a.awaited` are waited for.
            release_.start(*c_, round::kind::release, st->key_span(), st->token, {}, c_->cfg.defaults.release_timeout,
                           this, &extend_.tracker(), a.deadline);
            return;
        case fsm_action::kind::complete:
            extend_.stop();
            release_.stop();
            if (a.ec == asio::error::operation_aborted)
                return finish(a.ec, {}, initiating_);  // cancelled: the lock is left as it was
            if (a.ec)
                return finish(a.ec, access::make(st->unheld(std::move(diagnostics_))), initiating_);
            {
                auto ns = std::make_shared<lock_state>(*st);
                ns->valid_until = a.valid_until;
                ns->ttl = ttl_;
                ns->masters = extend_.take_diagnostics();
                ns->reason.clear();
                finish({}, access::make(std::move(ns)), initiating_);
            }
            return;
        }
    }

    void on_round_decided(round& r) override
    {
        if (&r != &extend_)
            return;
        // The machine counts the outcomes itself: it is told every one the round has so far.
        report_outcomes(r.tracker(), extend_id_, clock::now(), [this](const fsm_event& ev) { drive(ev); });
    }

    void on_round_finished(round& r) override
    {
        if (&r != &release_)
            return;
        const auto now = clock::now();
        if (c_->closed)
            drive(fsm_event::closed(now));  // close() failed the requests, not the masters
        drive(fsm_event::deadline(release_id_, now));
    }

    void finish(error_code ec, lock result, bool immediate)
    {
        done_ = true;
        if (!access::state(result))
            result = l_;
        if (c_->observed())
            c_->report(ec ? event_kind::extend_failed : event_kind::extended, l_.resource(), ec);
        if (immediate)
            post_completion(h_, c_->strand, ec, std::move(result));
        else
            dispatch_completion(h_, c_->strand, ec, std::move(result));
        c_->untrack(*this);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    std::chrono::milliseconds ttl_;
    handler h_;
    std::optional<extend_fsm> fsm_;
    fsm_pump pump_;
    round extend_;
    round release_;
    std::uint64_t extend_id_ = 0;
    std::uint64_t release_id_ = 0;
    std::vector<master_diagnostic> diagnostics_;
    bool done_ = false;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
