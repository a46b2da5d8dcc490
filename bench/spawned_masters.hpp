// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: the masters it starts itself (--spawn N), each a redis-server or, with
// --shards S, a Redis Cluster of S primaries (and with --replicas R, R replicas of each).
#ifndef REDLOCK_BENCH_SPAWNED_MASTERS_HPP
#define REDLOCK_BENCH_SPAWNED_MASTERS_HPP

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "local_cluster.hpp"
#include "local_masters.hpp"

namespace redlock::bench {

/// One redis-server process behind the spawned masters.
struct server_process
{
    std::size_t master = 0;  // which Redlock master it serves
    std::size_t node = 0;    // its node in that master's cluster (0 for a standalone master)
    pid_t pid = 0;
    bool replica = false;  // a replica of a shard's primary (as the cluster was when it formed)
};

/// The spawned masters, on loopback; everything is stopped by PID when this goes away.
class spawned_masters
{
public:
    /// Starts `count` standalone masters, or with `shards` (>= 3) `count` clusters of `shards`
    /// primaries each, every primary with `replicas` replicas (0 without `shards`). Throws
    /// std::runtime_error (from the test support) when a server or a cluster does not start;
    /// what was started is stopped.
    spawned_masters(std::size_t count, std::size_t shards, std::size_t replicas);

    /// The masters' URIs: redis://127.0.0.1:P, or redis-cluster://127.0.0.1:P1,... per cluster.
    std::vector<std::string> uris() const;
    /// Every server process, master by master.
    std::vector<server_process> processes() const;

private:
    std::optional<test::local_masters> standalone_;
    std::vector<test::local_cluster> clusters_;
};

}  // namespace redlock::bench

#endif
