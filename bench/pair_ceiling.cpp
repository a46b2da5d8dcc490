// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-pair-ceiling: the masters' ceiling for exactly the work of a lock cycle, through the
// thinnest client we can write. On each master, over one raw redlock::connection, K keys are
// in flight, each doing `SET key token NX PX ttl` and then the compare-and-delete release of
// the same key (our release script, by EVALSHA), again and again. Every SET must answer OK and
// every release 1: the work is a lock cycle's, not the cheaper mix of redis-benchmark on a
// key space where most SET NX find the key taken and most releases miss.
//
//   redlock-pair-ceiling [--master URI ... | --spawn N] [--keys K] [--streams S]
//                        [--duration S] [--warmup S] [--ttl MS] [--json FILE]
//
// One lock cycle is one pair on each of the N masters: cycles/s = pairs / N / seconds, to set
// beside redlock-bench's cycles/s on the same masters. Exit status 0, or 1 when a reply was
// not what a lock cycle gets (or a request failed), 2 for bad arguments or unreachable masters.

#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "local_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

namespace {

// The library's release script (src/protocol/scripts.cpp), byte for byte: the same Lua, the
// same cost on the server.
constexpr const char* release_lua = "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
                                    "    return redis.call('del', KEYS[1])\n"
                                    "else\n"
                                    "    return 0\n"
                                    "end\n";

struct options
{
    std::vector<std::string> masters;
    std::size_t spawn = 5;
    std::size_t keys = 128;   // in flight per master
    std::size_t streams = 2;  // per master: while one waits for its replies, the other's are read
    double duration_s = 5;
    double warmup_s = 1;
    long ttl_ms = 10000;
    std::string json_file;
};

/// One stream: a fixed set of keys, alternately all SET (one pipelined batch) and all released
/// (one batch), each batch sent when the previous one's replies are in.
class stream
{
public:
    stream(redlock::connection& c, const std::string& sha, std::size_t master, std::size_t first,
           std::size_t count, long ttl_ms, const bool& measuring, const bool& running)
        : c_(c),
          measuring_(measuring),
          running_(running)
    {
        for (std::size_t k = first; k < first + count; ++k)
        {
            const std::string key = "ceiling:" + std::to_string(k);
            const std::string token = "token-" + std::to_string(master) + "-" + std::to_string(k) +
                                      "-0123456789abcdef0123";
            set_.push("SET", key, token, "NX", "PX", ttl_ms);
            release_.push("EVALSHA", sha, 1, key, token);
        }
        count_ = count;
    }

    void start() { send_set(); }

    std::uint64_t pairs = 0;  // in the measured window
    std::uint64_t wrong = 0;  // replies a lock cycle does not get
    bool idle = false;

private:
    void send_set()
    {
        if (!running_)
        {
            idle = true;
            return;
        }
        c_.async_exec(set_, 0ms,
                      [this](redlock::error_code ec, std::vector<redlock::resp::reply> r) {
                          if (ec || r.size() != count_)
                              wrong += count_;
                          else
                              for (const auto& x : r)
                                  wrong += (x.size() == 1 && x[0].value == "OK") ? 0 : 1;
                          send_release();
                      });
    }

    void send_release()
    {
        const bool counted = measuring_;
        c_.async_exec(release_, 0ms,
                      [this, counted](redlock::error_code ec, std::vector<redlock::resp::reply> r) {
                          if (ec || r.size() != count_)
                              wrong += count_;
                          else
                              for (const auto& x : r)
                                  wrong += (x.size() == 1 && x[0].value == "1") ? 0 : 1;
                          if (counted && measuring_)
                              pairs += count_;
                          send_set();
                      });
    }

    redlock::connection& c_;
    const bool& measuring_;
    const bool& running_;
    redlock::request set_;
    redlock::request release_;
    std::size_t count_ = 0;
};

[[noreturn]] void usage(const char* why)
{
    std::fprintf(stderr, "redlock-pair-ceiling: %s\n", why);
    std::exit(2);
}

options parse(int argc, char** argv)
{
    options o;
    // The options that take a count, and those that take seconds.
    const std::map<std::string, std::size_t*> counts{
        {"--spawn", &o.spawn}, {"--keys", &o.keys}, {"--streams", &o.streams}};
    const std::map<std::string, double*> seconds{{"--duration", &o.duration_s},
                                                 {"--warmup", &o.warmup_s}};
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (i + 1 >= argc)
            usage(("missing value for " + a).c_str());
        const std::string v = argv[++i];
        if (const auto count = counts.find(a); count != counts.end())
            *count->second = std::stoul(v);
        else if (const auto secs = seconds.find(a); secs != seconds.end())
            *secs->second = std::stod(v);
        else if (a == "--master")
            o.masters.push_back(v);
        else if (a == "--ttl")
            o.ttl_ms = std::stol(v);
        else if (a == "--json")
            o.json_file = v;
        else
            usage(("unknown option " + a).c_str());
    }
    if (o.keys == 0 || o.streams == 0 || o.streams > o.keys || o.duration_s <= 0 || o.ttl_ms <= 0)
        usage("--keys and --streams must be positive, streams <= keys, --duration and --ttl "
              "positive");
    return o;
}

}  // namespace

int main(int argc, char** argv)
{
    options o;
    try
    {
        o = parse(argc, argv);
    }
    catch (const std::exception&)
    {
        usage("a number was expected");
    }
    std::optional<redlock::test::local_masters> spawned;
    if (o.masters.empty())
    {
        spawned.emplace(redlock::test::local_masters::options{.count = o.spawn});
        o.masters = spawned->uris();
    }
    const std::size_t n = o.masters.size();

    asio::io_context io(1);
    std::vector<std::unique_ptr<redlock::connection>> conns;
    for (const auto& uri : o.masters)
        conns.push_back(std::make_unique<redlock::connection>(io.get_executor(), uri));

    // Load the script on every master (EVALSHA afterwards, as the client does once it knows).
    std::string sha;
    std::size_t loaded = 0;
    bool failed = false;
    for (auto& c : conns)
        c->async_exec(redlock::command("SCRIPT", "LOAD", release_lua), 5000ms,
                      [&](redlock::error_code ec, redlock::resp::reply r) {
                          if (ec || r.empty())
                              failed = true;
                          else
                              sha = r[0].value;
                          ++loaded;
                      });
    while (loaded < n && io.run_one_for(10s))
    {}
    if (failed || loaded < n)
    {
        std::fprintf(stderr,
                     "redlock-pair-ceiling: a master is unreachable or refused SCRIPT LOAD\n");
        return 2;
    }

    bool measuring = false, running = true;
    std::vector<std::unique_ptr<stream>> streams;
    for (std::size_t m = 0; m < n; ++m)
    {
        const std::size_t per = o.keys / o.streams;
        for (std::size_t s = 0; s < o.streams; ++s)
        {
            const std::size_t count = s + 1 == o.streams ? o.keys - per * s : per;
            streams.push_back(std::make_unique<stream>(*conns[m], sha, m, per * s, count, o.ttl_ms,
                                                       measuring, running));
        }
    }
    for (auto& s : streams)
        s->start();

    const auto to = [](double s) {
        return std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(s));
    };
    io.run_for(to(o.warmup_s));
    const auto cpu0 = redlock::bench::process_cpu_time();
    const auto t0 = clk::now();
    measuring = true;
    io.run_for(to(o.duration_s));
    measuring = false;
    const double elapsed = std::chrono::duration<double>(clk::now() - t0).count();
    const double cpu_us = static_cast<double>((redlock::bench::process_cpu_time() - cpu0).count());
    running = false;
    // Let every stream finish its pair, so that no key is left.
    const auto limit = clk::now() + 10s;
    auto all_idle = [&] {
        for (auto& s : streams)
            if (!s->idle)
                return false;
        return true;
    };
    while (!all_idle() && clk::now() < limit && io.run_one_for(1s))
    {}

    std::uint64_t pairs = 0, wrong = 0;
    for (auto& s : streams)
    {
        pairs += s->pairs;
        wrong += s->wrong;
    }
    for (auto& c : conns)
        c->close();
    io.run_for(200ms);

    const double pairs_per_s = static_cast<double>(pairs) / elapsed;
    const double cycles_per_s = pairs_per_s / static_cast<double>(n);
    const double cpu_per_cycle =
        pairs ? cpu_us * static_cast<double>(n) / static_cast<double>(pairs) : 0;
    std::printf(
        "redlock-pair-ceiling: %zu masters, %zu keys in flight per master in %zu streams, %.2f s\n",
        n, o.keys, o.streams, elapsed);
    std::printf("  cycles/s (pairs / masters / s)  %12.0f\n", cycles_per_s);
    std::printf("  pairs/s (all masters)           %12.0f   (SET NX PX + release, each a real lock "
                "and unlock)\n",
                pairs_per_s);
    std::printf("  client CPU per cycle            %12.2f us\n", cpu_per_cycle);
    std::printf("  wrong replies                   %12llu\n",
                static_cast<unsigned long long>(wrong));
    if (!o.json_file.empty())
    {
        if (FILE* f = std::fopen(o.json_file.c_str(), "w"))
        {
            std::fprintf(f,
                         "{\"tool\": \"redlock-pair-ceiling\", \"masters\": %zu, \"keys\": %zu, "
                         "\"streams\": %zu, "
                         "\"elapsed_s\": %.3f, \"pairs\": %llu, \"pairs_per_s\": %.1f, "
                         "\"cycles_per_s\": %.1f, "
                         "\"client_cpu_us_per_cycle\": %.3f, \"wrong\": %llu}\n",
                         n, o.keys, o.streams, elapsed, static_cast<unsigned long long>(pairs),
                         pairs_per_s, cycles_per_s, cpu_per_cycle,
                         static_cast<unsigned long long>(wrong));
            std::fclose(f);
        }
    }
    return wrong == 0 && all_idle() ? 0 : 1;
}
