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

}  // namespace

acquire_op::acquire_op(std::shared_ptr<client_impl> c, std::string resource, const lock_options& o)
    : c_(std::move(c)),
      keys_(c_->cfg.key_prefix, std::move(resource)),
      o_(o)
{}

acquire_op::acquire_op(std::shared_ptr<client_impl> c, std::vector<std::string> resources,
                       const lock_options& o)
    : c_(std::move(c)),
      keys_(c_->cfg.key_prefix, std::move(resources)),
      o_(o)
{}

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
    if (aside_)
        aside_->stop();
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
    if (!ec)
        ec = keys_.prepare(o_, c_->has_cluster_master, reason_);
    if (!ec && c_->closed)
    {
        ec = error::connection_closed;
        reason_ = "the client was closed before the operation started";
    }
    if (!ec && cancelled_early_)
        ec = asio::error::operation_aborted;
    if (ec)
        return complete(ec, {});
    c_->note_ttl(o_.ttl);
    if (o_.fencing)
        commit_ = std::make_unique<round>();
    if (keys_.writer())
        c_->tokens.next(std::span<char, token_source::token_chars>(intent_));
    c_->track(*this, shared_from_this());
    // Seeded here, on the strand: the client's generator is not thread-safe. A read-write
    // lock is of one resource (a fenced writer commits one token).
    fsm_.emplace(o_, c_->size(), c_->jitter_rng(), try_mode_,
                 keys_.read_write() ? 1 : keys_.keys().size());
    const bool first = join_waiting_room();
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
        if (keys_.semaphore())
        {
            keys_.rotate_permits(c_->jitter_rng() % keys_.permits());
            attempt_.set_text(keys_.mark());
        }
        if (keys_.row().marks_intent)
            attempt_.set_intent(intent_);
        attempt_.start(*c_, keys_.row().acquire, keys_.attempt_keys(), token_view(), o_.ttl.count(),
                       attempt_timeout_of(o_), this, nullptr, a.deadline, a.at);
        return;
    case kind::send_commit:
        // The attempt round stays active: a late grant still shows in its diagnostics.
        commit_id_ = a.round_id;
        committing_ = true;
        commit_->set_fences(a.fences);  // in the machine, unchanged while this round is active
        commit_->start(*c_, round::kind::commit_fence, keys_.commit_keys(), token_view(), 0,
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
        intent_marked_ = intent_marked_ || keys_.writer();
        release_->start(*c_, keys_.row().release, keys_.release_keys(), token_view(),
                        static_cast<std::int64_t>(keys_.permits()), o_.release_timeout, this,
                        &attempt_.tracker(), a.deadline, a.at);
        return;
    case kind::send_watch:
        watch_id_ = a.round_id;
        // Refused by holders that this client did not hand the keys to: a row of local
        // hand-offs (waiting_room::released_here) is over. Unless this is the acquisition's
        // first attempt while a row is live: then the holder is this client's own (the
        // newcomer asked while the row's last holder holds), and the row goes on.
        c_->waiting.refused_elsewhere(keys_.watch_keys(), fsm_->attempts() <= 1);
        watch_.start(*c_, *a.awaited, keys_.watch_keys(), this, keys_.semaphore());
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
        complete({}, grant(a));
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

void acquire_op::new_token()
{
    c_->tokens.next(std::span<char, token_source::token_chars>(token_));
    if (!o_.identity.empty())
        compose_value_into(value_, {token_, token_source::token_chars}, o_.identity);
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
    if (intent_marked_)
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
        e.resource = keys_.resource().empty() && access::state(l)
                         ? l.resource()
                         : std::string_view(keys_.resource());
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
        keys_.name_unheld(names);
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

}  // namespace redlock::detail
