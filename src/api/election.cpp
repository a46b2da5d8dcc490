// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The bodies of election and leadership: compositions of the client's operations
// (async_lock with wait, fencing and the candidate's identity; async_holders;
// async_next_holders), each a small state kept alive by the handlers it hands out.
#include <redlock/election.hpp>

#include <algorithm>
#include <memory>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "fsm/leader_fsm.hpp"
#include "runtime/completion.hpp"

namespace redlock {

namespace asio = boost::asio;

leadership::leadership(client& c, lock l, hold_options o, executor_type work_executor)
    : term_(l.fencing_token()),
      identity_(l.identity())
{
    holder_ = lock_holder(c, std::move(l), std::move(o), std::move(work_executor));
}

election::election(client& c, std::string_view name, std::string_view identity)
    : election(c, name, identity, election_options{})
{}

election::election(client& c, std::string_view name, std::string_view identity, election_options o)
    : c_(&c),
      name_(name),
      identity_(identity),
      o_(std::move(o))
{}

namespace detail {

namespace {

// The lead: a fenced mutex taken with the candidate's identity, waiting for the leader's
// release or expiry for as long as one wait allows (a campaign then starts another).
lock_options campaign_options(const client& c, std::string_view identity, const election_options& o)
{
    auto lo = c.default_options();
    lo.ttl = o.ttl;
    lo.fencing = true;
    lo.identity = identity;
    lo.permits = 1;
    lo.role = lock_role::mutex;
    lo.wait = std::chrono::hours(1);
    lo.max_wait = std::chrono::milliseconds(0);
    return lo;
}

// What the election's reads use: the lead's TTL for the drift allowance.
lock_options read_options(const client& c, const election_options& o)
{
    auto lo = c.default_options();
    lo.ttl = o.ttl;
    lo.permits = 1;
    lo.role = lock_role::mutex;
    lo.fencing = false;
    return lo;
}

bool ends_campaign(const error_code& ec)
{
    return ec == asio::error::operation_aborted || ec == error::connection_closed ||
           ec == error::invalid_option || ec == error::invalid_argument;
}

struct campaign_state : std::enable_shared_from_this<campaign_state>
{
    using handler = asio::any_completion_handler<void(error_code, leadership)>;

    client& c;
    std::string name;
    lock_options lo;
    hold_options hold;
    handler h;
    asio::cancellation_slot slot;

    campaign_state(client& cl, std::string n, lock_options l, hold_options ho, handler hh)
        : c(cl),
          name(std::move(n)),
          lo(l),
          hold(std::move(ho)),
          h(std::move(hh)),
          slot(asio::get_associated_cancellation_slot(h))
    {}

    void attempt()
    {
        // The caller's cancellation reaches the acquisition under way (one at a time).
        c.async_lock(name, lo,
                     asio::bind_cancellation_slot(
                         slot, asio::bind_executor(c.get_executor(), [self = shared_from_this()](
                                                                         error_code ec, lock l) {
                             self->on_lock(ec, std::move(l));
                         })));
    }

    void on_lock(error_code ec, lock l)
    {
        if (!ec)
        {
            leadership lead(c, std::move(l), hold, c.get_executor());
            return dispatch_completion(h, c.get_executor(), error_code{}, std::move(lead));
        }
        if (ends_campaign(ec))
            return dispatch_completion(h, c.get_executor(), ec, leadership{});
        // Contended past the wait, or too few masters answered: campaign on.
        attempt();
    }
};

// async_observe's and async_leader's driver: leader_fsm decides (src/fsm/leader_fsm.hpp); this
// carries out its reads (async_holders, async_next_holders from the last read) and its timer.
struct observe_state : std::enable_shared_from_this<observe_state>
{
    using handler = asio::any_completion_handler<void(error_code, std::optional<leader_info>)>;

    client& c;
    std::string name;
    lock_options lo;
    leader_fsm fsm;
    holders_result last;  // the last read's answer, which the next read waits to differ from
    handler h;
    asio::cancellation_slot slot;
    asio::steady_timer timer;  // no majority: until the seen leader's validity ends

    observe_state(client& cl, std::string n, const election_options& o,
                  std::optional<leader_info> seen, bool once, handler hh)
        : c(cl),
          name(std::move(n)),
          lo(read_options(cl, o)),
          fsm(std::move(seen), once, o.observe_interval, attempt_timeout_of(lo)),
          h(std::move(hh)),
          slot(asio::get_associated_cancellation_slot(h)),
          timer(cl.get_executor())
    {}

    template <class F>
    auto bound(F f)
    {
        return asio::bind_cancellation_slot(slot, asio::bind_executor(c.get_executor(), f));
    }

    void execute(leader_action a)
    {
        using kind = leader_action::kind;
        const auto answered = [self = shared_from_this()](error_code ec, holders_result r) {
            const auto now = std::chrono::steady_clock::now();
            auto next = self->fsm.read_answered(ec, r, now);
            self->last = std::move(r);
            self->execute(std::move(next));
        };
        switch (a.type)
        {
        case kind::first_read: return c.async_holders(name, lo, bound(answered));
        case kind::next_read:
            return c.async_next_holders(name, lo, last, a.reread_every, bound(answered));
        case kind::wait_until:
            timer.expires_at(a.until);
            return timer.async_wait(bound([self = shared_from_this()](error_code ec) {
                self->execute(self->fsm.wait_ended(ec));
            }));
        case kind::finish:
            return dispatch_completion(h, c.get_executor(), a.ec, std::move(a.leader));
        }
    }
};

}  // namespace

void start_campaign(client& c, const std::string& name, std::string_view identity,
                    const election_options& o,
                    asio::any_completion_handler<void(error_code, leadership)> h)
{
    auto s = std::make_shared<campaign_state>(c, name, campaign_options(c, identity, o), o.hold,
                                              std::move(h));
    s->attempt();
}

void start_leader(client& c, const std::string& name, const election_options& o,
                  asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h)
{
    auto s = std::make_shared<observe_state>(c, name, o, std::nullopt, true, std::move(h));
    s->execute(s->fsm.start());
}

void start_observe(client& c, const std::string& name, const election_options& o,
                   std::optional<leader_info> seen,
                   asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h)
{
    auto s = std::make_shared<observe_state>(c, name, o, std::move(seen), false, std::move(h));
    s->execute(s->fsm.start());
}

}  // namespace detail

}  // namespace redlock
