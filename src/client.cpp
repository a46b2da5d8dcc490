// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/client.hpp>

#include <algorithm>
#include <mutex>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/backoff.hpp"
#include "algorithm/validity.hpp"
#include "client_impl.hpp"
#include "detail/completion.hpp"
#include "detail/lock_state.hpp"
#include "detail/strand.hpp"
#include "operation/acquire_op.hpp"
#include "operation/release_verdict.hpp"
#include "round.hpp"
#include "transport/master_identity.hpp"

namespace redlock {

namespace asio = boost::asio;

namespace detail {

namespace {

using clock = std::chrono::steady_clock;

// Connects a per-operation cancellation slot to `op->cancel()`, run on the client's strand.
// Called in the initiating function, on the caller's thread: a signal emitted as soon as the
// initiating function has returned must reach the operation, and the slot must not be touched
// from the strand while the caller may emit on it.
//
// The slot is never cleared by the operation: the caller emits on its own executor, and a
// clear() from the client's strand would race with that emit (TSan found it). As with Asio's
// own operations, the handler stays installed until the caller's next operation on the slot
// replaces it or the signal is destroyed; it holds only weak references, so it may outlive the
// operation, the client and the io_context, and an emit after completion does nothing.
template <class Op>
void connect_cancellation(asio::cancellation_slot slot, const std::shared_ptr<Op>& op,
                          const std::shared_ptr<client_impl>& c)
{
    if (!slot.is_connected())
        return;
    slot.assign([op = std::weak_ptr<Op>(op), client = std::weak_ptr<client_impl>(c)](asio::cancellation_type) {
        auto impl = client.lock();
        if (!impl)
            return;
        // The signal may be emitted on another thread: hop onto the strand.
        asio::dispatch(impl->strand, [op] {
            if (auto self = op.lock())
                self->cancel();
        });
    });
}

// ---- release --------------------------------------------------------------------------------

class unlock_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<unlock_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code)>;

    unlock_op(std::shared_ptr<client_impl> c, lock l, handler h)
        : c_(std::move(c)), l_(std::move(l)), h_(std::move(h))
    {}

    void start()
    {
        if (done_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        if (!st || st->token.empty())
            return finish(error::invalid_argument, true);
        if (c_->closed)
            return finish(error::connection_closed, true);
        c_->track(*this, shared_from_this());
        initiating_ = true;
        release_.start(*c_, round::kind::release, st->key_span(), st->token, {},
                       c_->cfg.defaults.release_timeout, this);
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        release_.stop();
        finish(asio::error::operation_aborted, false);
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        release_.stop();
        done_ = true;
    }

private:
    // The release completes as soon as a quorum has deleted the key, provided the delete to
    // every other master has already left this process: from then on no other client can be
    // refused the lock for our sake (the keys left on the slower masters cannot make a
    // majority), and those masters execute their delete even if the client is closed at once.
    // The round goes on without the caller: a NOSCRIPT among them still gets its EVAL, and the
    // operation stays alive until every awaited master has answered or the release deadline
    // has passed. When a delete is still queued in the client, the release completes as
    // before, once every master has answered.
    void on_round_decided(round& r) override
    {
        if (!done_ && r.tracker().state() == quorum_state::reached && r.runs_without_us())
            finish({}, initiating_);
    }

    void on_round_finished(round& r) override
    {
        if (done_)
        {
            c_->untrack(*this);  // the background part of an early completion is over
            return;
        }
        finish(release_verdict(r.tracker(), c_->closed), initiating_);
    }

    void finish(error_code ec, bool immediate)
    {
        done_ = true;
        // An early completion (see on_round_decided) stays tracked, and alive, until its round
        // has finished in the background; a completion inline in the handler's dispatch must
        // not find the operation gone, hence the hold.
        auto keep = hold();
        if (immediate)
            post_completion(h_, c_->strand, ec);
        else
            dispatch_completion(h_, c_->strand, ec);
        if (!release_.active())
            c_->untrack(*this);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    handler h_;
    round release_;
    bool done_ = false;
    bool initiating_ = false;
};

// ---- extension ------------------------------------------------------------------------------

class extend_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<extend_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, lock)>;

    extend_op(std::shared_ptr<client_impl> c, lock l, std::chrono::milliseconds ttl, handler h)
        : c_(std::move(c)), l_(std::move(l)), ttl_(ttl), h_(std::move(h))
    {}

    void start()
    {
        if (done_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        lock_options o = c_->cfg.defaults;
        o.ttl = ttl_;
        error_code vec;
        std::string why;
        validate(o, vec, why);
        if (!st || st->token.empty() || vec)
            return finish(error::invalid_argument, {}, true);
        if (c_->closed)
            return finish(error::connection_closed, {}, true);
        c_->track(*this, shared_from_this());
        initiating_ = true;
        extend_.start(*c_, round::kind::extend, st->key_span(), st->token, ttl_,
                      attempt_timeout_of(o), this);
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        extend_.stop();
        release_.stop();
        finish(asio::error::operation_aborted, {}, false);
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        extend_.stop();
        release_.stop();
        done_ = true;
    }

private:
    void on_round_decided(round& r) override
    {
        if (&r != &extend_)
            return;
        const auto& q = r.tracker();
        const auto& st = access::state(l_);
        if (q.state() == quorum_state::reached)
        {
            const auto drift = c_->cfg.defaults.drift_factor;
            if (remaining_validity(ttl_, clock::now() - r.started(), drift) > clock::duration::zero())
            {
                extend_.stop();
                auto ns = std::make_shared<lock_state>(*st);
                ns->valid_until = validity_deadline(r.started(), ttl_, drift);
                ns->ttl = ttl_;
                ns->masters = extend_.take_diagnostics();
                return finish({}, access::make(std::move(ns)), initiating_);
            }
            reason_ = error::validity_expired;
        }
        else
        {
            reason_ = error::lock_lost;
        }
        // The lock is gone: release what is still ours so that it does not linger until TTL.
        extend_.stop();
        diagnostics_ = extend_.diagnostics();
        release_.start(*c_, round::kind::release, st->key_span(), st->token, {},
                       c_->cfg.defaults.release_timeout, this, &extend_.tracker());
    }

    void on_round_finished(round& r) override
    {
        if (&r != &release_)
            return;
        finish(c_->closed ? error_code(error::connection_closed) : reason_,
               access::make(access::state(l_)->unheld(std::move(diagnostics_))), initiating_);
    }

    void finish(error_code ec, lock result, bool immediate)
    {
        done_ = true;
        if (!access::state(result))
            result = l_;
        if (immediate)
            post_completion(h_, c_->strand, ec, std::move(result));
        else
            dispatch_completion(h_, c_->strand, ec, std::move(result));
        c_->untrack(*this);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    std::chrono::milliseconds ttl_;
    handler h_;
    round extend_;
    round release_;
    error_code reason_;
    std::vector<master_diagnostic> diagnostics_;
    bool done_ = false;
    bool initiating_ = false;
};

// ---- check ----------------------------------------------------------------------------------

class check_op final : public round_listener, public tracked_op, public std::enable_shared_from_this<check_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, check_result)>;

    check_op(std::shared_ptr<client_impl> c, lock l, handler h)
        : c_(std::move(c)), l_(std::move(l)), h_(std::move(h))
    {}

    void start()
    {
        if (done_)
            return;  // cancelled before it started
        const auto& st = access::state(l_);
        if (!st || st->token.empty())
            return finish(error::invalid_argument, {}, true);
        if (c_->closed)
            return finish(error::connection_closed, {}, true);
        c_->track(*this, shared_from_this());
        initiating_ = true;
        lock_options o = c_->cfg.defaults;
        if (st->ttl.count() > 0)
            o.ttl = st->ttl;
        check_.start(*c_, round::kind::check, st->key_span(), st->token, {},
                     attempt_timeout_of(o), this);
        initiating_ = false;
    }

    void cancel()
    {
        if (done_)
            return;
        check_.stop();
        finish(asio::error::operation_aborted, {}, false);
    }

    std::shared_ptr<void> hold() override { return shared_from_this(); }

    void abandon() noexcept override
    {
        check_.stop();
        done_ = true;
    }

private:
    void on_round_decided(round&) override {}

    void on_round_finished(round& r) override
    {
        check_result res;
        res.holding = r.tracker().granted();
        for (std::size_t i = 0; i < c_->size(); ++i)
        {
            const auto v = r.value(i);
            if (v >= 0 && (res.min_pttl.count() < 0 || v < res.min_pttl.count()))
                res.min_pttl = std::chrono::milliseconds(v);
        }
        res.masters = r.diagnostics();
        finish({}, std::move(res), initiating_);
    }

    void finish(error_code ec, check_result res, bool immediate)
    {
        done_ = true;
        if (immediate)
            post_completion(h_, c_->strand, ec, std::move(res));
        else
            dispatch_completion(h_, c_->strand, ec, std::move(res));
        c_->untrack(*this);
    }

    std::shared_ptr<client_impl> c_;
    lock l_;
    handler h_;
    round check_;
    bool done_ = false;
    bool initiating_ = false;
};

}  // namespace

// ---- client_registry ------------------------------------------------------------------------

/// A service of each execution context that clients are made on: on the context's shutdown
/// (its destruction, with or without work outstanding), every client still alive abandons its
/// operations in flight, so that they and their handlers are destroyed as Asio destroys its own
/// pending handlers (see tracked_op).
class client_registry final : public asio::execution_context::service
{
public:
    static asio::execution_context::id id;

    explicit client_registry(asio::execution_context& ctx) : service(ctx) {}

    void add(client_impl* c)
    {
        std::lock_guard g(m_);
        clients_.push_back(c);
    }

    void remove(client_impl* c) noexcept
    {
        std::lock_guard g(m_);
        std::erase(clients_, c);
    }

private:
    void shutdown() override
    {
        // No thread runs the context any more. A client whose last reference is being dropped
        // cannot be locked; its destructor waits for the mutex to remove itself, so the
        // pointer stays valid while it is held.
        std::vector<std::shared_ptr<client_impl>> live;
        {
            std::lock_guard g(m_);
            for (auto* c : clients_)
                if (auto p = c->weak_from_this().lock())
                    live.push_back(std::move(p));
        }
        for (auto& c : live)
            c->abandon_all();
    }

    std::mutex m_;
    std::vector<client_impl*> clients_;
};

asio::execution_context::id client_registry::id;

// ---- client_impl ----------------------------------------------------------------------------

client_impl::client_impl(asio::any_io_executor ex, client_config c, std::vector<master_config> masters)
    : strand(make_strand_of(ex)), cfg(std::move(c)), deadlines(strand),
      registry_(&asio::use_service<client_registry>(asio::query(ex, asio::execution::context)))
{
    conns.reserve(masters.size());
    for (auto& m : masters)
        conns.push_back(std::make_shared<node_connection>(strand, std::move(m), cfg.connection));
    registry_->add(this);
}

client_impl::~client_impl() { registry_->remove(this); }

void client_impl::track(tracked_op& op, std::shared_ptr<void> self) noexcept
{
    if (op.self_)
        return;
    op.self_ = std::move(self);
    op.prev_ = nullptr;
    op.next_ = ops_;
    if (ops_)
        ops_->prev_ = &op;
    ops_ = &op;
}

void client_impl::untrack(tracked_op& op) noexcept
{
    if (!op.self_)
        return;
    (op.prev_ ? op.prev_->next_ : ops_) = op.next_;
    if (op.next_)
        op.next_->prev_ = op.prev_;
    op.prev_ = op.next_ = nullptr;
    // Last: dropping the reference may destroy the operation, and with it this client.
    auto self = std::move(op.self_);
}

void client_impl::abandon_all() noexcept
{
    closed = true;
    while (ops_)
    {
        tracked_op& op = *ops_;
        op.abandon();
        untrack(op);
    }
    // What waits for a connection to settle (async_wait_connected) holds the client: let go.
    for (auto& c : conns)
        c->abandon_waiters();
    // No handler runs any more, but what the connections sent or queued (releases that have
    // completed at the quorum) must still reach every master: drained here, synchronously,
    // within the connections' close_timeout (see node_connection::close).
    node_connection::drain_now(conns, clock::now() + cfg.connection.close_timeout);
}

void client_impl::start()
{
    for (auto& c : conns)
        c->start();
}

void client_impl::close()
{
    if (closed)
        return;
    closed = true;
    for (auto& c : conns)
        c->close();
    // Operations waiting for a deadline (a retry delay) complete now, with connection_closed.
    deadlines.expire_all();
}

}  // namespace detail

// ---- client ---------------------------------------------------------------------------------

client::client(executor_type ex, client_config cfg)
{
    if (cfg.masters.empty() && cfg.master_configs.empty())
        throw boost::system::system_error(error::invalid_option,
                                          "client_config::masters and master_configs are empty");
    std::vector<master_config> masters;
    for (const auto& uri : cfg.masters)
    {
        masters.push_back(parse_master_uri(uri));
        if (masters.back().transport == master_config::transport_kind::tls)
            masters.back().tls = cfg.tls;
    }
    for (const auto& m : cfg.master_configs)
    {
        if (m.transport != master_config::transport_kind::unix_socket && (m.host.empty() || m.port == 0))
            throw boost::system::system_error(error::invalid_option,
                                              "client_config::master_configs: entry " +
                                                  std::to_string(masters.size()) + " (" + m.to_string() +
                                                  ") needs a host and a port");
        if (m.transport == master_config::transport_kind::unix_socket && m.path.empty())
            throw boost::system::system_error(error::invalid_option,
                                              "client_config::master_configs: entry " +
                                                  std::to_string(masters.size()) + " needs a socket path");
        masters.push_back(m);
    }
    if (const auto dup = detail::first_duplicate(masters))
    {
        const auto [i, j] = *dup;
        throw boost::system::system_error(
            error::invalid_option, "client_config: masters " + std::to_string(i) + " (" +
                                       masters[i].to_string() + ") and " + std::to_string(j) + " (" +
                                       masters[j].to_string() +
                                       ") are the same server; a quorum needs independent masters");
    }
    error_code ec;
    std::string why;
    cfg.connection.validate(ec, why);
    if (!ec)
        validate(cfg.defaults, ec, why);
    if (ec)
        throw boost::system::system_error(ec, why);
    impl_ = std::make_shared<detail::client_impl>(std::move(ex), std::move(cfg), std::move(masters));
    asio::dispatch(impl_->strand, [impl = impl_] { impl->start(); });
}

client::~client() { close(); }

client::executor_type client::get_executor() const noexcept { return impl_->strand; }

client::executor_type client::make_work_strand() const
{
    return detail::make_strand_of(detail::inner_executor_of(impl_->strand));
}

std::size_t client::size() const noexcept { return impl_->size(); }

const lock_options& client::default_options() const noexcept { return impl_->cfg.defaults; }

void client::close()
{
    asio::dispatch(impl_->strand, [impl = impl_] { impl->close(); });
}

// The operations are made and their cancellation slot connected here, in the initiating
// function (see connect_cancellation); everything else runs on the strand.

void client::async_lock_impl(std::string resource, const lock_options& opts,
                             asio::any_completion_handler<void(error_code, lock)> handler)
{
    auto op = std::make_shared<detail::acquire_op>(impl_, std::move(resource), opts);
    detail::connect_cancellation(asio::get_associated_cancellation_slot(handler), op, impl_);
    asio::dispatch(impl_->strand, [op, h = std::move(handler)]() mutable { op->start(std::move(h)); });
}

void client::async_try_lock_impl(std::string resource, const lock_options& opts,
                                 asio::any_completion_handler<void(error_code, std::optional<lock>)> handler)
{
    auto op = std::make_shared<detail::acquire_op>(impl_, std::move(resource), opts);
    detail::connect_cancellation(asio::get_associated_cancellation_slot(handler), op, impl_);
    asio::dispatch(impl_->strand, [op, h = std::move(handler)]() mutable { op->start(std::move(h)); });
}

void client::async_lock_all_impl(std::vector<std::string> resources, const lock_options& opts,
                                 asio::any_completion_handler<void(error_code, lock)> handler)
{
    auto op = std::make_shared<detail::acquire_op>(impl_, std::move(resources), opts);
    detail::connect_cancellation(asio::get_associated_cancellation_slot(handler), op, impl_);
    asio::dispatch(impl_->strand, [op, h = std::move(handler)]() mutable { op->start(std::move(h)); });
}

void client::async_check_impl(const lock& l, asio::any_completion_handler<void(error_code, check_result)> handler)
{
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<detail::check_op>(impl_, l, std::move(handler));
    detail::connect_cancellation(slot, op, impl_);
    asio::dispatch(impl_->strand, [op] { op->start(); });
}

void client::async_unlock_impl(const lock& l, asio::any_completion_handler<void(error_code)> handler)
{
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<detail::unlock_op>(impl_, l, std::move(handler));
    detail::connect_cancellation(slot, op, impl_);
    asio::dispatch(impl_->strand, [op] { op->start(); });
}

void client::async_extend_impl(const lock& l, std::chrono::milliseconds ttl,
                               asio::any_completion_handler<void(error_code, lock)> handler)
{
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<detail::extend_op>(impl_, l, ttl, std::move(handler));
    detail::connect_cancellation(slot, op, impl_);
    asio::dispatch(impl_->strand, [op] { op->start(); });
}

void client::async_wait_connected_impl(asio::any_completion_handler<void(error_code, std::size_t)> handler)
{
    asio::dispatch(impl_->strand, [impl = impl_, h = std::move(handler)]() mutable {
        struct state
        {
            explicit state(asio::any_completion_handler<void(error_code, std::size_t)> handler)
                : h(std::move(handler))
            {}
            asio::any_completion_handler<void(error_code, std::size_t)> h;
            std::size_t waiting = 0;
            std::size_t ready = 0;
        };
        auto st = std::make_shared<state>(std::move(h));
        st->waiting = impl->conns.size();
        for (auto& c : impl->conns)
        {
            c->wait_settled([impl, st](error_code ec) {
                if (!ec)
                    ++st->ready;
                if (--st->waiting == 0)
                {
                    error_code result = st->ready >= impl->quorum() ? error_code() : error_code(error::no_quorum);
                    detail::dispatch_completion(st->h, impl->strand, result, st->ready);
                }
            });
        }
    });
}

// ---- small helpers of the public types ------------------------------------------------------

void validate(const lock_options& o, error_code& ec, std::string& why)
{
    auto bad = [&](const char* msg) {
        ec = error::invalid_option;
        why = msg;
    };
    ec = {};
    if (o.ttl.count() <= 0)
        return bad("lock_options::ttl must be positive");
    if (o.attempt_timeout.count() < 0)
        return bad("lock_options::attempt_timeout must not be negative");
    if (!(o.drift_factor >= 0.0 && o.drift_factor < 1.0))
        return bad("lock_options::drift_factor must be in [0, 1)");
    if (o.max_attempts < 1)
        return bad("lock_options::max_attempts must be at least 1");
    if (o.retry_delay.count() < 0 || o.retry_jitter.count() < 0)
        return bad("lock_options::retry_delay and retry_jitter must not be negative");
    if (o.max_wait.count() < 0)
        return bad("lock_options::max_wait must not be negative");
    if (o.release_timeout.count() <= 0)
        return bad("lock_options::release_timeout must be positive");
    if (detail::remaining_validity(o.ttl, std::chrono::steady_clock::duration::zero(), o.drift_factor) <=
        std::chrono::steady_clock::duration::zero())
        return bad("lock_options::ttl is not longer than the clock drift allowance");
    if (const auto attempt = detail::attempt_timeout_of(o); attempt > o.ttl)
    {
        ec = error::invalid_option;
        why = "lock_options::attempt_timeout (" + std::to_string(attempt.count()) + " ms" +
              (o.attempt_timeout.count() == 0 ? ", derived from the TTL" : "") +
              ") must not be longer than lock_options::ttl (" + std::to_string(o.ttl.count()) +
              " ms): a grant that arrives at the deadline is already expired";
        return;
    }
}

}  // namespace redlock
