// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_HOLD_STATE_HPP
#define REDLOCK_SRC_DRIVER_HOLD_STATE_HPP

#include <redlock/client.hpp>
#include <redlock/hold.hpp>

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <optional>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "algorithm/lock_value.hpp"
#include "driver/fsm_pump.hpp"
#include "driver/op_context.hpp"
#include "driver/round.hpp"
#include "fsm/hold_fsm.hpp"
#include "runtime/completion.hpp"
#include "runtime/lock_state.hpp"

namespace redlock::detail {

namespace asio = boost::asio;

/// @brief The Asio side of a lock_holder: it runs hold_fsm, which makes every decision
/// (when to extend, retry, give up, release), and carries out its actions with two rounds
/// (the extension, the release) and one deadline_list entry (the machine's one wait). What it
/// adds: the lock, the loss signal and the holder's work executor, the release waiters, and
/// the copies of the machine's state that lock_holder's accessors read from any thread.
///
/// Because the deadline list fires every due entry in one handler, the extensions of many
/// locks due at the same time are queued in the same handler turn and leave in one write per
/// master.
class hold_state final : public timed_entry,
                         public round_listener,
                         public tracked_op,
                         public std::enable_shared_from_this<hold_state>
{
    using clock = std::chrono::steady_clock;

public:
    hold_state(std::shared_ptr<op_context> c, lock l, hold_options o, asio::any_io_executor work_ex)
        : c_(std::move(c)),
          base_(access::state(l)),
          o_(std::move(o)),
          work_ex_(std::move(work_ex)),
          acquired_at_(clock::now()),
          valid_until_(l.valid_until()),
          holding_(c_->size())
    {
        set_tracked(this);
    }

    // ---- called on the strand ---------------------------------------------------------------

    void start()
    {
        if (!base_ || base_->token.empty() || clock::now() >= valid_until_)
            return set_status(error::lock_expired);
        if (c_->closed)
            return set_status(error::connection_closed);
        c_->track(*this, shared_from_this());
        fsm_.emplace(settings(), acquired_at_, valid_until_);
        drive(fsm_event::start(clock::now()));
    }

    // `id`: the waiter's number (next_waiter_id()), for a cancellation to find it.
    void release(std::optional<asio::any_completion_handler<void(error_code)>> h,
                 std::uint64_t id = 0)
    {
        if (h)
            release_waiters_.push_back({id, std::move(*h)});
        if (!fsm_ || fsm_->done())
        {
            // Never started, already released, or lost and cleaned up: report what happened.
            complete_release_waiters(status() == error::released ? error_code()
                                                                 : error_code(error::lock_lost));
            return;
        }
        if (fsm_->releasing())
            return;  // the waiter is answered when the release under way ends
        set_status(error::released);
        drive(fsm_event::release(clock::now()));
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        ext_.stop();
        rel_.stop();
        c_->deadlines.cancel(*this);
        fsm_.reset();
    }

    // ---- read from any thread ---------------------------------------------------------------

    lock current() const
    {
        std::lock_guard g(m_);
        if (!base_)
            return {};
        if (valid_until_ == base_->valid_until)
            return access::make(base_);
        auto st = lock_state::derive(base_);
        st->valid_until = valid_until_;
        st->ttl = ttl();
        return access::make(std::move(st));
    }

    bool held() const
    {
        std::lock_guard g(m_);
        return !status_ && base_ && clock::now() < valid_until_;
    }

    error_code status() const
    {
        std::lock_guard g(m_);
        if (!status_ && base_ && clock::now() >= valid_until_)
            return error::lock_expired;
        return status_;
    }

    std::uint32_t extensions() const
    {
        std::lock_guard g(m_);
        return extensions_;
    }

    std::size_t holding() const
    {
        std::lock_guard g(m_);
        return holding_;
    }

    asio::cancellation_slot loss_slot() { return loss_.slot(); }

    const asio::any_io_executor& strand() const { return c_->strand; }

private:
    std::chrono::milliseconds ttl() const
    {
        return base_ && base_->ttl.count() > 0 ? base_->ttl : c_->cfg.defaults.ttl;
    }

    hold_settings settings() const
    {
        return hold_settings::resolve(c_->cfg.defaults, ttl(), o_.extend_before, o_.max_extensions,
                                      o_.max_hold, c_->size());
    }

    // The caller keeps the holder alive across the call (an action may end its work and let it
    // go): a round holds its listener during its callbacks, start() and release() run in a
    // lambda that holds it, on_deadline takes a hold.
    void drive(std::span<const fsm_event> events)
    {
        pump_.drive(*fsm_, events, [this](const fsm_action& a) { execute(a); });
    }
    void drive(const fsm_event& ev) { drive(std::span<const fsm_event>(&ev, 1)); }

    void execute(const fsm_action& a)
    {
        for (const auto& n : fsm_->take_notices())
            tell(n);
        switch (a.type)
        {
        case fsm_action::kind::none:
        case fsm_action::kind::send_commit:
        case fsm_action::kind::send_watch: return;  // (a holder extends: it never fences nor waits)
        case fsm_action::kind::wait_until: c_->deadlines.schedule(*this, a.until); return;
        case fsm_action::kind::send_attempt:
            ext_.stop();  // the previous extension may still be hearing from its last masters
            ext_id_ = a.round_id;
            c_->deadlines.schedule(*this, a.until);  // while it runs: the end of validity
            ext_.start(*c_, row_of(base_->kind).extend, base_->extend_span(), base_->token,
                       ttl().count(), a.deadline - a.at, this, nullptr, nullptr, a.deadline, a.at);
            return;
        case fsm_action::kind::send_release:
            c_->deadlines.cancel(*this);
            ext_.stop();
            rel_id_ = a.round_id;
            rel_.start_release(*c_, *base_, a.deadline - a.at, this, a.deadline, a.at);
            return;
        case fsm_action::kind::complete:
            c_->deadlines.cancel(*this);
            ext_.stop();
            rel_.stop();
            complete_release_waiters(a.ec);
            c_->untrack(*this);
            return;
        }
    }

    // What the machine's step means to the world: the accessors' copies, the events, the
    // holder's work (loss signal, on_degraded).
    // The identity the held lock publishes, for its events.
    std::string_view identity() const noexcept { return split_value(base_->token).identity; }

    void tell(const hold_notice& n)
    {
        switch (n.type)
        {
        case hold_notice::kind::extended:
        {
            std::lock_guard g(m_);
            valid_until_ = n.valid_until;
            extensions_ = n.extensions;
        }
            base_->claim().valid_until = n.valid_until;
            if (c_->observed())
                c_->report(event_kind::extended, base_->resource, {}, identity());
            return;
        case hold_notice::kind::extend_failed:
            if (c_->observed())
                c_->report(event_kind::extend_failed, base_->resource, n.ec, identity());
            return;
        case hold_notice::kind::lost:
            base_->claim().over = true;  // never handed over now
            if (c_->observed())
                c_->report(event_kind::lost, base_->resource, n.ec, identity());
            set_status(n.ec);
            asio::post(work_ex_, [self = shared_from_this()] {
                self->loss_.emit(asio::cancellation_type::terminal);
            });
            return;
        case hold_notice::kind::degraded:
        {
            std::lock_guard g(m_);
            holding_ = n.holding;
        }
            if (c_->observed())
            {
                event e;
                e.kind = event_kind::degraded;
                e.resource = base_->resource;
                e.identity = identity();
                e.granted = n.holding;
                c_->report(e);
            }
            if (o_.on_degraded)
                asio::post(work_ex_, [fn = o_.on_degraded, holding = n.holding,
                                      masters = c_->size()] { fn(holding, masters); });
            return;
        case hold_notice::kind::released:
            if (c_->observed())
                c_->report(n.ec ? event_kind::release_failed : event_kind::released,
                           base_->resource, n.ec, identity());
            return;
        }
    }

    void on_deadline() override
    {
        // The machine's wait is over (or the client is closing: expire_all).
        auto keep = hold();  // the deadline list does not own its entries
        const auto now = clock::now();
        drive(c_->closed ? fsm_event::closed(now) : fsm_event::backoff_elapsed(now));
    }

    // The machine decides: it is told each outcome as it comes, and the round's end.
    void on_round_outcome(round& r, std::size_t i) override
    {
        // The time is now: the extension's validity is judged by it.
        const auto id = &r == &ext_ ? ext_id_ : rel_id_;
        if (c_->closed) [[unlikely]]
            drive(outcome_events(r, i, true, id, clock::now()));
        else
            drive(outcome_event(r, i, id, clock::now()));
        if (&r == &ext_)
            return;
        if (fsm_ && fsm_->release_outcomes().state() != quorum_state::undecided)
            r.decided();  // a yielded hand-off's notice need not wait for the slowest master
    }

    void on_round_finished(round& r) override
    {
        drive(ended_events(c_->closed, &r == &ext_ ? ext_id_ : rel_id_, clock::now()));
    }

    void set_status(error_code ec)
    {
        std::lock_guard g(m_);
        if (!status_)
            status_ = ec;
    }

    void complete_release_waiters(error_code ec)
    {
        auto waiters = std::move(release_waiters_);
        release_waiters_.clear();
        for (auto& w : waiters)
            dispatch_completion(w.handler, c_->strand, ec);
    }

public:
    std::uint64_t next_waiter_id() noexcept { return ++waiter_ids_; }

    // A cancelled async_release: its waiter completes with operation_aborted at once; the
    // release goes on (it is what frees the lock for others).
    void cancel_release_waiter(std::uint64_t id)
    {
        const auto it = std::find_if(release_waiters_.begin(), release_waiters_.end(),
                                     [id](const release_waiter& w) { return w.id == id; });
        if (it == release_waiters_.end())
            return;  // completed already
        auto handler = std::move(it->handler);
        release_waiters_.erase(it);
        dispatch_completion(handler, c_->strand, error_code(asio::error::operation_aborted));
    }

private:
    std::shared_ptr<op_context> c_;
    std::shared_ptr<const lock_state> base_;
    hold_options o_;
    asio::any_io_executor work_ex_;
    asio::cancellation_signal loss_;
    std::optional<hold_fsm> fsm_;
    fsm_pump pump_;
    round ext_;
    round rel_;
    std::uint64_t ext_id_ = 0;
    std::uint64_t rel_id_ = 0;
    clock::time_point acquired_at_;
    struct release_waiter
    {
        std::uint64_t id;
        asio::any_completion_handler<void(error_code)> handler;
    };
    // A list: a cancelled waiter is erased from the middle, and Boost 1.81's
    // any_completion_handler must not be move-assigned (its operator= copies from an lvalue,
    // which wraps the handler in itself without end), as vector::erase would.
    std::list<release_waiter> release_waiters_;
    std::atomic<std::uint64_t> waiter_ids_{0};  // numbered on the caller's thread

    mutable std::mutex m_;  // guards what the accessors read from other threads
    clock::time_point valid_until_;
    std::uint32_t extensions_ = 0;
    std::size_t holding_;  // every master, until an extension says otherwise
    error_code status_;
};

}  // namespace redlock::detail

#endif
