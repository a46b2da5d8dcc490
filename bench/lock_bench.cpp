// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-lock-bench: acquire latency with one worker, then lock+unlock cycles/s with many
// concurrent workers, against N local masters started by the program (or given by URI).
//
//   redlock-lock-bench [--masters 5] [--master URI ...] [--workers 128] [--seconds 5]
//                      [--warmup 1] [--single 5000] [--ttl 10000]
//
// Every cycle is async_lock (one attempt, no retry) then async_unlock of a resource of its own
// (no contention). Failures are counted by kind; a run whose counts do not add up exits 1.

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <iostream>
#include <map>

#include "common.hpp"
#include "local_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::bench::arg_value;
using clk = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct tally
{
    std::uint64_t attempts = 0;
    std::uint64_t acquired = 0;
    std::uint64_t released = 0;
    std::map<std::string, std::uint64_t> failed;
    redlock::bench::samples acquire;
    redlock::bench::samples release;
    bool measuring = false;
};

std::string kind_of(const redlock::error_code& ec)
{
    if (ec == redlock::error::contended)
        return "contended";
    if (ec == redlock::error::no_quorum)
        return "no_quorum";
    if (ec == redlock::error::validity_expired)
        return "timeout";
    return "other(" + ec.message() + ")";
}

asio::awaitable<void> worker(redlock::client& c, std::string resource, redlock::lock_options opts, tally& t,
                             const clk::time_point& stop, std::size_t max_cycles)
{
    for (std::size_t n = 0; n < max_cycles && clk::now() < stop; ++n)
    {
        const bool m = t.measuring;
        auto t0 = clk::now();
        auto [ec, l] = co_await c.async_lock(resource, opts, use_tuple);
        auto t1 = clk::now();
        if (m)
            ++t.attempts;
        if (ec)
        {
            if (m)
                ++t.failed[kind_of(ec)];
            continue;
        }
        auto [uec] = co_await c.async_unlock(l, use_tuple);
        auto t2 = clk::now();
        if (m)
        {
            ++t.acquired;
            t.acquire.add(t1 - t0);
            t.release.add(t2 - t1);
            if (!uec)
                ++t.released;
            else
                ++t.failed["release(" + uec.message() + ")"];
        }
    }
}

void print_latency(const char* name, redlock::bench::samples& s)
{
    std::printf("  %-8s p50 %7.1f us  p90 %7.1f us  p99 %7.1f us  p99.9 %7.1f us  max %8.1f us  (%zu samples)\n",
                name, s.percentile_us(50), s.percentile_us(90), s.percentile_us(99), s.percentile_us(99.9),
                s.max_us(), s.size());
}

bool report_counts(const tally& t)
{
    std::uint64_t failed = 0;
    for (const auto& [k, v] : t.failed)
    {
        if (k.rfind("release", 0) != 0)
            failed += v;
        std::printf("  failed %-20s %llu\n", k.c_str(), static_cast<unsigned long long>(v));
    }
    const bool ok = t.attempts == t.acquired + failed;
    if (!ok)
        std::printf("  COUNTS DO NOT ADD UP: attempts %llu != acquired %llu + failed %llu\n",
                    static_cast<unsigned long long>(t.attempts), static_cast<unsigned long long>(t.acquired),
                    static_cast<unsigned long long>(failed));
    return ok;
}

}  // namespace

int main(int argc, char** argv)
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try
    {
        const auto n_masters = std::stoul(arg_value(argc, argv, "--masters").value_or("5"));
        const auto workers = std::stoul(arg_value(argc, argv, "--workers").value_or("128"));
        const auto seconds = std::stod(arg_value(argc, argv, "--seconds").value_or("5"));
        const auto warmup = std::stod(arg_value(argc, argv, "--warmup").value_or("1"));
        const auto single = std::stoul(arg_value(argc, argv, "--single").value_or("5000"));
        const auto ttl = std::chrono::milliseconds(std::stol(arg_value(argc, argv, "--ttl").value_or("10000")));

        std::vector<std::string> uris;
        for (int i = 1; i + 1 < argc; ++i)
            if (std::string(argv[i]) == "--master")
                uris.emplace_back(argv[i + 1]);
        std::optional<redlock::test::local_masters> spawned;
        if (uris.empty())
        {
            spawned.emplace(redlock::test::local_masters::options{.count = n_masters});
            uris = spawned->uris();
        }

        asio::io_context io(1);
        redlock::client_config cfg;
        cfg.masters = uris;
        redlock::client c(io.get_executor(), cfg);
        redlock::lock_options opts = c.default_options();
        opts.ttl = ttl;
        opts.max_attempts = 1;

        bool ok = true;
        c.async_wait_connected([](redlock::error_code, std::size_t) {});
        io.run_for(200ms);

        // ---- one worker: acquire latency ---------------------------------------------------
        std::printf("%zu masters; one worker, %lu lock+unlock cycles\n", uris.size(), single);
        tally one;
        one.measuring = true;
        auto far = clk::now() + 1h;
        std::size_t running = 1;
        auto finished = [&running](std::exception_ptr e) {
            --running;
            if (e)
                std::rethrow_exception(e);
        };
        asio::co_spawn(io, worker(c, "bench:single", opts, one, far, single), finished);
        // The client keeps the io_context busy (reads, health checks): run until the workers end.
        io.restart();
        while (running > 0)
            io.run_one();
        print_latency("acquire", one.acquire);
        print_latency("release", one.release);
        ok &= report_counts(one);

        auto cfg0 = redlock::parse_master_uri(uris[0]);
        auto rtt_rps = redlock::bench::redis_benchmark_rps("-h " + cfg0.host + " -p " + std::to_string(cfg0.port) +
                                                           " -t set -c 1 -P 1 -n 20000");
        if (rtt_rps)
            std::printf("  single SET round trip (redis-benchmark -c 1 -P 1): %.1f us; acquire p50 / RTT = %.2f\n",
                        1e6 / *rtt_rps, one.acquire.percentile_us(50) / (1e6 / *rtt_rps));

        // ---- many workers: throughput --------------------------------------------------------
        std::printf("\n%lu workers, distinct resources, %.1f s warmup + %.1f s measured\n", workers, warmup, seconds);
        tally many;
        many.acquire.reserve(1 << 20);
        many.release.reserve(1 << 20);
        auto t_start = clk::now();
        clk::time_point stop = t_start + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(warmup + seconds));
        running = workers;
        for (std::size_t w = 0; w < workers; ++w)
            asio::co_spawn(io, worker(c, "bench:" + std::to_string(w), opts, many, stop, SIZE_MAX), finished);
        const auto warm_end = t_start + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(warmup));
        while (clk::now() < warm_end)
            io.run_one_until(warm_end);
        many.measuring = true;
        auto cpu0 = redlock::bench::process_cpu_time();
        auto m0 = clk::now();
        while (running > 0)
            io.run_one();
        auto m1 = clk::now();
        auto cpu1 = redlock::bench::process_cpu_time();
        const double elapsed = std::chrono::duration<double>(m1 - m0).count();
        const double cycles_per_s = static_cast<double>(many.acquired) / elapsed;
        std::printf("  cycles/s %.0f   client CPU per cycle %.1f us   (%llu cycles in %.2f s)\n", cycles_per_s,
                    many.acquired ? static_cast<double>((cpu1 - cpu0).count()) / static_cast<double>(many.acquired) : 0.0,
                    static_cast<unsigned long long>(many.acquired), elapsed);
        print_latency("acquire", many.acquire);
        print_latency("release", many.release);
        ok &= report_counts(many);

        c.close();
        io.restart();
        io.run_for(200ms);
        return ok ? 0 : 1;
    }
    catch (const std::exception& e)
    {
        std::cerr << "redlock-lock-bench: " << e.what() << "\n";
        return 2;
    }
}
