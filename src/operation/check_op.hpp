// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_CHECK_OP_HPP
#define REDLOCK_SRC_OPERATION_CHECK_OP_HPP

#include <memory>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "round.hpp"

namespace redlock::detail {

/// @brief async_check: does every master still hold the token, and with how much TTL.
class check_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<check_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, check_result)>;

    check_op(std::shared_ptr<client_impl> c, lock l, handler h)
        : c_(std::move(c)), l_(std::move(l)), h_(std::move(h))
    {}

    void start()
    {
        if (done_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        if (!st || st->token.empty())
            return finish(error::invalid_argument, {}, true);
        if (c_->closed)
            return finish(error::connection_closed, {}, true);
        c_->track(*this, shared_from_this());
        initiating_ = true;
        lock_options o = c_->cfg.defaults;
        if (st->ttl.count() > 0)
            o.ttl = st->ttl;
        check_.start(*c_, round::kind::check, st->key_span(), st->token, {},
                     attempt_timeout_of(o), this);
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        check_.stop();
        finish(asio::error::operation_aborted, {}, false);
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        check_.stop();
        done_ = true;
    }

private:
    void on_round_decided(round&) override {}

    void on_round_finished(round& r) override
    {
        check_result res;
        res.holding = r.tracker().granted();
        for (std::size_t i = 0; i < c_->size(); ++i)
        {
            const auto v = r.value(i);
            if (v >= 0 && (res.min_pttl.count() < 0 || v < res.min_pttl.count()))
                res.min_pttl = std::chrono::milliseconds(v);
        }
        res.masters = r.diagnostics();
        finish({}, std::move(res), initiating_);
    }

    void finish(error_code ec, check_result res, bool immediate)
    {
        done_ = true;
        if (immediate)
            post_completion(h_, c_->strand, ec, std::move(res));
        else
            dispatch_completion(h_, c_->strand, ec, std::move(res));
        c_->untrack(*this);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    handler h_;
    round check_;
    bool done_ = false;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
