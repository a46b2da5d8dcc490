// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The shared state of a client: its connections, the operations in flight, and the service
// that lets them go when the execution context shuts down.
#include "client_impl.hpp"

#include <algorithm>
#include <mutex>

#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/query.hpp>

#include "detail/strand.hpp"

namespace redlock::detail {

namespace {
using clock = std::chrono::steady_clock;
}

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
    scripts.resize(conns.size());
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
    if (cfg.on_event)
    {
        for (std::size_t i = 0; i < conns.size(); ++i)
        {
            conns[i]->on_availability([weak = weak_from_this(), i](bool up, error_code ec) {
                if (auto self = weak.lock())
                {
                    event e;
                    e.kind = up ? event_kind::master_up : event_kind::master_down;
                    e.master = i;
                    e.ec = ec;
                    self->report(e);
                }
            });
        }
    }
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

}  // namespace redlock::detail
