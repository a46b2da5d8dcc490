// A real Redis Cluster on loopback, started and stopped by the test itself.
#pragma once

#include "local_masters.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

/**
 * @brief A Redis Cluster of `options::shards` primaries with `options::replicas` replicas
 *        each, owned by one test.
 *
 * The nodes are @ref local_masters servers (127.0.0.1 only, ports chosen at run time, each in
 * a fresh directory, stopped by PID) started with `cluster-enabled yes`. The constructor then
 * runs `redis-cli --cluster create <node>... --cluster-replicas R --cluster-yes` (spawned
 * without a shell; its output kept in `cluster-create.log` beside the nodes' directories) and
 * waits until every node reports `cluster_state:ok`, knows every other node, and serves
 * the same slot map (parsed from `CLUSTER SLOTS`) covering all 16384 slots, and every replica
 * has its link to its primary up.
 *
 * `redis-cli` makes the first `shards` nodes the primaries, slots split evenly in node order
 * (0-5460, 5461-10922, 10923-16383 for three), and the others their replicas. Read the slot
 * map from the cluster rather than relying on that: @ref primaries says who they were once
 * the cluster was ready.
 *
 * The cluster bus of a node listens on its port + 10000 (Redis's default); a start that
 * finds that port taken is retried on other ports, as any port clash of @ref local_masters.
 *
 * Everything started is stopped by PID: the destructor stops every node; a failing
 * constructor kills `redis-cli` if it still runs and stops the nodes started so far.
 *
 * @par Thread safety
 * Distinct objects: safe. Shared object: unsafe. As for @ref local_masters, construct it on
 * a thread that outlives the cluster.
 *
 * @par Object lifetimes
 * Moving transfers the processes; a moved-from object may only be destroyed or assigned to.
 */
class local_cluster
{
public:
    /// @brief How to start the cluster.
    struct options
    {
        /// Number of shards, i.e. of primaries; at least 3 (`redis-cli --cluster create` needs 3).
        std::size_t shards = 3;
        /// Replicas per primary.
        std::size_t replicas = 0;
        /// `cluster-node-timeout`: how long a node may be unreachable before it is failing.
        /// It also paces the gossip that forms the cluster: larger values start slower.
        std::chrono::milliseconds node_timeout{2000};
        /// Lines appended to each node's `redis.conf` after the cluster settings (later lines win).
        std::vector<std::string> extra_config{};
        /// The server executable, looked up in `PATH` when it has no slash.
        std::string redis_server = "redis-server";
        /// The `redis-cli` executable, looked up in `PATH` when it has no slash.
        std::string redis_cli = "redis-cli";
        /// How long `redis-cli --cluster create` and then the wait for the cluster to be ready
        /// may take, each.
        std::chrono::milliseconds ready_timeout{20000};
    };

    /**
     * @brief Starts the nodes, forms the cluster and waits until it is ready.
     * @throws std::invalid_argument if `shards < 3`.
     * @throws std::runtime_error if a node does not start, `redis-cli` fails (its output is in
     *         the message), or the cluster is not ready within `ready_timeout` (what each node
     *         last lacked and the tails of the logs are in the message). Nothing started is
     *         left running.
     */
    explicit local_cluster(options opts);

    /// @brief Starts three primaries without replicas.
    local_cluster();

    /// @brief Stops every node and removes the directories.
    ~local_cluster();

    local_cluster(const local_cluster&) = delete;
    local_cluster& operator=(const local_cluster&) = delete;
    /// @brief Takes over the other object's processes.
    local_cluster(local_cluster&&) noexcept;
    /// @brief Stops this object's processes, then takes over the other's.
    local_cluster& operator=(local_cluster&&) noexcept;

    /// @brief Number of nodes: shards * (1 + replicas).
    std::size_t node_count() const noexcept;
    /// @brief Number of shards (primaries) the cluster was created with.
    std::size_t shard_count() const noexcept;

    /// @brief Client port of node `i`; its cluster bus port is this + 10000.
    std::uint16_t port(std::size_t i) const;
    /// @brief PID of node `i`'s running process. @throws std::logic_error if it is not running.
    pid_t pid(std::size_t i) const;
    /// @brief Node `i`'s log file, handy in failure messages.
    std::string log_file(std::size_t i) const;
    /// @brief The node whose client port is `port`, if it is one of this cluster's.
    std::optional<std::size_t> node_at(std::uint16_t port) const noexcept;
    /// @brief The nodes that served slots when the cluster became ready, in slot order.
    const std::vector<std::size_t>& primaries() const noexcept;

    /// @brief Every node as `127.0.0.1:PORT`, in node order: seeds for a cluster client.
    std::vector<std::string> seeds() const;
    /// @brief `redis-cluster://127.0.0.1:P1,127.0.0.1:P2,...` over all nodes: this cluster as
    ///        one Redlock master.
    std::string uri() const;
    /// @brief Node `i`'s id (`CLUSTER MYID`).
    std::string id(std::size_t i) const;

    /// @brief Moves `slots` hash slots, and their keys, from primary `from` to primary `to`
    ///        with `redis-cli --cluster reshard` (MIGRATE), blocking until it is done.
    /// @throws std::runtime_error with redis-cli's output if it fails or takes longer than
    ///         `timeout` (then it is killed).
    void reshard(std::size_t from, std::size_t to, std::size_t slots,
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));

    /// @brief As local_masters::command, on node `i`: the raw bytes of one reply, which for a
    ///        key of another node's slot is a `-MOVED` error (no redirection is followed).
    std::string command(std::size_t i, std::initializer_list<std::string_view> args) const;
    /// @brief As @ref command, with arguments built at run time.
    std::string command(std::size_t i, const std::vector<std::string>& args) const;

    /// @brief SIGKILL node `i` and reap it. No-op if it is not running.
    void kill(std::size_t i);
    /// @brief SIGSTOP node `i`: it keeps its sockets but answers nothing, the cluster bus
    ///        included, so after `node_timeout` the others think it failing.
    void pause(std::size_t i);
    /// @brief SIGCONT node `i`.
    void resume(std::size_t i);
    /// @brief SIGTERM node `i`, SIGKILL if it has not exited within 5 s, and reap it.
    void stop(std::size_t i);
    /// @brief Whether node `i`'s process exists and has not exited (paused counts as running).
    bool is_running(std::size_t i) const;
    /**
     * @brief Stops node `i` (as @ref stop), starts it again on the same port(s) and in the
     *        same directory, and waits until the cluster is ready again, as the constructor does.
     *
     * The node keeps its `nodes.conf`, so it comes back as the same cluster node serving the
     * same slots; its data is gone (no persistence) and its `run_id` is new, as after a crash.
     * @throws std::runtime_error as the constructor does (start, or readiness within
     *         `ready_timeout`).
     */
    void restart(std::size_t i);

    /// @brief The nodes as @ref local_masters, for what this class does not forward
    ///        (directories, Unix sockets if configured...). Do not restart nodes through it
    ///        expecting the cluster to be ready again: nothing waits for that (@ref restart does).
    local_masters& masters() noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace redlock::test
