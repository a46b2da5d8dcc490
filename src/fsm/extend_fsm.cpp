// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/extend_fsm.hpp"

#include <stdexcept>

#include <boost/asio/error.hpp>

#include "algorithm/validity.hpp"
#include "fsm/release_verdict.hpp"

namespace redlock::detail {

namespace {
using event_kind = fsm_event::kind;
}  // namespace

extend_fsm::extend_fsm(const lock_timing& timing, std::size_t masters, time_point valid_until)
    : timing_(timing),
      round_outcomes_(masters == 0 ? throw std::invalid_argument("extend_fsm: no master")
                                   : masters),
      release_waiting_(masters),
      all_(masters),
      valid_until_(valid_until)
{
    for (std::size_t i = 0; i < masters; ++i)
        all_.insert(i);
}

fsm_action extend_fsm::resume(const fsm_event& ev)
{
    if (phase_ == phase::done)
        return {};
    if (ev.type == event_kind::cancel)
        return complete(boost::asio::error::operation_aborted);
    switch (phase_)
    {
    case phase::idle:
        if (ev.type == event_kind::closed)
            return complete(error::connection_closed);
        if (ev.type != event_kind::start)
            return {};
        {
            phase_ = phase::extending;
            t0_ = ev.now;
            expired_ = valid_until_ != time_point{} && ev.now >= valid_until_;
            return fsm_action::send(++round_, ev.now + timing_.attempt_timeout);
        }
    case phase::extending:
        switch (ev.type)
        {
        case event_kind::reply:
        {
            if (ev.round_id != round_)
                return {};
            const auto before = round_outcomes_.state();
            if (round_outcomes_.record(ev.master, ev.outcome) == before)
                return {};
            return on_decided(ev.now);
        }
        case event_kind::deadline:
            if (ev.round_id != round_)
                return {};
            for (std::size_t i = 0; i < round_outcomes_.masters(); ++i)
                round_outcomes_.record(i, master_outcome::timed_out);  // the pending ones only
            return on_decided(ev.now);
        case event_kind::closed: closed_ = true; return release(error::connection_closed, ev.now);
        default: return {};
        }
    case phase::releasing:
        switch (ev.type)
        {
        case event_kind::reply:
            if (ev.round_id != round_ || !release_waiting_.contains(ev.master) ||
                ev.outcome == master_outcome::pending)
                return {};
            release_waiting_.erase(ev.master);
            if (!release_waiting_.empty())
                return {};
            return complete(closed_ ? error_code(error::connection_closed) : reason_);
        case event_kind::deadline:
            if (ev.round_id != round_)
                return {};
            return complete(closed_ ? error_code(error::connection_closed) : reason_);
        case event_kind::closed: closed_ = true; return {};
        default: return {};
        }
    case phase::done: break;
    }
    return {};
}

fsm_action extend_fsm::on_decided(time_point now)
{
    if (round_outcomes_.state() == quorum_state::reached)
    {
        if (timing_.valid_at(t0_, now))
            return complete({}, timing_.valid_until(t0_));
        return release(error::validity_expired, now);
    }
    return release(not_held_reason(extension_failure(round_outcomes_), expired_), now);
}

fsm_action extend_fsm::release(error_code reason, time_point now)
{
    phase_ = phase::releasing;
    reason_ = reason;
    release_waiting_ = awaited_after(round_outcomes_);
    // Nobody to wait for: a deadline due at once ends the release through the usual path.
    return fsm_action::release(++round_, all_, release_waiting_,
                               timing_.release_deadline(now, !release_waiting_.empty()));
}

fsm_action extend_fsm::complete(error_code ec, time_point valid_until)
{
    phase_ = phase::done;
    return fsm_action::complete(ec, valid_until);
}

}  // namespace redlock::detail
