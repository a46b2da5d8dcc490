// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-election-candidate: one candidate of the election "leader", in a process of its own,
// for the multi-process failover test (test/live/election_failover_test.cpp).
//
//   redlock-election-candidate LOG IDENTITY TTL_MS MASTER_URI...
//
// Campaigns in a loop; observes the election in a loop; appends what it does and sees to LOG
// (O_APPEND, one write() per line, so that the lines of several processes do not mix), with
// times on the steady clock (CLOCK_MONOTONIC, the same in every process of the machine):
//
//   lead   IDENTITY TERM NOW_NS         the campaign completed: this candidate leads
//   valid  IDENTITY TERM VALID_UNTIL_NS the lead's validity (current().valid_until()), first
//                                       right after `lead`, then each time an extension moved it
//   lost   IDENTITY TERM NOW_NS         the lead was lost without resigning (leading() false)
//   resign IDENTITY TERM NOW_NS         written just before async_resign (SIGUSR1, or SIGTERM
//                                       while leading)
//   seen   IDENTITY LEADER TERM NOW_NS  the observer was told of a leader (LEADER `-` and TERM
//                                       0: none)
//
// SIGUSR1: resign (if leading), wait 100 ms, campaign again. SIGTERM: resign if leading, stop
// observing, close the client, exit 0.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <redlock/election.hpp>
#include <redlock/redlock.hpp>

#include "tuple_awaitable.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::test::tuple_awaitable;

namespace {

using steady = std::chrono::steady_clock;

long long steady_ns(steady::time_point t)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

struct candidate
{
    int log_fd;
    std::string identity;
    asio::io_context& io;
    redlock::client& c;
    redlock::election e;
    asio::cancellation_signal stop_campaign;
    asio::cancellation_signal stop_observing;
    bool resign_asked = false;
    bool stopping = false;
    int running = 2;  // the campaign and observer loops

    candidate(int fd, std::string id, asio::io_context& ctx, redlock::client& cl,
              redlock::election_options o)
        : log_fd(fd),
          identity(std::move(id)),
          io(ctx),
          c(cl),
          e(cl, "leader", identity, o)
    {}

    void append(const std::string& line)
    {
        const std::string l = line + "\n";
        // One write per line: O_APPEND makes each a single append, whole.
        if (::write(log_fd, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
            std::perror("write");
    }

    void line(const char* what, const std::string& who, std::uint64_t term, long long ns)
    {
        append(std::string(what) + " " + who + " " + std::to_string(term) + " " +
               std::to_string(ns));
    }

    asio::awaitable<void> pause(steady::duration d)
    {
        asio::steady_timer t(io, d);
        co_await t.async_wait(tuple_awaitable);
    }

    void loop_done()
    {
        if (--running == 0)
            c.close();
    }

    // A loop's failed operation: true when the loop ends (the candidate stops, or its client
    // closed); otherwise says what failed on stderr, and the loop pauses and goes on.
    bool ends_loop(const redlock::error_code& ec, const char* what) const
    {
        if (stopping || ec == redlock::error::connection_closed)
            return true;
        std::fprintf(stderr, "%s: %s failed: %s\n", identity.c_str(), what, ec.message().c_str());
        return false;
    }

    asio::awaitable<void> campaign_loop()
    {
        while (!stopping)
        {
            auto [ec, lead] = co_await e.async_campaign(
                asio::bind_cancellation_slot(stop_campaign.slot(), tuple_awaitable));
            const auto won = steady::now();
            resign_asked = false;  // a SIGUSR1 that came while not leading asks for nothing
            if (ec)
            {
                if (ends_loop(ec, "campaign"))
                    break;
                co_await pause(50ms);
                continue;
            }
            line("lead", identity, lead.term(), steady_ns(won));
            long long last_valid = 0;
            while (lead.leading() && !stopping && !resign_asked)
            {
                const long long v = steady_ns(lead.current().valid_until());
                if (v != last_valid)
                {
                    line("valid", identity, lead.term(), v);
                    last_valid = v;
                }
                co_await pause(2ms);
            }
            if (!lead.leading())
            {
                line("lost", identity, lead.term(), steady_ns(steady::now()));
                continue;
            }
            line("resign", identity, lead.term(), steady_ns(steady::now()));
            auto [rec] = co_await lead.async_resign(tuple_awaitable);
            if (rec)
                std::fprintf(stderr, "%s: resign: %s\n", identity.c_str(), rec.message().c_str());
            if (stopping)
                break;
            resign_asked = false;
            co_await pause(100ms);
        }
        loop_done();
    }

    asio::awaitable<void> observe_loop()
    {
        std::optional<redlock::leader_info> seen;
        bool first = true;
        while (!stopping)
        {
            std::tuple<redlock::error_code, std::optional<redlock::leader_info>> r;
            if (first)
                r = co_await e.async_leader(
                    asio::bind_cancellation_slot(stop_observing.slot(), tuple_awaitable));
            else
                r = co_await e.async_observe(
                    seen, asio::bind_cancellation_slot(stop_observing.slot(), tuple_awaitable));
            const auto at = steady::now();
            auto& [ec, now] = r;
            if (ec)
            {
                if (ends_loop(ec, "observe"))
                    break;
                co_await pause(20ms);
                continue;
            }
            first = false;
            append("seen " + identity + " " + (now ? now->identity : std::string("-")) + " " +
                   std::to_string(now ? now->term : 0) + " " + std::to_string(steady_ns(at)));
            seen = std::move(now);
        }
        loop_done();
    }

    void on_signal(asio::signal_set& sigs, const boost::system::error_code& ec, int signo)
    {
        if (ec)
            return;
        if (signo == SIGTERM)
        {
            stopping = true;
            stop_campaign.emit(asio::cancellation_type::terminal);
            stop_observing.emit(asio::cancellation_type::terminal);
            return;  // no more waits: the loops end, the client closes, io.run() returns
        }
        resign_asked = true;
        sigs.async_wait([this, &sigs](const boost::system::error_code& e2, int s2) {
            on_signal(sigs, e2, s2);
        });
    }
};

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 5)
    {
        std::fprintf(stderr,
                     "usage: redlock-election-candidate LOG IDENTITY TTL_MS MASTER_URI...\n");
        return 2;
    }
    const int fd = ::open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
    {
        std::perror(argv[1]);
        return 2;
    }
    try
    {
        asio::io_context io;
        redlock::client_config cfg;
        for (int i = 4; i < argc; ++i)
            cfg.masters.emplace_back(argv[i]);
        redlock::client c(io.get_executor(), cfg);
        redlock::election_options o;
        o.ttl = std::chrono::milliseconds(std::atoi(argv[3]));
        candidate cand(fd, argv[2], io, c, o);
        // Asked before the loops start: a signal sent from now on is not lost (the test waits
        // for the first `seen` line before it counts on this process).
        asio::signal_set sigs(io, SIGUSR1, SIGTERM);
        sigs.async_wait([&](const boost::system::error_code& ec, int signo) {
            cand.on_signal(sigs, ec, signo);
        });
        asio::co_spawn(io, cand.campaign_loop(), asio::detached);
        asio::co_spawn(io, cand.observe_loop(), asio::detached);
        io.run();
    }
    catch (const std::exception& ex)
    {
        std::fprintf(stderr, "redlock-election-candidate: %s\n", ex.what());
        ::close(fd);
        return 1;
    }
    ::close(fd);
    return 0;
}
