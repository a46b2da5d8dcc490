// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace redlock::bench {

namespace fs = std::filesystem;

namespace {

constexpr const char* usage_text = R"(usage: redlock-bench [options]

Lock throughput and latency of redlock::client: W workers each run acquire -> hold -> release
in a loop; worker w locks resource w % R.

masters (default: --spawn 5)
  --master URI          a master (repeat for each: redis://, rediss://, unix://)
  --spawn N             start N local redis-server masters on loopback, stop them at the end
  --serve               with --spawn: print the masters' URIs and "ready", then wait for
                        SIGINT/SIGTERM (or for the parent to exit) and stop them

workload
  --workers W           concurrent acquire -> hold -> release loops (default 128)
  --resources R         distinct resources <prefix>0 .. <prefix>R-1 (default: W; R < W: contention)
  --resource-prefix P   resource name prefix (default "bench:")
  --ttl MS              lock TTL in milliseconds (default 10000)
  --hold MS             time each lock is held, a timer wait (default 0)
  --retries K           retries after a failed attempt: max_attempts = K + 1 (default 0)
  --threads T           io_context threads (default 1)
  --observe             attach client_config::on_event with counters (what a service exporting
                        metrics pays); the counts are printed at the end
  --fencing             fenced locks (lock_options::fencing): each resource's holders must get
                        growing fencing tokens; a violation is reported and exits 1
  --wait                acquisitions wait for the release, woken by it (lock_options::wait =
                        60 s; a wait that ends counts as contended); with R < W the summary
                        adds the hand-off time (from a release's start to the next
                        acquisition of the resource completing) and the fairness of the acquisitions over the workers

measurement
  --duration S          measured seconds (default 10)
  --warmup S            seconds run before measuring, not counted (default 1)
  --json FILE           write the results and the configuration as one JSON object
  --plot FILE           write a latency-percentile plot; .png or .svg (needs gnuplot)
  --help                this text

A progress line is printed every second (rewritten in place on a terminal). Exit status: 0 ok,
1 counts do not add up or a run-time failure, 2 bad arguments or masters unreachable,
130 interrupted (the results so far are still printed).
)";

[[noreturn]] void usage_error(const std::string& msg)
{
    std::fprintf(stderr, "redlock-bench: %s\n(see redlock-bench --help)\n", msg.c_str());
    std::exit(2);
}

template <class T>
T parse_number(const std::string& opt, const std::string& s, T lo, T hi)
{
    T v{};
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (ec != std::errc() || p != end || v < lo || v > hi)
    {
        std::ostringstream m;
        m << opt << " wants a number in [" << lo << ", " << hi << "], got '" << s << "'";
        usage_error(m.str());
    }
    return v;
}

double parse_seconds(const std::string& opt, const std::string& s, double lo)
{
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > 86400)
        usage_error(opt + " wants seconds (>= " + std::to_string(lo) + "), got '" + s + "'");
    return v;
}

}  // namespace

config parse_args(int argc, char** argv)
{
    config c;
    bool spawn_given = false;
    bool resources_given = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h")
        {
            std::fputs(usage_text, stdout);
            std::exit(0);
        }
        if (a == "--observe" || a == "--fencing" || a == "--wait")
        {
            (a == "--observe" ? c.observe : a == "--fencing" ? c.fencing : c.wait) = true;
            continue;
        }
        if (a == "--serve")
        {
            c.serve = true;
            continue;
        }
        if (i + 1 >= argc)
            usage_error("unknown option or missing value: " + a);
        const std::string v = argv[++i];
        if (a == "--master")
            c.masters.push_back(v);
        else if (a == "--spawn")
            c.spawn = parse_number<std::size_t>(a, v, 1, 63), spawn_given = true;
        else if (a == "--workers")
            c.workers = parse_number<std::size_t>(a, v, 1, 1'000'000);
        else if (a == "--resources")
            c.resources = parse_number<std::size_t>(a, v, 1, 100'000'000), resources_given = true;
        else if (a == "--resource-prefix")
            c.prefix = v;
        else if (a == "--ttl")
            c.ttl = std::chrono::milliseconds(parse_number<long>(a, v, 1, 86'400'000));
        else if (a == "--hold")
            c.hold = std::chrono::milliseconds(parse_number<long>(a, v, 0, 86'400'000));
        else if (a == "--duration")
            c.duration_s = parse_seconds(a, v, 0.1);
        else if (a == "--warmup")
            c.warmup_s = parse_seconds(a, v, 0);
        else if (a == "--retries")
            c.retries = parse_number<unsigned>(a, v, 0, 1'000'000);
        else if (a == "--threads")
            c.threads = parse_number<unsigned>(a, v, 1, 256);
        else if (a == "--json")
            c.json_file = v;
        else if (a == "--plot")
            c.plot_file = v;
        else
            usage_error("unknown option: " + a);
    }
    if (spawn_given && !c.masters.empty())
        usage_error("--master and --spawn exclude each other");
    if (c.masters.empty() && !spawn_given)
        c.spawn = 5;
    if (c.serve && c.spawn == 0)
        usage_error("--serve needs --spawn");
    if (!resources_given)
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
