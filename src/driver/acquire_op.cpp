// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/acquire_op.hpp"

#include <algorithm>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/fencing.hpp"
#include "algorithm/lock_value.hpp"
#include "protocol/scripts.hpp"
#include "runtime/completion.hpp"
#include "runtime/lock_state.hpp"
#include "runtime/recycling_allocator.hpp"

namespace redlock::detail {

namespace {

using clock = std::chrono::steady_clock;

// A fenced acquisition's diagnostics: a master that granted in the first round shows how its
// commit went (granted: it committed the token); the others keep their first-round answer,
// which says why they did not count (an error, another holder, silence).
void merge_commit(diagnostic_list& attempt, const diagnostic_list& commit)
{
    for (std::size_t i = 0; i < attempt.size() && i < commit.size(); ++i)
        if (attempt[i].status == master_status::granted)
            attempt[i] = commit[i];
}

}  // namespace

acquire_op::acquire_op(std::shared_ptr<client_impl> c, std::string resource, const lock_options& o)
    : c_(std::move(c)),
      resource_(std::move(resource)),
      o_(o)
{
    key_.reserve(c_->cfg.key_prefix.size() + resource_.size());
    key_.append(c_->cfg.key_prefix).append(resource_);
}

acquire_op::acquire_op(std::shared_ptr<client_impl> c, std::vector<std::string> resources,
                       const lock_options& o)
    : acquire_op(std::move(c), resources.empty() ? std::string() : resources.front(), o)
{
    if (resources.size() > 1)
    {
        keys_.reserve(resources.size());
        for (const auto& r : resources)
            keys_.push_back(c_->cfg.key_prefix + r);
        resources_ = std::move(resources);
    }
}

void acquire_op::start(lock_handler h)
{
    h_lock_.emplace(std::move(h));
    begin();
}

void acquire_op::start(try_handler h)
{
    h_try_.emplace(std::move(h));
    try_mode_ = true;
    begin();
}

void acquire_op::cancel()
{
    if (done_)
        return;
    if (!fsm_)
        cancelled_early_ = true;  // begin() has not run yet: it completes at once
    else
        drive(acquire_event::cancel(clock::now()));
}

void acquire_op::abandon() noexcept
{
    if (permits_)
        permits_->release.stop();
    if (rw_)
        rw_->cleanup.stop();
    attempt_.stop();
    if (commit_)
        commit_->stop();
    if (release_)
        release_->stop();
    leave_waiting_room(false);
    c_->deadlines.cancel(*this);
    done_ = true;
}

void acquire_op::begin()
{
    initiating_ = true;
    started_ = clock::now();
    error_code ec;
    validate(o_, ec, reason_);
    if (!ec && semaphore() && !resources_.empty())
    {
        ec = error::invalid_option;
        reason_ = "lock_options::permits: async_lock_all locks resources, not permits";
    }
    if (!ec && semaphore())
    {
        permits_ = std::make_unique<permit_state>();
        for (std::uint32_t i = 0; i < o_.permits; ++i)
            permits_->keys.push_back(slot_sibling(key_, ":permit:" + std::to_string(i)));
        permits_->order = permits_->keys;
        permits_->mark = std::string(permits_mark_prefix) + std::to_string(o_.permits);
        permits_->attempt.assign(1, key_);
    }
    if (!ec && o_.role != lock_role::mutex && !resources_.empty())
    {
        ec = error::invalid_option;
        reason_ = "lock_options::role: async_lock_all locks resources, not a read-write lock";
    }
    if (!ec && o_.role != lock_role::mutex)
    {
        rw_ = std::make_unique<rw_state>();
        rw_->keys = {key_, slot_sibling(key_, ":readers"), slot_sibling(key_, ":intent"),
                     o_.fencing ? fence_key(key_) : std::string()};
        rw_->watched = {rw_->keys[0], rw_->keys[2]};
        if (writer())
            c_->tokens.next(std::span<char, token_source::token_chars>(rw_->intent));
    }
    if (!ec)
    {
        reason_ = refused_resources();
        if (!reason_.empty())
            ec = error::invalid_argument;
    }
    if (!ec && c_->closed)
    {
        ec = error::connection_closed;
        reason_ = "the client was closed before the operation started";
    }
    if (!ec && cancelled_early_)
        ec = asio::error::operation_aborted;
    if (ec)
        return complete(ec, {});
    kind_ = kind_of(o_, keys().size());
    c_->note_ttl(o_.ttl);
    if (o_.fencing)
    {
        // The commit's keys: those that hold the token (a writer's: the resource's own key),
        // their fence counters, the counters' records. The first two thirds are a mutex's
        // attempt's keys.
        commit_ = std::make_unique<round>();
        for (const auto& k : release_keys())
            fenced_keys_.push_back(k);
        for (const auto& k : release_keys())
            fenced_keys_.push_back(fence_key(k));
        for (const auto& k : release_keys())
            fenced_keys_.push_back(fence_holder_key(k));
    }
    c_->track(*this, shared_from_this());
    // Seeded here, on the strand: the client's generator is not thread-safe. A read-write
    // lock is of one resource (a fenced writer commits one token).
    fsm_.emplace(o_, c_->size(), c_->jitter_rng(), try_mode_, rw_ ? 1 : keys().size());
    // A waiting acquisition of one resource takes its turn behind the others of this client:
    // only the first of them competes (a multi-resource one competes at once: queues over
    // several resources could wait for each other).
    bool first = true;
    if (o_.wait.count() > 0 && !try_mode_)
    {
        // It hears of its keys' releases from now on (the machine ignores them until it waits).
        c_->waiting.watch(watch_keys(), this);
        watching_ = true;
        if (keys_.empty())
        {
            queued_ = true;
            first = c_->waiting.enqueue(key_, this);
        }
    }
    // The first attempt's t0 is the operation's start, read once: earlier than the first byte
    // queued, which only makes the validity shorter (a clock read less per acquisition).
    drive(first ? acquire_event::start(started_) : acquire_event::queued(started_));
    initiating_ = false;
}

// The caller keeps the operation alive across the call (an action may complete it and let it
// go): a round holds its listener during its callbacks, the initiation and the cancellation
// handler hold a shared_ptr to it, on_deadline takes one.
void acquire_op::drive(std::span<const acquire_event> events)
{
    pump_.drive(*fsm_, events, [this](const acquire_action& a) { execute(a); });
}

void acquire_op::execute(const acquire_action& a)
{
    using kind = acquire_action::kind;
    switch (a.type)
    {
    case kind::none: return;
    case kind::send_attempt:
        if (wait_armed_)
        {
            // Woken before the fallback (or the turn came): that wait is moot.
            c_->deadlines.cancel(*this);
            wait_armed_ = false;
            watch_.stop();
        }
        attempt_id_ = a.round_id;
        committing_ = false;
        new_token();
        if (permits_)
        {
            // Each attempt tries the permits from a random one: acquirers racing for free
            // permits then seldom ask for the same one first.
            auto& p = *permits_;
            const auto first = c_->jitter_rng() % p.keys.size();
            for (std::size_t k = 0; k < p.keys.size(); ++k)
                p.order[k] = p.keys[(first + k) % p.keys.size()];
            p.attempt.resize(1);
            p.attempt.insert(p.attempt.end(), p.order.begin(), p.order.end());
            attempt_.set_text(p.mark);
        }
        if (row_of(kind_).marks_intent)
            attempt_.set_intent(rw_->intent);
        attempt_.start(*c_, row_of(kind_).acquire, attempt_keys(), token_view(), o_.ttl.count(),
                       attempt_timeout_of(o_), this, nullptr, a.deadline, a.at);
        return;
    case kind::send_commit:
        // The attempt round stays active: a late grant still shows in its diagnostics.
        commit_id_ = a.round_id;
        committing_ = true;
        commit_->set_fences(a.fences);  // in the machine, unchanged while this round is active
        commit_->start(*c_, round::kind::commit_fence, fenced_keys_, token_view(), 0,
                       a.deadline - a.at, this, nullptr, a.deadline, a.at);
        return;
    case kind::send_release:
        release_id_ = a.round_id;
        diagnostics_ = attempt_.diagnostics();
        if (committing_)
            merge_commit(diagnostics_, commit_->diagnostics());
        attempt_.stop();
        if (commit_)
            commit_->stop();
        if (!release_)
            release_ = std::make_unique<round>();
        // Every master gets the release, also those that timed out or never answered (not
        // awaited: a.awaited is the masters whose attempt outcome was not timed_out, as the
        // round derives from `previous`): a grant may still arrive, and the release queued
        // behind it on the same connection undoes it.
        if (rw_)
            rw_->marked = rw_->marked || writer();
        release_->start(*c_, row_of(kind_).release, release_keys(), token_view(),
                        permits_ ? static_cast<std::int64_t>(permits_->order.size()) : 0,
                        o_.release_timeout, this, &attempt_.tracker(), a.deadline, a.at);
        return;
    case kind::send_watch:
        watch_id_ = a.round_id;
        // Refused by holders that this client did not hand the keys to: a row of local
        // hand-offs (waiting_room::released_here) is over. Unless this is the acquisition's
        // first attempt while a row is live: then the holder is this client's own (the
        // newcomer asked while the row's last holder holds), and the row goes on.
        c_->waiting.refused_elsewhere(watch_keys(), fsm_->attempts() <= 1);
        watch_.start(*c_, *a.awaited, watch_keys(), this, semaphore());
        [[fallthrough]];  // and arm the fallback
    case kind::wait_until:
        if (c_->closed)
            return drive(acquire_event::closed(clock::now()));
        c_->deadlines.schedule(*this, a.until);
        wait_armed_ = true;
        return;
    case kind::complete:
        if (a.ec)
            return complete(a.ec, {});
        {
            leave_waiting_room(true, true);  // before the keys move into the lock
            auto st = make_recycled<lock_state>();
            st->resource = std::move(resource_);
            st->key = std::move(key_);
            st->resources = std::move(resources_);
            st->keys = std::move(keys_);
            st->token.assign(token_view());
            st->valid_until = a.valid_until;
            st->claim().valid_until = a.valid_until;
            st->kind = kind_;
            // Taken over too, the TTL is the one asked for, which extensions use (the keys keep
            // the holder's expiry until then).
            st->ttl = o_.ttl;
            if (handed_)
            {
                // Taken over (take_over): the holder's masters' outcomes say where the keys stand.
                st->masters = handed_->masters;
            }
            else
            {
                if (!a.fences.empty())
                    st->fences.assign(a.fences.begin(), a.fences.end());
                st->masters = attempt_.take_diagnostics();
                if (semaphore())
                {
                    // Its extension also keeps the semaphore's mark in the resource's key, and
                    // its release takes the mark away with the last permit.
                    const auto won = fsm_->last_attempt().winner();
                    auto& keys = st->permit_keys;
                    keys.reserve(permits_->order.size() + 1);
                    keys.push_back(st->key);
                    keys.push_back(permits_->order[won]);
                    for (std::size_t k = 0; k < permits_->order.size(); ++k)
                        if (k != won)
                            keys.push_back(permits_->order[k]);
                    st->key = keys[1];
                    release_strays(st->masters);
                }
                if (rw_)
                {
                    st->role = o_.role;
                    if (!writer())
                    {
                        st->key = rw_->keys[1];  // a reader is a member of the readers' set
                        st->reader_keys.assign(rw_->keys.begin(), rw_->keys.begin() + 2);
                    }
                    for (const auto& d : st->masters)
                        rw_->marked =
                            rw_->marked || (writer() && d.status != master_status::granted);
                }
                if (committing_)
                    merge_commit(st->masters, commit_->diagnostics());
            }
            attempt_.stop();
            if (commit_)
                commit_->stop();
            if (commit_ && !committing_ && !handed_)
                commit_in_background(a.fences);
            complete({}, access::make(std::move(st)));
        }
        return;
    }
}

void acquire_op::on_round_decided(round& r)
{
    // The machine counts the outcomes itself: it is told every one the round has so far.
    // The time is now, not the replies' batch time: a lock whose validity ran out while the
    // batch was being parsed is not handed out.
    if (&r == &attempt_)
        drive(decided_events(r.tracker(), c_->closed, attempt_id_, clock::now(), r.values(),
                             r.values_per_master()));
    else if (&r == commit_.get() && !fsm_->done())  // (not the commit sent after the grant)
        drive(decided_events(r.tracker(), c_->closed, commit_id_, clock::now()));
}

void acquire_op::on_round_finished(round& r)
{
    if (&r != release_.get())
        return;
    // Every awaited master answered, or the release deadline passed: the release is over.
    drive(ended_events(c_->closed, release_id_, clock::now()));
}

void acquire_op::on_invalidated(std::size_t master)
{
    drive(acquire_event::invalidated(master, clock::now()));
}

void acquire_op::on_turn(bool taken_before)
{
    drive(acquire_event::turn(clock::now(), taken_before));
}

bool acquire_op::take_over(const lock_state& from,
                           std::chrono::steady_clock::time_point valid_until,
                           std::span<char, token_source::token_chars> token)
{
    // Not with an identity (lock_options::identity): the keys take a fixed-size token
    // (round::start_release), which would drop it; this acquisition takes the lock anew after
    // the release.
    if (!o_.identity.empty())
        return false;
    // Only a lock of this one key, between rounds (the machine declines during one), and not
    // while the machine is being driven (an event would be queued, and its outcome come late).
    // Only a kind that takes hand-offs, from a lock of the same kind.
    if (done_ || !fsm_ || pump_.driving() || !o_.handoff || !row_of(kind_).handoff ||
        from.kind != kind_ || from.key != key_ || attempt_.active() ||
        (commit_ && commit_->active()) || (release_ && release_->active()))
        return false;
    auto keep = hold();
    // No round uses the token between rounds: the offer's goes there, and a declined one is
    // replaced by the next attempt's.
    c_->tokens.next(std::span<char, token_source::token_chars>(token_));
    // While the offer is driven: complete() reads the holder's lock through handed_, and the
    // completion is posted (as during the initiation), so that the caller hands the keys over
    // to the new token before the new holder can send anything with it. Both are undone
    // however the drive ends.
    struct offer_scope
    {
        acquire_op& op;
        bool was_initiating;
        offer_scope(acquire_op& o, const lock_state& from)
            : op(o),
              was_initiating(std::exchange(o.initiating_, true))
        {
            op.handed_ = &from;
        }
        ~offer_scope()
        {
            op.initiating_ = was_initiating;
            op.handed_ = nullptr;
        }
        offer_scope(const offer_scope&) = delete;
        offer_scope& operator=(const offer_scope&) = delete;
    };
    {
        const offer_scope scope(*this, from);
        drive(acquire_event::handed(clock::now(), valid_until));
    }
    if (!done_)
        return false;
    std::copy(std::begin(token_), std::end(token_), token.begin());
    return true;
}

void acquire_op::new_token()
{
    c_->tokens.next(std::span<char, token_source::token_chars>(token_));
    if (!o_.identity.empty())
        compose_value_into(value_, {token_, token_source::token_chars}, o_.identity);
}

void acquire_op::on_watched(std::size_t master, master_outcome o, std::int64_t pttl, bool tracked)
{
    drive(acquire_event::watched(watch_id_, master, o, pttl, tracked, clock::now()));
}

void acquire_op::leave_waiting_room(bool pass_turn, bool acquired) noexcept
{
    watch_.stop();
    if (watching_)
    {
        c_->waiting.unwatch(watch_keys(), this);
        watching_ = false;
    }
    if (!queued_)
        return;
    queued_ = false;
    auto* next = c_->waiting.leave(key_, this);
    // A shared kind's lock (a permit, a reader's) leaves room for the next one: it attempts at
    // once (a writer then finds our reader and waits as for any holder). Any other lock taken
    // blocks it.
    const bool blocks = acquired && !row_of(kind_).shared;
    if (next && pass_turn)
        // Posted: the next one starts its attempt after this completion, not inside it.
        asio::post(c_->strand, [next, keep = next->hold(), blocks] { next->on_turn(blocks); });
}

void acquire_op::on_deadline()
{
    // The backoff delay is over (or the client is closing: expire_all).
    wait_armed_ = false;
    auto keep = hold();  // the deadline list does not own its entries
    const auto now = clock::now();
    if (c_->closed)
        return drive(acquire_event::closed(now));
    drive(acquire_event::backoff_elapsed(now));
}

void acquire_op::complete(error_code ec, lock l)
{
    done_ = true;
    // Refused because the resource is held as another kind of lock: not contention that a
    // retry of the same kind could outwait by itself, its own error.
    if (ec == error::contended &&
        std::any_of(diagnostics_.begin(), diagnostics_.end(),
                    [](const master_diagnostic& d) { return d.ec == error::kind_mismatch; }))
        ec = error::kind_mismatch;
    if (rw_ && rw_->marked)
        forget_intent();
    c_->deadlines.cancel(*this);
    leave_waiting_room(true);
    // The masters do not tell this client's observers of its own writes (NOLOOP).
    // (The lock's keys: the acquisition's own may have been moved into it.)
    if (!ec && c_->waiting.observed() && access::state(l))
        c_->waiting.changed_here(access::state(l)->key_span());
    if (c_->observed())
    {
        event e;
        e.kind = ec ? event_kind::acquire_failed : event_kind::acquired;
        e.resource =
            resource_.empty() && access::state(l) ? l.resource() : std::string_view(resource_);
        e.identity = o_.identity;
        e.ec = ec;
        e.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - started_);
        e.attempts = fsm_ ? fsm_->attempts() : 0;
        e.handed_over = !ec && handed_ != nullptr;  // completed inside take_over
        c_->report(e);
    }
    if (ec && !access::state(l))
    {
        lock_state names;
        names.resource = resource_;
        names.key = key_;
        names.resources = resources_;
        names.keys = keys_;
        l = access::make(names.unheld(std::move(diagnostics_), std::move(reason_)));
    }
    if (try_mode_)
    {
        std::optional<lock> result;
        if (!ec)
            result = std::move(l);
        if (ec == error::contended)
            ec = {};  // contention is an outcome of try_lock, not an error
        deliver(*h_try_, ec, std::move(result));
    }
    else
    {
        deliver(*h_lock_, ec, std::move(l));
    }
    c_->untrack(*this);
}

template <class Handler, class... Args>
void acquire_op::deliver(Handler& h, Args&&... args)
{
    if (initiating_)
        post_completion(h, c_->strand, std::forward<Args>(args)...);
    else
        dispatch_completion(h, c_->strand, std::forward<Args>(args)...);
}

std::span<const std::string> acquire_op::release_keys() const
{
    if (permits_)
        return permits_->attempt;  // the resource's key, then every permit (release_permit)
    if (!rw_)
        return keys();
    return {rw_->keys.data(), writer() ? 1u : 2u};
}

std::span<const std::string> acquire_op::watch_keys() const
{
    if (!rw_)
        return keys();
    if (writer())
        return {rw_->keys.data(), 1};
    return rw_->watched;
}

void acquire_op::commit_in_background(std::span<const std::uint64_t> fences)
{
    // A fenced lock granted in one round (its quorum read the same counters): the tokens stand
    // on the quorum already. Their commit records them as the holder's term for readers
    // (async_holders, an election's observers), which must never take a term the holder may
    // not get, and brings the masters outside the quorum to them.
    // Every master but those that refused the attempt (as a failed attempt's release): a SET
    // still on its way runs before the commit queued behind it. Queued, then left: nobody
    // awaits it. As a release that completes at its quorum, it goes as EVALSHA where the
    // connection has seen the script run, else as EVAL (a SCRIPT FLUSH since would leave
    // that master's record unwritten: its read then shows no term there).
    const auto& votes = fsm_->last_attempt();
    quorum_tracker to(votes.masters());
    for (std::size_t i = 0; i < votes.masters(); ++i)
        to.record(i, votes.outcome(i) == master_outcome::held_by_other
                         ? master_outcome::held_by_other
                         : master_outcome::granted);  // (any outcome but timed_out: sent as usual)
    commit_->set_fences(fences);
    commit_->start(*c_, round::kind::commit_fence, fenced_keys_, token_view(), 0,
                   o_.release_timeout, this, &to);
    commit_->stop();
}

void acquire_op::forget_intent()
{
    rw_->marked = false;
    // Nobody awaits it (every master as timed_out: sent, not awaited), as a semaphore's strays.
    quorum_tracker to(c_->size());
    for (std::size_t i = 0; i < c_->size(); ++i)
        to.record(i, master_outcome::timed_out);
    rw_->cleanup.start(*c_, round::kind::release, {&rw_->keys[2], 1},
                       {rw_->intent, token_source::token_chars}, 0, o_.release_timeout, this, &to);
}

void acquire_op::release_strays(diagnostic_list& diagnostics)
{
    const auto& votes = fsm_->last_attempt();
    const auto won = votes.winner();
    quorum_tracker to(votes.masters());  // timed_out: sent, not awaited; held: skipped
    bool any = false;
    for (std::size_t i = 0; i < votes.masters(); ++i)
    {
        // Every master but those that set the majority's permit and those that set none
        // (all held): one that set another, and one that has not answered yet (its SET may
        // still run; the release queued behind it on the connection then undoes it).
        const auto c = votes.choice(i);
        const bool stray = c ? *c != won : votes.outcome(i) != master_outcome::held_by_other;
        to.record(i, stray ? master_outcome::timed_out : master_outcome::held_by_other);
        any = any || stray;
        if (stray && c && i < diagnostics.size())
        {
            diagnostics[i].status = master_status::held_by_other;
            diagnostics[i].message = "set permit key " + permits_->order[*c] +
                                     ", not the majority's: our token is deleted from it";
        }
    }
    if (!any)
        return;
    auto& p = *permits_;
    // The resource's key, the permits to release, then the won permit, only looked at: the
    // semaphore's mark goes where no permit is left (release_permit).
    p.strays.assign(1, key_);
    for (std::size_t k = 0; k < p.order.size(); ++k)
        if (k != won)
            p.strays.push_back(p.order[k]);
    p.strays.push_back(p.order[won]);
    // Nobody awaits it: each master gets it as EVAL, and the round ends within start().
    p.release.start(*c_, row_of(kind_).release, p.strays, token_view(),
                    static_cast<std::int64_t>(p.order.size() - 1), o_.release_timeout, this, &to);
}

}  // namespace redlock::detail
