// Acceptance: mutual exclusion under real concurrency, and a multi-threaded io_context.
#include "client_fixture.hpp"
#include "holder_witness.hpp"
#include "io_helpers.hpp"

#include <boost/asio/detached.hpp>

#include <atomic>
#include <mutex>
#include <thread>

using namespace redlock;
using namespace redlock::test;

namespace {

/// Spawns the coroutines `body(0)` to `body(n - 1)` on `io`. `finished` counts those that
/// have completed, and `io` stops when all of them have; one that throws is recorded in
/// `errors`.
template <class Body, class Counter>
void spawn_all(asio::io_context& io, int n, Body& body, Counter& finished, error_log& errors)
{
    for (int k = 0; k < n; ++k)
        asio::co_spawn(io, body(k), [&io, &finished, &errors, n](std::exception_ptr e) {
            if (e)
                errors.add("coroutine threw");
            if (++finished == n)
                io.stop();
        });
}

}  // namespace

TEST_CASE("client: concurrent clients never hold one resource at once", "[live][client]")
{
    const std::size_t n_masters = GENERATE(3u, 5u);
    constexpr int n_clients = 4;
    constexpr int per_client = 8;
    // The run ends at `target` exclusive acquisitions, not after a time: a loaded machine (a
    // sanitizer, other jobs) made 93 in the 1.5 s that the run once was. The limit is only
    // there to end a run that hangs.
    constexpr long target = 600;
    constexpr auto run_limit = 30s;
    INFO("masters: " << n_masters);

    local_masters m({.count = n_masters});

    auto opts = lasting(2000ms);
    opts.max_attempts = 1000;
    opts.retry_delay = 0ms;
    opts.retry_jitter = 5ms;
    opts.max_wait = 300ms;  // so that a contender notices the end of the run

    holder_witness witness;
    std::atomic<long> acquisitions{0};
    std::atomic<long> contended{0};
    error_log errors;

    const auto stop_at = steady::now() + run_limit;
    auto worker = [&](int id) {
        try
        {
            asio::io_context io;
            client c(io.get_executor(), config_for(m));
            int finished = 0;
            auto body = [&](int k) -> asio::awaitable<void> {
                (void)k;
                const auto counted_refusal = [&](error_code ec) {
                    if (ec != error::contended)
                        return false;
                    ++contended;
                    return true;
                };
                while (acquisitions.load() < target && steady::now() < stop_at)
                {
                    const auto granted = co_await contend_for(c, "shared-resource", opts, id,
                                                              errors, counted_refusal);
                    if (!granted)
                        continue;
                    const lock& l = *granted;
                    witness.enter();
                    if (!l.held() || l.remaining() <= steady::duration::zero())
                        errors.add("acquired a lock that is not held: " + l.describe());
                    co_await sleep_for(1ms);
                    if (witness.now() != 1)
                        errors.add("holders = " + std::to_string(witness.now()) + " while holding");
                    witness.leave();
                    auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                    if (uec)
                        errors.add("unlock: " + uec.message());
                    ++acquisitions;
                }
            };
            spawn_all(io, per_client, body, finished, errors);
            io.run_for(run_limit + 5s);
            if (finished != per_client)
                errors.add("client " + std::to_string(id) + ": only " + std::to_string(finished) +
                           " coroutines finished (hang?)");
        }
        catch (const std::exception& e)
        {
            errors.add(std::string("worker threw: ") + e.what());
        }
    };

    const auto t0 = steady::now();
    std::vector<std::thread> threads;
    for (int id = 0; id < n_clients; ++id)
        threads.emplace_back(worker, id);
    for (auto& t : threads)
        t.join();
    const auto elapsed = steady::now() - t0;

    INFO("acquisitions " << acquisitions << ", contended completions " << contended << ", in "
                         << ms(elapsed) << " ms");
    INFO(errors.str());
    CHECK(errors.size() == 0);
    CHECK(witness.most() == 1);
    CHECK(acquisitions.load() >= target);
    WARN("N=" << n_masters << ": " << acquisitions << " exclusive acquisitions in " << ms(elapsed)
              << " ms by " << n_clients * per_client << " contenders");
    CHECK(settled_keys_sync(m) == 0);
}

TEST_CASE("client: multi-threaded io_context, 64 coroutines on distinct resources",
          "[live][client]")
{
    constexpr int n_coroutines = 64;
    constexpr int n_iterations = 200;
    local_masters m({.count = 5});

    asio::io_context io(4);
    client c(io.get_executor(), config_for(m));

    std::atomic<long> ok{0};
    std::atomic<int> finished{0};
    error_log errors;

    auto body = [&](int k) -> asio::awaitable<void> {
        for (int j = 0; j < n_iterations; ++j)
        {
            const std::string resource = "mt:" + std::to_string(k) + ":" + std::to_string(j);
            auto [ec, l] = co_await c.async_lock(resource, tuple_awaitable);
            if (ec)
            {
                errors.add(resource + " lock: " + ec.message() + " " + l.describe());
                continue;
            }
            if (l.resource() != resource || l.key() != resource || l.token().size() != 40)
                errors.add(resource + ": bad lock fields");
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            if (uec)
                errors.add(resource + " unlock: " + uec.message());
            else
                ++ok;
        }
    };

    spawn_all(io, n_coroutines, body, finished, errors);

    // Watchdog: a hang fails the test instead of blocking it.
    asio::steady_timer watchdog(io, 30s);
    std::atomic<bool> timed_out{false};
    watchdog.async_wait([&](error_code ec) {
        if (!ec)
        {
            timed_out = true;
            io.stop();
        }
    });

    const auto t0 = steady::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { io.run(); });
    for (auto& t : threads)
        t.join();
    const auto elapsed = steady::now() - t0;

    INFO(errors.str());
    REQUIRE_FALSE(timed_out.load());
    CHECK(finished.load() == n_coroutines);
    CHECK(errors.size() == 0);
    CHECK(ok.load() == long{n_coroutines} * n_iterations);
    WARN(ok.load() << " lock+unlock pairs on a 4-thread io_context in " << ms(elapsed) << " ms");
    CHECK(settled_keys_sync(m) == 0);
}
