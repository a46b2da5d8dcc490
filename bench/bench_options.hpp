// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: its options, and how they are read from the command line.
#ifndef REDLOCK_BENCH_BENCH_OPTIONS_HPP
#define REDLOCK_BENCH_BENCH_OPTIONS_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::bench {

struct config
{
    std::vector<std::string> masters;
    std::size_t spawn = 0;  // 0: use `masters`
    std::size_t shards =
        0;  // with spawn: 0 standalone masters, else each a cluster of this many primaries
    std::size_t replicas = 0;           // with spawn and shards: replicas of each shard's primary
    unsigned cluster_replica_acks = 0;  // client_config::cluster_replica_acks
    std::chrono::milliseconds cluster_replica_ack_timeout{
        0};                                             // client_config's, its default unless given
    std::chrono::microseconds handover_write_delay{0};  // client_config's, its default unless given
    std::size_t workers = 128;
    std::size_t resources = 0;  // 0: as many as workers
    std::string prefix = "bench:";
    std::chrono::milliseconds ttl{10000};
    std::chrono::milliseconds hold{0};
    double duration_s = 10;
    double warmup_s = 1;
    unsigned retries = 0;
    unsigned threads = 1;
    std::string json_file;
    std::string plot_file;
    bool serve = false;
    bool observe = false;  // count the client's events (client_config::on_event)
    bool fencing = false;  // fenced locks, each resource's tokens checked to grow
    bool wait = false;     // waiting acquisitions (lock_options::wait), woken by the release
    bool no_handoff =
        false;  // with wait: lock_options::handoff off (the lock is released, then taken)
    std::uint32_t permits = 1;     // lock_options::permits: more than 1, a counting semaphore
    double read_share = -1;        // 0..1: a read-write lock, this share of the workers readers
    bool unsafe_majority = false;  // with permits: the unsound majority-counting semaphore
};

/// Reads the command line; prints the usage and exits (0 for --help, 2 for a bad argument).
config parse_args(int argc, char** argv);

}  // namespace redlock::bench

#endif
