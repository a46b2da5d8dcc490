// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_MASTER_LINK_HPP
#define REDLOCK_SRC_MASTER_LINK_HPP

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/events.hpp>
#include <redlock/resp.hpp>

#include "algorithm/deployment_check.hpp"
#include "algorithm/restart_watch.hpp"
#include "algorithm/script_cache.hpp"
#include "protocol/reply_sink.hpp"
#include "protocol/server_info.hpp"
#include "routing/request_mode.hpp"
#include "runtime/function_ref.hpp"

namespace redlock::detail {

class node_connection;

/// @brief One Redlock master as rounds and watches send to it: what they need of it, and
/// nothing of how it is reached.
///
/// Two kinds implement it (routing/make_link.hpp): a standalone Redis over one
/// node_connection, and a whole Redis Cluster (over a cluster_master, which routes each
/// command by its key's hash slot). Tests give rounds scripted masters (test/unit/round_test.cpp). The
/// callers (driver/) include this header only: an operation compiles neither the transport
/// nor the cluster router. The one exception is the round (round.cpp), which reaches a
/// standalone master's node_connection directly (standalone()) on its hot path.
///
/// What is known about the master's scripts (script_cache) and restarts (restart_watch) lives
/// here too: a standalone master has one node, a cluster one per node it reached. A cluster
/// master keeps what its nodes know of our scripts itself (submit_script: EVALSHA per node,
/// NOSCRIPT answered there), and asks its nodes for client tracking itself (request_mode::
/// tracked_read), where a standalone master's watch asks over the connection; see
/// docs/algorithm.md.
///
/// @par Thread safety
/// As node_connection: on the client's strand, info() from any thread.
class master_link
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    /// Appends one command's RESP bytes; called before submit() returns.
    using encoder = function_ref<void(std::string&)>;
    /// Appends a script's command, as EVAL (`eval`) or EVALSHA; called before
    /// submit_script() returns, once or once per node form.
    using script_encoder = function_ref<void(std::string&, bool eval)>;

    virtual ~master_link() = default;

    /// A whole Redis Cluster (fixed at construction: read on every command, so not virtual).
    bool is_cluster() const noexcept { return cluster_; }
    /// A standalone master's one connection, for the round's hot path (driver/round.cpp):
    /// submitting, abandoning and reading a reply's time there directly saves a virtual call
    /// and an out-of-line encoder per command. What it does is exactly what the virtual members
    /// do for a standalone master. Null for a cluster master and for a test's scripted one.
    node_connection* standalone() const noexcept { return standalone_; }
    /// Queues one command whose keys all hash to the slot of `key` (unused by a standalone
    /// master); see node_connection::submit and cluster_master::submit. `mode` is for a
    /// cluster master only: a standalone master sends every command plainly. `lazy` is for a
    /// standalone master only (node_connection::submit).
    virtual error_code submit(reply_sink* sink, std::uint32_t tag, std::string_view key,
                              encoder encode, request_ticket& ticket,
                              request_mode mode = request_mode::plain, bool lazy = false) = 0;
    /// A cluster master's submit_script; a standalone master's script goes as the round
    /// encodes it, through submit().
    virtual error_code submit_script(reply_sink* sink, std::uint32_t tag, std::string_view key,
                                     unsigned script, script_encoder encode, request_ticket& ticket,
                                     request_mode mode) = 0;
    virtual void abandon(request_ticket ticket) noexcept = 0;
    /// Whether the command's outcome no longer needs this process (node_connection::written).
    /// Never for a cluster master: a redirection would need us to send the command again.
    virtual bool written(request_ticket ticket) const noexcept = 0;
    /// A standalone master's connection generation (node_connection::generation); 0 for a
    /// cluster master, which does not cache scripts and keeps its nodes' tracking itself.
    virtual std::uint64_t generation() const noexcept = 0;
    /// Whether a script may go as EVALSHA where script_cache knows it (a cluster master keeps
    /// its nodes' script_cache itself: submit_script).
    bool caches_scripts() const noexcept { return !is_cluster(); }
    /// Whether waiters may ask this master to track keys (RESP3 client tracking): always for a
    /// standalone master (the watch learns of a refusal), for a cluster master until a node
    /// refused it.
    virtual bool tracks_keys() const noexcept = 0;
    /// When the replies being delivered were read.
    virtual time_point read_time() const noexcept = 0;
    virtual const std::string& last_error_detail() const noexcept = 0;
    virtual master_info info() const = 0;

    virtual void start() = 0;
    virtual void close() = 0;
    virtual void wait_settled(std::function<void(error_code)> fn) = 0;
    virtual void abandon_waiters() noexcept = 0;
    virtual void on_availability(std::function<void(bool up, error_code ec)> fn) = 0;
    /// Each handshake's identity, with the node it came from (0 for a standalone master).
    virtual void on_identity(std::function<void(std::size_t node, const server_identity&)> fn) = 0;
    virtual void on_deployment_warnings(std::function<void(deployment_warnings)> fn) = 0;
    /// Push messages (client-tracking invalidations), from any node.
    virtual void on_push(std::function<void(const resp::reply&)> fn) = 0;
    /// Called when keys tracked on a node of a cluster master may have changed unseen
    /// (cluster_master::on_tracking_lost); a standalone master says so with on_availability.
    virtual void on_tracking_lost(std::function<void()> fn) = 0;
    /// The connections to drain at shutdown (node_connection::drain_now).
    virtual void append_connections(std::vector<std::shared_ptr<node_connection>>& out) const = 0;

    /// Node `node`'s handshake: its restart_watch (created on first use) observes it
    /// (restart_watch::observe), and the latest quarantine of the master's nodes is kept up to
    /// date for quarantined() and quarantine_end().
    bool observe_restart(std::size_t node, std::string_view run_id, std::chrono::seconds uptime,
                         time_point now, std::chrono::milliseconds quarantine,
                         bool young_is_restarted)
    {
        if (restarts_.size() <= node)
            restarts_.resize(node + 1);
        const bool quarantined =
            restarts_[node].observe(run_id, uptime, now, quarantine, young_is_restarted);
        latest_until_ = time_point::min();
        for (const auto& r : restarts_)
            latest_until_ = std::max(latest_until_, r.until());
        return quarantined;
    }
    /// Whether any node of the master restarted less than the quarantine before `now`: its
    /// grants are out of acquisitions' quorums. A cluster master's grant comes from one shard;
    /// which one is not tracked, so a restarted shard quarantines the whole master.
    /// (Read for every grant an acquisition counts: one comparison with the latest end, kept
    /// by observe_restart, rather than a walk over the nodes' watches.)
    bool quarantined(time_point now) const noexcept { return now < latest_until_; }
    /// The end of the latest quarantine of any node.
    time_point quarantine_end() const noexcept { return std::max(time_point{}, latest_until_); }

    /// Which of our scripts the master's connection has run (a standalone master only).
    script_cache scripts;

protected:
    explicit master_link(bool cluster, node_connection* standalone = nullptr) noexcept
        : cluster_(cluster),
          standalone_(standalone)
    {}
    master_link(const master_link&) = delete;
    master_link& operator=(const master_link&) = delete;

private:
    bool cluster_;
    node_connection* standalone_;
    // The latest restart_watch::until() of restarts_ (min() while there is none).
    time_point latest_until_ = time_point::min();
    std::vector<restart_watch> restarts_;
};

}  // namespace redlock::detail

#endif
