// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/unlock_fsm.hpp"

#include <stdexcept>

#include <boost/asio/error.hpp>

#include "fsm/release_verdict.hpp"

namespace redlock::detail {

namespace {
using event_kind = fsm_event::kind;
}  // namespace

unlock_fsm::unlock_fsm(std::chrono::milliseconds release_timeout, std::size_t masters,
                       time_point valid_until)
    : release_timeout_(release_timeout),
      outcomes_(masters == 0 ? throw std::invalid_argument("unlock_fsm: no master") : masters),
      all_(masters),
      valid_until_(valid_until)
{
    for (std::size_t i = 0; i < masters; ++i)
        all_.insert(i);
}

fsm_action unlock_fsm::resume(const fsm_event& ev)
{
    switch (phase_)
    {
    case phase::idle:
        switch (ev.type)
        {
        case event_kind::start:
            phase_ = phase::releasing;
            expired_ = valid_until_ != time_point{} && ev.now >= valid_until_;
            return fsm_action::release(++round_, all_, all_, ev.now + release_timeout_);
        case event_kind::cancel: return complete(boost::asio::error::operation_aborted);
        case event_kind::closed: return complete(error::connection_closed);
        default: return {};
        }
    case phase::releasing:
    case phase::draining:
        switch (ev.type)
        {
        case event_kind::reply: return on_reply(ev);
        case event_kind::handed_off:
            if (ev.round_id != round_ || phase_ != phase::releasing)
                return {};
            handed_off_ = true;
            if (outcomes_.state() == quorum_state::reached)
                return complete({});
            return {};
        case event_kind::deadline:
            if (ev.round_id != round_)
                return {};
            for (std::size_t i = 0; i < outcomes_.masters(); ++i)
                outcomes_.record(i, master_outcome::timed_out);  // the pending ones only
            return finish();
        case event_kind::cancel:
            if (phase_ != phase::releasing)
                return {};  // already answered: the background part is not the caller's
            phase_ = phase::done;
            return fsm_action::complete(boost::asio::error::operation_aborted);
        case event_kind::closed: closed_ = true; return {};
        default: return {};
        }
    case phase::done: break;
    }
    return {};
}

fsm_action unlock_fsm::on_reply(const fsm_event& ev)
{
    if (ev.round_id != round_ || ev.outcome == master_outcome::pending ||
        ev.master >= outcomes_.masters() || outcomes_.outcome(ev.master) != master_outcome::pending)
        return {};
    outcomes_.record(ev.master, ev.outcome);
    if (outcomes_.pending() == 0)
        return finish();
    if (phase_ == phase::releasing && handed_off_ && outcomes_.state() == quorum_state::reached)
        return complete({});
    return {};
}

fsm_action unlock_fsm::finish()
{
    const bool answered = phase_ == phase::draining;
    phase_ = phase::done;
    if (answered)
        return {};
    const error_code verdict = release_verdict(outcomes_, closed_);
    return fsm_action::complete(
        verdict == error::lock_lost ? not_held_reason(error::contended, expired_) : verdict);
}

fsm_action unlock_fsm::complete(error_code ec)
{
    phase_ = ec ? phase::done : phase::draining;
    return fsm_action::complete(ec);
}

}  // namespace redlock::detail
