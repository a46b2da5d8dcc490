// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-bench: lock throughput and latency of redlock::client against N masters, given by
// URI or started by the tool itself (the embedded default: 5 local redis-server masters).
//
// W workers each run acquire -> hold -> release in a loop on R resources (worker w uses
// resource w % R, so R < W means contention). Every sample is counted in a log-linear
// histogram; failures are counted by kind; a run whose counts do not add up exits 1.
// Run with --help for the options; docs/performance.md shows what it measured.

#include <redlock/redlock.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.hpp"
#include "histogram.hpp"
#include "local_masters.hpp"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;
using redlock::bench::histogram_data;
using redlock::bench::process_cpu_time;
using redlock::bench::recorder;

namespace {

// ---- Configuration --------------------------------------------------------------------------

struct config
{
    std::vector<std::string> masters;
    std::size_t spawn = 0;  // 0: use `masters`
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
};

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
        if (a == "--observe")
        {
            c.observe = true;
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

// ---- Small helpers --------------------------------------------------------------------------

std::string with_commas(double v, int decimals = 0)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    const std::string_view s = buf;
    const std::size_t sign = s[0] == '-' ? 1 : 0;
    const std::size_t int_end = std::min(s.find('.'), s.size());
    std::string out(s.substr(0, sign));
    for (std::size_t i = sign; i < int_end; ++i)
    {
        out += s[i];
        const std::size_t left = int_end - i - 1;
        if (left > 0 && left % 3 == 0)
            out += ',';
    }
    out += s.substr(int_end);
    return out;
}

long peak_rss_kib()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;  // KiB on Linux
}

bool on_path(const std::string& exe)
{
    const char* path = std::getenv("PATH");
    if (!path)
        return false;
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
        if (!dir.empty() && ::access((fs::path(dir) / exe).c_str(), X_OK) == 0)
            return true;
    return false;
}

std::string json_escape(std::string_view s)
{
    std::string out;
    for (char ch : s)
    {
        switch (ch)
        {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(ch) < 0x20)
            {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", ch);
                out += b;
            }
            else
                out += ch;
        }
    }
    return out;
}

std::string num(double v)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

// A URI as it may be printed: the password replaced by ***.
std::string printable_uri(const std::string& uri)
{
    try
    {
        return redlock::parse_master_uri(uri).to_string();
    }
    catch (...)
    {
        return "<invalid uri>";
    }
}

std::atomic<bool> g_interrupted{false};
void on_signal(int) { g_interrupted.store(true); }

// ---- Counting ---------------------------------------------------------------------------------

// A counter with one writing thread: a relaxed load + store, no locked instruction.
class counter
{
public:
    void inc() noexcept { v_.store(v_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
    std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> v_{0};
};

enum fail_kind : std::size_t { contended, no_quorum, timed_out, other, fail_kinds };
constexpr const char* acquire_fail_names[fail_kinds] = {"contended", "no_quorum", "timeout", "other"};

enum release_kind : std::size_t { lock_lost, release_no_quorum, release_timed_out, release_other, release_kinds };
constexpr const char* release_fail_names[release_kinds] = {"lock_lost", "no_quorum", "timeout", "other"};

fail_kind classify_acquire(const redlock::error_code& ec)
{
    if (ec == redlock::error::contended)
        return contended;
    if (ec == redlock::error::no_quorum)
        return no_quorum;
    if (ec == redlock::error::validity_expired || ec == redlock::error::request_timeout)
        return timed_out;
    return other;
}

release_kind classify_release(const redlock::error_code& ec)
{
    if (ec == redlock::error::lock_lost)
        return lock_lost;
    if (ec == redlock::error::no_quorum)
        return release_no_quorum;
    if (ec == redlock::error::request_timeout)
        return release_timed_out;
    return release_other;
}

// Everything one io thread records. Only that thread writes it; the main thread reads it.
struct alignas(64) thread_stats
{
    // The measured window only.
    counter attempts, acquired, released;
    counter failed[fail_kinds];
    counter release_failed[release_kinds];
    recorder acquire, release, failed_attempt;
    // Every phase, for the progress line.
    counter all_cycles, all_failed;
    recorder all_acquire;
};

thread_local thread_stats* tls_stats = nullptr;

enum phase_t : int { warming, measuring, stopping };

struct run_state
{
    run_state(asio::io_context& i, redlock::client& c, const redlock::lock_options& o, std::chrono::milliseconds h)
        : io(i), client(c), opts(o), hold(h)
    {}

    asio::io_context& io;
    redlock::client& client;
    redlock::lock_options opts;
    std::chrono::milliseconds hold;
    std::atomic<int> phase{warming};
    std::atomic<std::size_t> running{0};

    std::mutex other_mutex;
    std::map<std::string, std::uint64_t> other_errors;  // message -> count (rare path)

    void note_other(const char* what, const redlock::error_code& ec)
    {
        std::lock_guard<std::mutex> g(other_mutex);
        ++other_errors[std::string(what) + ": " + ec.message()];
    }
};

// One acquire -> hold -> release loop, as callbacks: the bench adds as little of its own
// CPU time per cycle as it can, so that client CPU per cycle is mostly the client's.
class worker
{
public:
    worker(run_state& rs, std::string resource) : rs_(rs), resource_(std::move(resource)), timer_(rs.io) {}

    void start()
    {
        asio::post(rs_.io, [this] { next(); });
    }

private:
    void next()
    {
        const int ph = rs_.phase.load(std::memory_order_acquire);
        if (ph == stopping)
        {
            rs_.running.fetch_sub(1, std::memory_order_acq_rel);
            return;
        }
        measured_ = ph == measuring;
        t0_ = clk::now();
        rs_.client.async_lock(resource_, rs_.opts,
                              [this](redlock::error_code ec, redlock::lock l) { on_locked(ec, std::move(l)); });
    }

    void on_locked(const redlock::error_code& ec, redlock::lock l)
    {
        const auto t1 = clk::now();
        thread_stats& s = *tls_stats;
        if (ec)
        {
            s.all_failed.inc();
            if (measured_)
            {
                s.attempts.inc();
                const auto k = classify_acquire(ec);
                s.failed[k].inc();
                s.failed_attempt.add(t1 - t0_);
                if (k == other)
                    rs_.note_other("acquire", ec);
            }
            return next();
        }
        s.all_acquire.add(t1 - t0_);
        if (measured_)
        {
            s.attempts.inc();
            s.acquired.inc();
            s.acquire.add(t1 - t0_);
        }
        held_ = std::move(l);
        if (rs_.hold.count() > 0)
        {
            timer_.expires_after(rs_.hold);
            timer_.async_wait([this](const redlock::error_code&) { release(); });
        }
        else
        {
            release();
        }
    }

    void release()
    {
        t2_ = clk::now();
        rs_.client.async_unlock(held_, [this](redlock::error_code ec) { on_released(ec); });
    }

    void on_released(const redlock::error_code& ec)
    {
        const auto t3 = clk::now();
        thread_stats& s = *tls_stats;
        s.all_cycles.inc();
        if (measured_)
        {
            s.release.add(t3 - t2_);
            if (ec)
            {
                const auto k = classify_release(ec);
                s.release_failed[k].inc();
                if (k == release_other)
                    rs_.note_other("release", ec);
            }
            else
            {
                s.released.inc();
            }
        }
        held_ = {};
        next();
    }

    run_state& rs_;
    std::string resource_;
    asio::steady_timer timer_;
    redlock::lock held_;
    clk::time_point t0_{}, t2_{};
    bool measured_ = false;
};

// What the main thread gathers from the threads' stats.
struct totals
{
    std::uint64_t attempts = 0, acquired = 0, released = 0;
    std::uint64_t failed[fail_kinds]{};
    std::uint64_t release_failed[release_kinds]{};
    std::uint64_t all_cycles = 0, all_failed = 0;
    histogram_data acquire, release, failed_attempt, all_acquire;

    std::uint64_t failed_sum() const
    {
        std::uint64_t n = 0;
        for (auto v : failed)
            n += v;
        return n;
    }
    std::uint64_t release_failed_sum() const
    {
        std::uint64_t n = 0;
        for (auto v : release_failed)
            n += v;
        return n;
    }
};

// Each histogram_data is 30 KiB: totals live on the heap.
std::unique_ptr<totals> gather(const std::vector<std::unique_ptr<thread_stats>>& stats)
{
    auto t = std::make_unique<totals>();
    for (const auto& s : stats)
    {
        t->attempts += s->attempts.get();
        t->acquired += s->acquired.get();
        t->released += s->released.get();
        for (std::size_t k = 0; k < fail_kinds; ++k)
            t->failed[k] += s->failed[k].get();
        for (std::size_t k = 0; k < release_kinds; ++k)
            t->release_failed[k] += s->release_failed[k].get();
        t->all_cycles += s->all_cycles.get();
        t->all_failed += s->all_failed.get();
        s->acquire.snapshot_into(t->acquire);
        s->release.snapshot_into(t->release);
        s->failed_attempt.snapshot_into(t->failed_attempt);
        s->all_acquire.snapshot_into(t->all_acquire);
    }
    return t;
}

// ---- Output -----------------------------------------------------------------------------------

struct result
{
    config cfg;
    std::vector<std::string> masters;  // printable
    double elapsed_s = 0;
    double cpu_us = 0;
    long rss_kib = 0;
    bool interrupted = false;
    bool counts_ok = false;
    std::unique_ptr<totals> t;
    std::map<std::string, std::uint64_t> other_errors;

    double cycles_per_s() const { return elapsed_s > 0 ? static_cast<double>(t->acquired) / elapsed_s : 0; }
    double attempts_per_s() const { return elapsed_s > 0 ? static_cast<double>(t->attempts) / elapsed_s : 0; }
    double cpu_per_cycle() const { return t->acquired ? cpu_us / static_cast<double>(t->acquired) : 0; }
    double cpu_per_attempt() const { return t->attempts ? cpu_us / static_cast<double>(t->attempts) : 0; }
};

// Percentiles of the plot and of the JSON "spectrum": x = 1 / (1 - p) from 1 to 10^5, in
// steps of 10^0.1.
std::vector<double> spectrum_percentiles()
{
    std::vector<double> ps;
    for (int k = 0; k <= 50; ++k)
        ps.push_back(100.0 * (1.0 - std::pow(10.0, -k / 10.0)));
    return ps;
}

std::string json_latency(const histogram_data& h)
{
    std::string s = "{\"count\": " + std::to_string(h.count());
    s += ", \"min\": " + num(h.min_us()) + ", \"mean\": " + num(h.mean_us());
    s += ", \"p50\": " + num(h.percentile_us(50)) + ", \"p90\": " + num(h.percentile_us(90));
    s += ", \"p99\": " + num(h.percentile_us(99)) + ", \"p999\": " + num(h.percentile_us(99.9));
    s += ", \"max\": " + num(h.max_us()) + "}";
    return s;
}

std::string json_spectrum(const histogram_data& h)
{
    std::string s = "[";
    bool first = true;
    for (double p : spectrum_percentiles())
    {
        s += std::string(first ? "" : ", ") + "[" + num(p) + ", " + num(h.percentile_us(p)) + "]";
        first = false;
    }
    return s + "]";
}

std::string to_json(const result& r)
{
    const auto& t = *r.t;
    const auto& c = r.cfg;
    std::string s = "{\n";
    s += "  \"tool\": \"redlock-bench\",\n";
    s += "  \"implementation\": \"redlock (C++20, Boost.Asio)\",\n";
    s += "  \"config\": {\"masters\": [";
    for (std::size_t i = 0; i < r.masters.size(); ++i)
        s += std::string(i ? ", " : "") + "\"" + json_escape(r.masters[i]) + "\"";
    s += "], \"spawned\": " + std::to_string(c.spawn);
    s += ", \"workers\": " + std::to_string(c.workers) + ", \"resources\": " + std::to_string(c.resources);
    s += ", \"resource_prefix\": \"" + json_escape(c.prefix) + "\"";
    s += ", \"ttl_ms\": " + std::to_string(c.ttl.count()) + ", \"hold_ms\": " + std::to_string(c.hold.count());
    s += ", \"duration_s\": " + num(c.duration_s) + ", \"warmup_s\": " + num(c.warmup_s);
    s += ", \"retries\": " + std::to_string(c.retries) + ", \"threads\": " + std::to_string(c.threads);
    s += ", \"observe\": " + std::string(c.observe ? "true" : "false") + "},\n";
    s += "  \"elapsed_s\": " + num(r.elapsed_s) + ",\n";
    s += "  \"interrupted\": " + std::string(r.interrupted ? "true" : "false") + ",\n";
    s += "  \"cycles\": " + std::to_string(t.acquired) + ",\n";
    s += "  \"cycles_per_s\": " + num(r.cycles_per_s()) + ",\n";
    s += "  \"attempts_per_s\": " + num(r.attempts_per_s()) + ",\n";
    s += "  \"attempts\": " + std::to_string(t.attempts) + ",\n";
    s += "  \"acquired\": " + std::to_string(t.acquired) + ",\n";
    s += "  \"failed\": {";
    for (std::size_t k = 0; k < fail_kinds; ++k)
        s += std::string(k ? ", " : "") + "\"" + acquire_fail_names[k] + "\": " + std::to_string(t.failed[k]);
    s += "},\n";
    s += "  \"released\": " + std::to_string(t.released) + ",\n";
    s += "  \"release_failed\": {";
    for (std::size_t k = 0; k < release_kinds; ++k)
        s += std::string(k ? ", " : "") + "\"" + release_fail_names[k] + "\": " + std::to_string(t.release_failed[k]);
    s += "},\n";
    s += "  \"other_errors\": {";
    bool first = true;
    for (const auto& [m, n] : r.other_errors)
    {
        s += std::string(first ? "" : ", ") + "\"" + json_escape(m) + "\": " + std::to_string(n);
        first = false;
    }
    s += "},\n";
    s += "  \"counts_add_up\": " + std::string(r.counts_ok ? "true" : "false") + ",\n";
    s += "  \"acquire_us\": " + json_latency(t.acquire) + ",\n";
    s += "  \"release_us\": " + json_latency(t.release) + ",\n";
    s += "  \"failed_attempt_us\": " + json_latency(t.failed_attempt) + ",\n";
    s += "  \"client_cpu_us\": " + num(r.cpu_us) + ",\n";
    s += "  \"client_cpu_us_per_cycle\": " + num(r.cpu_per_cycle()) + ",\n";
    s += "  \"client_cpu_us_per_attempt\": " + num(r.cpu_per_attempt()) + ",\n";
    s += "  \"peak_rss_kib\": " + std::to_string(r.rss_kib) + ",\n";
    s += "  \"acquire_spectrum\": " + json_spectrum(t.acquire) + ",\n";
    s += "  \"release_spectrum\": " + json_spectrum(t.release) + "\n";
    s += "}\n";
    return s;
}

std::string describe_config(const result& r)
{
    const auto& c = r.cfg;
    std::string s = std::to_string(r.masters.size()) + " masters" + (c.spawn ? " (spawned)" : "") + ", " +
                    std::to_string(c.workers) + " workers on " + std::to_string(c.resources) + " resources, ttl " +
                    std::to_string(c.ttl.count()) + " ms, hold " + std::to_string(c.hold.count()) + " ms, retries " +
                    std::to_string(c.retries) + ", " + std::to_string(c.threads) +
                    (c.threads == 1 ? " thread" : " threads");
    return s;
}

void print_summary(const result& r)
{
    const auto& t = *r.t;
    std::printf("\nredlock-bench: %s\n", describe_config(r).c_str());
    std::printf("measured %.2f s after %.1f s of warm-up%s\n\n", r.elapsed_s, r.cfg.warmup_s,
                r.interrupted ? " (interrupted)" : "");
    std::printf("  %-22s %14s\n", "cycles/s", with_commas(r.cycles_per_s()).c_str());
    std::printf("  %-22s %14s   acquired %s, failed %s (contended %s, no_quorum %s, timeout %s, other %s)\n",
                "attempts", with_commas(static_cast<double>(t.attempts)).c_str(),
                with_commas(static_cast<double>(t.acquired)).c_str(),
                with_commas(static_cast<double>(t.failed_sum())).c_str(),
                with_commas(static_cast<double>(t.failed[contended])).c_str(),
                with_commas(static_cast<double>(t.failed[no_quorum])).c_str(),
                with_commas(static_cast<double>(t.failed[timed_out])).c_str(),
                with_commas(static_cast<double>(t.failed[other])).c_str());
    std::printf("  %-22s %14s   release failed %s (lock_lost %s, no_quorum %s, timeout %s, other %s)\n", "released",
                with_commas(static_cast<double>(t.released)).c_str(),
                with_commas(static_cast<double>(t.release_failed_sum())).c_str(),
                with_commas(static_cast<double>(t.release_failed[lock_lost])).c_str(),
                with_commas(static_cast<double>(t.release_failed[release_no_quorum])).c_str(),
                with_commas(static_cast<double>(t.release_failed[release_timed_out])).c_str(),
                with_commas(static_cast<double>(t.release_failed[release_other])).c_str());
    std::printf("  %-22s %11s us   (user + system %.2f s of the whole process)\n", "client CPU per cycle",
                with_commas(r.cpu_per_cycle(), 1).c_str(), r.cpu_us / 1e6);
    std::printf("  %-22s %10s KiB\n\n", "peak RSS", with_commas(static_cast<double>(r.rss_kib)).c_str());
    std::printf("  %-16s %10s %10s %10s %10s %10s %10s %12s\n", "latency (us)", "p50", "p90", "p99", "p99.9", "max",
                "mean", "samples");
    auto row = [](const char* name, const histogram_data& h) {
        std::printf("  %-16s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %12s\n", name, h.percentile_us(50),
                    h.percentile_us(90), h.percentile_us(99), h.percentile_us(99.9), h.max_us(), h.mean_us(),
                    with_commas(static_cast<double>(h.count())).c_str());
    };
    row("acquire", t.acquire);
    row("release", t.release);
    if (t.failed_attempt.count())
        row("failed attempt", t.failed_attempt);
    for (const auto& [m, n] : r.other_errors)
        std::printf("  other error: %s (%s)\n", m.c_str(), with_commas(static_cast<double>(n)).c_str());
    if (!r.counts_ok)
        std::printf("\n  COUNTS DO NOT ADD UP: attempts %llu, acquired %llu + failed %llu; released %llu + release "
                    "failed %llu\n",
                    static_cast<unsigned long long>(t.attempts), static_cast<unsigned long long>(t.acquired),
                    static_cast<unsigned long long>(t.failed_sum()), static_cast<unsigned long long>(t.released),
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
            out += ch == '\n' ? std::string("\\n") : (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
        return out + "\"";
    };
    const bool svg = fs::path(file).extension() == ".svg";
    {
        std::ofstream g(script);
        g << (svg ? "set terminal svg size 900,540 dynamic font 'sans,11'\n"
                  : "set terminal pngcairo size 900,540 font 'sans,10'\n");
        g << "set termoption noenhanced\n";
        g << "set output " << quoted(fs::absolute(file).string()) << '\n';
        g << "set title " << quoted("redlock-bench: " + describe_config(r) + "\n" +
                                    with_commas(r.cycles_per_s()) + " cycles/s, " +
                                    with_commas(r.cpu_per_cycle(), 1) + " us client CPU per cycle")
          << '\n';
        g << "set logscale xy\nset grid xtics ytics mytics\nset key top left\n";
        g << "set xlabel 'percentile'\nset ylabel 'latency (us)'\n";
        g << "set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, '99.999%%' 100000)\n";
        g << "set xrange [1:100000]\n";
        g << "plot " << quoted(data.string()) << " using 1:3 with lines lw 2 title 'acquire', '' using 1:4 with "
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

// ---- The modes --------------------------------------------------------------------------------

int serve(const config& cfg)
{
    // Signals are taken synchronously below; block them before anything else starts.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    const pid_t parent = ::getppid();

    redlock::test::local_masters masters(redlock::test::local_masters::options{.count = cfg.spawn});
    for (const auto& u : masters.uris())
        std::printf("%s\n", u.c_str());
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;)
    {
        timespec ts{1, 0};
        if (::sigtimedwait(&set, nullptr, &ts) > 0)
            break;
        if (::getppid() != parent)
            break;  // our parent is gone: nobody will stop us
    }
    return 0;  // ~local_masters stops and reaps every master
}

int run(config cfg)
{
    if (!cfg.plot_file.empty() && !on_path("gnuplot"))
    {
        std::fprintf(stderr, "redlock-bench: --plot needs gnuplot, which is not in PATH "
                             "(on Debian: apt-get install gnuplot-nox)\n");
        return 2;
    }

    std::optional<redlock::test::local_masters> spawned;
    if (cfg.spawn)
    {
        std::printf("starting %zu local redis-server masters...\n", cfg.spawn);
        spawned.emplace(redlock::test::local_masters::options{.count = cfg.spawn});
        cfg.masters = spawned->uris();
    }

    result r;
    r.cfg = cfg;
    for (const auto& u : cfg.masters)
        r.masters.push_back(printable_uri(u));

    asio::io_context io(static_cast<int>(cfg.threads));
    redlock::client_config ccfg;
    ccfg.masters = cfg.masters;
    // --observe: what a metrics exporter does, one relaxed counter per event kind.
    constexpr std::size_t event_kinds = static_cast<std::size_t>(redlock::event_kind::lost) + 1;
    std::array<std::atomic<std::uint64_t>, event_kinds> events{};
    if (cfg.observe)
        ccfg.on_event = [&events](const redlock::event& e) {
            events[static_cast<std::size_t>(e.kind)].fetch_add(1, std::memory_order_relaxed);
        };
    std::optional<redlock::client> client;
    try
    {
        client.emplace(io.get_executor(), ccfg);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-bench: %s\n", e.what());
        return 2;
    }

    redlock::lock_options opts = client->default_options();
    opts.ttl = cfg.ttl;
    opts.max_attempts = cfg.retries + 1;
    {
        redlock::error_code vec;
        std::string why;
        redlock::validate(opts, vec, why);
        if (vec)
        {
            std::fprintf(stderr, "redlock-bench: %s\n", why.c_str());
            return 2;
        }
    }

    // One stats block per io thread; a thread finds its own through tls_stats.
    std::vector<std::unique_ptr<thread_stats>> stats;
    for (unsigned i = 0; i < cfg.threads; ++i)
        stats.push_back(std::make_unique<thread_stats>());
    auto guard = asio::make_work_guard(io);
    std::atomic<unsigned> threads_done{0};
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < cfg.threads; ++i)
        threads.emplace_back([&io, &threads_done, s = stats[i].get()] {
            tls_stats = s;
            io.run();
            threads_done.fetch_add(1);
        });
    auto shut_down = [&] {
        client->close();
        guard.reset();
        // The client's connections end their work once closed; do not wait forever for it.
        for (int i = 0; i < 200 && threads_done.load() < threads.size(); ++i)
            std::this_thread::sleep_for(10ms);
        io.stop();
        for (auto& t : threads)
            t.join();
    };

    {
        std::promise<std::pair<redlock::error_code, std::size_t>> connected;
        client->async_wait_connected([&connected](redlock::error_code ec, std::size_t n) {
            connected.set_value({ec, n});
        });
        auto f = connected.get_future();
        if (f.wait_for(30s) != std::future_status::ready)
        {
            std::fprintf(stderr, "redlock-bench: masters did not answer within 30 s\n");
            shut_down();
            return 2;
        }
        auto [ec, n] = f.get();
        if (ec)
        {
            std::fprintf(stderr, "redlock-bench: only %zu of %zu masters reachable: %s\n", n, cfg.masters.size(),
                         ec.message().c_str());
            shut_down();
            return 2;
        }
    }

    run_state rs(io, *client, opts, cfg.hold);
    std::vector<std::unique_ptr<worker>> workers;
    workers.reserve(cfg.workers);
    for (std::size_t w = 0; w < cfg.workers; ++w)
        workers.push_back(std::make_unique<worker>(rs, cfg.prefix + std::to_string(w % cfg.resources)));

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    std::printf("redlock-bench: %s\n", describe_config(r).c_str());
    for (const auto& m : r.masters)
        std::printf("  master %s\n", m.c_str());

    rs.running.store(cfg.workers);
    const auto t_start = clk::now();
    const auto to_dur = [](double s) { return std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(s)); };
    const auto warm_end = t_start + to_dur(cfg.warmup_s);
    const auto run_end = warm_end + to_dur(cfg.duration_s);
    if (cfg.warmup_s == 0)
        rs.phase.store(measuring);
    for (auto& w : workers)
        w->start();

    clk::time_point m0 = t_start;
    std::chrono::microseconds cpu0 = process_cpu_time();
    auto prev = gather(stats);
    auto prev_t = t_start;
    auto next_tick = t_start + 1s;
    bool measuring_now = cfg.warmup_s == 0;
    std::size_t line_len = 0;

    auto progress = [&](clk::time_point now) {
        auto cur = gather(stats);
        const double dt = std::chrono::duration<double>(now - prev_t).count();
        const auto interval = histogram_data::difference(cur->all_acquire, prev->all_acquire);
        const double cps = dt > 0 ? static_cast<double>(cur->all_cycles - prev->all_cycles) / dt : 0;
        char line[256];
        std::snprintf(line, sizeof line, "%7.1f s  %-7s %12s cycles/s   acquire p50 %9.1f us  p99 %9.1f us   failed %s",
                      std::chrono::duration<double>(now - t_start).count(), measuring_now ? "run" : "warm-up",
                      with_commas(cps).c_str(), interval.percentile_us(50), interval.percentile_us(99),
                      with_commas(static_cast<double>(cur->all_failed)).c_str());
        if (tty)
        {
            std::printf("\r%s\033[K", line);
            line_len = std::strlen(line);
        }
        else
        {
            std::printf("%s\n", line);
        }
        std::fflush(stdout);
        prev = std::move(cur);
        prev_t = now;
    };

    // The main thread only keeps time: switches phases and prints progress.
    for (;;)
    {
        const auto now = clk::now();
        if (g_interrupted.load())
        {
            r.interrupted = true;
            break;
        }
        // The progress line first: it describes the second that just ended.
        if (now >= next_tick && now < run_end)
        {
            progress(now);
            next_tick += 1s;
        }
        if (!measuring_now && now >= warm_end)
        {
            m0 = clk::now();
            cpu0 = process_cpu_time();
            rs.phase.store(measuring, std::memory_order_release);
            measuring_now = true;
        }
        if (now >= run_end)
            break;
        std::this_thread::sleep_until(std::min({next_tick, run_end, measuring_now ? run_end : warm_end,
                                                clk::now() + 50ms}));
    }
    rs.phase.store(stopping, std::memory_order_release);
    // Every worker finishes the cycle it is in; those cycles count.
    const auto drain_limit = clk::now() + std::max<clk::duration>(30s, 2 * (cfg.hold + cfg.ttl));
    while (rs.running.load(std::memory_order_acquire) > 0 && clk::now() < drain_limit)
        std::this_thread::sleep_for(1ms);
    const auto m1 = clk::now();
    const auto cpu1 = process_cpu_time();
    const bool drained = rs.running.load(std::memory_order_acquire) == 0;
    if (tty && line_len)
        std::printf("\n");

    if (!measuring_now)
        m0 = m1;  // interrupted during the warm-up: nothing was measured
    r.elapsed_s = std::chrono::duration<double>(m1 - m0).count();
    r.cpu_us = static_cast<double>((cpu1 - cpu0).count());
    r.rss_kib = peak_rss_kib();
    r.t = gather(stats);
    {
        std::lock_guard<std::mutex> g(rs.other_mutex);
        r.other_errors = rs.other_errors;
    }
    r.counts_ok = drained && r.t->attempts == r.t->acquired + r.t->failed_sum() &&
                  r.t->acquired == r.t->released + r.t->release_failed_sum() &&
                  r.t->acquire.count() == r.t->acquired && r.t->release.count() == r.t->acquired;

    if (drained)
        shut_down();
    else
        std::fprintf(stderr, "redlock-bench: %zu workers did not finish their last cycle\n", rs.running.load());

    print_summary(r);
    if (cfg.observe)
    {
        std::printf("  events (whole run)    ");
        for (std::size_t k = 0; k < event_kinds; ++k)
            if (const auto n = events[k].load(std::memory_order_relaxed))
                std::printf(" %s %llu", std::string(to_string(static_cast<redlock::event_kind>(k))).c_str(),
                            static_cast<unsigned long long>(n));
        std::printf("\n");
    }
    int status = r.counts_ok ? 0 : 1;
    if (!cfg.json_file.empty())
    {
        std::ofstream j(cfg.json_file);
        j << to_json(r);
        if (!j.good())
        {
            std::fprintf(stderr, "redlock-bench: cannot write %s\n", cfg.json_file.c_str());
            status = 1;
        }
        else
        {
            std::printf("\n  results: %s\n", cfg.json_file.c_str());
        }
    }
    if (!cfg.plot_file.empty())
    {
        if (auto err = write_plot(r, cfg.plot_file); !err.empty())
        {
            std::fprintf(stderr, "redlock-bench: %s\n", err.c_str());
            status = 1;
        }
        else
        {
            std::printf("  plot: %s\n", cfg.plot_file.c_str());
        }
    }
    std::fflush(stdout);
    if (!drained)
        std::_Exit(1);  // workers still reference the client: do not run destructors under them
    if (r.interrupted && status == 0)
        status = 130;
    return status;
}

}  // namespace

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    const config cfg = parse_args(argc, argv);
    try
    {
        return cfg.serve ? serve(cfg) : run(cfg);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-bench: %s\n", e.what());
        return 2;
    }
}
