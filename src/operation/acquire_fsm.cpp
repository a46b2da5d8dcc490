// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "operation/acquire_fsm.hpp"

#include <boost/asio/error.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"

namespace redlock::detail {

namespace {

using event_kind = acquire_event::kind;
using action_kind = acquire_action::kind;

acquire_action nothing() { return {}; }

}  // namespace

acquire_fsm::acquire_fsm(const lock_options& o, std::size_t masters, std::uint64_t seed, bool try_mode)
    : ttl_(o.ttl), drift_factor_(o.drift_factor), attempt_timeout_(attempt_timeout_of(o)),
      release_timeout_(o.release_timeout),
      retry_(retry_policy{o.max_attempts, o.retry_delay, o.retry_jitter, o.max_wait}, seed),
      attempt_(masters), try_mode_(try_mode)
{}

acquire_action acquire_fsm::resume(const acquire_event& ev)
{
    switch (phase_)
    {
    case phase::idle: return on_idle(ev);
    case phase::attempting: return on_attempting(ev);
    case phase::releasing: return on_releasing(ev);
    case phase::backing_off: return on_backing_off(ev);
    case phase::done: break;
    }
    return nothing();
}

acquire_action acquire_fsm::on_idle(const acquire_event& ev)
{
    switch (ev.type)
    {
    case event_kind::start:
        // The retry budget (max_wait) counts from the first attempt's start.
        start_ = ev.now;
        return begin_attempt(ev.now);
    case event_kind::cancel: return complete(boost::asio::error::operation_aborted);
    case event_kind::closed: return complete(error::connection_closed);
    default: return nothing();
    }
}

acquire_action acquire_fsm::on_attempting(const acquire_event& ev)
{
    switch (ev.type)
    {
    case event_kind::reply:
    {
        if (ev.round_id != round_)
            return nothing();
        const auto before = attempt_.state();
        // The tracker ignores a master's second answer and an index out of range.
        if (attempt_.record(ev.master, ev.outcome) == before)
            return nothing();
        return on_attempt_decided(ev.now);
    }
    case event_kind::deadline:
        if (ev.round_id != round_)
            return nothing();
        for (std::size_t i = 0; i < attempt_.masters(); ++i)
            attempt_.record(i, master_outcome::timed_out);  // only the pending ones change
        // Every master has an outcome now, so the tracker has decided.
        return on_attempt_decided(ev.now);
    case event_kind::cancel:
        cancelled_ = true;
        return fail_attempt(boost::asio::error::operation_aborted, ev.now);
    case event_kind::closed:
        // The connections fail what they hold; the release still goes out (the driver will
        // find it failing at once) so that the order "failed attempt, then release" holds.
        closed_ = true;
        return fail_attempt(error::connection_closed, ev.now);
    default: return nothing();
    }
}

acquire_action acquire_fsm::on_releasing(const acquire_event& ev)
{
    switch (ev.type)
    {
    case event_kind::reply:
        // What the release achieved does not matter to the acquisition: only that it is over.
        if (ev.round_id != round_ || !release_waiting_.contains(ev.master) ||
            ev.outcome == master_outcome::pending)
            return nothing();
        release_waiting_.erase(ev.master);
        return release_waiting_.empty() ? after_release(ev.now) : nothing();
    case event_kind::deadline: return ev.round_id == round_ ? after_release(ev.now) : nothing();
    // The release is not cut short: it is what keeps our keys from blocking other clients.
    case event_kind::cancel: cancelled_ = true; return nothing();
    case event_kind::closed: closed_ = true; return nothing();
    default: return nothing();
    }
}

acquire_action acquire_fsm::on_backing_off(const acquire_event& ev)
{
    switch (ev.type)
    {
    case event_kind::backoff_elapsed: return begin_attempt(ev.now);
    case event_kind::cancel: return complete(boost::asio::error::operation_aborted);
    case event_kind::closed: return complete(error::connection_closed);
    default: return nothing();
    }
}

acquire_action acquire_fsm::begin_attempt(time_point now)
{
    phase_ = phase::attempting;
    t0_ = now;
    attempt_ = quorum_tracker(attempt_.masters());
    ++attempts_;
    return acquire_action::send(++round_, now + attempt_timeout_, true);
}

acquire_action acquire_fsm::on_attempt_decided(time_point now)
{
    if (attempt_.state() == quorum_state::failed)
        return fail_attempt(attempt_.failure_reason(), now);
    // Never hand out an expired lock: the validity left at the decision must be positive.
    if (remaining_validity(ttl_, now - t0_, drift_factor_) > std::chrono::steady_clock::duration::zero())
        return complete({}, validity_deadline(t0_, ttl_, drift_factor_));
    return fail_attempt(error::validity_expired, now);
}

acquire_action acquire_fsm::fail_attempt(error_code reason, time_point now)
{
    // A cancellation must not hide why the earlier attempts failed.
    if (reason != boost::asio::error::operation_aborted || !last_error_)
        last_error_ = reason;
    phase_ = phase::releasing;
    // Every master is sent the release, even those that never answered: a grant may still be
    // on its way, and the release queued behind it undoes it. Waiting for the ones that timed
    // out would only add the release deadline to the caller's latency.
    release_waiting_ = awaited_after(attempt_);
    // Nobody to wait for: a deadline due at once ends the release through the usual path.
    return acquire_action::release(++round_, release_waiting_, release_waiting_.empty() ? now : now + release_timeout_);
}

acquire_action acquire_fsm::after_release(time_point now)
{
    if (cancelled_)
        return complete(boost::asio::error::operation_aborted);
    if (closed_)
        return complete(error::connection_closed);
    if (!try_mode_)
    {
        if (const auto delay = retry_.next_delay(now - start_))
        {
            phase_ = phase::backing_off;
            acquire_action a;
            a.type = action_kind::wait_until;
            a.until = now + *delay;
            return a;
        }
    }
    return complete(last_error_);
}

acquire_action acquire_fsm::complete(error_code ec, time_point valid_until)
{
    phase_ = phase::done;
    return acquire_action::complete(ec, valid_until);
}

}  // namespace redlock::detail
