// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_MASTER_LINK_HPP
#define REDLOCK_SRC_MASTER_LINK_HPP

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithm/restart_watch.hpp"
#include "algorithm/script_cache.hpp"
#include "routing/cluster_master.hpp"
#include "routing/key_slot.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

/// @brief One Redlock master as rounds and watches send to it: a standalone Redis (one
/// node_connection) or a whole Redis Cluster (a cluster_master, which routes each command by
/// its key's hash slot).
///
/// The same calls as node_connection's, plus the key a command is routed by. What is known
/// about the master's scripts (script_cache) and restarts (restart_watch) lives here too:
/// a standalone master has one node, a cluster one per node it reached. A cluster master
/// keeps what its nodes know of our scripts itself (submit_script: EVALSHA per node, NOSCRIPT
/// answered there), and asks its nodes for client tracking itself (request_mode::
/// tracked_read), where a standalone master's watch asks over the connection; see
/// docs/algorithm.md.
///
/// @par Thread safety
/// As node_connection: on the client's strand, info() from any thread.
class master_link
{
public:
    explicit master_link(std::shared_ptr<node_connection> node) : node_(std::move(node)) {}
    explicit master_link(std::shared_ptr<cluster_master> cluster) : cluster_(std::move(cluster)) {}

    bool is_cluster() const noexcept { return cluster_ != nullptr; }

    /// Queues one command whose keys all hash to the slot of `key` (unused by a standalone
    /// master); see node_connection::submit and cluster_master::submit. `mode` is for a
    /// cluster master only: a standalone master sends every command plainly.
    template <class Encode>
    error_code submit(reply_sink* sink, std::uint32_t tag, std::string_view key, Encode&& encode,
                      request_ticket& ticket, request_mode mode = request_mode::plain,
                      bool lazy = false)
    {
        if (cluster_)
            return cluster_->submit(sink, tag, key_slot(key), std::forward<Encode>(encode), ticket,
                                    mode);
        return node_->submit(sink, tag, std::forward<Encode>(encode), ticket, lazy);
    }

    /// A cluster master's submit_script (`encode(std::string&, bool eval)`); a standalone
    /// master's script goes as the round encodes it, through submit().
    template <class Encode>
    error_code submit_script(reply_sink* sink, std::uint32_t tag, std::string_view key,
                             unsigned script, Encode&& encode, request_ticket& ticket,
                             request_mode mode)
    {
        return cluster_->submit_script(sink, tag, key_slot(key), script,
                                       std::forward<Encode>(encode), ticket, mode);
    }

    void abandon(request_ticket ticket) noexcept
    {
        if (cluster_)
            cluster_->abandon(ticket);
        else
            node_->abandon(ticket);
    }

    /// Whether the command's outcome no longer needs this process (node_connection::written).
    /// Never for a cluster master: a redirection would need us to send the command again.
    bool written(request_ticket ticket) const noexcept
    {
        return !cluster_ && node_->written(ticket);
    }

    /// A standalone master's connection generation (node_connection::generation); 0 for a
    /// cluster master, which does not cache scripts and keeps its nodes' tracking itself.
    std::uint64_t generation() const noexcept { return cluster_ ? 0 : node_->generation(); }
    /// Whether a script may go as EVALSHA where script_cache knows it (a cluster master keeps
    /// its nodes' script_cache itself: submit_script).
    bool caches_scripts() const noexcept { return !cluster_; }
    /// Whether waiters may ask this master to track keys (RESP3 client tracking): always for a
    /// standalone master (the watch learns of a refusal), for a cluster master until a node
    /// refused it.
    bool tracks_keys() const noexcept { return !cluster_ || !cluster_->tracking_refused(); }

    std::chrono::steady_clock::time_point read_time() const noexcept
    {
        return cluster_ ? cluster_->read_time() : node_->read_time();
    }
    const std::string& last_error_detail() const noexcept
    {
        return cluster_ ? cluster_->last_error_detail() : node_->last_error_detail();
    }

    master_info info() const { return cluster_ ? cluster_->info() : node_->info(); }

    void start()
    {
        if (cluster_)
            cluster_->start();
        else
            node_->start();
    }
    void close()
    {
        if (cluster_)
            cluster_->close();
        else
            node_->close();
    }
    void wait_settled(std::function<void(error_code)> fn)
    {
        if (cluster_)
            cluster_->wait_settled(std::move(fn));
        else
            node_->wait_settled(std::move(fn));
    }
    void abandon_waiters() noexcept
    {
        if (cluster_)
            cluster_->abandon_waiters();
        else
            node_->abandon_waiters();
    }
    void on_availability(std::function<void(bool up, error_code ec)> fn)
    {
        if (cluster_)
            cluster_->on_availability(std::move(fn));
        else
            node_->on_availability(std::move(fn));
    }
    /// Each handshake's identity, with the node it came from (0 for a standalone master).
    void on_identity(std::function<void(std::size_t node, const server_identity&)> fn)
    {
        if (cluster_)
            return cluster_->on_identity(std::move(fn));
        node_->on_identity([fn = std::move(fn)](const server_identity& id) { fn(0, id); });
    }
    void on_deployment_warnings(std::function<void(deployment_warnings)> fn)
    {
        if (cluster_)
            cluster_->on_deployment_warnings(std::move(fn));
        else
            node_->on_deployment_warnings(std::move(fn));
    }
    /// Push messages (client-tracking invalidations), from any node.
    void on_push(std::function<void(const resp::reply&)> fn)
    {
        if (cluster_)
            cluster_->on_push(std::move(fn));
        else
            node_->on_push(std::move(fn));
    }
    /// Called when keys tracked on a node of a cluster master may have changed unseen
    /// (cluster_master::on_tracking_lost); a standalone master says so with on_availability.
    void on_tracking_lost(std::function<void()> fn)
    {
        if (cluster_)
            cluster_->on_tracking_lost(std::move(fn));
    }
    /// The connections to drain at shutdown (node_connection::drain_now).
    void append_connections(std::vector<std::shared_ptr<node_connection>>& out) const
    {
        if (cluster_)
            cluster_->append_connections(out);
        else
            out.push_back(node_);
    }

    /// Node `node`'s restarts, created on first use.
    restart_watch& restarts_of(std::size_t node)
    {
        if (restarts_.size() <= node)
            restarts_.resize(node + 1);
        return restarts_[node];
    }
    /// Whether any node of the master restarted less than the quarantine before `now`: its
    /// grants are out of acquisitions' quorums. A cluster master's grant comes from one shard;
    /// which one is not tracked, so a restarted shard quarantines the whole master.
    bool quarantined(std::chrono::steady_clock::time_point now) const noexcept
    {
        return std::any_of(restarts_.begin(), restarts_.end(),
                           [&](const auto& r) { return r.quarantined(now); });
    }
    /// The end of the latest quarantine of any node.
    std::chrono::steady_clock::time_point quarantine_end() const noexcept
    {
        std::chrono::steady_clock::time_point end{};
        for (const auto& r : restarts_)
            end = std::max(end, r.until());
        return end;
    }

    /// Which of our scripts the master's connection has run (a standalone master only).
    script_cache scripts;

private:
    std::shared_ptr<node_connection> node_;
    std::shared_ptr<cluster_master> cluster_;
    std::vector<restart_watch> restarts_;
};

}  // namespace redlock::detail

#endif
