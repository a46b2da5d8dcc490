// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Acceptance: Redis Clusters as Redlock masters (master_config::cluster_seeds), against real
// local clusters: keys land on the shard that serves their slot, MOVED and ASK are followed,
// multi-resource locks stay within one slot, contention keeps mutual exclusion while slots are
// resharded, a shard failover does what docs/algorithm.md says, a master whose seeds cannot
// be reached is one failed master, no more, a restarted shard primary quarantines the whole
// cluster master, and the deployment checks run on every node, without master_has_replicas.
#include "client_fixture.hpp"
#include "io_helpers.hpp"
#include "local_cluster.hpp"

#include "protocol/server_info.hpp"
#include "routing/key_slot.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

// GCC 12's false -Wmismatched-new-delete on inlined Asio coroutine frames (see hold_test.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

using namespace redlock;
using namespace redlock::test;
using Catch::Matchers::Contains;
using redlock::detail::key_slot;

namespace {

// `c`'s default lock options with a TTL of `lock_ttl`.
lock_options lasting_on(const client& c, std::chrono::milliseconds lock_ttl)
{
    lock_options o = c.default_options();
    o.ttl = lock_ttl;
    return o;
}

// The waiter's options of the wait tests: a TTL of 30 s, a wait of 15 s, and an attempt every
// `retry_delay` (no jitter) while it waits.
lock_options waiting_15s(const client& waiter, std::chrono::milliseconds retry_delay)
{
    lock_options o = lasting_on(waiter, 30s);
    o.wait = 15s;
    o.retry_delay = retry_delay;
    o.retry_jitter = 0ms;
    return o;
}

/// A master that is the whole of `cluster`, seeded with all its nodes, or with node `only_seed`
/// alone: the client then reaches the other nodes only through the slot map.
master_config cluster_master_of(const local_cluster& cluster,
                                std::optional<std::size_t> only_seed = std::nullopt)
{
    master_config m;
    for (std::size_t i = 0; i < cluster.node_count(); ++i)
        if (!only_seed || i == *only_seed)
            m.cluster_seeds.push_back({"127.0.0.1", cluster.port(i)});
    m.host = m.cluster_seeds[0].host;
    m.port = m.cluster_seeds[0].port;
    return m;
}

/// Three clusters of three shards, each one Redlock master.
struct three_clusters
{
    std::vector<std::unique_ptr<local_cluster>> clusters;

    three_clusters()
    {
        for (int k = 0; k < 3; ++k)
            clusters.push_back(std::make_unique<local_cluster>());
    }

    local_cluster& operator[](std::size_t k) { return *clusters.at(k); }

    client_config config(lock_options defaults = {}) const
    {
        client_config cfg;
        for (const auto& c : clusters)
            cfg.master_configs.push_back(cluster_master_of(*c));
        cfg.defaults = defaults;
        return cfg;
    }

    /// Keys left on every node of every cluster.
    std::size_t total_keys() const
    {
        std::size_t n = 0;
        for (const auto& c : clusters)
            for (std::size_t i = 0; i < c->node_count(); ++i)
                n += keys_on(c->masters(), i).size();
        return n;
    }
};

/// three_clusters, and a client of them with the default options.
struct client_of_three_clusters
{
    three_clusters cl;
    asio::io_context io;
    client c{io.get_executor(), cl.config()};
};

/// Three clusters of three shards (three_clusters), and two clients of them: a holder, and a
/// waiter that wants what the holder holds. run() runs the test's body once both are connected,
/// then checks that no key is left on any node once the releases not awaited have landed.
struct holder_and_waiter
{
    three_clusters cl;
    asio::io_context io;
    client holder{io.get_executor(), cl.config()};
    client waiter{io.get_executor(), cl.config()};

    template <class Body>
    void run(Body body, steady::duration limit)
    {
        run_bounded(
            io,
            [&]() -> asio::awaitable<void> {
                co_await require_connected(holder);
                co_await require_connected(waiter);
                co_await body();
            }(),
            limit);
        std::this_thread::sleep_for(50ms);
        CHECK(cl.total_keys() == 0);
    }
};

/// The node of `cluster` that serves `key`'s slot: the one that answers EXISTS instead of
/// redirecting.
std::size_t owner_of(const local_cluster& cluster, const std::string& key)
{
    for (std::size_t i = 0; i < cluster.node_count(); ++i)
        if (cluster.command(i, {"EXISTS", key}).starts_with(":"))
            return i;
    throw std::runtime_error("no node of the cluster serves " + key);
}

/// Starts to move `slot` of `cluster` from node `from` to node `to`, as a resharding does:
/// IMPORTING on the target, then MIGRATING on the source.
void start_migration(const local_cluster& cluster, const std::string& slot, std::size_t from,
                     std::size_t to)
{
    REQUIRE(cluster.command(to, {"CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.id(from)}) ==
            "+OK\r\n");
    REQUIRE(cluster.command(from, {"CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.id(to)}) ==
            "+OK\r\n");
}

/// Ends the move of start_migration(): NODE on the target, which bumps its config epoch so
/// that the cluster keeps the new owner, then on the source.
void end_migration(const local_cluster& cluster, const std::string& slot, std::size_t from,
                   std::size_t to)
{
    REQUIRE(cluster.command(to, {"CLUSTER", "SETSLOT", slot, "NODE", cluster.id(to)}) == "+OK\r\n");
    REQUIRE(cluster.command(from, {"CLUSTER", "SETSLOT", slot, "NODE", cluster.id(to)}) ==
            "+OK\r\n");
}

/// Moves the (empty) slot of `key` from the node serving it to node `to` (start_migration,
/// end_migration), and waits until every node agrees.
void move_slot(const local_cluster& cluster, const std::string& key, std::size_t to)
{
    const auto from = owner_of(cluster, key);
    const auto slot = std::to_string(key_slot(key));
    start_migration(cluster, slot, from, to);
    end_migration(cluster, slot, from, to);
    const auto redirect_to = " 127.0.0.1:" + std::to_string(cluster.port(to)) + "\r\n";
    const auto deadline = steady::now() + 10s;
    for (std::size_t i = 0; i < cluster.node_count(); ++i)
    {
        while (true)
        {
            const auto r = cluster.command(i, {"EXISTS", key});
            if (i == to ? r.starts_with(":") : r.ends_with(redirect_to))
                break;
            INFO("node " << i << " still answers " << r);
            REQUIRE(steady::now() < deadline);
            std::this_thread::sleep_for(20ms);
        }
    }
}

/// Node `i`'s run_id (INFO server): a new one at each start of its process.
std::string run_id_of(const local_cluster& cluster, std::size_t i)
{
    const auto identity =
        redlock::detail::parse_server_identity(cluster.command(i, {"INFO", "server"}));
    REQUIRE(identity);
    return identity->run_id;
}

/// A client of `cluster` as one master, after two standalone masters: the cluster master is
/// master 2 (client_config::masters come first).
client_config cluster_after_two(const local_cluster& cluster, const local_masters& standalone,
                                std::optional<std::size_t> only_seed = std::nullopt)
{
    client_config cfg;
    cfg.masters = standalone.uris();
    cfg.master_configs.push_back(cluster_master_of(cluster, only_seed));
    return cfg;
}

constexpr std::size_t clustered = 2;  // the cluster master's index in cluster_after_two

/// A cluster of three shards with `Replicas` replicas each, and two standalone masters, for a
/// client of cluster_after_two().
template <std::size_t Replicas>
struct cluster_and_two
{
    local_cluster cluster{{.shards = 3, .replicas = Replicas}};
    local_masters standalone{{.count = 2}};
};

/// cluster_and_two, and a client of cluster_after_two() with the default options.
template <std::size_t Replicas>
struct client_after_two : cluster_and_two<Replicas>
{
    asio::io_context io;
    client c{io.get_executor(), cluster_after_two(this->cluster, this->standalone)};
};

/// The replica of primary node `primary` (a cluster started with one replica per shard).
std::size_t replica_of(const local_cluster& cluster, std::size_t primary)
{
    const auto primary_port = "master_port:" + std::to_string(cluster.port(primary)) + "\r\n";
    for (std::size_t i = 0; i < cluster.node_count(); ++i)
        if (i != primary &&
            cluster.command(i, {"INFO", "replication"}).find(primary_port) != std::string::npos)
            return i;
    throw std::runtime_error("node " + std::to_string(primary) + " has no replica");
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
std::uint16_t closed_port()
{
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}

}  // namespace

TEST_CASE_METHOD(
    client_of_three_clusters,
    "cluster: three cluster masters of three shards lock, extend, check and release keys of "
    "every shard, "
    "on the node that serves each key's slot",
    "[live][cluster]")
{
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            for (const auto& m : c.master_states())
            {
                CHECK(m.state == master_state::ready);
                CHECK(m.endpoint.find(std::string("127.0.0.1")) != std::string::npos);
            }

            // Enough resources to cover the three shards of each cluster.
            std::vector<std::string> resources;
            for (int r = 0; r < 12; ++r)
                resources.push_back("cluster-res-" + std::to_string(r));
            for (const auto& res : resources)
            {
                auto l = co_await acquired(c, res);
                for (std::size_t k = 0; k < 3; ++k)
                {
                    INFO(std::string("cluster ") + std::to_string(k) + std::string(", key ") +
                         std::string(l.key()));
                    const auto owner = owner_of(cl[k], std::string(l.key()));
                    CHECK(get_on(cl[k].masters(), owner, l.key()) == std::string(l.token()));
                }
                auto [eec, extended] = co_await c.async_extend(l, 20s, tuple_awaitable);
                INFO(extended.describe());
                REQUIRE_FALSE(eec);
                auto [kec, checked] = co_await c.async_check(extended, tuple_awaitable);
                REQUIRE_FALSE(kec);
                CHECK(checked.holding == 3);
                CHECK(checked.min_pttl > 10s);
                auto [uec] = co_await c.async_unlock(extended, tuple_awaitable);
                REQUIRE_FALSE(uec);
            }
            // Every node of every cluster served some of them; none is left.
            co_await sleep_for(
                50ms);  // the releases not awaited land (each node is one connection)
            CHECK(cl.total_keys() == 0);

            // A multi-resource lock within one slot (a hash tag); across slots it is refused.
            // (Vectors built by push_back: GCC 12 cannot compile an initializer list in a coroutine.)
            std::vector<std::string> tagged;
            tagged.push_back("{order:7}:stock");
            tagged.push_back("{order:7}:payment");
            auto [mec, multi] =
                co_await c.async_lock_all(tagged, c.default_options(), tuple_awaitable);
            INFO(multi.describe());
            REQUIRE_FALSE(mec);
            auto [muec] = co_await c.async_unlock(multi, tuple_awaitable);
            CHECK_FALSE(muec);
            REQUIRE(key_slot(std::string("stock")) != key_slot(std::string("payment")));
            // Across slots, each cluster master gets one command per slot, all or nothing.
            std::vector<std::string> untagged;
            untagged.push_back("stock");
            untagged.push_back("payment");
            untagged.push_back("{order:7}:invoice");
            REQUIRE(key_slot(std::string("stock")) != key_slot(std::string("payment")));
            auto [xec, cross] =
                co_await c.async_lock_all(untagged, c.default_options(), tuple_awaitable);
            INFO(cross.describe());
            REQUIRE_FALSE(xec);
            for (std::size_t k = 0; k < 3; ++k)
                for (const auto& key : cross.keys())
                    CHECK(get_on(cl[k].masters(), owner_of(cl[k], key), key) ==
                          std::string(cross.token()));
            auto [xcec, xheld] = co_await c.async_check(cross, tuple_awaitable);
            CHECK_FALSE(xcec);
            CHECK(xheld.holding == 3);
            CHECK(xheld.min_pttl > 1s);
            auto [xxec, xextended] = co_await c.async_extend(cross, 20s, tuple_awaitable);
            CHECK_FALSE(xxec);

            // Another owner holding one of the keys: every cluster master is held in part, the lock
            // is contended, and what was granted on the other slots is released.
            std::vector<std::string> overlapping;
            overlapping.push_back("payment-2");
            overlapping.push_back("payment");
            REQUIRE(key_slot(overlapping[0]) != key_slot(overlapping[1]));
            lock_options once = c.default_options();
            once.max_attempts = 1;
            auto [oec, refused] = co_await c.async_lock_all(overlapping, once, tuple_awaitable);
            CHECK(oec == error::contended);
            auto [xuec] = co_await c.async_unlock(xextended, tuple_awaitable);
            CHECK_FALSE(xuec);
            co_await sleep_for(50ms);
            CHECK(cl.total_keys() == 0);

            // A fenced lock across slots is refused: its two rounds go as one script each.
            lock_options fenced_multi = c.default_options();
            fenced_multi.fencing = true;
            auto [fec, fcross] = co_await c.async_lock_all(untagged, fenced_multi, tuple_awaitable);
            CHECK(fec == error::invalid_argument);
            CHECK(std::string(fcross.reason()).find(std::string("hash tag")) != std::string::npos);

            // A fenced lock: its counter shares the key's slot.
            lock_options fenced = c.default_options();
            fenced.fencing = true;
            auto f1 = co_await acquired(c, std::string("fenced-job"), fenced);
            co_await c.async_unlock(f1, tuple_awaitable);
            auto f2 = co_await acquired(c, std::string("fenced-job"), fenced);
            CHECK(f2.fencing_token() > f1.fencing_token());
            // The counter's record shares the slot too: the read finds f2's own term.
            auto [hec, held] = co_await c.async_holders("fenced-job", tuple_awaitable);
            REQUIRE_FALSE(hec);
            REQUIRE(held.holders.size() == 1);
            CHECK(held.holders[0].fencing_token == f2.fencing_token());
            co_await c.async_unlock(f2, tuple_awaitable);
        },
        60s);
}

TEST_CASE("cluster: a slot moved after the client read the map is followed (MOVED), and a slot "
          "being migrated "
          "is asked of the importing node (ASK)",
          "[live][cluster]")
{
    three_clusters cl;
    asio::io_context io;
    client c(io.get_executor(), cl.config(one_attempt(500ms, 500ms)));
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            // MOVED: in cluster 0, the empty slot of "moving" goes to another node, which the
            // client learns only from the redirection.
            const std::string moving = "moving";
            auto& c0 = cl[0];
            const auto from = owner_of(c0, moving);
            const auto to = (from + 1) % c0.node_count();
            move_slot(c0, moving, to);
            auto l = co_await acquired(c, moving);
            // The lock is decided at the quorum; a check hears from every master.
            auto [mcheck_ec, mheld] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(mcheck_ec);
            CHECK(mheld.holding == 3);
            CHECK(get_on(c0.masters(), to, moving) == std::string(l.token()));
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(get_on(c0.masters(), to, moving) == std::nullopt);

            // ASK: in cluster 1, the slot of "asking" is migrating; the key is not on the source,
            // which sends the client to the importing node.
            const std::string asking = "asking";
            auto& c1 = cl[1];
            const auto src = owner_of(c1, asking);
            const auto dst = (src + 1) % c1.node_count();
            const auto aslot = std::to_string(key_slot(asking));
            start_migration(c1, aslot, src, dst);
            auto a = co_await acquired(c, asking);
            // Only an ASKING connection sees the key on the importing node; the source, which
            // lacks it, sends readers there.
            CHECK_THAT(c1.command(dst, {"GET", asking}), Contains("MOVED"));
            CHECK_THAT(c1.command(src, {"GET", asking}), Contains("ASK"));
            auto [check_ec, held] = co_await c.async_check(a, tuple_awaitable);
            CHECK_FALSE(check_ec);
            CHECK(held.holding == 3);
            auto [aec] = co_await c.async_unlock(a, tuple_awaitable);
            CHECK_FALSE(aec);
            // The migration ends: the slot is the importing node's, and the release left nothing.
            end_migration(c1, aslot, src, dst);
            CHECK(get_on(c1.masters(), dst, asking) == std::nullopt);
        },
        60s);
}

TEST_CASE("cluster: a cluster master whose seeds cannot be reached is one master down: the others "
          "still make "
          "the quorum, and its state names why",
          "[live][cluster]")
{
    std::vector<std::unique_ptr<local_cluster>> clusters;
    clusters.push_back(std::make_unique<local_cluster>());
    clusters.push_back(std::make_unique<local_cluster>());
    client_config cfg;
    for (const auto& cluster : clusters)
        cfg.master_configs.push_back(cluster_master_of(*cluster));
    master_config dead;
    dead.cluster_seeds = {{"127.0.0.1", closed_port()}, {"127.0.0.1", closed_port()}};
    dead.host = dead.cluster_seeds[0].host;
    dead.port = dead.cluster_seeds[0].port;
    cfg.master_configs.push_back(dead);
    asio::io_context io;
    client c(io.get_executor(), cfg);
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [cec, ready] = co_await c.async_wait_connected(tuple_awaitable);
            CHECK_FALSE(cec);  // two of three
            CHECK(ready == 2);
            const auto states = c.master_states();
            CHECK(states[2].state == master_state::down);
            CHECK(states[2].last_error);
            auto l = co_await acquired(c, std::string("two-of-three"));
            CHECK(l.masters()[2].status == master_status::error);
            INFO(l.describe());
            CHECK_THAT(std::string(l.masters()[2].message),
                       Contains(std::to_string(dead.cluster_seeds[1].port)));
            co_await c.async_unlock(l, tuple_awaitable);
        }(),
        30s);
}

TEST_CASE("cluster: clients contending while slots are resharded under them: every redirection is "
          "followed, "
          "no extension fails, no two holders overlap",
          "[live][cluster]")
{
    three_clusters cl;
    constexpr int n_clients = 2;
    constexpr int per_client = 8;
    constexpr int n_resources = 24;  // 16 workers: contention, and keys in slots that move
    auto opts = lasting(3000ms);
    opts.max_attempts = 1000;
    opts.retry_delay = 0ms;
    opts.retry_jitter = 5ms;
    opts.max_wait = 2s;

    std::vector<std::atomic<int>> holders(n_resources);
    std::atomic<int> overlaps{0};
    std::atomic<long> acquisitions{0};
    std::atomic<bool> stop{false};
    error_log errors;
    auto worker = [&](int id) {
        asio::io_context io;
        client c(io.get_executor(), cl.config());
        int finished = 0;
        for (int k = 0; k < per_client; ++k)
            asio::co_spawn(
                io,
                [&, k]() -> asio::awaitable<void> {
                    for (int n = k; !stop; ++n)
                    {
                        const int r = (n * 7 + id) % n_resources;
                        auto [ec, l] = co_await c.async_lock("reshard-" + std::to_string(r), opts,
                                                             tuple_awaitable);
                        if (ec == error::contended)
                            continue;
                        if (ec)
                        {
                            errors.add("lock: " + ec.message() + " " + l.describe());
                            continue;
                        }
                        if (holders[r].fetch_add(1) != 0)
                            ++overlaps;
                        ++acquisitions;
                        auto [xec, extended] = co_await c.async_extend(l, 3000ms, tuple_awaitable);
                        if (xec)
                            errors.add("extend: " + xec.message() + " " + extended.describe());
                        co_await sleep_for(1ms);
                        holders[r].fetch_sub(1);
                        auto [uec] = co_await c.async_unlock(xec ? l : extended, tuple_awaitable);
                        if (uec)
                            errors.add("unlock: " + uec.message());
                    }
                },
                [&](std::exception_ptr e) {
                    if (e)
                        errors.add("a worker threw");
                    if (++finished == per_client)
                        io.stop();
                });
        io.run_for(120s);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < n_clients; ++t)
        threads.emplace_back(worker, t);
    // Let the clients learn the maps, then move a third of the slots of two clusters, and
    // some of them back, while they work.
    std::this_thread::sleep_for(300ms);
    const long before = acquisitions;
    try
    {
        const auto& p0 = cl[0].primaries();
        const auto& p1 = cl[1].primaries();
        cl[0].reshard(p0[0], p0[1], 1000);
        cl[1].reshard(p1[2], p1[0], 1000);
        cl[0].reshard(p0[1], p0[2], 1500);
    }
    catch (...)
    {
        stop = true;
        for (auto& t : threads)
            t.join();
        throw;
    }
    const long during = acquisitions - before;
    std::this_thread::sleep_for(300ms);
    stop = true;
    for (auto& t : threads)
        t.join();
    INFO(errors.str());
    CHECK(errors.size() == 0);
    CHECK(overlaps == 0);
    CHECK(during > 20);
    std::this_thread::sleep_for(50ms);
    CHECK(cl.total_keys() == 0);
}

TEST_CASE_METHOD(
    client_after_two<1>,
    "cluster: a shard primary killed is replaced by its replica: that cluster master fails its "
    "votes until the "
    "failover, then grants again, and a key the replica never received is gone, as the docs say",
    "[live][cluster]")
{
    const std::string held = "failover-held";
    const auto primary = owner_of(cluster, held);
    const std::optional<std::size_t> replica = replica_of(cluster, primary);

    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            // The replica stops, and the primary drops its link, before the lock is taken:
            // replication never brings it the key (a stopped replica would still read what its
            // socket had received).
            cluster.pause(*replica);
            CHECK(cluster.command(primary, {"CLIENT", "KILL", "TYPE", "replica"}) == ":1\r\n");
            const lock_options long_ttl = lasting_on(c, 60s);
            auto l = co_await acquired(c, held, long_ttl);
            auto [ec0, before] = co_await c.async_check(l, tuple_awaitable);
            REQUIRE_FALSE(ec0);
            CHECK(before.holding == 3);
            cluster.kill(primary);
            cluster.resume(*replica);

            // Until the replica is promoted, that master's votes fail; the standalone two still
            // make the quorum.
            auto during = co_await acquired(c, std::string("{failover-held}:during"));
            co_await c.async_unlock(during, tuple_awaitable);

            // Once promoted, it grants again (MOVED or CLUSTERDOWN have the map read again).
            const auto deadline = steady::now() + 30s;
            std::size_t holding = 0;
            while (holding < 3 && steady::now() < deadline)
            {
                auto [ec, probe] = co_await c.async_lock(std::string("{failover-held}:after"),
                                                         c.default_options(), tuple_awaitable);
                if (!ec)
                {
                    auto [kec, checked] = co_await c.async_check(probe, tuple_awaitable);
                    holding = kec ? 0 : checked.holding;
                    co_await c.async_unlock(probe, tuple_awaitable);
                }
                if (holding < 3)
                    co_await sleep_for(200ms);
            }
            CHECK(holding == 3);
            CHECK(cluster.command(*replica, {"ROLE"}).find("master") != std::string::npos);

            // The lock taken before the failover is on the standalone masters only: the promoted
            // replica never had its key. One more lost master and another client could take it.
            auto [ec1, after] = co_await c.async_check(l, tuple_awaitable);
            CHECK(after.holding == 2);
            CHECK(get_on(cluster.masters(), *replica, held) == std::nullopt);
            co_await c.async_unlock(l, tuple_awaitable);
        },
        90s);
}

TEST_CASE_METHOD(
    cluster_and_two<1>,
    "cluster: with cluster_replica_acks a cluster master's answer counts once a replica "
    "acknowledged it: a "
    "shard whose replica is paused fails that master's vote with not_replicated, and no key "
    "is left",
    "[live][cluster]")
{
    client_config cfg = cluster_after_two(cluster, standalone);
    cfg.cluster_replica_acks = 1;
    cfg.cluster_replica_ack_timeout =
        50ms;  // below the attempt timeout (200 ms at the default TTL)
    cfg.defaults.max_attempts = 1;
    // One standalone master down: every quorum (2 of 3) needs the cluster master's vote.
    standalone.kill(1);
    asio::io_context io;
    client c(io.get_executor(), cfg);

    const std::string key = "acked";
    const auto replica = replica_of(cluster, owner_of(cluster, key));
    const auto keys_left = [&] {
        std::size_t n = keys_on(standalone, 0).size();
        for (std::size_t i = 0; i < cluster.node_count(); ++i)
            n += keys_on(cluster.masters(), i).size();
        return n;
    };

    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [cec, ready] = co_await c.async_wait_connected(tuple_awaitable);
            REQUIRE_FALSE(cec);
            REQUIRE(ready == 2);

            // Acknowledged: the grant counted once the replica had the key, so it has it now.
            auto l = co_await acquired(c, key);
            CHECK(l.masters()[clustered].status == master_status::granted);
            CHECK(keys_on(cluster.masters(), replica) == std::vector<std::string>{key});
            auto [eec, extended] = co_await c.async_extend(l, 20s, tuple_awaitable);
            CHECK_FALSE(eec);  // an extension is acknowledged as well
            co_await c.async_unlock(l, tuple_awaitable);

            // The replica stopped: the primary still writes the key, but WAIT times out, so the
            // cluster master's grant does not count and the attempt fails; its release takes the
            // unacknowledged key off the primary too.
            cluster.pause(replica);
            std::optional<operation_error> failed;
            try
            {
                co_await c.async_lock(key, asio::use_awaitable);
            }
            catch (const operation_error& e)
            {
                failed = e;
            }
            cluster.resume(replica);
            REQUIRE(failed);
            CHECK(failed->code() == error::no_quorum);
            REQUIRE(failed->masters().size() == 3);
            CHECK(failed->masters()[clustered].status == master_status::error);
            CHECK(failed->masters()[clustered].ec == error::not_replicated);
            CHECK_THAT(std::string(failed->masters()[clustered].message),
                       Contains("WAIT saw 0 of the 1"));
            CHECK(failed->masters()[0].status == master_status::granted);
            // The releases of a failed attempt are not awaited: give them a moment to land.
            for (const auto until = steady::now() + 2s; keys_left() != 0 && steady::now() < until;)
                co_await sleep_for(10ms);
            CHECK(keys_left() == 0);

            // The replica back: the cluster master counts again.
            auto again = co_await acquired(c, key);
            CHECK(again.masters()[clustered].status == master_status::granted);
            co_await c.async_unlock(again, tuple_awaitable);
        }(),
        60s);
    std::this_thread::sleep_for(50ms);
    CHECK(keys_left() == 0);
}

TEST_CASE_METHOD(holder_and_waiter,
                 "cluster: a waiter on cluster masters is woken by the release: the node serving "
                 "the key tracks it for the client and pushes the invalidation",
                 "[live][cluster]")
{
    const std::string key = "waited";

    run(
        [&]() -> asio::awaitable<void> {
            const lock_options long_ttl = lasting_on(holder, 60s);
            auto held = co_await acquired(holder, key, long_ttl);

            // Neither a poll (every 20 s), nor the keys' expiry (60 s), nor the waiter's guess of
            // it before it read their PTTL (its own TTL, 30 s) comes within the wait of 15 s:
            // only an invalidation pushed by the nodes can wake the waiter in time.
            const lock_options o = waiting_15s(waiter, 20s);
            bool woken = false;
            asio::co_spawn(
                io,
                [&]() -> asio::awaitable<void> {
                    auto [ec, l] = co_await waiter.async_lock(key, o, tuple_awaitable);
                    INFO(l.describe());
                    CHECK_FALSE(ec);
                    woken = !ec;
                    if (!ec)
                        co_await waiter.async_unlock(l, tuple_awaitable);
                },
                asio::detached);

            // The waiter was refused (its attempt is decided by two refusals; the third master's
            // answer may come after), then read the key on the node that serves it in each
            // cluster that refused, which now lists a client with tracking on ("t" in its flags).
            const auto tracking_clusters = [&] {
                std::size_t n = 0;
                for (std::size_t k = 0; k < 3; ++k)
                    if (cl[k].command(owner_of(cl[k], key), {"CLIENT", "LIST"}).find(" flags=t ") !=
                        std::string::npos)
                        ++n;
                return n;
            };
            for (const auto until = steady::now() + 10s;
                 tracking_clusters() < 2 && steady::now() < until;)
                co_await sleep_for(20ms);
            CHECK(tracking_clusters() >= 2);

            // A release by someone else, by hand: a DEL on each cluster's node. The holder has
            // the key on a majority of the clusters; the third may have been still reading its
            // slot map when the holder asked (the CI run of 5462191 found it missing there).
            std::size_t deleted = 0;
            for (std::size_t k = 0; k < 3; ++k)
                deleted += cl[k].command(owner_of(cl[k], key), {"DEL", key}) == ":1\r\n" ? 1 : 0;
            CHECK(deleted >= 2);
            for (const auto until = steady::now() + 15s; !woken && steady::now() < until;)
                co_await sleep_for(20ms);
            CHECK(woken);
            co_await holder.async_unlock(held, tuple_awaitable);
        },
        60s);
}

TEST_CASE_METHOD(holder_and_waiter,
                 "cluster: a waiter whose key's slot is migrating on every cluster is not tracked "
                 "there, and polls at retry_delay",
                 "[live][cluster]")
{
    // The slot of the key migrates in all three clusters: a holder's SET lands on the
    // importing node through ASK; the waiter's tracked read (PTTL with CLIENT CACHING) is
    // answered ASK by the source and not followed, so no node tracks the key for it and its
    // PTTL is unknown. It polls every retry_delay (2 s): it takes the lock at the first poll
    // after the holder's keys expired (1.5 s), long before its own TTL (30 s) or the end of its
    // wait (15 s), which is where it used to fall back.
    const std::string key = "waited-asking";
    const auto slot = std::to_string(key_slot(key));
    for (std::size_t k = 0; k < 3; ++k)
    {
        const auto src = owner_of(cl[k], key);
        start_migration(cl[k], slot, src, (src + 1) % cl[k].node_count());
    }

    run(
        [&]() -> asio::awaitable<void> {
            const lock_options short_ttl = lasting_on(holder, 1500ms);
            const auto t0 = steady::now();
            auto held = co_await acquired(holder, key, short_ttl);

            const lock_options o = waiting_15s(waiter, 2s);
            auto [ec, l] = co_await waiter.async_lock(key, o, tuple_awaitable);
            const auto took = steady::now() - t0;
            INFO(l.describe() << "; taken " << ms(took) << " ms after the holder's acquisition");
            REQUIRE_FALSE(ec);
            CHECK(took >= 1400ms);  // not before the holder's keys expired
            CHECK(took < 9000ms);   // a poll, not the end of the wait (15 s)
            co_await waiter.async_unlock(l, tuple_awaitable);
            (void)held;
        },
        60s);
}

TEST_CASE_METHOD(
    cluster_and_two<0>,
    "cluster: a shard primary restarted without persistence quarantines the whole cluster master: "
    "its grant "
    "of a key that another shard serves counts as master_restarted while the other masters grant",
    "[live][cluster][restart]")
{
    auto cfg = cluster_after_two(cluster, standalone);
    cfg.restart_quarantine = 60s;
    // No health PINGs: once the client is idle, the next reply it reads from the cluster is
    // the lock's own (see below).
    cfg.connection.health_check_interval = 0ms;
    asio::io_context io;
    client c(io.get_executor(), cfg);

    // The key's slot is served by one primary (the node that answers EXISTS without MOVED);
    // another primary restarts.
    const std::string key = "quarantined-elsewhere";
    const auto owner = owner_of(cluster, key);
    std::optional<std::size_t> restarted;
    for (const auto p : cluster.primaries())
        if (p != owner && !restarted)
            restarted = p;
    REQUIRE(restarted);

    std::optional<std::pair<error_code, lock>> result;  // outlives the body: the callback writes it
    run_and_drain(
        io, c,
        [&]() -> asio::awaitable<void> {
            const auto before = c.master_states()[clustered];
            const auto owner_run_id = run_id_of(cluster, owner);
            const auto old_run_id = run_id_of(cluster, *restarted);
            cluster.restart(*restarted);
            // A new process on the same port, still a shard primary; the key's shard untouched.
            CHECK(run_id_of(cluster, *restarted) != old_run_id);
            CHECK(std::count(cluster.primaries().begin(), cluster.primaries().end(), *restarted) ==
                  1);
            CHECK(run_id_of(cluster, owner) == owner_run_id);
            CHECK(owner_of(cluster, key) == owner);
            CHECK(cluster.command(owner, {"CLUSTER", "KEYSLOT", key}) ==
                  ":" + std::to_string(key_slot(key)) + "\r\n");
            // The client reconnects to it (its other node connections never dropped).
            REQUIRE(co_await eventually(
                [&] {
                    const auto s = c.master_states()[clustered];
                    return s.connects == before.connects + 1 && s.state == master_state::ready;
                },
                10s));
            CHECK(c.master_states()[clustered].drops == before.drops + 1);

            // The standalone masters answer only once the cluster master's answer has been read:
            // the round then needs both their grants, and every master's outcome is recorded.
            const auto replies = c.master_states()[clustered].replies;
            standalone.pause(0);
            standalone.pause(1);
            c.async_lock(key, one_attempt(5000ms, 2000ms),
                         [&](error_code ec, lock l) { result.emplace(ec, std::move(l)); });
            const bool cluster_answered = co_await eventually(
                [&] {
                    return get_on(cluster.masters(), owner, key) &&
                           c.master_states()[clustered].replies > replies;
                },
                5s);
            standalone.resume(0);
            standalone.resume(1);
            REQUIRE(cluster_answered);
            REQUIRE(co_await eventually([&] { return result.has_value(); }, 5s));
            const auto& [ec, l] = *result;
            INFO(l.describe());
            REQUIRE_FALSE(ec);
            CHECK(count_status(l, master_status::granted) == 2);
            const auto& verdict = l.masters()[clustered];
            CHECK(verdict.status == master_status::error);
            CHECK(verdict.ec == error::master_restarted);
            CHECK_THAT(verdict.message, Contains("restarted lately"));
            // The shard that serves the key, which did not restart, did grant it.
            CHECK(get_on(cluster.masters(), owner, key) == std::string(l.token()));

            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(co_await settled_keys(standalone) == 0);
            CHECK(co_await settled_keys(cluster.masters()) == 0);
        },
        30s);
}

TEST_CASE_METHOD(
    cluster_and_two<1>,
    "cluster: deployment checks run on every node of a cluster master, without "
    "master_has_replicas and "
    "master_is_replica, each warning once: an evicting shard primary reached through the "
    "slot map is "
    "reported, its shards' replicas and a replica seed are not",
    "[live][cluster][deployment]")
{
    const auto& primaries = cluster.primaries();
    // The only seed is a replica: the client reaches it, then the primaries the map names.
    const auto seed = replica_of(cluster, primaries.at(0));
    const auto evicting = primaries.at(1);
    REQUIRE(cluster.command(evicting, {"CONFIG", "SET", "maxmemory", "100mb"}) == "+OK\r\n");
    REQUIRE(cluster.command(evicting, {"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}) ==
            "+OK\r\n");
    // Every primary has its replica attached: a standalone master would be reported for it.
    for (const auto p : primaries)
        REQUIRE_THAT(cluster.command(p, {"INFO", "replication"}),
                     Contains("connected_slaves:1\r\n"));

    std::vector<std::pair<std::size_t, error_code>> warned;  // (master, warning)
    auto cfg = cluster_after_two(cluster, standalone, seed);
    cfg.on_event = [&](const event& e) {
        if (e.kind == event_kind::master_warning)
            warned.emplace_back(e.master, e.ec);
    };
    asio::io_context io;
    client c(io.get_executor(), cfg);
    const auto of_cluster = [&](error_code w) {
        return std::count(warned.begin(), warned.end(),
                          std::pair<std::size_t, error_code>(clustered, w));
    };
    run_and_drain(
        io, c,
        [&]() -> asio::awaitable<void> {
            CHECK(co_await eventually(
                [&] { return of_cluster(error::eviction_can_drop_locks) > 0; }, 5s));
            co_await sleep_for(50ms);  // the other handshakes' events, posted as that one was
            const auto warnings = c.master_states()[clustered].warnings;
            std::string seen;
            for (const auto& [master, w] : warned)
                seen += " master " + std::to_string(master) + ": " + w.message() + ";";
            INFO("events:" << seen << " master_states() of the cluster master: " << warnings.size()
                           << " warnings");
            CHECK(of_cluster(error::eviction_can_drop_locks) == 1);
            CHECK(std::count(warnings.begin(), warnings.end(), error::eviction_can_drop_locks) ==
                  1);
            CHECK(of_cluster(error::master_has_replicas) == 0);
            CHECK(std::count(warnings.begin(), warnings.end(), error::master_has_replicas) == 0);
            CHECK(of_cluster(error::master_is_replica) == 0);
            CHECK(std::count(warnings.begin(), warnings.end(), error::master_is_replica) == 0);
            // Every node runs without persistence, as the fixture starts them: one warning for
            // the cluster master, not one per node.
            REQUIRE_THAT(cluster.command(evicting, {"CONFIG", "GET", "appendonly"}),
                         Contains("\r\nno\r\n"));
            CHECK(of_cluster(error::persistence_off) == 1);
            // Neither is the seed's doing: it has no maxmemory.
            CHECK_THAT(cluster.command(seed, {"CONFIG", "GET", "maxmemory"}),
                       Contains("\r\n0\r\n"));
        },
        30s);
}

TEST_CASE_METHOD(
    client_after_two<0>,
    "cluster: a script goes as EVALSHA to a node that has run it, and a node that lost it "
    "(SCRIPT FLUSH) gets "
    "the body again without the lock seeing NOSCRIPT",
    "[live][cluster]")
{
    const std::string key = "scripted";
    const auto node = owner_of(cluster, key);
    // How many times `command` ran on the key's node: INFO commandstats' "calls" (NOSCRIPT
    // included: an EVALSHA that finds no script has run).
    const auto calls = [&](std::string_view command) {
        return command_calls(cluster.masters(), node, command);
    };
    REQUIRE(cluster.command(node, {"CONFIG", "RESETSTAT"}) == "+OK\r\n");

    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            // Three releases: the first sends the body, the next two its SHA1 only.
            for (int k = 0; k < 3; ++k)
            {
                auto l = co_await acquired(c, key);
                auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                CHECK_FALSE(uec);
            }
            CHECK(calls("eval") == 1);
            CHECK(calls("evalsha") == 2);

            // The node forgets its scripts. The extension's script is new there (EVAL); the
            // release's EVALSHA meets NOSCRIPT, and the body follows to the same node.
            REQUIRE(cluster.command(node, {"SCRIPT", "FLUSH"}) == "+OK\r\n");
            auto l = co_await acquired(c, key);
            auto [eec, extended] = co_await c.async_extend(l, 20s, tuple_awaitable);
            CHECK_FALSE(eec);
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(co_await eventually([&] { return calls("eval") == 3; }, 2s));
            CHECK(calls("evalsha") == 3);
            CHECK(keys_on(cluster.masters(), node).empty());
        },
        30s);
}

TEST_CASE_METHOD(
    client_of_three_clusters,
    "cluster: a semaphore's permits and a read-write lock's keys on three cluster masters: "
    "each in its resource's slot, readers together, a writer alone, a reader extended and "
    "checked, nothing left",
    "[live][cluster][semaphore][rwlock]")
{
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            lock_options permits = c.default_options();
            permits.permits = 2;
            auto a = co_await acquired(c, std::string("pool"), permits);
            auto b = co_await acquired(c, std::string("pool"), permits);
            CHECK(a.key() != b.key());
            // On a majority of the cluster masters (the third may have set another permit, or not
            // have answered yet).
            std::size_t holding_a = 0;
            for (std::size_t k = 0; k < 3; ++k)
                holding_a += get_on(cl[k].masters(), owner_of(cl[k], std::string(a.key())),
                                    a.key()) == std::string(a.token());
            CHECK(holding_a >= 2);
            auto [tec, third] = co_await c.async_try_lock("pool", permits, tuple_awaitable);
            CHECK_FALSE(tec);
            CHECK_FALSE(third.has_value());
            co_await c.async_unlock(a, tuple_awaitable);
            co_await c.async_unlock(b, tuple_awaitable);

            lock_options reader = c.default_options();
            reader.role = lock_role::reader;
            lock_options writer = c.default_options();
            writer.role = lock_role::writer;
            writer.max_attempts = 1;
            auto r1 = co_await acquired(c, std::string("doc"), reader);
            auto r2 = co_await acquired(c, std::string("doc"), reader);
            CHECK(key_slot(std::string(r1.key())) == key_slot(std::string("doc")));
            std::size_t marked = 0;
            for (std::size_t k = 0; k < 3; ++k)
                marked += get_on(cl[k].masters(), owner_of(cl[k], std::string("doc")), "doc") ==
                          std::string("redlock:readers");
            CHECK(marked >= 2);
            auto [wec, w] = co_await c.async_lock("doc", writer, tuple_awaitable);
            CHECK(wec == error::contended);
            // A reader's extension, check and release: scripts a cluster master runs per node.
            auto [xec, r1x] = co_await c.async_extend(r1, 20s, tuple_awaitable);
            INFO(r1x.describe());
            REQUIRE_FALSE(xec);
            auto [kec, checked] = co_await c.async_check(r1x, tuple_awaitable);
            CHECK_FALSE(kec);
            CHECK(checked.holding >= 2);
            CHECK(checked.min_pttl > 10s);
            co_await c.async_unlock(r1x, tuple_awaitable);
            co_await c.async_unlock(r2, tuple_awaitable);
            auto w2 = co_await acquired(c, std::string("doc"), writer);
            CHECK(w2.key() == "doc");
            co_await c.async_unlock(w2, tuple_awaitable);
            co_await sleep_for(100ms);  // the releases not awaited land
            CHECK(cl.total_keys() == 0);
        },
        60s);
}
