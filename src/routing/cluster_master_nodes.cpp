// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's node connections: one per node the router names, never closed before
// close(); their identities, pushes and deployment warnings, and the counters info() sums.
#include "routing/cluster_master.hpp"

#include <utility>

namespace redlock::detail {

namespace {

// What a node's warning means for a cluster master: replicas are how a shard fails over, and
// a node that is a replica (a seed, or an old primary back after a failover) gets no lock key:
// commands go to the primaries the slot map names.
bool applies_to_cluster(const error_code& warning)
{
    return warning != error::master_has_replicas && warning != error::master_is_replica;
}

deployment_warnings for_cluster(const deployment_warnings& w)
{
    deployment_warnings out;
    for (const auto& ec : w.codes())
        if (applies_to_cluster(ec))
            out.add(static_cast<error>(ec.value()));
    return out;
}

}  // namespace

void cluster_master::sync_router()
{
    const auto& named = router_.nodes();
    while (nodes_.size() < named.size())
        add_node(named[nodes_.size()]);
    published_state_.store(router_.state(), std::memory_order_relaxed);
}

void cluster_master::add_node(const cluster_endpoint& at)
{
    master_config c = cfg_;
    c.host = at.host;
    c.port = at.port;
    c.cluster_seeds.clear();
    auto conn = std::make_shared<node_connection>(ex_, std::move(c), opts_);
    const auto n = nodes_.size();
    if (identity_fn_)
        conn->on_identity([weak = weak_from_this(), n](const server_identity& id) {
            if (auto self = weak.lock())
                self->identity_fn_(n, id);
        });
    if (push_fn_)
        conn->on_push([weak = weak_from_this()](const resp::reply& push) {
            if (auto self = weak.lock())
                self->push_fn_(push);
        });
    conn->on_availability([weak = weak_from_this(), n](bool up, error_code) {
        auto self = weak.lock();
        if (!self || up)
            return;
        // The drop took the connection's client tracking with it.
        auto& node = self->nodes_[n];
        if (node.tracking_asked)
        {
            node.tracking_asked = false;
            self->tracking_lost();
        }
    });
    if (deployment_fn_)
        conn->on_deployment_warnings([weak = weak_from_this()](deployment_warnings added) {
            auto self = weak.lock();
            if (!self)
                return;
            // Each warning once per cluster master, whichever node shows it first.
            const auto w = for_cluster(added).new_since(self->warned_);
            if (w.empty())
                return;
            for (const auto& ec : w.codes())
                self->warned_.add(static_cast<error>(ec.value()));
            self->deployment_fn_(w);
        });
    {
        const std::lock_guard<std::mutex> guard(nodes_mutex_);
        node_entry entry;
        entry.host = at.host;
        entry.port = at.port;
        entry.conn = conn;
        nodes_.push_back(std::move(entry));
    }
    if (router_.state() != map_state::closed)
        conn->start();
}

void cluster_master::append_connections(std::vector<std::shared_ptr<node_connection>>& out) const
{
    for (const auto& n : nodes_)
        out.push_back(n.conn);
}

master_info cluster_master::info() const
{
    master_info m;
    m.endpoint = cfg_.to_string();
    m.state = published_state_.load(std::memory_order_relaxed);
    deployment_warnings warnings;
    const std::lock_guard<std::mutex> guard(nodes_mutex_);
    for (const auto& n : nodes_)
    {
        const auto ni = n.conn->info();
        m.requests += ni.requests;
        m.replies += ni.replies;
        m.connects += ni.connects;
        m.drops += ni.drops;
        if (!m.last_error && ni.last_error)
            m.last_error = ni.last_error;
        for (const auto& w : ni.warnings)
            if (applies_to_cluster(w))
                warnings.add(static_cast<error>(w.value()));
    }
    m.warnings = warnings.codes();
    return m;
}

}  // namespace redlock::detail
