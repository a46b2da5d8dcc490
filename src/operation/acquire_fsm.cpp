// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "operation/acquire_fsm.hpp"

#include <algorithm>

#include <boost/asio/error.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"

namespace redlock::detail {

namespace {

using event_kind = acquire_event::kind;
using action_kind = acquire_action::kind;

acquire_action nothing() { return {}; }

}  // namespace

acquire_fsm::acquire_fsm(const lock_options& o, std::size_t masters, std::uint64_t seed, bool try_mode,
                         std::size_t resources)
    : timing_(lock_timing::of(o)),
      retry_(retry_policy{o.max_attempts, o.retry_delay, o.retry_jitter, o.max_wait}, seed),
      attempt_(masters), commit_(masters), largest_(o.fencing ? resources : 0, 0),
      fences_(o.fencing ? resources : 0, 0), try_mode_(try_mode), fencing_(o.fencing)
{}

acquire_action acquire_fsm::resume(const acquire_event& ev)
{
    switch (phase_)
    {
    case phase::idle: return on_idle(ev);
    case phase::attempting: return on_attempting(ev);
    case phase::committing: return on_committing(ev);
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

bool acquire_fsm::record(quorum_tracker& q, const acquire_event& ev)
{
    if (ev.round_id != round_)
        return false;
    const auto before = q.state();
    if (ev.type == event_kind::deadline)
    {
        for (std::size_t i = 0; i < q.masters(); ++i)
            q.record(i, master_outcome::timed_out);  // only the pending ones change
        return true;  // every master has an outcome now, so the tracker has decided
    }
    // The tracker ignores a master's second answer and an index out of range.
    const bool first = ev.master < q.masters() && q.outcome(ev.master) == master_outcome::pending;
    if (first && &q == &attempt_ && fencing_ && ev.outcome == master_outcome::granted)
        for (std::size_t r = 0; r < largest_.size() && r < ev.counters.size(); ++r)
            largest_[r] = std::max(largest_[r], ev.counters[r]);
    return q.record(ev.master, ev.outcome) != before;
}

acquire_action acquire_fsm::on_attempting(const acquire_event& ev)
{
    switch (ev.type)
    {
    case event_kind::reply:
    case event_kind::deadline: return record(attempt_, ev) ? on_attempt_decided(ev.now) : nothing();
    default: return on_interrupted(ev);
    }
}

acquire_action acquire_fsm::on_committing(const acquire_event& ev)
{
    switch (ev.type)
    {
    case event_kind::reply:
    case event_kind::deadline: return record(commit_, ev) ? on_commit_decided(ev.now) : nothing();
    default: return on_interrupted(ev);
    }
}

acquire_action acquire_fsm::on_interrupted(const acquire_event& ev)
{
    switch (ev.type)
    {
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
    commit_ = quorum_tracker(attempt_.masters());
    std::fill(largest_.begin(), largest_.end(), 0);
    ++attempts_;
    return acquire_action::send(++round_, now + timing_.attempt_timeout, true);
}

acquire_action acquire_fsm::on_attempt_decided(time_point now)
{
    if (attempt_.state() == quorum_state::failed)
        return fail_attempt(attempt_.failure_reason(), now);
    if (!fencing_)
        return grant_if_valid(now, {});
    if (!timing_.valid_at(t0_, now))
        return fail_attempt(error::validity_expired, now);
    // Per resource, the quorum's largest counter, plus one: larger than the token of every
    // holder whose commit majority this quorum meets (docs/algorithm.md).
    phase_ = phase::committing;
    for (std::size_t r = 0; r < fences_.size(); ++r)
        fences_[r] = static_cast<std::uint64_t>(largest_[r]) + 1;
    const auto deadline = std::min(now + timing_.attempt_timeout, timing_.valid_until(t0_));
    return acquire_action::commit(++round_, fences_, deadline);
}

acquire_action acquire_fsm::on_commit_decided(time_point now)
{
    if (commit_.state() == quorum_state::failed)
        return fail_attempt(commit_.failure_reason(), now);
    return grant_if_valid(now, fences_);
}

acquire_action acquire_fsm::grant_if_valid(time_point now, std::span<const std::uint64_t> fences)
{
    // Never hand out an expired lock: the validity left at the decision must be positive.
    if (timing_.valid_at(t0_, now))
    {
        phase_ = phase::done;
        return acquire_action::complete({}, timing_.valid_until(t0_), fences);
    }
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
    // (After a commit round too: the attempt's outcomes say where our key may stand.)
    // Nobody to wait for: a deadline due at once ends the release through the usual path.
    return acquire_action::release(++round_, release_waiting_, timing_.release_deadline(now, !release_waiting_.empty()));
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
