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

#include "driver/client_impl.hpp"
#include "driver/fsm_pump.hpp"
#include "driver/round.hpp"
#include "runtime/completion.hpp"
#include "runtime/lock_state.hpp"

namespace redlock::detail {

/// @brief What the Asio drivers of the operations on a lock already held (unlock_op,
/// extend_op, check_op) share: the client, the lock, the handler, the machine and its pump;
/// the checks before any machine runs; cancellation before and after the start; and the
/// delivery of the answer (posted when it comes inside the initiation, dispatched after I/O).
///
/// `Derived` provides `execute(const fsm_action&)` (carry out an action of its machine),
/// `refuse(error_code)` (answer without a machine: the handler's other arguments empty) and
/// `abandon()`.
template <class Derived, class Machine, class Signature>
class lock_op_driver : public round_listener,
                       public tracked_op,
                       public std::enable_shared_from_this<Derived>
{
public:
    using handler = asio::any_completion_handler<Signature>;
    using clock = std::chrono::steady_clock;

    lock_op_driver(std::shared_ptr<client_impl> c, lock l, handler h)
        : c_(std::move(c)),
          l_(std::move(l)),
          h_(std::move(h))
    {}

    /// Per-operation cancellation, on the client's strand.
    void cancel()
    {
        if (answered_)
            return;
        if (!fsm_)
            return derived().refuse(asio::error::operation_aborted);  // before start()
        drive(fsm_event::cancel(clock::now()));
    }

    std::shared_ptr<void> hold() override { return this->shared_from_this(); }

protected:
    ~lock_op_driver() = default;

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
        c_->track(*this, this->shared_from_this());
        fsm_.emplace(std::forward<MachineArgs>(args)...);
        initiating_ = true;
        drive(fsm_event::start(clock::now()));
        initiating_ = false;
    }

    /// The caller keeps the operation alive across the call (an action may end it and let it
    /// go): a round holds its listener during its callbacks, the initiation and the
    /// cancellation handler hold a shared_ptr to it.
    void drive(std::span<const fsm_event> events)
    {
        pump_.drive(*fsm_, events, [this](const fsm_action& a) { derived().execute(a); });
    }
    void drive(const fsm_event& ev) { drive(std::span<const fsm_event>(&ev, 1)); }

    template <class... Args>
    void deliver(Args&&... args)
    {
        answered_ = true;
        if (initiating_ || !fsm_)
            post_completion(h_, c_->strand, std::forward<Args>(args)...);
        else
            dispatch_completion(h_, c_->strand, std::forward<Args>(args)...);
    }

    const std::shared_ptr<const lock_state>& state() const { return access::state(l_); }

    std::shared_ptr<client_impl> c_;
    lock l_;
    std::optional<Machine> fsm_;
    bool answered_ = false;

private:
    Derived& derived() { return static_cast<Derived&>(*this); }

    handler h_;
    fsm_pump pump_;
    bool initiating_ = false;
};

}  // namespace redlock::detail

#endif
