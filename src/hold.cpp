// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/client.hpp>
#include <redlock/hold.hpp>

#include <mutex>
#include <optional>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "algorithm/validity.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "operation/release_verdict.hpp"
#include "round.hpp"

namespace redlock {

namespace asio = boost::asio;
namespace detail {

namespace {
using clock = std::chrono::steady_clock;
}

/// @brief The extension coroutine of one held lock, as a small state machine on the client's
/// strand (see lock_holder).
///
/// waiting --(extend time)--> extending --(quorum, validity > 0)--> waiting
///                                      --(failed, a retry fits)--> waiting (retry time)
///                                      --(taken over / no retry fits)--> lost
///            --(limit reached)--> expiring --(valid_until)--> lost
/// any --(release())--> releasing --> done;  lost --> releasing (keys still ours) --> done
///
/// One deadline_list entry serves every phase: the next extension (or retry) time while
/// waiting, the validity end while extending or expiring. Because the list fires every due entry in one
/// handler, the extensions of many locks due at the same time are queued in the same handler
/// turn and leave in one write per master.
class hold_state final : public timed_entry,
                         public round_listener,
                         public tracked_op,
                         public std::enable_shared_from_this<hold_state>
{
public:
    hold_state(std::shared_ptr<client_impl> c, lock l, hold_options o, asio::any_io_executor work_ex)
        : c_(std::move(c)), base_(access::state(l)), o_(o), work_ex_(std::move(work_ex)),
          acquired_at_(clock::now()), valid_until_(l.valid_until())
    {
        ttl_ = base_ && base_->ttl.count() > 0 ? base_->ttl : c_->cfg.defaults.ttl;
        lock_options lo = c_->cfg.defaults;
        lo.ttl = ttl_;
        attempt_timeout_ = lo.attempt_timeout.count() > 0
                               ? lo.attempt_timeout
                               : std::clamp(ttl_ / 20, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
        extend_before_ = o_.extend_before.count() > 0 ? o_.extend_before : std::max(ttl_ / 3, 3 * attempt_timeout_);
    }

    // ---- called on the strand ---------------------------------------------------------------

    void start()
    {
        if (!base_ || base_->token.empty() || clock::now() >= valid_until_)
            return finish_now(error::lock_expired);
        if (c_->closed)
            return finish_now(error::connection_closed);
        c_->track(*this, shared_from_this());
        schedule_next();
    }

    void release(std::optional<asio::any_completion_handler<void(error_code)>> h)
    {
        if (h)
            release_waiters_.emplace_back(std::move(*h));
        if (phase_ == phase::releasing)
            return;
        if (phase_ == phase::done)
        {
            // Already released, or lost and cleaned up: report what happened.
            complete_release_waiters(status() == error::released ? error_code() : error_code(error::lock_lost));
            return;
        }
        set_status(error::released);
        begin_release();
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        ext_.stop();
        rel_.stop();
        c_->deadlines.cancel(*this);
        phase_ = phase::done;
    }

    // ---- read from any thread ---------------------------------------------------------------

    lock current() const
    {
        std::lock_guard g(m_);
        if (!base_)
            return {};
        if (valid_until_ == base_->valid_until)
            return access::make(base_);
        auto st = std::make_shared<lock_state>(*base_);
        st->valid_until = valid_until_;
        st->ttl = ttl_;
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
    enum class phase : std::uint8_t
    {
        idle,
        waiting,
        extending,
        expiring,
        releasing,
        done
    };

    bool limit_reached(clock::time_point now) const
    {
        return (o_.max_extensions > 0 && extensions_ >= o_.max_extensions) ||
               (o_.max_hold.count() > 0 && now - acquired_at_ >= o_.max_hold);
    }

    // No more extensions: the lock runs out at its current validity, and then the holder is
    // told. It keeps its lock until then.
    void expire()
    {
        phase_ = phase::expiring;
        c_->deadlines.schedule(*this, valid_until_);
    }

    void schedule_next()
    {
        const auto now = clock::now();
        if (limit_reached(now))
            return expire();
        phase_ = phase::waiting;
        c_->deadlines.schedule(*this, std::max(now, valid_until_ - extend_before_));
    }

    void on_deadline() override
    {
        if (c_->closed)
            return lose(error::connection_closed);
        switch (phase_)
        {
        case phase::waiting:
        {
            const auto now = clock::now();
            if (now >= valid_until_)
                return lose(error::lock_expired);
            // max_hold may have passed while waiting: no extension is started after it.
            if (limit_reached(now))
                return expire();
            return extend();
        }
        case phase::extending:
            // The validity ran out before an extension succeeded.
            ext_.stop();
            return lose(error::lock_expired);
        case phase::expiring:
            return lose(error::extension_limit);
        default:
            return;
        }
    }

    void extend()
    {
        phase_ = phase::extending;
        if (ext_.active())
            ext_.stop();  // the previous round was still hearing from its last masters
        // While the round runs, the entry stands at the end of validity: the loss deadline.
        c_->deadlines.schedule(*this, valid_until_);
        ext_.start(*c_, round::kind::extend, base_->key_span(), base_->token, ttl_,
                   attempt_timeout_, this, nullptr, valid_until_);
    }

    void on_round_decided(round& r) override
    {
        if (&r != &ext_ || phase_ != phase::extending)
            return;
        const auto& q = r.tracker();
        const auto drift = c_->cfg.defaults.drift_factor;
        if (q.state() == quorum_state::reached &&
            remaining_validity(ttl_, clock::now() - r.started(), drift) > clock::duration::zero())
        {
            // The round goes on in the background until every master answered or its deadline:
            // on_round_finished then counts the masters that hold the lock (degradation).
            if (c_->observed())
                c_->report(event_kind::extended, base_->resource);
            {
                std::lock_guard g(m_);
                // Never move the deadline backwards: a slow extension may end before the old one.
                valid_until_ = std::max(valid_until_, validity_deadline(r.started(), ttl_, drift));
                ++extensions_;
            }
            c_->deadlines.cancel(*this);
            schedule_next();
            return;
        }
        ext_.stop();
        if (c_->observed())
            c_->report(event_kind::extend_failed, base_->resource,
                       q.state() == quorum_state::reached ? error_code(error::validity_expired)
                                                          : error_code(q.failure_reason()));
        const error_code reason = q.state() == quorum_state::reached ? error_code(error::validity_expired)
                                                                       : error_code(q.failure_reason());
        // The keys hold another token (or are gone) on a majority: the lock was taken over or
        // expired there, and no retry can bring it back.
        if (reason == error::contended)
            return lose(reason);
        // Masters failed or were slow: retry if another round still fits before the end of
        // validity. At most one round per attempt_timeout, and never from inside this callback:
        // a round whose masters' connections are down fails inside round::start, and retrying
        // it at once would recurse (start -> decided -> extend -> start ...) until the stack
        // overflows, flooding the live masters with EVALs on the way.
        const auto retry_at = std::max(clock::now(), r.started() + attempt_timeout_);
        if (retry_at + attempt_timeout_ < valid_until_)
        {
            phase_ = phase::waiting;
            c_->deadlines.schedule(*this, retry_at);
            return;
        }
        lose(reason);
    }

    void on_round_finished(round& r) override
    {
        if (&r == &ext_)
            return count_holding(r.tracker());
        if (&r == &rel_)
        {
            const error_code ec =
                lost_before_release_ ? error_code(error::lock_lost) : release_verdict(r.tracker(), c_->closed);
            if (c_->observed() && !lost_before_release_)
                c_->report(ec ? event_kind::release_failed : event_kind::released, base_->resource, ec);
            phase_ = phase::done;
            complete_release_waiters(ec);
            c_->untrack(*this);
        }
    }

    /// After a successful extension round has heard from every master (or its deadline): how
    /// many hold the lock now. A change is reported (degraded, or back to every master).
    void count_holding(const quorum_tracker& q)
    {
        if (phase_ == phase::releasing || phase_ == phase::done)
            return;
        std::size_t holding = 0;
        for (std::size_t i = 0; i < q.masters(); ++i)
            holding += q.outcome(i) == master_outcome::granted ? 1 : 0;
        {
            std::lock_guard g(m_);
            if (holding == holding_)
                return;
            holding_ = holding;
        }
        if (c_->observed())
        {
            event e;
            e.kind = event_kind::degraded;
            e.resource = base_->resource;
            e.granted = holding;
            c_->report(e);
        }
        if (o_.on_degraded)
            asio::post(work_ex_, [fn = o_.on_degraded, holding, n = q.masters()] { fn(holding, n); });
    }

    void lose(error_code reason)
    {
        if (phase_ == phase::releasing || phase_ == phase::done)
            return;
        if (c_->observed())
            c_->report(event_kind::lost, base_->resource, reason);
        set_status(reason);
        lost_before_release_ = true;
        // Tell the holder's work, on its executor.
        asio::post(work_ex_, [self = shared_from_this()] { self->loss_.emit(asio::cancellation_type::terminal); });
        // Release what may still be ours, so that it does not linger on a minority until TTL.
        begin_release();
    }

    void begin_release()
    {
        c_->deadlines.cancel(*this);
        ext_.stop();
        phase_ = phase::releasing;
        if (c_->closed)
        {
            phase_ = phase::done;
            complete_release_waiters(error::connection_closed);
            c_->untrack(*this);
            return;
        }
        rel_.start(*c_, round::kind::release, base_->key_span(), base_->token, {},
                   c_->cfg.defaults.release_timeout, this);
    }

    void finish_now(error_code reason)
    {
        set_status(reason);
        phase_ = phase::done;
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
            dispatch_completion(w, c_->strand, ec);
    }

    std::shared_ptr<client_impl> c_;
    std::shared_ptr<const lock_state> base_;
    hold_options o_;
    asio::any_io_executor work_ex_;
    asio::cancellation_signal loss_;
    round ext_;
    round rel_;
    std::chrono::milliseconds ttl_{0};
    std::chrono::milliseconds attempt_timeout_{0};
    std::chrono::milliseconds extend_before_{0};
    clock::time_point acquired_at_;
    phase phase_ = phase::idle;
    bool lost_before_release_ = false;
    std::vector<asio::any_completion_handler<void(error_code)>> release_waiters_;

    mutable std::mutex m_;  // guards what the accessors read from other threads
    clock::time_point valid_until_;
    std::uint32_t extensions_ = 0;
    std::size_t holding_ = c_->size();  // until an extension says otherwise
    error_code status_;
};

}  // namespace detail

// ---- lock_holder ----------------------------------------------------------------------------

lock_holder::lock_holder(client& c, lock l, hold_options o)
    : lock_holder(c, std::move(l), o, c.get_executor())
{}

lock_holder::lock_holder(client& c, lock l, hold_options o, executor_type work_executor)
    : s_(std::make_shared<detail::hold_state>(c.impl_, std::move(l), o, std::move(work_executor)))
{
    asio::dispatch(s_->strand(), [s = s_] { s->start(); });
}

lock_holder::lock_holder(lock_holder&&) noexcept = default;

lock_holder& lock_holder::operator=(lock_holder&& other) noexcept
{
    if (this != &other)
    {
        release();
        s_ = std::move(other.s_);
    }
    return *this;
}

lock_holder::~lock_holder() { release(); }

lock lock_holder::current() const { return s_ ? s_->current() : lock(); }
bool lock_holder::held() const { return s_ && s_->held(); }
error_code lock_holder::status() const { return s_ ? s_->status() : error_code(error::invalid_argument); }
std::uint32_t lock_holder::extensions() const { return s_ ? s_->extensions() : 0; }

std::size_t lock_holder::masters_holding() const { return s_ ? s_->holding() : 0; }

asio::cancellation_slot lock_holder::loss_slot()
{
    return s_ ? s_->loss_slot() : asio::cancellation_slot();
}

void lock_holder::release() noexcept
{
    if (!s_)
        return;
    try
    {
        asio::dispatch(s_->strand(), [s = s_] { s->release(std::nullopt); });
    }
    catch (...)
    {
        // Only an allocation failure can get here; the keys then expire by their TTL.
    }
}

void lock_holder::async_release_impl(asio::any_completion_handler<void(error_code)> handler)
{
    if (!s_)
    {
        // Nothing to release; complete through the handler's own executor, never inline.
        detail::post_completion(handler, asio::any_io_executor(asio::system_executor()),
                                error_code(error::invalid_argument));
        return;
    }
    asio::dispatch(s_->strand(), [s = s_, h = std::move(handler)]() mutable { s->release(std::move(h)); });
}

}  // namespace redlock
