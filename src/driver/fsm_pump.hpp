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

/// Appends a reply event for every outcome `q` holds so far, tagged `round_id`: what a driver
/// does when a round says its outcome is decided or that it is over. The order does not matter
/// (a decision depends only on the counts), and a machine ignores a master's second answer, so
/// reporting the same outcomes again later is harmless. `values`, when not empty: each
/// master's `per_master` numbers (a fenced acquisition's counters), carried by its event.
inline void append_outcomes(fsm_events& out, const quorum_tracker& q, std::uint64_t round_id,
                            fsm_event::time_point now, std::span<const std::int64_t> values = {},
                            std::size_t per_master = 1)
{
    for (std::size_t i = 0; i < q.masters(); ++i)
        if (q.outcome(i) != master_outcome::pending)
            out.push_back(fsm_event::reply(round_id, i, q.outcome(i), now,
                                           values.size() >= (i + 1) * per_master
                                               ? values.subspan(i * per_master, per_master)
                                               : std::span<const std::int64_t>{}));
}

/// @brief What a round hands its machine when its outcome is decided: `closed` first when the
/// client was closed (close() may be what decided it, by failing the requests: the machine
/// must know that before it counts them as failed masters), then every outcome so far.
inline fsm_events decided_events(const quorum_tracker& q, bool closed, std::uint64_t round_id,
                                 fsm_event::time_point now,
                                 std::span<const std::int64_t> values = {},
                                 std::size_t per_master = 1)
{
    fsm_events evs;
    if (closed)
        evs.push_back(fsm_event::closed(now));
    append_outcomes(evs, q, round_id, now, values, per_master);
    return evs;
}

/// @brief What a round whose outcomes the machine does not count (a release after a failed
/// attempt or extension) hands it when it is over: `closed` first when the client was closed
/// (close() failed the requests, not the masters), then the round's deadline event.
inline fsm_events ended_events(bool closed, std::uint64_t round_id, fsm_event::time_point now)
{
    fsm_events evs;
    if (closed)
        evs.push_back(fsm_event::closed(now));
    evs.push_back(fsm_event::deadline(round_id, now));
    return evs;
}

/// @brief What a round hands its machine when it is over: as decided_events, then the round's
/// deadline event (every master answered or timed out).
inline fsm_events finished_events(const quorum_tracker& q, bool closed, std::uint64_t round_id,
                                  fsm_event::time_point now)
{
    auto evs = decided_events(q, closed, round_id, now);
    evs.push_back(fsm_event::deadline(round_id, now));
    return evs;
}

}  // namespace redlock::detail

#endif
