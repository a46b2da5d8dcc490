// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_options.hpp"

#include "parse_or_exit.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace redlock::bench {

namespace fs = std::filesystem;

namespace {

constexpr const char* description = R"(redlock-bench [OPTIONS]

Lock throughput and latency of redlock::client: W workers each run acquire -> hold -> release
in a loop; worker w locks resource w % R. Masters: --spawn 5 unless --master is given; with
--shards S each spawned master is a Redis Cluster of S primaries.)";

constexpr const char* footer = R"(A progress line is printed every second (rewritten in place on a terminal). Exit status: 0 ok,
1 counts do not add up or a run-time failure, 2 bad arguments or masters unreachable,
130 interrupted (the results so far are still printed).)";

[[noreturn]] void usage_error(const std::string& msg)
{
    cli::usage_error("redlock-bench", msg);
}

}  // namespace

config parse_args(int argc, char** argv)
{
    config c;
    CLI::App app{description, "redlock-bench"};
    app.footer(footer);
    app.get_formatter()->column_width(26);

    auto* master = app.add_option("--master", c.masters,
                                  "a master (repeat for each: redis://, rediss://, unix://, redis-cluster://)")
                       ->type_name("URI")
                       ->allow_extra_args(false)
                       ->group("masters");
    auto* spawn = app.add_option("--spawn", c.spawn,
                                 "start N local redis-server masters on loopback, stop them at the end")
                      ->check(CLI::Range(1, 63))
                      ->excludes(master)
                      ->group("masters");
    app.add_option("--shards", c.shards,
                   "with --spawn: each master is a local Redis Cluster of S primaries (S >= 3), given to the "
                   "client as a redis-cluster:// URI; 0: standalone masters")
        ->check(CLI::Range(0, 63))
        ->capture_default_str()
        ->group("masters");
    app.add_flag("--serve", c.serve,
                 "with --spawn (and --shards): print the masters' URIs and \"ready\", then wait for SIGINT/SIGTERM "
                 "(or for the parent to exit) and stop them")
        ->group("masters");

    app.add_option("--workers", c.workers, "concurrent acquire -> hold -> release loops")
        ->check(CLI::Range(1, 1'000'000))
        ->capture_default_str()
        ->group("workload");
    auto* resources = app.add_option("--resources", c.resources,
                                     "distinct resources <prefix>0 .. <prefix>R-1 (default: W; R < W: contention)")
                          ->check(CLI::Range(1, 100'000'000))
                          ->group("workload");
    app.add_option("--resource-prefix", c.prefix, "resource name prefix")->capture_default_str()->group("workload");
    long ttl_ms = c.ttl.count(), hold_ms = c.hold.count();
    app.add_option("--ttl", ttl_ms, "lock TTL in milliseconds")
        ->check(CLI::Range(1L, 86'400'000L))
        ->capture_default_str()
        ->group("workload");
    app.add_option("--hold", hold_ms, "time each lock is held, a timer wait (ms)")
        ->check(CLI::Range(0L, 86'400'000L))
        ->capture_default_str()
        ->group("workload");
    app.add_option("--retries", c.retries, "retries after a failed attempt: max_attempts = K + 1")
        ->check(CLI::Range(0U, 1'000'000U))
        ->capture_default_str()
        ->group("workload");
    app.add_option("--threads", c.threads, "io_context threads")
        ->check(CLI::Range(1U, 256U))
        ->capture_default_str()
        ->group("workload");
    app.add_flag("--observe", c.observe,
                 "attach client_config::on_event with counters (what a service exporting metrics pays); the "
                 "counts are printed at the end")
        ->group("workload");
    app.add_flag("--fencing", c.fencing,
                 "fenced locks (lock_options::fencing): each resource's holders must get growing fencing tokens; "
                 "a violation is reported and exits 1")
        ->group("workload");
    app.add_flag("--wait", c.wait,
                 "acquisitions wait for the release, woken by it (lock_options::wait = 60 s; a wait that ends "
                 "counts as contended); with R < W the summary adds the hand-off time (from a release's start to "
                 "the next acquisition of the resource completing) and the fairness over the workers")
        ->group("workload");

    app.add_option("--duration", c.duration_s, "measured seconds")
        ->check(CLI::Range(0.1, 86400.0))
        ->capture_default_str()
        ->group("measurement");
    app.add_option("--warmup", c.warmup_s, "seconds run before measuring, not counted")
        ->check(CLI::Range(0.0, 86400.0))
        ->capture_default_str()
        ->group("measurement");
    app.add_option("--json", c.json_file, "write the results and the configuration as one JSON object")
        ->type_name("FILE")
        ->group("measurement");
    app.add_option("--plot", c.plot_file, "write a latency-percentile plot; .png or .svg (needs gnuplot)")
        ->type_name("FILE")
        ->group("measurement");

    cli::parse_or_exit(app, argc, argv);
    c.ttl = std::chrono::milliseconds(ttl_ms);
    c.hold = std::chrono::milliseconds(hold_ms);
    // Checked before the default --spawn 5 applies: a cluster size is a choice about spawned
    // masters, and given masters say what they are in their URIs.
    if (c.shards != 0 && spawn->count() == 0)
        usage_error("--shards needs --spawn (with --master, give a cluster as redis-cluster://host:port,...)");
    if (c.shards == 1 || c.shards == 2)
        usage_error("--shards must be 0 (standalone masters) or at least 3 (redis-cli --cluster create needs 3 "
                    "primaries), got " + std::to_string(c.shards));
    if (c.masters.empty() && c.spawn == 0)
        c.spawn = 5;
    if (c.serve && c.spawn == 0)
        usage_error("--serve needs --spawn");
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
