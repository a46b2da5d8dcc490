// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_options.hpp"

#include "parse_or_exit.hpp"

#include <redlock/config.hpp>
#include <redlock/options.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace redlock::bench {

namespace fs = std::filesystem;

namespace {

constexpr const char* description = R"(redlock-bench [OPTIONS]

Lock throughput and latency of redlock::client: W workers each run acquire -> hold -> release
in a loop; worker w locks resource w % R. Masters: --spawn 5 unless --master is given; with
--shards S each spawned master is a Redis Cluster of S primaries, with --replicas R each
primary has R replicas.)";

constexpr const char* footer =
    R"(A progress line is printed every second (rewritten in place on a terminal). Exit status: 0 ok,
1 counts do not add up, workers not drained, or the JSON or plot not written; 2 bad
arguments, masters unreachable or not started, or another failure (an exception);
130 interrupted (the results so far are still printed).)";

[[noreturn]] void usage_error(const std::string& msg) { cli::usage_error("redlock-bench", msg); }

// Whether a given master is a Redis Cluster; a URI that does not parse counts as one, so
// that the client, not this check, says what is wrong with it.
bool may_be_cluster(const std::string& uri)
{
    error_code ec;
    std::string why;
    const auto m = parse_master_uri(uri, ec, why);
    return ec || m.is_cluster();
}

// An option of `app` in `group` whose value must lie in [lo, hi], its default shown in the
// help.
template <class T, class Bound>
CLI::Option* add_ranged(CLI::App& app, const std::string& group, const std::string& name, T& value,
                        const std::string& help, Bound lo, Bound hi)
{
    return app.add_option(name, value, help)
        ->check(CLI::Range(lo, hi))
        ->capture_default_str()
        ->group(group);
}

}  // namespace

config parse_args(int argc, char** argv)
{
    config c;
    CLI::App app{description, "redlock-bench"};
    app.footer(footer);
    app.get_formatter()->column_width(26);

    auto* master =
        app.add_option("--master", c.masters,
                       "a master (repeat for each: redis://, rediss://, unix://, redis-cluster://)")
            ->type_name("URI")
            ->allow_extra_args(false)
            ->group("masters");
    auto* spawn =
        app.add_option("--spawn", c.spawn,
                       "start N local redis-server masters on loopback, stop them at the end")
            ->check(CLI::Range(1, 63))
            ->excludes(master)
            ->group("masters");
    add_ranged(app, "masters", "--shards", c.shards,
               "with --spawn: each master is a local Redis Cluster of S primaries (S >= 3), given "
               "to the client as a redis-cluster:// URI; 0: standalone masters",
               0, 63);
    add_ranged(app, "masters", "--replicas", c.replicas,
               "with --spawn and --shards: each shard's primary has R replicas (redis-cli "
               "--cluster-replicas R); their CPU counts in the masters' CPU per cycle, and is also "
               "shown on its own",
               0, 16);
    add_ranged(app, "masters", "--cluster-replica-acks", c.cluster_replica_acks,
               "client_config::cluster_replica_acks: a cluster master's answer to a write counts "
               "once N replicas of its shard acknowledged it (WAIT); needs cluster masters "
               "(--spawn with --shards, or --master redis-cluster://...); 0: off",
               0U, 16U);
    long ack_timeout_ms = client_config{}.cluster_replica_ack_timeout.count();
    auto* ack_timeout = add_ranged(app, "masters", "--cluster-replica-ack-timeout", ack_timeout_ms,
                                   "client_config::cluster_replica_ack_timeout (ms): how long each "
                                   "WAIT waits for the replicas; needs --cluster-replica-acks",
                                   1L, 10'000L);
    app.add_flag("--serve", c.serve,
                 "with --spawn (and --shards, --replicas): print the masters' URIs and \"ready\", "
                 "then wait for SIGINT/SIGTERM "
                 "(or for the parent to exit) and stop them")
        ->group("masters");

    add_ranged(app, "workload", "--workers", c.workers,
               "concurrent acquire -> hold -> release loops", 1, 1'000'000);
    auto* resources =
        app.add_option(
               "--resources", c.resources,
               "distinct resources <prefix>0 .. <prefix>R-1 (default: W; R < W: contention)")
            ->check(CLI::Range(1, 100'000'000))
            ->group("workload");
    app.add_option("--resource-prefix", c.prefix, "resource name prefix")
        ->capture_default_str()
        ->group("workload");
    long ttl_ms = c.ttl.count(), hold_ms = c.hold.count();
    add_ranged(app, "workload", "--ttl", ttl_ms, "lock TTL in milliseconds", 1L, 86'400'000L);
    add_ranged(app, "workload", "--hold", hold_ms, "time each lock is held, a timer wait (ms)", 0L,
               86'400'000L);
    add_ranged(app, "workload", "--retries", c.retries,
               "retries after a failed attempt: max_attempts = K + 1", 0U, 1'000'000U);
    add_ranged(app, "workload", "--threads", c.threads, "io_context threads", 1U, 256U);
    app.add_flag("--observe", c.observe,
                 "attach client_config::on_event with counters (what a service exporting metrics "
                 "pays); the "
                 "counts are printed at the end")
        ->group("workload");
    app.add_flag("--fencing", c.fencing,
                 "fenced locks (lock_options::fencing): each resource's holders must get growing "
                 "fencing tokens; "
                 "a violation is reported and exits 1")
        ->group("workload");
    app.add_flag(
           "--wait", c.wait,
           "acquisitions wait for the release, woken by it (lock_options::wait = 60 s; a wait that "
           "ends "
           "counts as contended); with R < W the summary adds the hand-off time (from a release's "
           "start to "
           "the next acquisition of the resource completing) and the fairness over the workers")
        ->group("workload");
    app.add_flag(
           "--no-handoff", c.no_handoff,
           "with --wait: a waiter does not take the lock straight from a holder of this process "
           "(lock_options::handoff = false): the holder deletes the keys and the waiter sets them")
        ->group("workload")
        ->needs("--wait");
    add_ranged(app, "workload", "--permits", c.permits,
               "a counting semaphore of N permits per resource (lock_options::permits); a witness "
               "counts each resource's holders, and more than N is a violation",
               1U, 1024U);
    app.add_option("--read-share", c.read_share,
                   "a read-write lock (lock_options::role): this share of the workers (0..1) "
                   "take their resource as readers, the others as writers; a writer beside "
                   "anyone is a violation")
        ->check(CLI::Range(0.0, 1.0))
        ->group("workload");
    app.add_flag("--unsafe-majority-semaphore", c.unsafe_majority,
                 "with --permits N: not the library's semaphore but the unsound one some peers "
                 "ship (each master admits N holders, a holder needs a majority of them), "
                 "to show its violations next to the library's zero; exits 0 when it has some")
        ->group("workload");
    long handover_delay_us = client_config{}.handover_write_delay.count();
    add_ranged(app, "workload", "--handover-write-delay", handover_delay_us,
               "client_config::handover_write_delay (us): how long a hand-over may wait to share a "
               "write with what follows it; 0: written at once",
               0L, 10'000L);

    add_ranged(app, "measurement", "--duration", c.duration_s, "measured seconds", 0.1, 86400.0);
    add_ranged(app, "measurement", "--warmup", c.warmup_s,
               "seconds run before measuring, not counted", 0.0, 86400.0);
    app.add_option("--json", c.json_file,
                   "write the results and the configuration as one JSON object")
        ->type_name("FILE")
        ->group("measurement");
    app.add_option("--plot", c.plot_file,
                   "write a latency-percentile plot; .png or .svg (needs gnuplot)")
        ->type_name("FILE")
        ->group("measurement");

    cli::parse_or_exit(app, argc, argv);
    c.ttl = std::chrono::milliseconds(ttl_ms);
    c.hold = std::chrono::milliseconds(hold_ms);
    c.cluster_replica_ack_timeout = std::chrono::milliseconds(ack_timeout_ms);
    c.handover_write_delay = std::chrono::microseconds(handover_delay_us);
    // Checked before the default --spawn 5 applies: a cluster size is a choice about spawned
    // masters, and given masters say what they are in their URIs.
    if (c.shards != 0 && spawn->count() == 0)
        usage_error("--shards needs --spawn (with --master, give a cluster as "
                    "redis-cluster://host:port,...)");
    if (c.shards == 1 || c.shards == 2)
        usage_error("--shards must be 0 (standalone masters) or at least 3 (redis-cli --cluster "
                    "create needs 3 "
                    "primaries), got " +
                    std::to_string(c.shards));
    if (c.replicas != 0 && (spawn->count() == 0 || c.shards == 0))
        usage_error("--replicas needs --spawn and --shards (replicas of each shard's primary; with "
                    "--master, a "
                    "cluster's replicas are its own)");
    if (c.masters.empty() && c.spawn == 0)
        c.spawn = 5;
    if (c.serve && c.spawn == 0)
        usage_error("--serve needs --spawn");
    if (c.cluster_replica_acks != 0)
    {
        if (c.serve)
            usage_error("--cluster-replica-acks is a client setting: --serve runs no client");
        if (c.spawn != 0 ? c.shards == 0
                         : std::none_of(c.masters.begin(), c.masters.end(), may_be_cluster))
            usage_error("--cluster-replica-acks needs cluster masters: --spawn N --shards S "
                        "[--replicas R], or "
                        "--master redis-cluster://host:port,...");
        if (c.spawn != 0 && c.cluster_replica_acks > c.replicas)
            std::fprintf(
                stderr,
                "redlock-bench: warning: --cluster-replica-acks %u is more than the %zu replica(s) "
                "of each "
                "shard (--replicas): every WAIT will time out (after %ld ms, or at the server's "
                "next tick), "
                "no cluster master's answer to a write will count, and acquisitions will fail "
                "(no_quorum)\n",
                c.cluster_replica_acks, c.replicas, ack_timeout_ms);
    }
    else if (ack_timeout->count() != 0)
    {
        usage_error("--cluster-replica-ack-timeout needs --cluster-replica-acks N (N >= 1): "
                    "without acks no WAIT "
                    "is sent");
    }
    if (c.permits > 1 && c.fencing)
        usage_error("--permits takes a semaphore: not with --fencing");
    if (c.read_share >= 0 && (c.fencing || c.permits > 1))
        usage_error("--read-share takes a read-write lock: not with --fencing or --permits");
    if (c.unsafe_majority && c.wait)
        usage_error("--unsafe-majority-semaphore does not wait: not with --wait");
    if (c.unsafe_majority && c.permits < 2)
        usage_error("--unsafe-majority-semaphore needs --permits N (N >= 2): with one permit a "
                    "majority is sound");
    if (c.unsafe_majority && c.shards != 0)
        usage_error("--unsafe-majority-semaphore runs on standalone masters only");
    if (resources->count() == 0)
        c.resources = c.workers;
    if (!c.plot_file.empty())
    {
        const auto ext = fs::path(c.plot_file).extension().string();
        if (ext != ".png" && ext != ".svg")
            usage_error("--plot FILE must end in .png or .svg, got '" + c.plot_file + "'");
    }
    return c;
}

}  // namespace redlock::bench
