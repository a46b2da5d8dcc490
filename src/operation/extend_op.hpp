// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_EXTEND_OP_HPP
#define REDLOCK_SRC_OPERATION_EXTEND_OP_HPP

#include <memory>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "round.hpp"

namespace redlock::detail {

/// @brief async_extend: compare-and-PEXPIRE on every master; on failure, the keys still ours
/// are released (an extension round, then a release round).
class extend_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<extend_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, lock)>;

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
        initiating_ = true;
        extend_.start(*c_, round::kind::extend, st->key_span(), st->token, ttl_,
                      attempt_timeout_of(o), this);
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        extend_.stop();
        release_.stop();
        finish(asio::error::operation_aborted, {}, false);
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        extend_.stop();
        release_.stop();
        done_ = true;
    }

private:
    void on_round_decided(round& r) override
    {
        if (&r != &extend_)
            return;
        const auto& q = r.tracker();
        const auto& st = access::state(l_);
        if (q.state() == quorum_state::reached)
        {
            const auto drift = c_->cfg.defaults.drift_factor;
            if (remaining_validity(ttl_, std::chrono::steady_clock::now() - r.started(), drift) > std::chrono::steady_clock::duration::zero())
            {
                extend_.stop();
                auto ns = std::make_shared<lock_state>(*st);
                ns->valid_until = validity_deadline(r.started(), ttl_, drift);
                ns->ttl = ttl_;
                ns->masters = extend_.take_diagnostics();
                return finish({}, access::make(std::move(ns)), initiating_);
            }
            reason_ = error::validity_expired;
        }
        else
        {
            reason_ = error::lock_lost;
        }
        // The lock is gone: release what is still ours so that it does not linger until TTL.
        extend_.stop();
        diagnostics_ = extend_.diagnostics();
        release_.start(*c_, round::kind::release, st->key_span(), st->token, {},
                       c_->cfg.defaults.release_timeout, this, &extend_.tracker());
    }

    void on_round_finished(round& r) override
    {
        if (&r != &release_)
            return;
        finish(c_->closed ? error_code(error::connection_closed) : reason_,
               access::make(access::state(l_)->unheld(std::move(diagnostics_))), initiating_);
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
    round extend_;
    round release_;
    error_code reason_;
    std::vector<master_diagnostic> diagnostics_;
    bool done_ = false;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
