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

// The leader in a read: the holder of the resource's key with a committed term. A holder
// without one (its term's commit has not reached a majority of the masters read, or it took
// no fencing: not a campaign's) leads nothing yet.
std::optional<leader_info> leader_of(const holders_result& r)
{
    for (const auto& h : r.holders)
        if (!h.reader && h.fencing_token > 0)
        {
            leader_info l;
            l.identity = h.identity;
            l.term = h.fencing_token;
            l.valid_for = h.valid_for;
            l.valid_until = h.valid_for.count() < 0
                                ? std::chrono::steady_clock::time_point::max()
                                : std::chrono::steady_clock::now() + h.valid_for;
            l.id = h.id;
            l.masters = h.masters;
            return l;
        }
    return std::nullopt;
}

// A holder of the resource's key without a term: usually a candidate that has just taken the
// lead, whose term's commit (sent after its one round) has not reached the masters yet.
bool term_pending(const holders_result& r)
{
    for (const auto& h : r.holders)
        if (!h.reader && h.fencing_token == 0)
            return true;
    return false;
}

bool same_leader(const std::optional<leader_info>& a, const std::optional<leader_info>& b)
{
    return a.has_value() == b.has_value() && (!a || *a == *b);
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

// async_observe and async_leader's shared loop: reads until the leader differs from `seen`
// (async_leader: any first read), re-reading with async_next_holders while it does not.
struct observe_state : std::enable_shared_from_this<observe_state>
{
    using handler = asio::any_completion_handler<void(error_code, std::optional<leader_info>)>;

    client& c;
    std::string name;
    lock_options lo;
    std::chrono::milliseconds every;
    std::optional<leader_info> seen;
    bool once;            // async_leader: the first read's answer, whatever it is
    bool waited = false;  // async_leader: waited once for a holder's term to be committed
    handler h;
    asio::cancellation_slot slot;
    asio::steady_timer timer;  // no majority: until `seen`'s validity ends

    observe_state(client& cl, std::string n, const election_options& o,
                  std::optional<leader_info> s, bool one, handler hh)
        : c(cl),
          name(std::move(n)),
          lo(read_options(cl, o)),
          every(o.observe_interval),
          seen(std::move(s)),
          once(one),
          h(std::move(hh)),
          slot(asio::get_associated_cancellation_slot(h)),
          timer(cl.get_executor())
    {}

    template <class F>
    auto bound(F f)
    {
        return asio::bind_cancellation_slot(slot, asio::bind_executor(c.get_executor(), f));
    }

    void first_read()
    {
        c.async_holders(name, lo,
                        bound([self = shared_from_this()](error_code ec, holders_result r) {
                            self->on_read(ec, std::move(r));
                        }));
    }

    void next_read(const holders_result& last) { next_read(last, every); }

    void next_read(const holders_result& last, std::chrono::milliseconds reread_every)
    {
        c.async_next_holders(name, lo, last, reread_every,
                             bound([self = shared_from_this()](error_code ec, holders_result r) {
                                 self->on_read(ec, std::move(r));
                             }));
    }

    void on_read(error_code ec, holders_result r)
    {
        if (ec == error::no_quorum && !once)
            return no_majority(r);
        if (ec)
            return dispatch_completion(h, c.get_executor(), ec, std::optional<leader_info>{});
        auto now = leader_of(r);
        // A leader's term is committed just after its campaign completes (its commit follows
        // its one round): async_leader waits for that once, rather than answer "none" while a
        // leader that already knows it leads stands on the masters. The commit's write is
        // pushed; the read's own timeout bounds the wait when nothing comes.
        if (once && !now && !waited && term_pending(r))
        {
            waited = true;
            return next_read(r, attempt_timeout_of(lo));
        }
        if (once || !same_leader(now, seen))
            return dispatch_completion(h, c.get_executor(), error_code{}, std::move(now));
        // A lead taken whose term is not committed yet: its commit is pushed, but not to the
        // leader's own client (the masters do not push a client's own writes), and a push can
        // be lost; read again within the read's timeout rather than wait for the interval.
        if (term_pending(r))
            return next_read(r, std::min(every, attempt_timeout_of(lo)));
        next_read(r);
    }

    // An observer that cannot read a majority waits for one; a leader it saw leads, as far
    // as it can tell, until that leader's validity ends, and then no longer.
    void no_majority(const holders_result& r)
    {
        if (!seen)
            return next_read(r);
        if (std::chrono::steady_clock::now() >= seen->valid_until)
            return dispatch_completion(h, c.get_executor(), error_code{},
                                       std::optional<leader_info>{});
        timer.expires_at(seen->valid_until);
        timer.async_wait(bound([self = shared_from_this()](error_code ec) {
            if (ec)
                return dispatch_completion(self->h, self->c.get_executor(), ec,
                                           std::optional<leader_info>{});
            self->first_read();
        }));
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
    s->first_read();
}

void start_observe(client& c, const std::string& name, const election_options& o,
                   std::optional<leader_info> seen,
                   asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h)
{
    auto s = std::make_shared<observe_state>(c, name, o, std::move(seen), false, std::move(h));
    // From "no holder seen": the first read (tracking armed before it) completes at once when
    // anyone holds the lead, and waits for a change when no one does.
    s->next_read(holders_result{});
}

}  // namespace detail

}  // namespace redlock
