// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench's defaults, as docs/performance.md ("redlock-bench") states them: the command
// line with no option parsed by the tool's own parse_args (guarantees.md B13).
#include <catch2/catch.hpp>

#include "../bench_options.hpp"

#include <redlock/options.hpp>

#include <chrono>

TEST_CASE(
    "options: with no option, 5 spawned masters, 128 workers on as many resources, 10 s after 1 s")
{
    using namespace std::chrono_literals;
    char name[] = "redlock-bench";
    char* argv[] = {name, nullptr};
    const auto c = redlock::bench::parse_args(1, argv);
    CHECK(c.masters.empty());
    CHECK(c.spawn == 5);
    CHECK(c.shards == 0);
    CHECK(c.replicas == 0);
    CHECK(c.workers == 128);
    CHECK(c.resources == 128);  // R = W
    CHECK(c.prefix == "bench:");
    CHECK(c.ttl == 10000ms);
    CHECK(c.hold == 0ms);
    CHECK(c.retries == 0);
    CHECK(c.threads == 1);
    CHECK(c.duration_s == 10);
    CHECK(c.warmup_s == 1);
    CHECK(c.json_file.empty());
    CHECK(c.plot_file.empty());
    CHECK_FALSE(c.serve);
    CHECK_FALSE(c.observe);
    CHECK_FALSE(c.fencing);
    CHECK_FALSE(c.wait);
    CHECK_FALSE(c.no_handoff);
    // The client's own settings unless given: no replica acks, WAIT 50 ms, its hand-over delay.
    const redlock::client_config client;
    CHECK(c.cluster_replica_acks == 0);
    CHECK(c.cluster_replica_ack_timeout == 50ms);
    CHECK(c.cluster_replica_ack_timeout == client.cluster_replica_ack_timeout);
    CHECK(c.handover_write_delay == client.handover_write_delay);
}

TEST_CASE("options: --workers alone leaves R = W, and --resources R sets contention")
{
    char name[] = "redlock-bench", workers[] = "--workers", w[] = "8", resources[] = "--resources",
         r[] = "3";
    char* only_workers[] = {name, workers, w, nullptr};
    CHECK(redlock::bench::parse_args(3, only_workers).resources == 8);
    char* both[] = {name, workers, w, resources, r, nullptr};
    const auto c = redlock::bench::parse_args(5, both);
    CHECK(c.workers == 8);
    CHECK(c.resources == 3);
}
