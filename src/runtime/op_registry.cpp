// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "runtime/op_registry.hpp"

#include <algorithm>

#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>

namespace redlock::detail {

namespace asio = boost::asio;

// ---- op_list ------------------------------------------------------------------------------------

void op_list::track(tracked_op& op, std::shared_ptr<void> self) noexcept
{
    if (op.self_ && !op.let_go_)
        return;
    if (!op.self_)
        op.self_ = std::move(self);
    op.let_go_ = false;  // (tracked again before its busy scope closed: it stays)
    op.prev_ = nullptr;
    op.next_ = head_;
    if (head_)
        head_->prev_ = &op;
    head_ = &op;
}

void op_list::untrack(tracked_op& op) noexcept
{
    if (!op.self_ || op.let_go_)
        return;
    (op.prev_ ? op.prev_->next_ : head_) = op.next_;
    if (op.next_)
        op.next_->prev_ = op.prev_;
    op.prev_ = op.next_ = nullptr;
    if (op.busy_)
    {
        op.let_go_ = true;  // the last busy_scope drops the reference
        return;
    }
    // Last: dropping the reference may destroy the operation, and with it this list's owner.
    auto self = std::move(op.self_);
}

void op_list::abandon_all() noexcept
{
    while (head_)
    {
        tracked_op& op = *head_;
        op.abandon();
        untrack(op);
    }
}

// ---- shutdown_registry --------------------------------------------------------------------------

asio::execution_context::id shutdown_registry::id;

shutdown_registry& shutdown_registry::of(const asio::any_io_executor& ex)
{
    return asio::use_service<shutdown_registry>(asio::query(ex, asio::execution::context));
}

void shutdown_registry::add(shutdown_participant* p)
{
    std::lock_guard g(m_);
    participants_.push_back(p);
}

void shutdown_registry::remove(shutdown_participant* p) noexcept
{
    std::lock_guard g(m_);
    std::erase(participants_, p);
}

void shutdown_registry::shutdown()
{
    // No thread runs the context any more. A participant whose last reference is being dropped
    // cannot be kept alive; its destructor waits for the mutex to remove itself, so the pointer
    // stays valid while it is held.
    std::vector<std::pair<shutdown_participant*, std::shared_ptr<void>>> live;
    {
        std::lock_guard g(m_);
        for (auto* p : participants_)
            if (auto keep = p->keep_alive())
                live.emplace_back(p, std::move(keep));
    }
    for (auto& [p, keep] : live)
        p->on_shutdown();
}

}  // namespace redlock::detail
