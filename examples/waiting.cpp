// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-example-waiting: acquisitions that wait for the release (lock_options::wait).
//
// Another process holds "report" (a key set by hand, as node-redlock or a crashed holder would
// leave it, with 20 s to live). Three requests of this process ask for the lock, each allowed
// to wait 5 s: far less than the key's 20 s, so only a wake-up by the release can serve them.
// The other owner deletes its key after 200 ms; the three take the lock in the order they
// asked, each holding it for 20 ms. A fourth asks without waiting and is refused at once.
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "example_checks.hpp"
#include "example_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

asio::awaitable<void> sleep_for(std::chrono::milliseconds d)
{
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

// One request: takes the lock, waiting for it, does its 20 ms of work, releases it.
asio::awaitable<void> request(redlock::client& locks, int id, std::vector<int>& served)
{
    // [waiting]
    redlock::lock_options o;
    o.wait = std::chrono::seconds(5);  // at most; then contended
    redlock::lock l = co_await locks.async_lock("report", o, asio::use_awaitable);
    // [waiting]
    served.push_back(id);
    std::printf("  request %d has the lock\n", id);
    co_await sleep_for(20ms);
    co_await locks.async_unlock(l, asio::use_awaitable);
}

// The other owner lets go (a plain function: GCC 12 rejects a braced list of literals inside a
// coroutine).
void other_owner_deletes(const std::vector<std::string>& masters)
{
    std::printf("  the other owner deletes its key\n");
    redlock_example::command_on_all(masters, {"DEL", "report"});
}

}  // namespace

int main(int argc, char** argv)
{
    using redlock_example::check;
    return redlock_example::run_example("redlock-example-waiting", [&] {
        const auto masters = redlock_example::masters_from(argc, argv, 3);
        redlock_example::command_on_all(masters, {"SET", "report", "another-owner", "NX", "PX", "20000"});

        asio::io_context io;
        redlock::client locks(io.get_executor(), redlock_example::config_of(masters));
        std::vector<int> served;
        int failed = 0, finished = 0;
        bool refused_at_once = false;
        asio::co_spawn(
            io,
            [&]() -> asio::awaitable<void> {
                for (int id = 1; id <= 3; ++id)
                    asio::co_spawn(io, request(locks, id, served), [&](std::exception_ptr e) {
                        failed += e ? 1 : 0;
                        ++finished;
                    });
                // Without `wait`, one attempt: the other owner's key refuses it.
                redlock::lock_options once;
                once.max_attempts = 1;
                auto [ec, l] = co_await locks.async_lock("report", once, redlock::use_tuple);
                refused_at_once = ec == redlock::error::contended;
                co_await sleep_for(200ms);
                other_owner_deletes(masters);
                while (finished < 3)
                    co_await sleep_for(10ms);
                locks.close();
            },
            asio::detached);
        io.run();
        std::printf("\n");
        check(refused_at_once, "without wait, the held lock was refused (contended)");
        check(failed == 0 && served.size() == 3, "the three waiting requests took the lock, woken by the release");
        check(served == std::vector<int>{1, 2, 3}, "in the order they asked");
    });
}
