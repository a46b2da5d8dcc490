// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_UNLOCK_OP_HPP
#define REDLOCK_SRC_OPERATION_UNLOCK_OP_HPP

#include <memory>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "algorithm/quorum.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "operation/release_verdict.hpp"
#include "round.hpp"

namespace redlock::detail {

/// @brief async_unlock: compare-and-delete on every master (one release round).
class unlock_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<unlock_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code)>;

    unlock_op(std::shared_ptr<client_impl> c, lock l, handler h)
        : c_(std::move(c)), l_(std::move(l)), h_(std::move(h))
    {}

    void start()
    {
        if (done_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        if (!st || st->token.empty())
            return finish(error::invalid_argument, true);
        if (c_->closed)
            return finish(error::connection_closed, true);
        c_->track(*this, shared_from_this());
        initiating_ = true;
        release_.start(*c_, round::kind::release, st->key_span(), st->token, {},
                       c_->cfg.defaults.release_timeout, this);
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        release_.stop();
        finish(asio::error::operation_aborted, false);
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        release_.stop();
        done_ = true;
    }

private:
    // The release completes as soon as a quorum has deleted the key, provided the delete to
    // every other master has already left this process: from then on no other client can be
    // refused the lock for our sake (the keys left on the slower masters cannot make a
    // majority), and those masters execute their delete even if the client is closed at once.
    // The round goes on without the caller: a NOSCRIPT among them still gets its EVAL, and the
    // operation stays alive until every awaited master has answered or the release deadline
    // has passed. When a delete is still queued in the client, the release completes as
    // before, once every master has answered.
    void on_round_decided(round& r) override
    {
        if (!done_ && r.tracker().state() == quorum_state::reached && r.runs_without_us())
            finish({}, initiating_);
    }

    void on_round_finished(round& r) override
    {
        if (done_)
        {
            c_->untrack(*this);  // the background part of an early completion is over
            return;
        }
        finish(release_verdict(r.tracker(), c_->closed), initiating_);
    }

    void finish(error_code ec, bool immediate)
    {
        done_ = true;
        // An early completion (see on_round_decided) stays tracked, and alive, until its round
        // has finished in the background; a completion inline in the handler's dispatch must
        // not find the operation gone, hence the hold.
        auto keep = hold();
        if (c_->observed())
            c_->report(ec ? event_kind::release_failed : event_kind::released, l_.resource(), ec);
        if (immediate)
            post_completion(h_, c_->strand, ec);
        else
            dispatch_completion(h_, c_->strand, ec);
        if (!release_.active())
            c_->untrack(*this);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    handler h_;
    round release_;
    bool done_ = false;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
