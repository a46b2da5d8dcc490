// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_CLUSTER_MASTER_HPP
#define REDLOCK_SRC_CLUSTER_CLUSTER_MASTER_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/events.hpp>

#include "algorithm/deployment_check.hpp"
#include "algorithm/script_cache.hpp"
#include "protocol/multiplexer.hpp"
#include "protocol/server_info.hpp"
#include "routing/cluster_router.hpp"
#include "routing/request_mode.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

/// @brief A whole Redis Cluster as one Redlock master: one multiplexed node_connection per
/// shard primary, commands routed by their keys' hash slot, redirections followed.
///
/// The thin Asio driver of a cluster_router, which makes every routing decision (sans-io):
/// each event (a command, a reply, a refused sending, a CLUSTER SLOTS reply, the refresh
/// timer, close) goes to the router with the time, and its decision is carried out over the
/// node connections. The driver's files split by concern: cluster_master.cpp (commands),
/// cluster_master_map.cpp (the slot map, settling, availability), cluster_master_nodes.cpp
/// (the node connections, info()), cluster_master_acks.cpp (WAIT), cluster_master_tracking.cpp
/// (client tracking).
///
/// The slot map comes from `CLUSTER SLOTS`, asked of the seeds in order until one answers,
/// and again (at most every `refresh_interval`) after a MOVED or a CLUSTERDOWN. A command
/// queued before the first map is sent once it is known. A reply is routed by
/// route_reply(): `MOVED` re-points the slot and sends the command again to the new owner,
/// `ASK` sends it once to the importing node after `ASKING`; other replies, and errors,
/// reach the command's owner as a standalone master's would. A redirected command has not
/// run, so sending it again cannot run it twice; one that failed with the connection (it
/// may have run) is not sent again: its owner sees connection_lost.
///
/// What the owner sees is the request_ticket given by submit(): abandoning it drops the
/// answer, wherever the command was redirected to, but not the command, which keeps
/// following redirections: a round stops listening at its quorum, and a release that is not
/// awaited is abandoned as soon as it is queued, yet both must still reach the node. Connections to nodes are never closed before close(), so
/// a node that leaves the map keeps its (idle) connection.
///
/// Two kinds of commands get more than routing (request_mode):
/// - replicated: with `acks.replicas` > 0, each node connection sends `WAIT replicas timeout`
///   after the writes of one turn of the executor (replica_ack_queue), and a write's answer
///   is held until the WAIT that covers it answers: it is then handed over, or replaced by
///   error::not_replicated. An error reply is handed over at once (nothing was written).
/// - tracked_read: the node's connection gets `HELLO 3` and `CLIENT TRACKING on OPTIN
///   NOLOOP` once per connection, and the read goes after `CLIENT CACHING yes`; its pushes
///   reach on_push(). A MOVED read goes to the new owner the same way; an ASK is not followed
///   (ASKING and CLIENT CACHING both apply to the next command only): the reader sees the
///   redirection as an error and does without tracking. A node that refuses tracking, or
///   whose connection drops, is reported to on_tracking_lost().
///
/// @par Thread safety
/// Every member but info() must be called on the executor given at construction.
class cluster_master final : public reply_sink, public std::enable_shared_from_this<cluster_master>
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// The shortest time between two reads of the slot map.
    static constexpr std::chrono::milliseconds refresh_interval{100};

    /// `cfg.cluster_seeds` must not be empty; every node is reached as `cfg` says (user,
    /// password, TLS), at the address the cluster gives.
    /// Replica acknowledgements asked for request_mode::replicated commands (none by default).
    struct write_acks
    {
        unsigned replicas = 0;
        std::chrono::milliseconds timeout{50};
    };

    cluster_master(asio::any_io_executor ex, master_config cfg, connection_options opts,
                   write_acks acks);
    ~cluster_master();
    cluster_master(const cluster_master&) = delete;
    cluster_master& operator=(const cluster_master&) = delete;

    /// Starts asking the seeds for the slot map.
    void start();
    /// Closes every node connection (as node_connection::close does); commands waiting for
    /// the first map fail with connection_closed.
    void close();

    /// @brief Queues one command whose keys all hash to `slot`; `encode(std::string&)`
    /// appends its RESP bytes. As node_connection::submit: an empty error_code when accepted
    /// (the sink will be called once, with the final answer), else why not (no map and the
    /// seeds unreachable, the slot served by no node, the node's connection down, closed).
    template <class Encode>
    error_code submit(reply_sink* sink, std::uint32_t tag, std::uint16_t slot, Encode&& encode,
                      request_ticket& ticket, request_mode mode = request_mode::plain)
    {
        const auto index = take_request(sink, tag, slot, mode, cluster_router::no_script);
        encode(requests_[index].bytes);
        return route(index, ticket);
    }

    /// @brief As submit(), for one of our scripts, `script` (a script_cache id, 0-31):
    /// `encode(std::string&, bool eval)` appends the command as EVAL (`eval`) or EVALSHA. The
    /// cluster master sends EVALSHA to a node that has run the script over its connection,
    /// and EVAL otherwise; a NOSCRIPT (the node restarted, or flushed its scripts, or is a
    /// promoted replica) has it send the EVAL to the same node, whether or not the owner still
    /// listens, so the owner never sees NOSCRIPT.
    template <class Encode>
    error_code submit_script(reply_sink* sink, std::uint32_t tag, std::uint16_t slot,
                             unsigned script, Encode&& encode, request_ticket& ticket,
                             request_mode mode = request_mode::plain)
    {
        const auto index = take_request(sink, tag, slot, mode, script);
        auto& r = requests_[index];
        encode(r.bytes, true);
        encode(r.sha_bytes, false);
        return route(index, ticket);
    }

    /// The sink of this command will not be called; the command itself still runs, following
    /// its redirections (as an abandoned command on a node_connection is still executed).
    void abandon(request_ticket ticket) noexcept;

    /// When the read whose reply is being delivered completed (inside reply_sink::on_reply).
    time_point read_time() const noexcept { return read_at_; }
    /// Why the last command failed for want of a connection, naming the node (never a password).
    const std::string& last_error_detail() const noexcept { return last_error_detail_; }

    /// The cluster's state (ready: a slot map is known and every shard primary's connection is
    /// ready), counters summed over its node connections, the deployment warnings of any
    /// node. Safe from any thread.
    master_info info() const;

    /// Completes (on the executor) once the first slot map is known and every shard primary's
    /// connection settled (node_connection::wait_settled), or the seeds could not be read:
    /// with the first error among them, if any.
    void wait_settled(std::function<void(error_code)> fn);
    /// Destroys the waiters of wait_settled without calling them (shutdown).
    void abandon_waiters() noexcept;

    /// @brief Called (posted) with `up` when a slot map is learnt while there was none or the
    /// last reads failed, and with `!up` when every seed failed to give one. Before start().
    void on_availability(std::function<void(bool up, error_code ec)> fn)
    {
        availability_ = std::move(fn);
    }
    /// @brief As node_connection::on_identity, for every node; `node` numbers the nodes in the
    /// order they were first reached (stable). Before start().
    void on_identity(std::function<void(std::size_t node, const server_identity&)> fn)
    {
        identity_fn_ = std::move(fn);
    }
    /// @brief As node_connection::on_deployment_warnings, for every node, each warning once
    /// per cluster master (the first node to show it), and without master_has_replicas and
    /// master_is_replica: replicas are how a shard fails over, and a node that is one (a seed,
    /// an old primary back after a failover) is sent no lock key. Before start().
    void on_deployment_warnings(std::function<void(deployment_warnings)> fn)
    {
        deployment_fn_ = std::move(fn);
    }

    /// @brief Called with each push message of any node (client-tracking invalidations).
    /// Before start().
    void on_push(std::function<void(const resp::reply&)> fn) { push_fn_ = std::move(fn); }
    /// @brief Called (posted) when keys read as tracked_read may have changed unseen: a
    /// node's connection dropped (its tracking went with it), or a node refused tracking
    /// (tracking_refused() is then true). Before start().
    void on_tracking_lost(std::function<void()> fn) { tracking_lost_fn_ = std::move(fn); }
    /// Whether a node refused client tracking (HELLO 3 or CLIENT TRACKING): tracked reads
    /// then bring no pushes from it.
    bool tracking_refused() const noexcept { return tracking_refused_; }

    /// Every node connection made so far (for node_connection::drain_now).
    void append_connections(std::vector<std::shared_ptr<node_connection>>& out) const;
    const master_config& config() const noexcept { return cfg_; }

private:
    // What the driver keeps of a command in flight (cluster_router keeps where it went).
    struct request
    {
        reply_sink* sink = nullptr;
        std::uint32_t tag = 0;
        request_ticket ticket;  // on the node it was sent to last
        std::string bytes;      // the command, kept to send again (its capacity reused)
        std::string sha_bytes;  // a script's EVALSHA form (bytes is its EVAL)
        resp::reply answer;     // a replicated write's answer, held for its WAIT
    };
    struct node_entry
    {
        std::string host;
        std::uint16_t port = 0;
        std::shared_ptr<node_connection> conn;
        script_cache scripts;            // which scripts ran over the connection
        std::uint64_t tracking_gen = 0;  // the connection generation tracking was asked on
        bool tracking_asked = false;
    };
    using map_state = cluster_router::map_state;

    // ---- commands (cluster_master.cpp)
    void on_reply(std::uint32_t tag, const error_code& ec,
                  std::span<const resp::node_view> nodes) override;
    std::size_t take_request(reply_sink* sink, std::uint32_t tag, std::uint16_t slot,
                             request_mode mode, unsigned script);
    error_code route(std::size_t index, request_ticket& ticket);
    // Sends request `index` to `node` (after ASKING when `asking`) and tells the router.
    error_code send_to(std::size_t index, std::size_t node, bool asking);
    // Carries out the router's step for a command; `nodes`: the reply it is about.
    void carry_out(const cluster_router::step& s, std::span<const resp::node_view> nodes);
    // Hands the final answer to the request's owner and forgets the request.
    void deliver(std::size_t index, const error_code& ec, std::span<const resp::node_view> nodes);
    void fail(std::size_t index, const error_code& ec, std::string detail);

    // ---- the node connections (cluster_master_nodes.cpp)
    // Reaches the nodes the router named since the last call, and publishes its state: after
    // every router event, before carrying out its decision.
    void sync_router();
    void add_node(const cluster_endpoint& at);

    // ---- the slot map (cluster_master_map.cpp)
    void run(const cluster_router::map_step& m);
    void on_map_reply(std::size_t node, const error_code& ec,
                      std::span<const resp::node_view> nodes);
    void apply(cluster_router::map_decision d);
    void settle(const error_code& ec, bool posted);
    void settle_when_nodes_settle();

    // ---- replica acknowledgements (cluster_master_acks.cpp)
    // The answer of a replicated command: kept until the WAIT that covers it answers.
    void hold(std::size_t index, std::span<const resp::node_view> nodes);
    void send_wait(std::size_t node);
    void on_wait_reply(std::size_t node, const error_code& ec,
                       std::span<const resp::node_view> nodes);

    // ---- client tracking (cluster_master_tracking.cpp)
    // Asks `node`'s connection for client tracking, once per connection generation.
    error_code ensure_tracking(std::size_t node);
    void on_tracking_reply(const error_code& ec, std::span<const resp::node_view> nodes);
    void tracking_lost();

    asio::any_io_executor ex_;
    master_config cfg_;
    connection_options opts_;
    write_acks acks_;
    cluster_router router_;
    std::vector<node_entry> nodes_;  // guarded by nodes_mutex_ for info()
    mutable std::mutex nodes_mutex_;
    std::vector<request> requests_;  // indexed as the router's
    std::atomic<map_state> published_state_{map_state::connecting};
    asio::steady_timer refresh_timer_;
    bool settled_ = false;
    std::vector<std::function<void(error_code)>> settle_waiters_;
    std::string last_error_detail_;
    time_point read_at_{};
    std::function<void(bool, error_code)> availability_;
    std::function<void(std::size_t, const server_identity&)> identity_fn_;
    std::function<void(deployment_warnings)> deployment_fn_;
    std::function<void(const resp::reply&)> push_fn_;
    std::function<void()> tracking_lost_fn_;
    bool tracking_refused_ = false;
    deployment_warnings warned_;  // what on_deployment_warnings reported so far
};

}  // namespace redlock::detail

#endif
