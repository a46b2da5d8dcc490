// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The shared state of a client: its connections and the operations in flight, let go when the
// execution context shuts down (detail/op_registry.hpp).
#include "driver/client_impl.hpp"

#include <algorithm>
#include <mutex>

#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/query.hpp>

#include "routing/cluster_master.hpp"
#include "routing/make_link.hpp"
#include "runtime/strand.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

namespace {
using clock = std::chrono::steady_clock;
}

// ---- client_impl ----------------------------------------------------------------------------

client_impl::client_impl(asio::any_io_executor ex, client_config c,
                         std::vector<master_config> configs)
    : op_context(make_strand_of(ex), std::move(c)),
      registry_(&shutdown_registry::of(ex))
{
    masters.reserve(configs.size());
    for (auto& m : configs)
    {
        if (m.is_cluster())
        {
            add_master(make_cluster_link(std::make_shared<cluster_master>(
                strand, std::move(m), cfg.connection,
                cluster_master::write_acks{cfg.cluster_replica_acks,
                                           cfg.cluster_replica_ack_timeout})));
        }
        else
        {
            auto node = std::make_shared<node_connection>(strand, std::move(m), cfg.connection);
            node->set_lazy_write_delay(cfg.handover_write_delay);
            add_master(make_standalone_link(std::move(node)));
        }
    }
    registry_->add(this);
}

client_impl::~client_impl() { registry_->remove(this); }

void client_impl::on_shutdown() noexcept
{
    closed = true;
    abandon_all();
    // What waits for a connection to settle (async_wait_connected) holds the client: let go.
    for (auto& m : masters)
        m->abandon_waiters();
    // No handler runs any more, but what the connections sent or queued (releases that have
    // completed at the quorum) must still reach every master: drained here, synchronously,
    // within the connections' close_timeout (see node_connection::close).
    std::vector<std::shared_ptr<node_connection>> conns;
    for (const auto& m : masters)
        m->append_connections(conns);
    node_connection::drain_now(conns, clock::now() + cfg.connection.close_timeout);
}

void client_impl::start()
{
    if (cfg.restart_quarantine.count() != 0)
    {
        // Called by a connection after each handshake, before it is ready.
        for (std::size_t i = 0; i < masters.size(); ++i)
            masters[i]->on_identity(
                [weak = weak_from_this(), i](std::size_t node, const server_identity& id) {
                    if (auto self = weak.lock())
                        self->masters[i]->observe_restart(
                            node, id.run_id, std::chrono::seconds(id.uptime_seconds), clock::now(),
                            self->restart_quarantine(), self->cfg.quarantine_young_masters);
                });
    }
    if (cfg.deployment_checks)
    {
        // Called after each handshake that finds warnings its previous one did not (after
        // master_up); master_states() has them all.
        for (std::size_t i = 0; i < masters.size(); ++i)
            masters[i]->on_deployment_warnings(
                [weak = weak_from_this(), i](deployment_warnings added) {
                    if (auto self = weak.lock(); self && self->observed())
                        for (const auto& ec : added.codes())
                            self->report_master(event_kind::master_warning, i, ec);
                });
    }
    for (std::size_t i = 0; i < masters.size(); ++i)
    {
        masters[i]->on_availability([weak = weak_from_this(), i](bool up, error_code ec) {
            auto self = weak.lock();
            if (!self)
                return;
            // A drop takes the master's client tracking with it: whoever watched a key there
            // hears of it as of a release (and watches again if still refused).
            if (!up)
                self->waiting.invalidate_all(i);
            self->report_master(up ? event_kind::master_up : event_kind::master_down, i, ec);
        });
        masters[i]->on_tracking_lost([weak = weak_from_this(), i] {
            if (auto self = weak.lock())
                self->waiting.invalidate_all(i);
        });
        // Client-tracking invalidations (lock_options::wait), delivered after the replies read
        // with them.
        masters[i]->on_push([weak = weak_from_this(), i](const resp::reply& push) {
            auto self = weak.lock();
            if (!self)
                return;
            if (const auto inv = read_invalidation(push))
                self->waiting.invalidate(i, *inv);
        });
    }
    for (auto& m : masters)
        m->start();
}

}  // namespace redlock::detail
