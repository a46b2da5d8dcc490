// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// An acquisition's life: its start (the checks before any round, the machine made), the events
// that reach the machine from outside its rounds (a deadline, an invalidation) and its end (the
// error said, the event reported, the answer delivered). What it sends is acquire_rounds.cpp's,
// the lock it grants acquire_grant.cpp's, its waiting acquire_waiting.cpp's.
#include "driver/acquire_op.hpp"

#include <algorithm>
#include <utility>

#include <boost/asio/error.hpp>

#include "algorithm/lock_value.hpp"
#include "runtime/lock_state.hpp"

namespace redlock::detail {

acquire_op::acquire_op(std::shared_ptr<op_context> c, std::string resource, const lock_options& o)
    : op_driver(std::move(c)),
      keys_(c_->cfg.key_prefix, std::move(resource)),
      o_(o)
{
    set_tracked(this);
}

acquire_op::acquire_op(std::shared_ptr<op_context> c, std::vector<std::string> resources,
                       const lock_options& o)
    : op_driver(std::move(c)),
      keys_(c_->cfg.key_prefix, std::move(resources)),
      o_(o)
{
    set_tracked(this);
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
    answered_ = true;
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
    // Made here, on the strand, and seeded: the client's generator is not thread-safe. A
    // read-write lock is of one resource (a fenced writer commits one token).
    make_machine(o_, c_->size(), c_->jitter_rng(), try_mode_,
                 keys_.read_write() ? 1 : keys_.keys().size());
    const bool first = join_waiting_room();
    // The first attempt's t0 is the operation's start, read once: earlier than the first byte
    // queued, which only makes the validity shorter (a clock read less per acquisition).
    drive(first ? acquire_event::start(started_) : acquire_event::queued(started_));
    initiating_ = false;
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
    answered_ = true;
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

}  // namespace redlock::detail
