// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/client.hpp>

#include <algorithm>
#include <mutex>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/backoff.hpp"
#include "algorithm/lock_value.hpp"
#include "algorithm/validity.hpp"
#include "config/master_identity.hpp"
#include "driver/acquire_op.hpp"
#include "driver/check_op.hpp"
#include "driver/client_impl.hpp"
#include "driver/extend_op.hpp"
#include "driver/holders_op.hpp"
#include "driver/next_holders_op.hpp"
#include "driver/round.hpp"
#include "driver/unlock_op.hpp"
#include "runtime/completion.hpp"
#include "runtime/lock_state.hpp"
#include "runtime/recycling_allocator.hpp"
#include "runtime/strand.hpp"

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
    slot.assign([op = std::weak_ptr<Op>(op),
                 client = std::weak_ptr<client_impl>(c)](asio::cancellation_type) {
        auto impl = client.lock();
        if (!impl)
            return;
        // Posted, never run inside emit(): the operation's completion may follow from its
        // cancellation, and a completion inside the caller's emit() would resume the caller
        // (a coroutine, say) in the middle of its own call, as no Asio operation does. Posted
        // also because the signal may be emitted on another thread.
        asio::post(impl->strand, [op] {
            if (auto self = op.lock())
                self->cancel();
        });
    });
}

}  // namespace

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
        const auto entry = "client_config::master_configs: entry " + std::to_string(masters.size());
        if (m.is_cluster())
        {
            // A cluster master: its seeds say where it is; one database, no Unix socket.
            const char* wrong =
                m.transport == master_config::transport_kind::unix_socket
                    ? "a cluster is reached over TCP or TLS, not a Unix socket"
                : m.db != 0 ? "a Redis Cluster has only database 0"
                : std::any_of(m.cluster_seeds.begin(), m.cluster_seeds.end(),
                              [](const auto& s) { return s.host.empty() || s.port == 0; })
                    ? "every cluster seed needs a host and a port"
                    : nullptr;
            if (wrong)
                throw boost::system::system_error(error::invalid_option,
                                                  entry + " (" + m.to_string() + "): " + wrong);
            masters.push_back(m);
            continue;
        }
        if (m.transport != master_config::transport_kind::unix_socket &&
            (m.host.empty() || m.port == 0))
            throw boost::system::system_error(error::invalid_option,
                                              "client_config::master_configs: entry " +
                                                  std::to_string(masters.size()) + " (" +
                                                  m.to_string() + ") needs a host and a port");
        if (m.transport == master_config::transport_kind::unix_socket && m.path.empty())
            throw boost::system::system_error(
                error::invalid_option, "client_config::master_configs: entry " +
                                           std::to_string(masters.size()) + " needs a socket path");
        masters.push_back(m);
    }
    if (const auto dup = detail::first_duplicate(masters))
    {
        const auto [i, j] = *dup;
        throw boost::system::system_error(
            error::invalid_option, "client_config: masters " + std::to_string(i) + " (" +
                                       masters[i].to_string() + ") and " + std::to_string(j) +
                                       " (" + masters[j].to_string() +
                                       ") are the same server; a quorum needs independent masters");
    }
    error_code ec;
    std::string why;
    cfg.connection.validate(ec, why);
    if (!ec)
        validate(cfg.defaults, ec, why);
    if (ec)
        throw boost::system::system_error(ec, why);
    if (cfg.cluster_replica_acks > 16)
        throw boost::system::system_error(
            error::invalid_option, "client_config::cluster_replica_acks (" +
                                       std::to_string(cfg.cluster_replica_acks) + ") is above 16");
    if (cfg.handover_write_delay < std::chrono::microseconds(0) ||
        cfg.handover_write_delay > std::chrono::milliseconds(10))
        throw boost::system::system_error(error::invalid_option,
                                          "client_config::handover_write_delay (" +
                                              std::to_string(cfg.handover_write_delay.count()) +
                                              " us) is outside 0 .. 10 ms");
    if (cfg.cluster_replica_ack_timeout < std::chrono::milliseconds(1) ||
        cfg.cluster_replica_ack_timeout > std::chrono::seconds(10))
        throw boost::system::system_error(
            error::invalid_option, "client_config::cluster_replica_ack_timeout (" +
                                       std::to_string(cfg.cluster_replica_ack_timeout.count()) +
                                       " ms) is outside 1 ms .. 10 s");
    // A WAIT holds up its connection: past the health check's timeout the connection would be
    // dropped, every time a shard's replicas are gone. A server ends a WAIT that cannot be met
    // at its next tick after the timeout (100 ms at hz 10): that much room is asked for.
    if (cfg.cluster_replica_acks != 0 && cfg.connection.health_check_timeout.count() != 0 &&
        cfg.cluster_replica_ack_timeout + std::chrono::milliseconds(100) >=
            cfg.connection.health_check_timeout)
        throw boost::system::system_error(
            error::invalid_option,
            "client_config::cluster_replica_ack_timeout (" +
                std::to_string(cfg.cluster_replica_ack_timeout.count()) +
                " ms) must end, with the server's tick of 100 ms, before "
                "connection.health_check_timeout (" +
                std::to_string(cfg.connection.health_check_timeout.count()) +
                " ms): a WAIT holds up its connection, which the health check would then drop");
    impl_ =
        std::make_shared<detail::client_impl>(std::move(ex), std::move(cfg), std::move(masters));
    asio::dispatch(impl_->strand, [impl = impl_] { impl->start(); });
}

client::~client() { close(); }

client::executor_type client::get_executor() const noexcept { return impl_->strand; }

std::size_t client::size() const noexcept { return impl_->size(); }

std::vector<master_info> client::master_states() const
{
    // masters is fixed at construction; each master publishes what info() reads.
    std::vector<master_info> out;
    out.reserve(impl_->masters.size());
    for (std::size_t i = 0; i < impl_->masters.size(); ++i)
    {
        out.push_back(impl_->masters[i]->info());
        out.back().index = i;
    }
    return out;
}

const lock_options& client::default_options() const noexcept { return impl_->cfg.defaults; }

void client::close()
{
    asio::dispatch(impl_->strand, [impl = impl_] { impl->close(); });
}

// The operations are made and their cancellation slot connected here, in the initiating
// function (see connect_cancellation); everything else runs on the strand.

asio::any_io_executor detail::executor_of(const client& c) noexcept { return c.get_executor(); }

asio::any_io_executor detail::make_work_strand(const client& c)
{
    return make_strand_of(inner_executor_of(client_access::impl(c)->strand));
}

void detail::start_lock(client& self, std::string resource, const lock_options& opts,
                        asio::any_completion_handler<void(error_code, lock)> handler)
{
    const auto& c = client_access::impl(self);
    auto op = make_recycled<acquire_op>(c, std::move(resource), opts);
    connect_cancellation(asio::get_associated_cancellation_slot(handler), op, c);
    asio::dispatch(c->strand, [op, h = std::move(handler)]() mutable { op->start(std::move(h)); });
}

void detail::start_try_lock(
    client& self, std::string resource, const lock_options& opts,
    asio::any_completion_handler<void(error_code, std::optional<lock>)> handler)
{
    const auto& c = client_access::impl(self);
    auto op = make_recycled<acquire_op>(c, std::move(resource), opts);
    connect_cancellation(asio::get_associated_cancellation_slot(handler), op, c);
    asio::dispatch(c->strand, [op, h = std::move(handler)]() mutable { op->start(std::move(h)); });
}

void detail::start_lock_all(client& self, std::vector<std::string> resources,
                            const lock_options& opts,
                            asio::any_completion_handler<void(error_code, lock)> handler)
{
    const auto& c = client_access::impl(self);
    auto op = make_recycled<acquire_op>(c, std::move(resources), opts);
    connect_cancellation(asio::get_associated_cancellation_slot(handler), op, c);
    asio::dispatch(c->strand, [op, h = std::move(handler)]() mutable { op->start(std::move(h)); });
}

void detail::start_check(client& self, const lock& l,
                         asio::any_completion_handler<void(error_code, check_result)> handler)
{
    const auto& c = client_access::impl(self);
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<check_op>(c, l, std::move(handler));
    connect_cancellation(slot, op, c);
    asio::dispatch(c->strand, [op] { op->start(); });
}

void detail::start_holders(client& self, std::string resource, const lock_options& opts,
                           asio::any_completion_handler<void(error_code, holders_result)> handler)
{
    const auto& c = client_access::impl(self);
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<holders_op>(c, std::move(resource), opts, std::move(handler));
    connect_cancellation(slot, op, c);
    asio::dispatch(c->strand, [op] { op->start(); });
}

void detail::start_next_holders(
    client& self, std::string resource, const lock_options& opts, std::vector<holder_info> seen,
    bool seen_decided, std::chrono::milliseconds reread_every,
    asio::any_completion_handler<void(error_code, holders_result)> handler)
{
    const auto& c = client_access::impl(self);
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<next_holders_op>(c, std::move(resource), opts, signature_of(seen),
                                                seen_decided, reread_every, std::move(handler));
    connect_cancellation(slot, op, c);
    asio::dispatch(c->strand, [op] { op->start(); });
}

void detail::start_unlock(client& self, const lock& l,
                          asio::any_completion_handler<void(error_code)> handler)
{
    const auto& c = client_access::impl(self);
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = make_recycled<unlock_op>(c, l, std::move(handler));
    connect_cancellation(slot, op, c);
    asio::dispatch(c->strand, [op] { op->start(); });
}

void detail::start_extend(client& self, const lock& l, std::chrono::milliseconds ttl,
                          asio::any_completion_handler<void(error_code, lock)> handler)
{
    const auto& c = client_access::impl(self);
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<extend_op>(c, l, ttl, std::move(handler));
    connect_cancellation(slot, op, c);
    asio::dispatch(c->strand, [op] { op->start(); });
}

namespace detail {
namespace {

// async_wait_connected: counts the masters whose first connection attempt has settled.
// Cancelled (any type), it completes at once with operation_aborted and the masters ready
// so far; the connections go on.
class wait_connected_op : public std::enable_shared_from_this<wait_connected_op>
{
public:
    using handler_type = asio::any_completion_handler<void(error_code, std::size_t)>;

    wait_connected_op(std::shared_ptr<client_impl> c, handler_type h)
        : c_(std::move(c)),
          h_(std::move(h))
    {}

    void start()
    {
        waiting_ = c_->masters.size();
        for (auto& m : c_->masters)
            m->wait_settled([self = shared_from_this()](error_code ec) { self->settled(ec); });
    }

    void cancel() { finish(asio::error::operation_aborted); }

private:
    void settled(error_code ec)
    {
        if (!ec)
            ++ready_;
        if (--waiting_ == 0)
            finish(ready_ >= c_->quorum() ? error_code() : error_code(error::no_quorum));
    }

    void finish(error_code ec)
    {
        if (done_)
            return;
        done_ = true;
        dispatch_completion(h_, c_->strand, ec, ready_);
    }

    std::shared_ptr<client_impl> c_;
    handler_type h_;
    std::size_t waiting_ = 0;
    std::size_t ready_ = 0;
    bool done_ = false;
};

}  // namespace
}  // namespace detail

void detail::start_wait_connected(
    client& self, asio::any_completion_handler<void(error_code, std::size_t)> handler)
{
    const auto& c = client_access::impl(self);
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto op = std::make_shared<wait_connected_op>(c, std::move(handler));
    connect_cancellation(slot, op, c);
    asio::dispatch(c->strand, [op] { op->start(); });
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
    if (o.wait.count() < 0)
        return bad("lock_options::wait must not be negative");
    if (o.release_timeout.count() <= 0)
        return bad("lock_options::release_timeout must be positive");
    if (o.permits < 1 || o.permits > 1024)
        return bad("lock_options::permits must be in [1, 1024]");
    if (o.permits > 1 && o.fencing)
        return bad("lock_options::fencing is for a mutex: not with permits > 1");
    if (o.role != lock_role::mutex && o.role != lock_role::reader && o.role != lock_role::writer)
        return bad("lock_options::role must be mutex, reader or writer");
    if (o.role != lock_role::mutex && o.permits > 1)
        return bad("lock_options::role: a read-write lock has no permits");
    if (o.role == lock_role::reader && o.fencing)
        return bad("lock_options::fencing is for exclusive holders (a mutex, a writer): a reader "
                   "shares the lock with other readers, and a fencing token orders holders that "
                   "exclude each other");
    // (Most acquisitions publish no identity: nothing to check, no string made.)
    if (!o.identity.empty())
        if (auto problem = detail::identity_problem(o.identity.view(), o.identity.size());
            !problem.empty())
        {
            ec = error::invalid_option;
            why = std::move(problem);
            return;
        }
    if (detail::remaining_validity(o.ttl, std::chrono::steady_clock::duration::zero(),
                                   o.drift_factor) <= std::chrono::steady_clock::duration::zero())
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
