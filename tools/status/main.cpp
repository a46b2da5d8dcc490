// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-status [OPTIONS] RESOURCE: who holds RESOURCE, as a majority of the masters sees it.
// See docs/cli.md.
#include "report.hpp"
#include "status_options.hpp"

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace redlock;
using namespace redlock::status;
constexpr auto tuple = asio::as_tuple(asio::use_awaitable);

// "2026-11-28T02:40:01.123Z": when a --watch line was read (UTC, milliseconds).
std::string utc_now()
{
    const auto now = std::chrono::system_clock::now();
    const auto t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms));
    return buf;
}

// What stops a run: a signal (its number); closing the client ends the read in flight.
struct stop_state
{
    int signal = 0;
};

asio::awaitable<int> read_masters(client& c, const status_options& o, stop_state& stop)
{
    auto [cec, connected] = co_await c.async_wait_connected(tuple);
    if (stop.signal != 0)
        co_return o.watch ? exit_status::held : 128 + stop.signal;
    if (cec)
    {
        std::fprintf(stderr, "redlock-status: %s: only %zu of the %zu masters are reachable (%s)\n",
                     o.resource.c_str(), connected, o.masters.size(), cec.message().c_str());
        co_return exit_status::unavailable;
    }
    const auto opts = read_options(o);
    std::vector<std::string> endpoints;
    for (const auto& s : c.master_states())
        endpoints.push_back(s.endpoint);
    if (!o.watch)
    {
        auto [ec, r] = co_await c.async_holders(o.resource, opts, tuple);
        if (stop.signal != 0)
            co_return 128 + stop.signal;
        std::fputs(report(o.resource, ec, r, endpoints).c_str(), stdout);
        co_return exit_code_of(ec, r);
    }
    // Each change as the masters report it (client tracking), read again at least every
    // --interval (async_next_holders).
    auto [ec, r] = co_await c.async_holders(o.resource, opts, tuple);
    std::string last;
    for (;;)
    {
        if (stop.signal != 0)
            co_return exit_status::held;  // interrupted: the end of a watch
        if (auto now = fingerprint(ec, r); now != last)
        {
            std::printf("%s %s\n", utc_now().c_str(), summary(o.resource, ec, r).c_str());
            std::fflush(stdout);
            last = std::move(now);
        }
        if (const auto status = exit_code_of(ec, r); status == exit_status::usage)
            co_return status;  // refused: no later read would be accepted
        auto [nec, next] = co_await c.async_next_holders(o.resource, opts, r, o.interval, tuple);
        ec = nec;
        r = std::move(next);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    try
    {
        std::vector<std::string> args(argv + 1, argv + argc);
        auto parsed = parse_status_options(args, redlock::cli::environment::system());
        if (!parsed.options)
        {
            std::fputs(parsed.message.c_str(), parsed.to_stdout ? stdout : stderr);
            if (!parsed.message.empty() && parsed.message.back() != '\n')
                std::fputc('\n', parsed.to_stdout ? stdout : stderr);
            return parsed.exit_code;
        }
        const auto& o = *parsed.options;
        asio::io_context io;
        auto cfg = redlock::cli::masters_config(o, "redlock-status");
        cfg.deployment_checks = false;  // a read: the masters' persistence is the lockers' concern
        client c(io.get_executor(), cfg);
        int status = exit_status::internal;
        asio::signal_set signals(io, SIGINT, SIGTERM);
        stop_state stop;
        signals.async_wait([&](error_code ec, int sig) {
            if (ec)
                return;
            stop.signal = sig;
            c.close();  // every operation in flight completes with connection_closed
        });
        asio::co_spawn(io, read_masters(c, o, stop), [&](std::exception_ptr e, int s) {
            signals.cancel();
            c.close();
            if (e)
                std::rethrow_exception(e);
            status = s;
        });
        io.run();
        return status;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-status: %s\n", e.what());
        return exit_status::internal;
    }
}
