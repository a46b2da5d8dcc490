// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-demo: given 5 masters (--master URI x5, or REDLOCK_MASTERS), walks through what a
// Redlock client does — acquire, contention, extension, release, and the quorum at work when masters stop
// answering — printing each outcome. Exits non-zero if any step does not behave as Redlock
// requires.

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <exception>

#include "example_checks.hpp"
#include "example_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

using redlock_example::check;
using redlock::use_tuple;

long long ms(std::chrono::steady_clock::duration d)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

long long us_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
        .count();
}

// A master stops answering for 3 s, as a stalled server would: CLIENT PAUSE holds every
// client's commands, ours included, then lets them through.
asio::awaitable<void> wait_for(std::chrono::steady_clock::duration d)
{
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(use_tuple);
}

void stall(const std::string& master)
{
    redlock_example::command_on(master, {"CLIENT", "PAUSE", "3000", "ALL"});
}

asio::awaitable<void> demo(redlock::client& a, redlock::client& b, const std::vector<std::string>& masters)
{
    auto [cec, connected] = co_await a.async_wait_connected(use_tuple);
    std::printf("client A connected to %zu of %zu masters (%s)\n", connected, a.size(),
                cec ? cec.message().c_str() : "ok");
    co_await b.async_wait_connected(use_tuple);

    redlock::lock_options opts = a.default_options();
    opts.ttl = 2000ms;

    std::printf("\n1. A acquires 'invoice:42' (ttl %lld ms)\n", static_cast<long long>(opts.ttl.count()));
    auto t0 = std::chrono::steady_clock::now();
    auto [ec, held] = co_await a.async_lock("invoice:42", opts, use_tuple);
    std::printf("  %s in %lld us -> %s\n", ec ? ec.message().c_str() : "acquired", us_since(t0),
                held.describe().c_str());
    check(!ec && held.held(), "A holds the lock");
    check(held.remaining() <= opts.ttl - 22ms, "validity <= ttl - drift (ttl*0.01 + 2 ms)");

    std::printf("\n2. B tries the same resource\n");
    auto [tec, maybe] = co_await b.async_try_lock("invoice:42", opts, use_tuple);
    std::printf("  try_lock -> %s, %s\n", tec ? tec.message().c_str() : "no error",
                maybe ? "acquired (wrong!)" : "contended: empty optional");
    check(!tec && !maybe, "B is refused while A holds it");

    std::printf("\n3. A extends to 5000 ms\n");
    auto [eec, extended] = co_await a.async_extend(held, 5000ms, use_tuple);
    std::printf("  %s -> %lld ms left\n", eec ? eec.message().c_str() : "extended",
                ms(extended.remaining()));
    check(!eec && extended.remaining() > 4000ms, "extension gives a new validity");

    std::printf("\n4. A releases; B acquires\n");
    auto [uec] = co_await a.async_unlock(extended, use_tuple);
    check(!uec, "A released on a majority");
    auto [bec, bl] = co_await b.async_lock("invoice:42", opts, use_tuple);
    check(!bec && bl.held(), "B acquires after A's release");
    co_await b.async_unlock(bl, use_tuple);

    std::printf("\n5. Two of five masters stalled (CLIENT PAUSE): a majority still answers\n");
    stall(masters[3]);
    stall(masters[4]);
    t0 = std::chrono::steady_clock::now();
    auto [pec, pl] = co_await a.async_lock("report:daily", opts, use_tuple);
    std::printf("  %s in %lld us -> %s\n", pec ? pec.message().c_str() : "acquired", us_since(t0),
                pl.describe().c_str());
    check(!pec && pl.held(), "acquired with 3 of 5 answering, without waiting for the stalled two");
    co_await a.async_unlock(pl, use_tuple);

    std::printf("\n6. Three of five masters stalled: no quorum, within the attempt deadline\n");
    stall(masters[2]);
    redlock::lock_options once = opts;
    once.max_attempts = 1;
    once.attempt_timeout = 100ms;
    t0 = std::chrono::steady_clock::now();
    auto [nec, nl] = co_await a.async_lock("report:daily", once, use_tuple);
    std::printf("  %s in %lld ms -> %s\n", nec.message().c_str(), ms(std::chrono::steady_clock::now() - t0),
                nl.describe().c_str());
    check(nec == redlock::error::no_quorum, "fails with no_quorum");
    co_await wait_for(3s);  // the stalls end; the paused releases go through

    a.close();
    b.close();
}

}  // namespace

int main(int argc, char** argv)
{
    return redlock_example::run_example("redlock-demo", [&] {
        auto masters = redlock_example::masters_from(argc, argv, 5);
        masters.resize(5);  // the walkthrough counts on five

        asio::io_context io;
        const auto cfg = redlock_example::config_of(masters);
        redlock::client a(io.get_executor(), cfg);
        redlock::client b(io.get_executor(), cfg);

        asio::co_spawn(io, demo(a, b, masters), [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
        io.run_for(60s);
    });
}
