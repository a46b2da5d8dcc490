// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_OP_DRIVER_HPP
#define REDLOCK_SRC_DRIVER_OP_DRIVER_HPP

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "driver/fsm_pump.hpp"
#include "driver/op_base.hpp"

namespace redlock::detail {

/// @brief What the Asio driver of every operation that a machine of fsm_events runs shares
/// (acquire_op, and through lock_op_driver unlock_op, extend_op, check_op, holders_op): on
/// op_base (the client, the operation's life, the delivery rule), the machine and its pump and
/// cancellation. The machine is made when the operation starts (make_machine): an answer
/// before it is posted.
///
/// `Derived` provides `execute(const fsm_action&)` (carry out an action of its machine),
/// `cancelled_before_start()` (a cancellation that came before the machine was made) and
/// `abandon()` (tracked_op).
template <class Derived, class Machine>
class op_driver : public op_base<Derived>
{
    using base = op_base<Derived>;

public:
    using clock = std::chrono::steady_clock;

    /// Per-operation cancellation, on the client's strand.
    void cancel()
    {
        if (answered_)
            return;
        if (!fsm_)
            return derived().cancelled_before_start();
        drive(fsm_event::cancel(clock::now()));
    }

protected:
    explicit op_driver(std::shared_ptr<op_context> c) : base(std::move(c)) {}
    ~op_driver() = default;

    using base::answered_;
    using base::c_;
    using base::deliver;
    using base::initiating_;

    /// Makes the machine, and keeps the operation alive among the client's tracked ones (until
    /// untrack(), or the client abandons it).
    template <class... MachineArgs>
    Machine& make_machine(MachineArgs&&... args)
    {
        this->keep_alive();
        return fsm_.emplace(std::forward<MachineArgs>(args)...);
    }

    /// Gives the machine its first event inside the initiation: an answer given meanwhile is
    /// posted.
    void initiate(const fsm_event& first)
    {
        base::initiate([&] { drive(first); });
    }

    /// The caller keeps the operation alive across the call (an action may end it and let it
    /// go): a round holds its listener during its callbacks, the initiation and the
    /// cancellation handler hold a shared_ptr to it, a deadline's callback takes one.
    void drive(std::span<const fsm_event> events)
    {
        pump_.drive(*fsm_, events, [this](const fsm_action& a) { derived().execute(a); });
    }
    void drive(const fsm_event& ev) { drive(std::span<const fsm_event>(&ev, 1)); }
    /// Gives the machine master `i`'s outcome in round `r`, tagged `round_id`, at `now`: the
    /// one event, or `closed` before it once the client is closed (outcome_events).
    template <class Round>
    void drive_outcome(const Round& r, std::size_t i, std::uint64_t round_id, clock::time_point now)
    {
        if (c_->closed) [[unlikely]]
            return drive(outcome_events(r, i, true, round_id, now));
        drive(outcome_event(r, i, round_id, now));
    }
    /// Whether drive() is under way (an event given now would be queued).
    bool driving() const noexcept { return pump_.driving(); }

    std::optional<Machine> fsm_;

private:
    Derived& derived() { return static_cast<Derived&>(*this); }

    fsm_pump pump_;
};

}  // namespace redlock::detail

#endif
