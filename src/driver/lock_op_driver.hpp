// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_LOCK_OP_DRIVER_HPP
#define REDLOCK_SRC_OPERATION_LOCK_OP_DRIVER_HPP

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/error.hpp>

#include <redlock/lock.hpp>

#include "driver/op_context.hpp"
#include "driver/op_driver.hpp"
#include "driver/round.hpp"
#include "runtime/lock_state.hpp"

namespace redlock::detail {

/// @brief What the Asio drivers of the operations on a lock already held (unlock_op,
/// extend_op, check_op; holders_op, with no lock) add to op_driver: the lock, the handler,
/// the checks before any machine runs.
///
/// `Derived` provides `execute(const fsm_action&)` (carry out an action of its machine),
/// `refuse(error_code)` (answer without a machine: the handler's other arguments empty) and
/// `abandon()`.
template <class Derived, class Machine, class Signature>
class lock_op_driver : public round_listener, public op_driver<Derived, Machine>
{
    using base = op_driver<Derived, Machine>;

public:
    using handler = asio::any_completion_handler<Signature>;

    lock_op_driver(std::shared_ptr<op_context> c, lock l, handler h)
        : base(std::move(c)),
          l_(std::move(l)),
          h_(std::move(h))
    {
        this->set_tracked(this);
    }

    std::shared_ptr<void> hold() override { return this->shared_from_this(); }

protected:
    using driver_base = base;  // a derived operation's friend, as lock_op_driver is
    ~lock_op_driver() = default;

    using base::answered_;
    using base::c_;
    using base::drive;
    using base::drive_outcome;
    using base::fsm_;

    /// Whether the operation may start: not cancelled yet, a lock with a token, a client still
    /// open. When not, the caller has been answered (or was, by the cancellation).
    bool admitted()
    {
        if (answered_)
            return false;  // cancelled before it started
        const auto& st = access::state(l_);
        if (!st || st->token.empty())
            return derived().refuse(error::invalid_argument), false;
        if (c_->closed)
            return derived().refuse(error::connection_closed), false;
        return true;
    }

    /// Makes the machine and gives it its start; the operation keeps itself alive (tracked by
    /// the client) until it untracks itself.
    template <class... MachineArgs>
    void run(MachineArgs&&... args)
    {
        this->make_machine(std::forward<MachineArgs>(args)...);
        this->initiate(fsm_event::start(base::clock::now()));
    }

    template <class... Args>
    void deliver(Args&&... args)
    {
        base::deliver(h_, std::forward<Args>(args)...);
    }

    const std::shared_ptr<const lock_state>& state() const { return access::state(l_); }

    lock l_;

private:
    friend base;

    Derived& derived() { return static_cast<Derived&>(*this); }
    // A cancellation before start(): answered at once (posted).
    void cancelled_before_start() { derived().refuse(asio::error::operation_aborted); }

    handler h_;
};

}  // namespace redlock::detail

#endif
