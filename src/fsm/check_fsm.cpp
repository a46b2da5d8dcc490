// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/check_fsm.hpp"

#include <stdexcept>

#include <boost/asio/error.hpp>

namespace redlock::detail {

namespace {
using event_kind = fsm_event::kind;
}  // namespace

check_fsm::check_fsm(std::chrono::milliseconds timeout, std::size_t masters)
    : timeout_(timeout),
      outcomes_(masters == 0 ? throw std::invalid_argument("check_fsm: no master") : masters)
{}

fsm_action check_fsm::resume(const fsm_event& ev)
{
    if (phase_ == phase::done)
        return {};
    if (ev.type == event_kind::cancel)
        return complete(boost::asio::error::operation_aborted);
    if (phase_ == phase::idle)
    {
        if (ev.type == event_kind::closed)
            return complete(error::connection_closed);
        if (ev.type != event_kind::start)
            return {};
        phase_ = phase::checking;
        return fsm_action::send(++round_, ev.now + timeout_);
    }
    switch (ev.type)
    {
    case event_kind::reply:
        if (ev.round_id != round_ || ev.outcome == master_outcome::pending)
            return {};
        outcomes_.record(ev.master, ev.outcome);  // a second answer or a stray index: ignored
        if (outcomes_.pending() != 0)
            return {};
        return complete(closed_ ? error_code(error::connection_closed) : error_code());
    case event_kind::deadline:
        if (ev.round_id != round_)
            return {};
        for (std::size_t i = 0; i < outcomes_.masters(); ++i)
            outcomes_.record(i, master_outcome::timed_out);  // the pending ones only
        return complete(closed_ ? error_code(error::connection_closed) : error_code());
    case event_kind::closed: closed_ = true; return {};
    default: return {};
    }
}

fsm_action check_fsm::complete(error_code ec)
{
    phase_ = phase::done;
    return fsm_action::complete(ec);
}

}  // namespace redlock::detail
