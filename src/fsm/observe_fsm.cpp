// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/observe_fsm.hpp"

#include <algorithm>

#include <boost/asio/error.hpp>

namespace redlock::detail {

observe_fsm::observe_fsm(std::size_t masters, std::size_t quorum, bool seen_decided,
                         duration reread_every, duration arm_timeout) noexcept
    : masters_(masters),
      quorum_(quorum),
      reread_every_(reread_every),
      arm_timeout_(arm_timeout),
      seen_decided_(seen_decided)
{}

observe_action observe_fsm::start(time_point now, bool closed)
{
    if (phase_ != phase::idle)
        return {};
    if (reread_every_ <= duration::zero())
        return finish(error::invalid_option, false);
    if (closed)
        return finish(error::connection_closed, false);
    return arm(now);
}

observe_action observe_fsm::watched(bool armed, time_point)
{
    if (phase_ != phase::arming)
        return {};
    ++answered_;
    if (armed)
        ++armed_;
    if (armed_ >= quorum_ || answered_ >= masters_)
        return read();
    return {};
}

observe_action observe_fsm::read_answered(std::uint64_t read_id, error_code ec, bool differs,
                                          bool rekeyed, duration next_expiry, time_point now)
{
    if (!awaits(read_id))
        return {};
    // Who holds it cannot be told now: a change when the caller could tell, else the same
    // (read again later).
    if (ec == error::no_quorum)
        return seen_decided_ ? finish(ec, true) : wait(next_expiry, now);
    if (ec)
        return finish(ec, true);
    if (!seen_decided_ || differs)
        return finish({}, true);
    if (changed_ || rekeyed)
        return arm(now);
    return wait(next_expiry, now);
}

observe_action observe_fsm::key_changed(time_point now)
{
    switch (phase_)
    {
    case phase::arming:
    case phase::reading: changed_ = true; return {};
    case phase::waiting: return arm(now);
    default: return {};
    }
}

observe_action observe_fsm::deadline(time_point now)
{
    switch (phase_)
    {
    case phase::arming: return read();  // not every master answered in time: read anyway
    case phase::waiting: return arm(now);
    default: return {};
    }
}

observe_action observe_fsm::cancel()
{
    if (phase_ == phase::done)
        return {};
    return finish(boost::asio::error::operation_aborted, false);
}

observe_action observe_fsm::closed()
{
    if (phase_ == phase::done)
        return {};
    return finish(error::connection_closed, false);
}

observe_action observe_fsm::arm(time_point now)
{
    phase_ = phase::arming;
    changed_ = false;
    answered_ = 0;
    armed_ = 0;
    // A master that cannot answer (a paused one) must not hold the read back for long.
    observe_action a;
    a.type = observe_action::kind::arm;
    a.until = now + arm_timeout_;
    return a;
}

observe_action observe_fsm::read()
{
    phase_ = phase::reading;
    observe_action a;
    a.type = observe_action::kind::read;
    a.read_id = ++reads_;
    return a;
}

observe_action observe_fsm::wait(duration next_expiry, time_point now)
{
    phase_ = phase::waiting;
    // A holder whose validity runs out is gone (for a read's rule) without any push: the
    // masters report an expiry only when they delete the key, which may be much later.
    observe_action a;
    a.type = observe_action::kind::wait_until;
    a.until = now + std::min(reread_every_, next_expiry);
    return a;
}

observe_action observe_fsm::finish(error_code ec, bool with_read)
{
    phase_ = phase::done;
    observe_action a;
    a.type = observe_action::kind::finish;
    a.ec = ec;
    a.with_read = with_read;
    return a;
}

}  // namespace redlock::detail
