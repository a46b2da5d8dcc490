// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "fsm/leader_fsm.hpp"

#include <algorithm>
#include <utility>

namespace redlock::detail {

namespace {

bool same_leader(const std::optional<leader_info>& a, const std::optional<leader_info>& b)
{
    return a.has_value() == b.has_value() && (!a || *a == *b);
}

}  // namespace

std::optional<leader_info> leader_of(const holders_result& r,
                                     std::chrono::steady_clock::time_point now)
{
    for (const auto& h : r.holders)
        if (!h.reader && h.fencing_token > 0)
        {
            leader_info l;
            l.identity = h.identity;
            l.term = h.fencing_token;
            l.valid_for = h.valid_for;
            l.valid_until = h.valid_for.count() < 0 ? std::chrono::steady_clock::time_point::max()
                                                    : now + h.valid_for;
            l.id = h.id;
            l.masters = h.masters;
            return l;
        }
    return std::nullopt;
}

bool term_pending(const holders_result& r)
{
    for (const auto& h : r.holders)
        if (!h.reader && h.fencing_token == 0)
            return true;
    return false;
}

leader_fsm::leader_fsm(std::optional<leader_info> seen, bool once, std::chrono::milliseconds every,
                       std::chrono::milliseconds read_timeout)
    : seen_(std::move(seen)),
      every_(every),
      read_timeout_(read_timeout),
      once_(once)
{}

leader_action leader_fsm::start() const
{
    if (once_)
    {
        leader_action a;
        a.type = leader_action::kind::first_read;
        return a;
    }
    return next_read(every_);
}

leader_action leader_fsm::read_answered(error_code ec, const holders_result& r, time_point now)
{
    if (ec == error::no_quorum && !once_)
    {
        // An observer that cannot read a majority waits for one; a leader it saw leads, as
        // far as it can tell, until that leader's validity ends, and then no longer.
        if (!seen_)
            return next_read(every_);
        if (now >= seen_->valid_until)
            return finish({});
        leader_action a;
        a.type = leader_action::kind::wait_until;
        a.until = seen_->valid_until;
        return a;
    }
    if (ec)
        return finish(ec);
    auto lead = leader_of(r, now);
    if (once_ && !lead && !waited_ && term_pending(r))
    {
        waited_ = true;
        return next_read(read_timeout_);
    }
    if (once_ || !same_leader(lead, seen_))
        return finish({}, std::move(lead));
    if (term_pending(r))
        return next_read(std::min(every_, read_timeout_));
    return next_read(every_);
}

leader_action leader_fsm::wait_ended(error_code ec) const
{
    if (ec)
        return finish(ec);
    leader_action a;
    a.type = leader_action::kind::first_read;
    return a;
}

leader_action leader_fsm::next_read(std::chrono::milliseconds every) const
{
    leader_action a;
    a.type = leader_action::kind::next_read;
    a.reread_every = every;
    return a;
}

leader_action leader_fsm::finish(error_code ec, std::optional<leader_info> leader)
{
    leader_action a;
    a.type = leader_action::kind::finish;
    a.ec = ec;
    a.leader = std::move(leader);
    return a;
}

}  // namespace redlock::detail
