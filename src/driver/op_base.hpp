// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_OP_BASE_HPP
#define REDLOCK_SRC_DRIVER_OP_BASE_HPP

#include <memory>
#include <utility>

#include <boost/asio/any_completion_handler.hpp>

#include "driver/op_context.hpp"
#include "runtime/completion.hpp"
#include "runtime/op_registry.hpp"

namespace redlock::detail {

/// @brief What every operation's driver shares, whatever its machine: the client (op_context),
/// the operation's life among the client's tracked operations, and the one rule of delivering
/// its answer: posted when it is given inside the caller's own call (the initiation, or before
/// the operation started), dispatched when it follows I/O.
///
/// op_driver adds a machine of fsm_events (acquire_op, and through lock_op_driver unlock_op,
/// extend_op, check_op, holders_op); next_holders_op drives observe_fsm on it directly.
/// `Derived` provides `abandon()` (tracked_op).
template <class Derived>
class op_base : public tracked_op, public std::enable_shared_from_this<Derived>
{
protected:
    explicit op_base(std::shared_ptr<op_context> c) : c_(std::move(c)) {}
    ~op_base() = default;

    /// The operation has started: it keeps itself alive among the client's tracked operations
    /// until let_go() (or the client abandons it). An answer from now on follows I/O, unless
    /// given inside initiate().
    void keep_alive()
    {
        c_->track(*this, this->shared_from_this());
        started_ = true;
    }
    /// Leaves the client's tracked operations: the operation may be destroyed by the time it
    /// returns (or when the round calling back into it is done: busy_scope).
    void let_go() noexcept
    {
        if (started_)
            c_->untrack(*this);
    }
    bool started() const noexcept { return started_; }

    /// Runs `f` as the caller's own call: an answer given meanwhile is posted.
    template <class F>
    void initiate(F&& f)
    {
        initiating_ = true;
        std::forward<F>(f)();
        initiating_ = false;
    }

    /// Completes `h` with `args`, the operation's one answer.
    template <class Signature, class... Args>
    void deliver(asio::any_completion_handler<Signature>& h, Args&&... args)
    {
        answered_ = true;
        if (initiating_ || !started_)
            post_completion(h, c_->strand, std::forward<Args>(args)...);
        else
            dispatch_completion(h, c_->strand, std::forward<Args>(args)...);
    }

    std::shared_ptr<op_context> c_;
    bool answered_ = false;    // answered, or abandoned: nothing more is delivered
    bool initiating_ = false;  // inside the caller's call: an answer is posted

private:
    bool started_ = false;  // tracked (keep_alive), so its answers follow I/O
};

}  // namespace redlock::detail

#endif
