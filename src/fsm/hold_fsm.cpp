// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/hold_fsm.hpp"

#include <algorithm>
#include <stdexcept>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"
#include "fsm/release_verdict.hpp"

namespace redlock::detail {

namespace {
using event_kind = fsm_event::kind;

void time_out_pending(quorum_tracker& q)
{
    for (std::size_t i = 0; i < q.masters(); ++i)
        q.record(i, master_outcome::timed_out);  // the pending ones only
}
}  // namespace

hold_fsm::hold_fsm(const hold_settings& s, time_point acquired_at, time_point valid_until)
    : s_(s),
      acquired_at_(acquired_at),
      valid_until_(valid_until),
      extension_(s.masters == 0 ? throw std::invalid_argument("hold_fsm: no master") : s.masters),
      release_(s.masters),
      all_(s.masters),
      holding_(s.masters)
{
    for (std::size_t i = 0; i < s.masters; ++i)
        all_.insert(i);
}

hold_settings hold_settings::resolve(const lock_options& defaults, std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds extend_before,
                                     std::uint32_t max_extensions,
                                     std::chrono::milliseconds max_hold, std::size_t masters)
{
    lock_options lo = defaults;
    lo.ttl = ttl;
    hold_settings s;
    s.ttl = ttl;
    s.drift_factor = lo.drift_factor;
    s.attempt_timeout = attempt_timeout_of(lo);
    s.extend_before =
        extend_before.count() > 0 ? extend_before : std::max(ttl / 3, 3 * s.attempt_timeout);
    s.release_timeout = lo.release_timeout;
    s.max_extensions = max_extensions;
    s.max_hold = max_hold;
    s.masters = masters;
    return s;
}

fsm_action hold_fsm::resume(const fsm_event& ev)
{
    if (phase_ == phase::done)
        return {};
    switch (ev.type)
    {
    case event_kind::start: return phase_ == phase::idle ? schedule_next(ev.now) : fsm_action{};
    case event_kind::closed:
        closed_ = true;
        return phase_ == phase::releasing ? fsm_action{} : lose(error::connection_closed, ev.now);
    case event_kind::release: return phase_ == phase::releasing ? fsm_action{} : release(ev.now);
    case event_kind::backoff_elapsed:
        switch (phase_)
        {
        case phase::waiting:
            if (ev.now >= valid_until_)
                return lose(error::lock_expired, ev.now);
            if (limit_reached(ev.now))  // max_hold may have passed while waiting
                return schedule_next(ev.now);
            phase_ = phase::extending;
            extension_ = quorum_tracker(s_.masters);
            extension_sent_ = ev.now;
            counting_round_ = 0;
            {
                auto a =
                    fsm_action::send(++round_, std::min(ev.now + s_.attempt_timeout, valid_until_));
                a.until = valid_until_;
                return a;
            }
        case phase::extending:
            return lose(error::lock_expired, ev.now);  // undecided at the end of validity
        case phase::expiring: return lose(error::extension_limit, ev.now);
        default: return {};
        }
    case event_kind::reply:
        if (ev.round_id != round_ || ev.outcome == master_outcome::pending)
            return {};
        if (phase_ == phase::releasing)
        {
            release_.record(ev.master, ev.outcome);
            return {};
        }
        if (phase_ == phase::extending)
        {
            const auto before = extension_.state();
            if (extension_.record(ev.master, ev.outcome) != before)
                return on_extension_decided(ev.now);
            return {};
        }
        if (ev.round_id == counting_round_)
            extension_.record(ev.master, ev.outcome);  // a late answer of a successful extension
        return {};
    case event_kind::deadline:
        if (ev.round_id != round_)
            return {};
        if (phase_ == phase::releasing)
        {
            time_out_pending(release_);
            return finish(lost_ ? error_code(error::lock_lost)
                                : release_verdict(release_, closed_));
        }
        if (phase_ == phase::extending)
        {
            time_out_pending(extension_);
            return on_extension_decided(ev.now);
        }
        if (ev.round_id == counting_round_)
        {
            // The successful extension has heard from every master (or its deadline): how many
            // hold the lock now. A change is news (degraded, or back to more masters).
            counting_round_ = 0;
            if (extension_.granted() != holding_)
            {
                holding_ = extension_.granted();
                notify(hold_notice::kind::degraded);
            }
        }
        return {};
    default: return {};
    }
}

bool hold_fsm::limit_reached(time_point now) const noexcept
{
    return (s_.max_extensions > 0 && extensions_ >= s_.max_extensions) ||
           (s_.max_hold.count() > 0 && now - acquired_at_ >= s_.max_hold);
}

fsm_action hold_fsm::schedule_next(time_point now)
{
    if (limit_reached(now))
    {
        // No more extensions: the lock runs out at its current validity, and then the holder
        // is told. It keeps its lock until then.
        phase_ = phase::expiring;
        return fsm_action::wait(valid_until_);
    }
    phase_ = phase::waiting;
    return fsm_action::wait(std::max(now, valid_until_ - s_.extend_before));
}

fsm_action hold_fsm::on_extension_decided(time_point now)
{
    if (extension_.state() == quorum_state::reached &&
        remaining_validity(s_.ttl, now - extension_sent_, s_.drift_factor) >
            time_point::duration::zero())
    {
        // Never move the deadline backwards: a slow extension may end before the old one.
        valid_until_ =
            std::max(valid_until_, validity_deadline(extension_sent_, s_.ttl, s_.drift_factor));
        ++extensions_;
        notify(hold_notice::kind::extended);
        counting_round_ = round_;  // its round goes on until every master answered
        return schedule_next(now);
    }
    // The keys hold another token (or are gone) on a majority: lock_lost, the lock was taken
    // over or dropped there (its validity has not ended: that is checked before each round),
    // and no retry can bring it back.
    const error_code reason = extension_.state() == quorum_state::reached
                                  ? error_code(error::validity_expired)
                                  : not_held_reason(extension_failure(extension_), false);
    notify(hold_notice::kind::extend_failed, reason);
    if (reason == error::lock_lost)
        return lose(reason, now);
    // Masters failed or were slow: retry if another round still fits before the end of
    // validity, at most one round per attempt_timeout and always through a wait (never from
    // this step: a round failing inside its own start would otherwise recurse).
    const auto retry_at = std::max(now, extension_sent_ + s_.attempt_timeout);
    if (retry_at + s_.attempt_timeout < valid_until_)
    {
        phase_ = phase::waiting;
        return fsm_action::wait(retry_at);
    }
    return lose(reason, now);
}

fsm_action hold_fsm::lose(error_code reason, time_point now)
{
    lost_ = true;
    notify(hold_notice::kind::lost, reason);
    // Release what may still be ours, so that it does not linger on a minority until its TTL.
    return release(now);
}

fsm_action hold_fsm::release(time_point now)
{
    phase_ = phase::releasing;
    counting_round_ = 0;
    if (closed_)
        return finish(error::connection_closed);  // nothing can be sent any more
    release_ = quorum_tracker(s_.masters);
    return fsm_action::release(++round_, all_, all_, now + s_.release_timeout);
}

fsm_action hold_fsm::finish(error_code ec)
{
    phase_ = phase::done;
    if (!lost_)
        notify(hold_notice::kind::released, ec);
    return fsm_action::complete(ec);
}

void hold_fsm::notify(hold_notice::kind k, error_code ec)
{
    hold_notice n;
    n.type = k;
    n.ec = ec;
    n.valid_until = valid_until_;
    n.extensions = extensions_;
    n.holding = holding_;
    notices_.push_back(n);
}

}  // namespace redlock::detail
