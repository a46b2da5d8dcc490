// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_EXEC_OP_HPP
#define REDLOCK_SRC_DRIVER_EXEC_OP_HPP

#include <redlock/connection.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "driver/connection_impl.hpp"
#include "runtime/completion.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

namespace asio = boost::asio;

inline resp::reply to_owning(std::span<const resp::node_view> nodes)
{
    resp::reply r;
    r.reserve(nodes.size());
    for (const auto& n : nodes)
        r.push_back(resp::node{n.data_type, n.depth, n.size, std::string(n.value)});
    return r;
}

// One async_exec in flight (one command or a batch). Once submitted, it owns itself through its
// connection's op list (detail/op_registry.hpp), as a client's operations do: an io_context
// destroyed with the request in flight lets it go, its handler destroyed uncalled, like Asio's
// own. The timer and the cancellation slot hold weak references; the connection holds a raw
// sink pointer, which the op removes (abandon) before it dies.
class exec_op final : public reply_sink,
                      public tracked_op,
                      public std::enable_shared_from_this<exec_op>
{
public:
    using single_handler = asio::any_completion_handler<void(error_code, resp::reply)>;
    using batch_handler = asio::any_completion_handler<void(error_code, std::vector<resp::reply>)>;

    // Boost 1.81's any_completion_handler move-assignment recurses without end (fixed in
    // 1.82): handlers are only move-constructed, here into optionals.
    exec_op(std::shared_ptr<detail::connection_impl> owner, single_handler h)
        : owner_(std::move(owner)),
          conn_(owner_->conn),
          timer_(conn_->get_executor())
    {
        single_.emplace(std::move(h));
    }

    exec_op(std::shared_ptr<detail::connection_impl> owner, batch_handler h)
        : owner_(std::move(owner)),
          conn_(owner_->conn),
          timer_(conn_->get_executor())
    {
        batch_.emplace(std::move(h));
    }

    // Runs in the initiating function, before start() reaches the strand: per-operation
    // cancellation applies from the moment async_exec returns, not from when start() runs.
    void bind_cancellation()
    {
        auto slot = cancellation_slot();
        if (slot.is_connected())
        {
            // Never cleared by the op (the caller emits on its own executor; a clear() from the
            // connection's strand would race with it): the handler holds only a weak reference,
            // so it may outlive the op, and an emit after completion does nothing.
            slot.assign([weak = weak_from_this()](asio::cancellation_type) {
                auto self = weak.lock();
                if (!self)
                    return;
                // Posted: never completes inside emit() (client.cpp, connect_cancellation), and
                // the signal may be emitted from another thread.
                auto ex = self->conn_->get_executor();
                asio::post(ex, [self = std::move(self)] {
                    self->finish_early(asio::error::operation_aborted);
                });
            });
        }
    }

    void start(std::string_view bytes, std::uint32_t count, std::chrono::milliseconds timeout)
    {
        if (done_)
            return;  // cancelled before it reached the strand: nothing was sent
        count_ = count;
        if (count == 0)
        {
            done_ = true;
            post_result({});
            return;
        }
        replies_.reserve(count);
        auto ec = conn_->submit_batch(this, bytes, count, first_);
        if (ec)
        {
            done_ = true;
            post_result(ec);
            return;
        }
        started_ = true;
        owner_->ops.track(*this, shared_from_this());
        if (timeout.count() > 0)
        {
            timer_.expires_after(timeout);
            timer_.async_wait([weak = weak_from_this()](const error_code& wec) {
                if (auto self = weak.lock(); self && !wec)
                    self->finish_early(error::request_timeout);
            });
        }
    }

    void abandon() noexcept override
    {
        if (started_ && !done_)
            conn_->abandon(first_, count_);
        done_ = true;
        timer_.cancel();
    }

    ~exec_op()
    {
        // Destroyed in flight only when its io_context is: the connection must not keep a
        // pointer to it.
        if (started_ && !done_)
            conn_->abandon(first_, count_);
    }

    void on_reply(std::uint32_t, const error_code& ec,
                  std::span<const resp::node_view> nodes) override
    {
        if (done_)
            return;
        if (ec)
        {
            // The connection failed: the rest of the batch fails with it (no further calls
            // come for this op once it abandons the remainder).
            conn_->abandon(detail::request_ticket{first_.seq + replies_.size() + 1},
                           count_ - static_cast<std::uint32_t>(replies_.size()) - 1);
            replies_.clear();
            return finish(ec);
        }
        if (resp::is_error(nodes[0].data_type) && !first_error_)
            first_error_ = error_from_server_reply(nodes[0].value);
        replies_.push_back(to_owning(nodes));
        if (replies_.size() == count_)
            finish(first_error_);
    }

private:
    void finish_early(const error_code& ec)
    {
        if (done_)
            return;
        if (started_)
            conn_->abandon(first_, count_);
        replies_.clear();
        finish(ec);
    }

    void finish(const error_code& ec)
    {
        done_ = true;
        timer_.cancel();
        auto keep = shared_from_this();  // untracked below; alive until the handler is called
        owner_->ops.untrack(*this);
        if (single_)
        {
            resp::reply r;
            if (!replies_.empty())
                r = std::move(replies_.front());
            detail::dispatch_completion(*single_, conn_->get_executor(), ec, std::move(r));
        }
        else
        {
            detail::dispatch_completion(*batch_, conn_->get_executor(), ec, std::move(replies_));
        }
    }

    asio::cancellation_slot cancellation_slot() const
    {
        return single_ ? asio::get_associated_cancellation_slot(*single_)
                       : asio::get_associated_cancellation_slot(*batch_);
    }

    void post_result(const error_code& ec)
    {
        if (single_)
            detail::post_completion(*single_, conn_->get_executor(), ec, resp::reply{});
        else
            detail::post_completion(*batch_, conn_->get_executor(), ec, std::vector<resp::reply>{});
    }

    std::shared_ptr<detail::connection_impl> owner_;
    std::shared_ptr<detail::node_connection> conn_;
    std::optional<single_handler> single_;
    std::optional<batch_handler> batch_;
    asio::steady_timer timer_;
    detail::request_ticket first_;
    std::uint32_t count_ = 0;
    std::vector<resp::reply> replies_;
    error_code first_error_;
    bool done_ = false;
    bool started_ = false;  // submitted: first_ names its requests
};

}  // namespace redlock::detail

#endif
