// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/acquire_fsm.hpp"

#include <algorithm>

#include <boost/asio/error.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"

namespace redlock::detail {

namespace {

using acquire_kind = acquire_event::kind;
using action_kind = acquire_action::kind;

acquire_action nothing() { return {}; }

}  // namespace

acquire_fsm::acquire_fsm(const lock_options& o, std::size_t masters, std::uint64_t seed,
                         bool try_mode, std::size_t resources)
    : timing_(lock_timing::of(o)),
      retry_(retry_policy{o.max_attempts, o.retry_delay, o.retry_jitter, o.max_wait}, seed),
      attempt_(masters),
      commit_(masters),
      largest_(o.fencing ? resources : 0, 0),
      smallest_(o.fencing ? resources : 0, 0),
      fences_(o.fencing ? resources : 0, 0),
      wait_(o.wait),
      max_wait_(o.max_wait),
      poll_delay_(o.retry_delay),
      poll_jitter_(o.retry_jitter),
      seed_(seed),
      try_mode_(try_mode),
      fencing_(o.fencing),
      permits_(o.permits),
      waits_(!try_mode && o.wait.count() > 0),
      handoff_(o.handoff)
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
    case phase::queued: return on_queued(ev);
    case phase::waiting: return on_waiting(ev);
    case phase::done: break;
    }
    return nothing();
}

acquire_action acquire_fsm::on_idle(const acquire_event& ev)
{
    switch (ev.type)
    {
    case acquire_kind::start:
    case acquire_kind::queued:
        // The retry budget (max_wait) and the wait count from the operation's start.
        start_ = ev.now;
        wait_end_ = ev.now + wait_;
        if (max_wait_.count() > 0)
            wait_end_ = std::min(wait_end_, ev.now + max_wait_);
        if (ev.type == acquire_kind::start || !waits_)
            return begin_attempt(ev.now);
        phase_ = phase::queued;
        last_error_ = error::contended;  // what a wait that ends before the turn reports
        return acquire_action::wait(wait_end_);
    case acquire_kind::cancel: return complete(boost::asio::error::operation_aborted);
    case acquire_kind::closed: return complete(error::connection_closed);
    default: return nothing();
    }
}

bool acquire_fsm::record(quorum_tracker& q, const acquire_event& ev)
{
    if (ev.round_id != round_)
        return false;
    const auto before = q.state();
    if (ev.type == acquire_kind::deadline)
    {
        for (std::size_t i = 0; i < q.masters(); ++i)
            q.record(i, master_outcome::timed_out);  // only the pending ones change
        return true;  // every master has an outcome now, so the tracker has decided
    }
    // The tracker ignores a master's second answer and an index out of range.
    const bool first = ev.master < q.masters() && q.outcome(ev.master) == master_outcome::pending;
    if (first && &q == &attempt_ && fencing_ && ev.outcome == master_outcome::granted)
    {
        const bool first_grant = attempt_.granted() == 0;
        for (std::size_t r = 0; r < largest_.size(); ++r)
        {
            // A grant without a counter for r (which a driver never reports) disagrees.
            const auto c = r < ev.counters.size() ? ev.counters[r] : std::int64_t{-1};
            largest_[r] = first_grant ? c : std::max(largest_[r], c);
            smallest_[r] = first_grant ? c : std::min(smallest_[r], c);
        }
    }
    // A semaphore's attempt: the grant says which permit the master set, and a majority must
    // agree on one (quorum_tracker::record with a choice).
    if (first && &q == &attempt_ && permits_ > 1 && ev.outcome == master_outcome::granted &&
        !ev.counters.empty() && ev.counters[0] >= 0)
        return q.record(ev.master, ev.outcome, static_cast<std::uint32_t>(ev.counters[0])) !=
               before;
    return q.record(ev.master, ev.outcome) != before;
}

acquire_action acquire_fsm::on_attempting(const acquire_event& ev)
{
    switch (ev.type)
    {
    case acquire_kind::reply:
    case acquire_kind::deadline:
        return record(attempt_, ev) ? on_attempt_decided(ev.now) : nothing();
    default: return on_interrupted(ev);
    }
}

acquire_action acquire_fsm::on_committing(const acquire_event& ev)
{
    switch (ev.type)
    {
    case acquire_kind::reply:
    case acquire_kind::deadline: return record(commit_, ev) ? on_commit_decided(ev.now) : nothing();
    default: return on_interrupted(ev);
    }
}

acquire_action acquire_fsm::on_interrupted(const acquire_event& ev)
{
    switch (ev.type)
    {
    case acquire_kind::cancel:
        cancelled_ = true;
        return fail_attempt(boost::asio::error::operation_aborted, ev.now);
    case acquire_kind::closed:
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
    case acquire_kind::reply:
        // What the release achieved does not matter to the acquisition: only that it is over.
        if (ev.round_id != round_ || !release_waiting_.contains(ev.master) ||
            ev.outcome == master_outcome::pending)
            return nothing();
        release_waiting_.erase(ev.master);
        return release_waiting_.empty() ? after_release(ev.now) : nothing();
    case acquire_kind::deadline: return ev.round_id == round_ ? after_release(ev.now) : nothing();
    // The release is not cut short: it is what keeps our keys from blocking other clients.
    case acquire_kind::cancel: cancelled_ = true; return nothing();
    case acquire_kind::closed: closed_ = true; return nothing();
    default: return nothing();
    }
}

acquire_action acquire_fsm::on_backing_off(const acquire_event& ev)
{
    switch (ev.type)
    {
    case acquire_kind::backoff_elapsed: return begin_attempt(ev.now);
    case acquire_kind::handed: return take_handed(ev);
    case acquire_kind::cancel: return complete(boost::asio::error::operation_aborted);
    case acquire_kind::closed: return complete(error::connection_closed);
    default: return nothing();
    }
}

acquire_action acquire_fsm::on_queued(const acquire_event& ev)
{
    switch (ev.type)
    {
    // The one before took the lock: an attempt now would only be refused by this process's
    // own keys. It waits for their release (or their TTL) on every master instead.
    case acquire_kind::turn: return ev.tracked ? begin_wait(ev.now, true) : begin_attempt(ev.now);
    case acquire_kind::handed: return take_handed(ev);
    case acquire_kind::backoff_elapsed: return complete(error::contended);
    case acquire_kind::cancel: return complete(boost::asio::error::operation_aborted);
    case acquire_kind::closed: return complete(error::connection_closed);
    default: return nothing();
    }
}

acquire_action acquire_fsm::on_waiting(const acquire_event& ev)
{
    switch (ev.type)
    {
    case acquire_kind::watched:
        if (ev.round_id != round_ || !blocked_.contains(ev.master))
            return nothing();
        if (ev.outcome == master_outcome::failed)
            return nothing();  // no news from it: the fallback stands
        if (ev.value == -2)
            return unblock(ev.master, ev.now);  // let go before the watch read it
        if (!ev.tracked)
            // No invalidation will come from it: poll it as an acquisition without waiting would.
            return fall_back_at(ev.now + poll_delay_);
        return ev.value >= 0 ? fall_back_at(ev.now + std::chrono::milliseconds(ev.value))
                             : nothing();
    case acquire_kind::invalidated:
        return blocked_.contains(ev.master) ? unblock(ev.master, ev.now) : nothing();
    case acquire_kind::handed: return take_handed(ev);
    case acquire_kind::backoff_elapsed:
        return ev.now < wait_end_ ? begin_attempt(ev.now) : complete(last_error_);
    case acquire_kind::cancel: return complete(boost::asio::error::operation_aborted);
    case acquire_kind::closed: return complete(error::connection_closed);
    default: return nothing();
    }
}

acquire_action acquire_fsm::begin_wait(time_point now, bool all_masters)
{
    if (now >= wait_end_)
        return complete(last_error_);
    phase_ = phase::waiting;
    blocked_ = master_set(attempt_.masters());
    for (std::size_t i = 0; i < attempt_.masters(); ++i)
        if (all_masters || attempt_.outcome(i) == master_outcome::held_by_other ||
            attempt_.outcome(i) == master_outcome::held_in_part ||
            commit_.outcome(i) == master_outcome::held_by_other)  // a fenced commit refused there
            blocked_.insert(i);
    // Until a watch says more: the keys cannot outlive a TTL from now, unless extended (which
    // an invalidation reports). When a quorum is possible with these masters held, failures
    // rather than holders stopped the attempt: the others are polled at the retry delay.
    const auto n = attempt_.masters();
    const bool failures_too = n - blocked_.count() >= n / 2 + 1;
    fallback_ =
        std::min(now + (failures_too ? poll_delay_ : timing_.ttl) + fallback_jitter(), wait_end_);
    // The keys are this process's own: its release tells us (invalidated events from the
    // driver), and they expire within a TTL. Nothing to ask the masters.
    if (all_masters)
        return acquire_action::wait(fallback_);
    return acquire_action::watch(++round_, blocked_, fallback_);
}

acquire_action acquire_fsm::take_handed(const acquire_event& ev)
{
    // The holder's keys become ours where they stand, expiry and all: worth it only while half
    // the TTL asked for is left (a fresh acquisition would get nearly all of it), and never
    // for a fenced lock, whose new holder needs a new fencing token. Not once the wait is over.
    if (!waits_ || !handoff_ || fencing_ || ev.now >= wait_end_ ||
        2 * (ev.until - ev.now) < timing_.ttl)
        return nothing();
    return complete({}, ev.until);
}

acquire_action acquire_fsm::unblock(std::size_t master, time_point now)
{
    blocked_.erase(master);
    const auto n = attempt_.masters();
    if (n - blocked_.count() >= n / 2 + 1)
        return begin_attempt(now);
    return nothing();
}

acquire_action acquire_fsm::fall_back_at(time_point at)
{
    const auto t = std::min(at + fallback_jitter(), wait_end_);
    if (t >= fallback_)
        return nothing();
    fallback_ = t;
    return acquire_action::wait(t);
}

std::chrono::milliseconds acquire_fsm::fallback_jitter()
{
    // 1 ms past the expiry, plus up to an eighth of retry_jitter.
    const auto spread = static_cast<std::uint64_t>(poll_jitter_.count() / 8);
    if (!jitter_)
        jitter_.emplace(seed_ ^
                        0x9e3779b97f4a7c15u);  // made on first use: most acquisitions never wait
    return std::chrono::milliseconds(1 +
                                     static_cast<std::int64_t>(jitter_->uniform_inclusive(spread)));
}

acquire_action acquire_fsm::begin_attempt(time_point now)
{
    phase_ = phase::attempting;
    t0_ = now;
    attempt_.reset(attempt_.masters());
    commit_.reset(attempt_.masters());
    std::fill(largest_.begin(), largest_.end(), 0);
    std::fill(smallest_.begin(), smallest_.end(), 0);
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
    bool agreed = true;
    for (std::size_t r = 0; r < fences_.size(); ++r)
    {
        fences_[r] = static_cast<std::uint64_t>(std::max<std::int64_t>(largest_[r], 0)) + 1;
        agreed = agreed && largest_[r] >= 0 && smallest_[r] == largest_[r];
    }
    // Round 1 moved each granting master's counter to its value + 1, for us. Where the whole
    // quorum read the same counters, that is the token on every master of the quorum: it is
    // committed already, and there is no second round.
    if (agreed)
        return grant_if_valid(now, fences_);
    phase_ = phase::committing;
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
    // Every master where our key may stand is sent the release, even those that never
    // answered: a grant may still be on its way, and the release queued behind it undoes it.
    // Waiting for the ones that timed out would only add the release deadline to the caller's
    // latency. A master that refused the attempt holds nothing of ours: it is left alone.
    release_to_ = release_targets(attempt_);
    release_waiting_ = release_awaited(attempt_);
    // (After a commit round too: the attempt's outcomes say where our key may stand.)
    // Nobody to wait for: a deadline due at once ends the release through the usual path.
    return acquire_action::release(++round_, release_to_, release_waiting_,
                                   timing_.release_deadline(now, !release_waiting_.empty()));
}

acquire_action acquire_fsm::after_release(time_point now)
{
    if (cancelled_)
        return complete(boost::asio::error::operation_aborted);
    if (closed_)
        return complete(error::connection_closed);
    if (waits_ && last_error_ == error::contended)
        return begin_wait(now);
    if (!try_mode_)
    {
        const auto delay = retry_.next_delay(now - start_);
        if (delay && (!waits_ || now + *delay < wait_end_))  // a waiting one stays within its wait
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
