// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "bench_format.hpp"
#include "common.hpp"

namespace redlock::bench {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// Percentiles of the plot and of the JSON "spectrum": x = 1 / (1 - p) from 1 to 10^5, in
// steps of 10^0.1.
std::vector<double> spectrum_percentiles()
{
    std::vector<double> ps;
    for (int k = 0; k <= 50; ++k)
        ps.push_back(100.0 * (1.0 - std::pow(10.0, -k / 10.0)));
    return ps;
}

// A measured figure; null when there is none (the mean of no samples), as JSON has no NaN.
// Whole numbers as integers: Boost.JSON writes every double in exponent form ("1E0").
json::value figure(double v)
{
    if (!std::isfinite(v))
        return nullptr;
    if (v == std::trunc(v) && std::fabs(v) < 9e15)
        return static_cast<std::int64_t>(v);
    return v;
}

json::value figure(const std::optional<double>& v) { return v ? figure(*v) : json::value(nullptr); }

json::object json_latency(const histogram_data& h)
{
    return {{"count", h.count()},
            {"min", figure(h.min_us())},
            {"mean", figure(h.mean_us())},
            {"p50", figure(h.percentile_us(50))},
            {"p90", figure(h.percentile_us(90))},
            {"p99", figure(h.percentile_us(99))},
            {"p999", figure(h.percentile_us(99.9))},
            {"max", figure(h.max_us())}};
}

// [[percentile, microseconds], ...]
json::array json_spectrum(const histogram_data& h)
{
    json::array a;
    for (double p : spectrum_percentiles())
        a.push_back(json::array{figure(p), figure(h.percentile_us(p))});
    return a;
}

// A count with thousands separators.
std::string commas(std::uint64_t n) { return with_commas(static_cast<double>(n)); }

// "(contended 1, no_quorum 2, ...)": each kind's count, with thousands separators, after its name.
template <std::size_t N>
std::string breakdown(const char* const (&names)[N], const std::uint64_t (&counts)[N])
{
    std::string s = "(";
    for (std::size_t k = 0; k < N; ++k)
        s += std::string(k == 0 ? "" : ", ") + names[k] + " " + commas(counts[k]);
    return s + ")";
}

// The summary's line of the masters' CPU per cycle: measured only for spawned masters.
void print_masters_cpu(const result& r)
{
    const char* name = "masters CPU per cycle";
    if (r.servers.empty())
    {
        std::printf("  %-22s %14s   (given masters: their processes are not measured)\n", name,
                    "-");
        return;
    }
    std::size_t unknown = 0;
    for (const auto& s : r.servers)
        unknown += s.us ? 0 : 1;
    if (unknown)
    {
        std::printf("  %-22s %14s   (/proc/PID/stat unreadable for %zu of %zu server processes)\n",
                    name, "unknown", unknown, r.servers.size());
        return;
    }
    const auto us = r.masters_cpu_us().value_or(0);
    const auto per_cycle = r.masters_cpu_per_cycle();
    const auto replicas = static_cast<std::size_t>(std::count_if(
        r.servers.begin(), r.servers.end(), [](const server_cpu& s) { return s.replica; }));
    std::printf("  %-22s %11s us   (user + system %.2f s of %zu server processes%s)\n", name,
                per_cycle ? with_commas(*per_cycle, 1).c_str() : "-", us / 1e6, r.servers.size(),
                replicas ? ", replicas included" : "");
    if (replicas == 0)
        return;
    const auto replicas_per_cycle = r.replicas_cpu_per_cycle();
    std::printf("  %-22s %11s us   (user + system %.2f s of the %zu replicas)\n",
                "  of which replicas",
                replicas_per_cycle ? with_commas(*replicas_per_cycle, 1).c_str() : "-",
                r.replicas_cpu_us().value_or(0) / 1e6, replicas);
}

// The CPU of the servers that `pick` selects; nullopt as result::masters_cpu_us.
template <typename Pick>
std::optional<double> servers_cpu_us(const std::vector<server_cpu>& servers, Pick pick)
{
    if (servers.empty())
        return std::nullopt;
    double sum = 0;
    for (const auto& s : servers)
    {
        if (!s.us)
            return std::nullopt;
        sum += pick(s) ? *s.us : 0;
    }
    return sum;
}

std::optional<double> per_cycle(const std::optional<double>& us, std::uint64_t cycles)
{
    if (!us || cycles == 0)
        return std::nullopt;
    return *us / static_cast<double>(cycles);
}

}  // namespace

std::optional<result::ceiling_figures> result::ceiling() const
{
    const auto& c = cfg;
    if (c.hold.count() <= 0 || c.resources == 0 || c.resources >= c.workers || !t->held.count() ||
        t->held.mean_us() <= 0)
        return std::nullopt;
    const auto r = static_cast<double>(c.resources);
    return ceiling_figures{r * 1000.0 / static_cast<double>(c.hold.count()),
                           r * 1e6 / t->held.mean_us()};
}

std::string to_json(const result& r)
{
    const auto& t = *r.t;
    const auto& c = r.cfg;
    json::object o;
    o["tool"] = "redlock-bench";
    o["implementation"] = "redlock (C++20, Boost.Asio)";
    json::array masters;
    for (const auto& m : r.masters)
        masters.emplace_back(m);
    o["config"] = {{"masters", std::move(masters)},
                   {"spawned", c.spawn},
                   {"shards", c.shards},
                   {"replicas", c.replicas},
                   {"cluster_replica_acks", c.cluster_replica_acks},
                   {"cluster_replica_ack_timeout_ms", c.cluster_replica_ack_timeout.count()},
                   {"workers", c.workers},
                   {"resources", c.resources},
                   {"resource_prefix", c.prefix},
                   {"ttl_ms", c.ttl.count()},
                   {"hold_ms", c.hold.count()},
                   {"duration_s", figure(c.duration_s)},
                   {"warmup_s", figure(c.warmup_s)},
                   {"retries", c.retries},
                   {"threads", c.threads},
                   {"observe", c.observe},
                   {"fencing", c.fencing},
                   {"wait", c.wait},
                   {"handoff", c.wait && !c.no_handoff},
                   {"handover_write_delay_us", c.handover_write_delay.count()},
                   {"permits", c.permits},
                   {"read_share", c.read_share >= 0 ? figure(c.read_share) : json::value(nullptr)},
                   {"unsafe_majority_semaphore", c.unsafe_majority}};
    o["elapsed_s"] = figure(r.elapsed_s);
    o["interrupted"] = r.interrupted;
    o["cycles"] = t.acquired;
    o["cycles_per_s"] = figure(r.cycles_per_s());
    o["attempts_per_s"] = figure(r.attempts_per_s());
    o["attempts"] = t.attempts;
    o["acquired"] = t.acquired;
    json::object failed, release_failed, other;
    for (std::size_t k = 0; k < fail_kinds; ++k)
        failed[acquire_fail_names[k]] = t.failed[k];
    for (std::size_t k = 0; k < release_kinds; ++k)
        release_failed[release_fail_names[k]] = t.release_failed[k];
    for (const auto& [m, n] : r.other_errors)
        other[m] = n;
    o["failed"] = std::move(failed);
    o["released"] = t.released;
    o["release_failed"] = std::move(release_failed);
    o["other_errors"] = std::move(other);
    if (c.fencing)
        o["fencing"] = {{"checked", r.fences_checked}, {"violations", r.fence_violations}};
    if (c.permits > 1)
        o["semaphore"] = {{"checked", r.witness_checked},
                          {"violations", r.witness_violations},
                          {"most_holders", r.witness_most}};
    if (c.read_share >= 0)
    {
        o["rwlock"] = {{"checked", r.witness_checked},
                       {"violations", r.witness_violations},
                       {"most_readers", r.witness_most},
                       {"reads", t.acquired_reads},
                       {"writes", t.acquired - t.acquired_reads}};
        if (t.acquire_writer.count())
            o["rwlock"].as_object()["writer_acquire_us"] = json_latency(t.acquire_writer);
    }
    if (t.handoff.count())
        o["handoff_us"] = json_latency(t.handoff);
    if (t.held.count())
        o["held_us"] = json_latency(t.held);
    if (const auto ceil = r.ceiling())
        o["ceiling"] = {{"cycles_per_s_per_hold", figure(ceil->per_hold)},
                        {"cycles_per_s_per_held", figure(ceil->per_held)},
                        {"share_of_per_hold", figure(r.cycles_per_s() / ceil->per_hold)},
                        {"share_of_per_held", figure(r.cycles_per_s() / ceil->per_held)}};
    const auto f = fairness::of(r.per_worker);
    o["fairness"] = {{"min", f.min},
                     {"mean", figure(f.mean)},
                     {"max", f.max},
                     {"jain", figure(f.jain)},
                     {"per_worker", json::value_from(r.per_worker)}};
    o["counts_add_up"] = r.counts_ok;
    o["acquire_us"] = json_latency(t.acquire);
    o["release_us"] = json_latency(t.release);
    o["failed_attempt_us"] = json_latency(t.failed_attempt);
    o["client_cpu_us"] = figure(r.cpu_us);
    o["client_cpu_us_per_cycle"] = figure(r.cpu_per_cycle());
    o["client_cpu_us_per_attempt"] = figure(r.cpu_per_attempt());
    o["masters_cpu_us"] = figure(r.masters_cpu_us());
    o["masters_cpu_us_per_cycle"] = figure(r.masters_cpu_per_cycle());
    o["replicas_cpu_us"] = figure(r.replicas_cpu_us());
    o["replicas_cpu_us_per_cycle"] = figure(r.replicas_cpu_per_cycle());
    if (r.servers.empty())
    {
        o["masters_cpu_per_process"] = nullptr;
    }
    else
    {
        json::array per_process;
        for (const auto& s : r.servers)
            per_process.push_back({{"master", s.master},
                                   {"node", s.node},
                                   {"role", s.replica ? "replica" : "primary"},
                                   {"pid", s.pid},
                                   {"cpu_us", figure(s.us)}});
        o["masters_cpu_per_process"] = std::move(per_process);
    }
    o["peak_rss_kib"] = r.rss_kib;
    o["acquire_spectrum"] = json_spectrum(t.acquire);
    o["release_spectrum"] = json_spectrum(t.release);

    // One top-level key per line, for people reading the file; Boost.JSON writes each value.
    std::string s = "{\n";
    bool first = true;
    for (const auto& kv : o)
    {
        s += first ? "  " : ",\n  ";
        s += json::serialize(json::string_view(kv.key())) + ": " + json::serialize(kv.value());
        first = false;
    }
    return s + "\n}\n";
}

std::optional<double> result::masters_cpu_us() const
{
    return servers_cpu_us(servers, [](const server_cpu&) { return true; });
}

std::optional<double> result::masters_cpu_per_cycle() const
{
    return per_cycle(masters_cpu_us(), t->acquired);
}

std::optional<double> result::replicas_cpu_us() const
{
    if (std::none_of(servers.begin(), servers.end(), [](const server_cpu& s) { return s.replica; }))
        return std::nullopt;
    return servers_cpu_us(servers, [](const server_cpu& s) { return s.replica; });
}

std::optional<double> result::replicas_cpu_per_cycle() const
{
    return per_cycle(replicas_cpu_us(), t->acquired);
}

fairness fairness::of(const std::vector<std::uint64_t>& per_worker)
{
    fairness f;
    if (per_worker.empty())
        return f;
    double sum = 0, squares = 0;
    f.min = per_worker.front();
    for (const auto x : per_worker)
    {
        f.min = std::min(f.min, x);
        f.max = std::max(f.max, x);
        sum += static_cast<double>(x);
        squares += static_cast<double>(x) * static_cast<double>(x);
    }
    const auto n = static_cast<double>(per_worker.size());
    f.mean = sum / n;
    f.jain = squares > 0 ? sum * sum / (n * squares) : 0;
    return f;
}

std::string describe_config(const result& r)
{
    const auto& c = r.cfg;
    const std::string replicas = c.replicas
                                     ? ", " + std::to_string(c.replicas) +
                                           (c.replicas == 1 ? " replica" : " replicas") + " each"
                                     : "";
    const std::string spawned = !c.spawn ? ""
                                : c.shards
                                    ? " (spawned, each a cluster of " + std::to_string(c.shards) +
                                          " shards" + replicas + ")"
                                    : " (spawned)";
    std::string s =
        std::to_string(r.masters.size()) + " masters" + spawned + ", " + std::to_string(c.workers) +
        " workers on " + std::to_string(c.resources) + " resources, ttl " +
        std::to_string(c.ttl.count()) + " ms, hold " + std::to_string(c.hold.count()) +
        " ms, retries " + std::to_string(c.retries) + ", " + std::to_string(c.threads) +
        (c.threads == 1 ? " thread" : " threads") + (c.fencing ? ", fenced" : "") +
        (c.permits > 1 ? (c.unsafe_majority ? ", UNSAFE majority-counting semaphore of "
                                            : ", semaphore of ") +
                             std::to_string(c.permits) + " permits"
                       : "") +
        (c.read_share >= 0
             ? ", read-write lock, " + std::to_string(static_cast<int>(c.read_share * 100 + 0.5)) +
                   "% readers"
             : "") +
        (c.wait ? (c.no_handoff ? ", waiting, no hand-off" : ", waiting") : "") +
        (c.cluster_replica_acks
             ? ", replica acks " + std::to_string(c.cluster_replica_acks) + " (WAIT " +
                   std::to_string(c.cluster_replica_ack_timeout.count()) + " ms)"
             : "");
    return s;
}

void print_summary(const result& r)
{
    const auto& t = *r.t;
    std::printf("\nredlock-bench: %s\n", describe_config(r).c_str());
    std::printf("measured %.2f s after %.1f s of warm-up%s\n\n", r.elapsed_s, r.cfg.warmup_s,
                r.interrupted ? " (interrupted)" : "");
    std::printf("  %-22s %14s\n", "cycles/s", with_commas(r.cycles_per_s()).c_str());
    std::printf("  %-22s %14s   acquired %s, failed %s %s\n", "attempts",
                commas(t.attempts).c_str(), commas(t.acquired).c_str(),
                commas(t.failed_sum()).c_str(), breakdown(acquire_fail_names, t.failed).c_str());
    std::printf("  %-22s %14s   release failed %s %s\n", "released", commas(t.released).c_str(),
                commas(t.release_failed_sum()).c_str(),
                breakdown(release_fail_names, t.release_failed).c_str());
    std::printf("  %-22s %11s us   (user + system %.2f s of the whole process)\n",
                "client CPU per cycle", with_commas(r.cpu_per_cycle(), 1).c_str(), r.cpu_us / 1e6);
    print_masters_cpu(r);
    if (r.cfg.fencing)
        std::printf("  %-22s %14s   checked; tokens not above the previous holder's: %llu%s\n",
                    "fencing tokens", commas(r.fences_checked).c_str(),
                    static_cast<unsigned long long>(r.fence_violations),
                    r.fence_violations ? "  VIOLATION" : "");
    if (r.cfg.permits > 1)
        std::printf("  %-22s %14s   checked; more than %u at once: %llu%s (most at once %u)\n",
                    "semaphore holders", commas(r.witness_checked).c_str(), r.cfg.permits,
                    static_cast<unsigned long long>(r.witness_violations),
                    r.witness_violations ? "  VIOLATION" : "", r.witness_most);
    if (r.cfg.read_share >= 0)
        std::printf("  %-22s %14s   reads %s, writes %s; a writer beside anyone: %llu%s (most "
                    "readers at once %u; writer acquire p50 %.1f us, max %.1f us)\n",
                    "read-write holders", commas(r.witness_checked).c_str(),
                    commas(t.acquired_reads).c_str(), commas(t.acquired - t.acquired_reads).c_str(),
                    static_cast<unsigned long long>(r.witness_violations),
                    r.witness_violations ? "  VIOLATION" : "", r.witness_most,
                    t.acquire_writer.percentile_us(50), t.acquire_writer.max_us());
    if (r.per_worker.size() > 1)
    {
        const auto f = fairness::of(r.per_worker);
        std::printf("  %-22s %14s   min %s, max %s per worker; Jain's index %.3f\n",
                    "acquisitions, mean", with_commas(f.mean, 1).c_str(), commas(f.min).c_str(),
                    commas(f.max).c_str(), f.jain);
    }
    if (const auto ceil = r.ceiling())
        std::printf("  %-22s %14s   %.1f%% of it; R / mean held %s, %.1f%% of that\n", "R / hold",
                    with_commas(ceil->per_hold).c_str(), 100 * r.cycles_per_s() / ceil->per_hold,
                    with_commas(ceil->per_held).c_str(), 100 * r.cycles_per_s() / ceil->per_held);
    std::printf("  %-22s %10s KiB\n\n", "peak RSS", commas(r.rss_kib).c_str());
    std::printf("  %-16s %10s %10s %10s %10s %10s %10s %12s\n", "latency (us)", "p50", "p90", "p99",
                "p99.9", "max", "mean", "samples");
    auto row = [](const char* name, const histogram_data& h) {
        std::printf("  %-16s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %12s\n", name,
                    h.percentile_us(50), h.percentile_us(90), h.percentile_us(99),
                    h.percentile_us(99.9), h.max_us(), h.mean_us(), commas(h.count()).c_str());
    };
    row("acquire", t.acquire);
    row("release", t.release);
    if (t.failed_attempt.count())
        row("failed attempt", t.failed_attempt);
    if (t.handoff.count())
        row("hand-off", t.handoff);
    if (t.held.count())
        row("held", t.held);
    for (const auto& [m, n] : r.other_errors)
        std::printf("  other error: %s (%s)\n", m.c_str(), commas(n).c_str());
    if (!r.counts_ok)
        std::printf("\n  COUNTS DO NOT ADD UP: attempts %llu, acquired %llu + failed %llu; "
                    "released %llu + release "
                    "failed %llu\n",
                    static_cast<unsigned long long>(t.attempts),
                    static_cast<unsigned long long>(t.acquired),
                    static_cast<unsigned long long>(t.failed_sum()),
                    static_cast<unsigned long long>(t.released),
                    static_cast<unsigned long long>(t.release_failed_sum()));
}

// Renders the latency-percentile plot with gnuplot; returns an error message or "".
std::string write_plot(const result& r, const std::string& file)
{
    char tmpl[] = "/tmp/redlock-bench-plot.XXXXXX";
    if (!::mkdtemp(tmpl))
        return std::string("cannot create a temporary directory: ") + std::strerror(errno);
    const fs::path dir = tmpl;
    const auto data = dir / "latency.dat";
    const auto script = dir / "plot.gp";
    {
        std::ofstream d(data);
        d << "# x=1/(1-p)  percentile  acquire_us  release_us\n";
        for (double p : spectrum_percentiles())
            d << 1.0 / (1.0 - p / 100.0) << ' ' << p << ' ' << r.t->acquire.percentile_us(p) << ' '
              << r.t->release.percentile_us(p) << '\n';
    }
    auto quoted = [](std::string s) {
        std::string out = "\"";
        for (char ch : s)
            out += ch == '\n'                  ? std::string("\\n")
                   : (ch == '"' || ch == '\\') ? std::string("\\") + ch
                                               : std::string(1, ch);
        return out + "\"";
    };
    const bool svg = fs::path(file).extension() == ".svg";
    {
        std::ofstream g(script);
        g << (svg ? "set terminal svg size 900,540 dynamic font 'sans,11'\n"
                  : "set terminal pngcairo size 900,540 font 'sans,10'\n");
        g << "set termoption noenhanced\n";
        g << "set output " << quoted(fs::absolute(file).string()) << '\n';
        g << "set title "
          << quoted("redlock-bench: " + describe_config(r) + "\n" + with_commas(r.cycles_per_s()) +
                    " cycles/s, " + with_commas(r.cpu_per_cycle(), 1) + " us client CPU per cycle")
          << '\n';
        g << "set logscale xy\nset grid xtics ytics mytics\nset key top left\n";
        g << "set xlabel 'percentile'\nset ylabel 'latency (us)'\n";
        g << "set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, "
             "'99.999%%' 100000)\n";
        g << "set xrange [1:100000]\n";
        g << "plot " << quoted(data.string())
          << " using 1:3 with lines lw 2 title 'acquire', '' using 1:4 with "
             "lines lw 2 title 'release'\n";
    }
    const std::string cmd = "gnuplot " + quoted(script.string()) + " 2>&1";
    std::string out;
    if (FILE* f = ::popen(cmd.c_str(), "r"))
    {
        char buf[512];
        while (std::fgets(buf, sizeof buf, f))
            out += buf;
        const int st = ::pclose(f);
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        {
            std::error_code ec;
            fs::remove_all(dir, ec);
            return "gnuplot failed: " + out;
        }
    }
    else
    {
        return "cannot run gnuplot";
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return {};
}

}  // namespace redlock::bench
