// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_CHECK_OP_HPP
#define REDLOCK_SRC_OPERATION_CHECK_OP_HPP

#include <memory>
#include <optional>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "operation/check_fsm.hpp"
#include "operation/fsm_pump.hpp"
#include "round.hpp"

namespace redlock::detail {

/// @brief The Asio side of async_check: it runs check_fsm, which decides when the census is
/// over and what it means, and carries out its one action with a check round. What it adds:
/// the lock's keys and token, the smallest PTTL (read from the round) and the handler.
class check_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<check_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, check_result)>;
    using clock = std::chrono::steady_clock;

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
        lock_options o = c_->cfg.defaults;
        if (st->ttl.count() > 0)
            o.ttl = st->ttl;
        fsm_.emplace(attempt_timeout_of(o), c_->size());
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
        check_.stop();
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
        case fsm_action::kind::send_attempt:
            check_id_ = a.round_id;
            check_.start(*c_, round::kind::check, st->key_span(), st->token, {}, a.deadline - clock::now(), this,
                         nullptr, a.deadline);
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
            res.masters = check_.take_diagnostics();
            check_.stop();
            return finish(a.ec, std::move(res), initiating_);
        }
        default: return;  // (a check sends nothing else)
        }
    }

    void on_round_decided(round&) override {}  // a census waits for every master

    void on_round_finished(round& r) override
    {
        const auto now = clock::now();
        if (c_->closed)
            drive(fsm_event::closed(now));  // close() failed the requests, not the masters
        report_outcomes(r.tracker(), check_id_, now, [this](const fsm_event& ev) { drive(ev); });
        drive(fsm_event::deadline(check_id_, now));  // every master answered or timed out
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
    std::optional<check_fsm> fsm_;
    fsm_pump pump_;
    round check_;
    std::uint64_t check_id_ = 0;
    bool done_ = false;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
