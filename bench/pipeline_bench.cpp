// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-pipeline-bench: pipelined SET throughput over ONE redlock::connection to one local
// master, beside `redis-benchmark -P 32 -c 50` of SET on the same server, interleaved A B A B.
//
//   redlock-pipeline-bench [--master URI] [--seconds 3] [--rounds 3] [--batch 64] [--inflight 16]
//
// Without --master it starts one redis-server on loopback itself (and stops it).

#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>

#include "common.hpp"
#include "local_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::bench::arg_value;

namespace {

struct result
{
    double ops_per_s = 0;
    std::uint64_t ops = 0;
    std::uint64_t errors = 0;
    double requests_per_write = 0;
};

result run_redlock(const std::string& uri, std::chrono::seconds duration, std::size_t batch,
                   std::size_t inflight)
{
    asio::io_context io(1);
    redlock::connection conn(io.get_executor(), uri);
    redlock::request req;
    for (std::size_t i = 0; i < batch; ++i)
        req.push("SET", "bench:pipe:" + std::to_string(i),
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");

    result r;
    std::chrono::steady_clock::time_point start, stop;
    bool running = true;
    std::function<void()> issue = [&] {
        conn.async_exec(req, 0ms,
                        [&](redlock::error_code ec, std::vector<redlock::resp::reply> replies) {
                            if (ec)
                                ++r.errors;
                            for (const auto& rep : replies)
                            {
                                if (rep.size() == 1 && rep[0].value == "OK")
                                    ++r.ops;
                                else
                                    ++r.errors;
                            }
                            if (running && std::chrono::steady_clock::now() < stop)
                                issue();
                            else
                                running = false;
                        });
    };

    conn.async_wait_connected([&](redlock::error_code ec) {
        if (ec)
        {
            std::cerr << "cannot connect: " << conn.last_error_detail() << "\n";
            return;
        }
        start = std::chrono::steady_clock::now();
        stop = start + duration;
        for (std::size_t i = 0; i < inflight; ++i)
            issue();
    });
    // Run until every in-flight batch has completed after the deadline.
    while (io.run_one_for(1s))
    {
        if (!running && conn.stats().requests == conn.stats().replies + 0)
            break;
    }
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto st = conn.stats();
    conn.close();
    io.run_for(100ms);
    r.ops_per_s = static_cast<double>(r.ops) / elapsed;
    r.requests_per_write =
        st.writes ? static_cast<double>(st.requests) / static_cast<double>(st.writes) : 0;
    return r;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    try
    {
        auto seconds =
            std::chrono::seconds(std::stoi(arg_value(argc, argv, "--seconds").value_or("3")));
        auto rounds = std::stoi(arg_value(argc, argv, "--rounds").value_or("3"));
        auto batch =
            static_cast<std::size_t>(std::stoul(arg_value(argc, argv, "--batch").value_or("64")));
        auto inflight = static_cast<std::size_t>(
            std::stoul(arg_value(argc, argv, "--inflight").value_or("16")));

        std::optional<redlock::test::local_masters> spawned;
        std::string uri;
        if (auto m = arg_value(argc, argv, "--master"))
            uri = *m;
        else
        {
            spawned.emplace(redlock::test::local_masters::options{.count = 1});
            uri = spawned->uri(0);
        }
        auto cfg = redlock::parse_master_uri(uri);
        std::printf(
            "master %s; %d rounds of %lld s, interleaved (A = redlock, B = redis-benchmark)\n",
            cfg.to_string().c_str(), rounds, static_cast<long long>(seconds.count()));
        std::printf("A: one connection, batches of %zu SET, %zu batches in flight\n", batch,
                    inflight);
        std::printf("B: redis-benchmark -t set -P 32 -c 50 (50 connections)\n\n");

        std::vector<double> ours, theirs;
        std::uint64_t errors = 0;
        for (int i = 0; i < rounds; ++i)
        {
            auto a = run_redlock(uri, seconds, batch, inflight);
            errors += a.errors;
            ours.push_back(a.ops_per_s);
            std::printf("round %d  A redlock          %12.0f SET/s  (%llu ops, %.1f requests per "
                        "write, %llu errors)\n",
                        i + 1, a.ops_per_s, static_cast<unsigned long long>(a.ops),
                        a.requests_per_write, static_cast<unsigned long long>(a.errors));
            // Size redis-benchmark's run to last about as long as ours.
            auto n = std::max<std::uint64_t>(
                100000,
                static_cast<std::uint64_t>(a.ops_per_s * static_cast<double>(seconds.count())));
            auto b = redlock::bench::redis_benchmark_rps(
                "-h " + cfg.host + " -p " + std::to_string(cfg.port) + " -t set -P 32 -c 50 -n " +
                std::to_string(n));
            if (!b)
            {
                std::fprintf(stderr, "redis-benchmark did not run (is redis-tools installed?)\n");
                return 2;
            }
            theirs.push_back(*b);
            std::printf("round %d  B redis-benchmark  %12.0f SET/s\n", i + 1, *b);
        }
        double a = median(ours), b = median(theirs);
        std::printf("\nmedian  redlock %.0f SET/s, redis-benchmark %.0f SET/s, ratio %.2f\n", a, b,
                    b > 0 ? a / b : 0);
        if (errors)
        {
            std::fprintf(stderr, "%llu errors: the counts do not add up\n",
                         static_cast<unsigned long long>(errors));
            return 1;
        }
        return 0;
    }
    catch (const std::exception& e)
    {
        std::cerr << "redlock-pipeline-bench: " << e.what() << "\n";
        return 2;
    }
}
