// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_FSM_PUMP_HPP
#define REDLOCK_SRC_OPERATION_FSM_PUMP_HPP

#include <cstddef>
#include <cstdint>
#include <span>

#include <boost/container/small_vector.hpp>

#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"

namespace redlock::detail {

/// The events a driver hands its machine at once (what one callback of a round means).
using fsm_events = boost::container::small_vector<fsm_event, 12>;

/// @brief What every driver does with its machine's events (acquire_op, extend_op, unlock_op,
/// check_op, the holder): hand them over one at a time. An event raised while an action is
/// being carried out (a round that finishes inside its own start(), when every master is down)
/// is queued and handed over once that action is done, so a machine is never re-entered.
class fsm_pump
{
public:
    /// Whether drive() is under way (an event given now would be queued).
    bool driving() const noexcept { return driving_; }

    /// Gives `events` to `machine` in order and `execute`s the action each returns, then any
    /// events queued meanwhile. The caller keeps itself alive across the call (an action may
    /// complete it).
    template <class Machine, class Execute>
    void drive(Machine& machine, std::span<const fsm_event> events, Execute&& execute)
    {
        if (driving_)
        {
            // Handled by the loop below, once the action under way is done.
            queued_.insert(queued_.end(), events.begin(), events.end());
            return;
        }
        driving_ = true;
        for (const auto& ev : events)
            step(machine, ev, execute);
        // Then what the actions raised, in order (they happened after `events`).
        for (std::size_t i = 0; i < queued_.size(); ++i)
            step(machine, fsm_event(queued_[i]), execute);
        queued_.clear();
        driving_ = false;
    }

    template <class Machine, class Execute>
    void drive(Machine& machine, const fsm_event& ev, Execute&& execute)
    {
        drive(machine, std::span<const fsm_event>(&ev, 1), std::forward<Execute>(execute));
    }

private:
    template <class Machine, class Execute>
    static void step(Machine& machine, const fsm_event& ev, Execute& execute)
    {
        auto a = machine.resume(ev);
        a.at = ev.now;
        execute(a);
    }

    fsm_events queued_;
    bool driving_ = false;
};

/// The event of master `i`'s outcome in round `r` (round::outcome, with the numbers its reply
/// carried), tagged `round_id`: what a driver hands its machine for each of a round's outcomes
/// (round_listener::on_round_outcome).
template <class Round>
fsm_event outcome_event(const Round& r, std::size_t i, std::uint64_t round_id,
                        fsm_event::time_point now)
{
    return fsm_event::reply(round_id, i, r.outcome(i), now, r.values_of(i));
}

/// @brief What a driver hands its machine for one outcome of a round: `closed` first when the
/// client was closed (close() may be what caused it, by failing the requests: the machine
/// must know that before it counts them as failed masters), then the outcome.
template <class Round>
fsm_events outcome_events(const Round& r, std::size_t i, bool closed, std::uint64_t round_id,
                          fsm_event::time_point now)
{
    fsm_events evs;
    if (closed)
        evs.push_back(fsm_event::closed(now));
    evs.push_back(outcome_event(r, i, round_id, now));
    return evs;
}

/// @brief What a round hands its machine when it is over: `closed` first when the client was
/// closed (close() failed the requests, not the masters), then the round's deadline event
/// (every master answered or timed out). For a machine already told each outcome as it came.
inline fsm_events ended_events(bool closed, std::uint64_t round_id, fsm_event::time_point now)
{
    fsm_events evs;
    if (closed)
        evs.push_back(fsm_event::closed(now));
    evs.push_back(fsm_event::deadline(round_id, now));
    return evs;
}

/// @brief What a round hands a machine that decides once every master answered (a census, a
/// check): `closed` first when the client was closed, every outcome of `r`, then the round's
/// deadline event.
template <class Round>
fsm_events finished_events(const Round& r, bool closed, std::uint64_t round_id,
                           fsm_event::time_point now)
{
    fsm_events evs;
    if (closed)
        evs.push_back(fsm_event::closed(now));
    for (std::size_t i = 0; i < r.masters(); ++i)
        if (r.outcome(i) != master_outcome::pending)
            evs.push_back(outcome_event(r, i, round_id, now));
    evs.push_back(fsm_event::deadline(round_id, now));
    return evs;
}

}  // namespace redlock::detail

#endif
