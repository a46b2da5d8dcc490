// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-bench: lock throughput and latency of redlock::client against N masters, given by
// URI or started by the tool itself (the embedded default: 5 local redis-server masters).
//
// W workers each run acquire -> hold -> release in a loop on R resources (worker w uses
// resource w % R, so R < W means contention). Every sample is counted in a log-linear
// histogram; failures are counted by kind; a run whose counts do not add up exits 1.
// Run with --help for the options; docs/performance.md shows what it measured.
//
// The pieces: bench_options (the command line), bench_worker (the loop and its counters),
// bench_report (summary, JSON, plot), bench_format (helpers), exit_status (a run's verdict),
// spawned_masters (--spawn, --shards, --replicas);
// this file runs the modes.

#include <redlock/redlock.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_format.hpp"
#include "bench_options.hpp"
#include "bench_report.hpp"
#include "bench_worker.hpp"
#include "common.hpp"
#include "exit_status.hpp"
#include "majority_semaphore.hpp"
#include "spawned_masters.hpp"

using namespace std::chrono_literals;
using namespace redlock::bench;

namespace {

void on_signal(int) { g_interrupted.store(true); }

// Each server process's CPU time now (nullopt where /proc could not tell).
std::vector<std::optional<std::chrono::microseconds>> servers_cpu_time(
    const std::vector<server_process>& servers)
{
    std::vector<std::optional<std::chrono::microseconds>> out;
    out.reserve(servers.size());
    for (const auto& s : servers)
        out.push_back(process_cpu_time_of(s.pid));
    return out;
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

    const spawned_masters masters(cfg.spawn, cfg.shards, cfg.replicas);
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
    return 0;  // ~spawned_masters stops and reaps every server
}

int run(config cfg)
{
    if (!cfg.plot_file.empty() && !on_path("gnuplot"))
    {
        std::fprintf(stderr, "redlock-bench: --plot needs gnuplot, which is not in PATH "
                             "(on Debian: apt-get install gnuplot-nox)\n");
        return 2;
    }

    std::optional<spawned_masters> spawned;
    std::vector<server_process> servers;  // measured only when spawned
    if (cfg.spawn)
    {
        if (cfg.shards)
            std::printf("starting %zu local Redis Clusters of %zu shards, %zu replica(s) each (%zu "
                        "redis-server "
                        "processes)...\n",
                        cfg.spawn, cfg.shards, cfg.replicas,
                        cfg.spawn * cfg.shards * (1 + cfg.replicas));
        else
            std::printf("starting %zu local redis-server masters...\n", cfg.spawn);
        std::fflush(stdout);
        spawned.emplace(cfg.spawn, cfg.shards, cfg.replicas);
        cfg.masters = spawned->uris();
        servers = spawned->processes();
    }

    result r;
    r.cfg = cfg;
    for (const auto& u : cfg.masters)
        r.masters.push_back(printable_uri(u));

    asio::io_context io(static_cast<int>(cfg.threads));
    redlock::client_config ccfg;
    ccfg.masters = cfg.masters;
    ccfg.cluster_replica_acks = cfg.cluster_replica_acks;
    ccfg.cluster_replica_ack_timeout = cfg.cluster_replica_ack_timeout;
    ccfg.handover_write_delay = cfg.handover_write_delay;
    // --observe: what a metrics exporter does, one relaxed counter per event kind (master_warning
    // is the last), and one of the acquisitions handed over.
    constexpr std::size_t event_kinds =
        static_cast<std::size_t>(redlock::event_kind::master_warning) + 1;
    std::array<std::atomic<std::uint64_t>, event_kinds> events{};
    std::atomic<std::uint64_t> handed_over{0};
    if (cfg.observe)
        ccfg.on_event = [&events, &handed_over](const redlock::event& e) {
            events[static_cast<std::size_t>(e.kind)].fetch_add(1, std::memory_order_relaxed);
            if (e.handed_over)
                handed_over.fetch_add(1, std::memory_order_relaxed);
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
    opts.fencing = cfg.fencing;
    if (cfg.wait)
        opts.wait = std::chrono::milliseconds(60000);
    opts.handoff = !cfg.no_handoff;
    if (!cfg.unsafe_majority)
        opts.permits = cfg.permits;
    redlock::lock_options reader_opts;
    if (cfg.read_share >= 0)
    {
        opts.role = redlock::lock_role::writer;
        reader_opts = opts;
        reader_opts.role = redlock::lock_role::reader;
    }
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
            std::fprintf(stderr, "redlock-bench: only %zu of %zu masters reachable: %s\n", n,
                         cfg.masters.size(), ec.message().c_str());
            shut_down();
            return 2;
        }
    }

    run_state rs(io, *client, opts, cfg.hold);
    rs.reader_opts = reader_opts;
    if (cfg.permits > 1 || cfg.read_share >= 0)
        rs.witness = std::make_unique<holders_witness>(
            cfg.resources, cfg.read_share >= 0 ? UINT32_MAX : cfg.permits);
    std::optional<majority_semaphore> unsafe;
    if (cfg.unsafe_majority)
    {
        // The attempt timeout the library derives from the TTL (lock_options::attempt_timeout).
        unsafe.emplace(io, cfg.masters, cfg.permits, cfg.ttl,
                       std::chrono::milliseconds(std::clamp<long>(cfg.ttl.count() / 20, 10, 200)));
        for (std::size_t i = 0; i < unsafe->masters(); ++i)
        {
            std::promise<redlock::error_code> up;
            unsafe->master(i).async_wait_connected(
                [&up](redlock::error_code ec) { up.set_value(ec); });
            if (auto f = up.get_future(); f.wait_for(30s) != std::future_status::ready || f.get())
            {
                std::fprintf(stderr, "redlock-bench: master %zu not reachable\n", i);
                shut_down();
                return 2;
            }
        }
        rs.unsafe = &*unsafe;
    }
    if (cfg.fencing)
        rs.last_fence = std::make_unique<std::atomic<std::uint64_t>[]>(cfg.resources);
    if (cfg.resources < cfg.workers)
    {
        rs.released_at = std::make_unique<std::atomic<clk::rep>[]>(cfg.resources);
        for (std::size_t k = 0; k < cfg.resources; ++k)
            rs.released_at[k].store(0);
    }
    std::vector<std::unique_ptr<worker>> workers;
    workers.reserve(cfg.workers);
    // --read-share: the first workers read, the others write; worker w locks resource w % R,
    // so each resource gets about that share of readers.
    const auto readers =
        cfg.read_share >= 0
            ? static_cast<std::size_t>(cfg.read_share * static_cast<double>(cfg.workers) + 0.5)
            : 0;
    for (std::size_t w = 0; w < cfg.workers; ++w)
        workers.push_back(std::make_unique<worker>(
            rs, cfg.prefix + std::to_string(w % cfg.resources), w % cfg.resources, w < readers));

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    std::printf("redlock-bench: %s\n", describe_config(r).c_str());
    for (const auto& m : r.masters)
        std::printf("  master %s\n", m.c_str());

    rs.running.store(cfg.workers);
    const auto t_start = clk::now();
    const auto to_dur = [](double s) {
        return std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(s));
    };
    const auto warm_end = t_start + to_dur(cfg.warmup_s);
    const auto run_end = warm_end + to_dur(cfg.duration_s);
    if (cfg.warmup_s == 0)
        rs.phase.store(measuring);
    for (auto& w : workers)
        w->start();

    clk::time_point m0 = t_start;
    std::chrono::microseconds cpu0 = process_cpu_time();
    auto servers_cpu0 = servers_cpu_time(servers);
    auto prev = gather(stats);
    auto prev_t = t_start;
    auto next_tick = t_start + 1s;
    bool measuring_now = cfg.warmup_s == 0;
    std::size_t line_len = 0;

    auto progress = [&](clk::time_point now) {
        auto cur = gather(stats);
        const double dt = std::chrono::duration<double>(now - prev_t).count();
        const auto interval = histogram_data::difference(cur->all_acquire, prev->all_acquire);
        const double cps =
            dt > 0 ? static_cast<double>(cur->all_cycles - prev->all_cycles) / dt : 0;
        char line[256];
        std::snprintf(
            line, sizeof line,
            "%7.1f s  %-7s %12s cycles/s   acquire p50 %9.1f us  p99 %9.1f us   failed %s",
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
            servers_cpu0 = servers_cpu_time(servers);
            rs.phase.store(measuring, std::memory_order_release);
            measuring_now = true;
        }
        if (now >= run_end)
            break;
        std::this_thread::sleep_until(
            std::min({next_tick, run_end, measuring_now ? run_end : warm_end, clk::now() + 50ms}));
    }
    rs.phase.store(stopping, std::memory_order_release);
    // Every worker finishes the cycle it is in; those cycles count.
    const auto drain_limit = clk::now() + std::max<clk::duration>(30s, 2 * (cfg.hold + cfg.ttl));
    while (rs.running.load(std::memory_order_acquire) > 0 && clk::now() < drain_limit)
        std::this_thread::sleep_for(1ms);
    const auto m1 = clk::now();
    const auto cpu1 = process_cpu_time();
    const auto servers_cpu1 = servers_cpu_time(servers);
    const bool drained = rs.running.load(std::memory_order_acquire) == 0;
    if (tty && line_len)
        std::printf("\n");

    if (!measuring_now)
        m0 = m1;  // interrupted during the warm-up: nothing was measured
    r.elapsed_s = std::chrono::duration<double>(m1 - m0).count();
    r.cpu_us = static_cast<double>((cpu1 - cpu0).count());
    for (std::size_t i = 0; i < servers.size(); ++i)
    {
        server_cpu s{.master = servers[i].master,
                     .node = servers[i].node,
                     .pid = servers[i].pid,
                     .replica = servers[i].replica,
                     .us = {}};
        if (servers_cpu0[i] && servers_cpu1[i])
            s.us = static_cast<double>((*servers_cpu1[i] - *servers_cpu0[i]).count());
        r.servers.push_back(s);
    }
    r.rss_kib = peak_rss_kib();
    r.t = gather(stats);
    {
        std::lock_guard<std::mutex> g(rs.other_mutex);
        r.other_errors = rs.other_errors;
    }
    for (const auto& w : workers)
        r.per_worker.push_back(w->acquisitions());
    r.fences_checked = rs.fences_checked.load();
    r.fence_violations = rs.fence_violations.load();
    if (rs.witness)
    {
        r.witness_checked = rs.witness->checked();
        r.witness_violations = rs.witness->violations();
        r.witness_most = rs.witness->most();
    }
    r.counts_ok = drained && r.t->add_up();

    if (drained)
    {
        if (unsafe)
            unsafe->close();
        shut_down();
    }
    else
        std::fprintf(stderr, "redlock-bench: %zu workers did not finish their last cycle\n",
                     rs.running.load());

    print_summary(r);
    if (cfg.observe)
    {
        std::printf("  events (whole run)    ");
        for (std::size_t k = 0; k < event_kinds; ++k)
            if (const auto n = events[k].load(std::memory_order_relaxed))
                std::printf(" %s %llu",
                            std::string(to_string(static_cast<redlock::event_kind>(k))).c_str(),
                            static_cast<unsigned long long>(n));
        if (const auto n = handed_over.load(std::memory_order_relaxed))
            std::printf(" (acquired by hand-over %llu)", static_cast<unsigned long long>(n));
        std::printf("\n");
    }
    bool outputs_written = true;
    if (!cfg.json_file.empty())
    {
        std::ofstream j(cfg.json_file);
        j << to_json(r);
        if (!j.good())
        {
            std::fprintf(stderr, "redlock-bench: cannot write %s\n", cfg.json_file.c_str());
            outputs_written = false;
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
            outputs_written = false;
        }
        else
        {
            std::printf("  plot: %s\n", cfg.plot_file.c_str());
        }
    }
    std::fflush(stdout);
    if (!drained)
        std::_Exit(1);  // workers still reference the client: do not run destructors under them
    // The unsound semaphore's violations are what it is run to show, not a failure of the run.
    return exit_status(r.counts_ok,
                       r.fence_violations + (cfg.unsafe_majority ? 0 : r.witness_violations),
                       outputs_written, r.interrupted);
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
