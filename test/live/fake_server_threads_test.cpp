// Multi-threaded work for ThreadSanitizer: the client and the connection with the io_context
// on 4 threads, operations started from many threads and coroutines, cancellations emitted
// from other threads, close() from a thread that runs none of it, while a fake master keeps
// breaking its connection (garbage every few dozen replies) so that drops, reconnects and
// failed requests race with everything else. Tagged [tsan]: the TSan stage of
// scripts/test.sh runs these, the existing multi-threaded live tests and the fake server tests.
//
// REDLOCK_TEST_THREADS sets the io_context's thread count (default 4).
#include "client_fixture.hpp"
#include "fake_server.hpp"
#include "io_helpers.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <future>
#include <latch>
#include <mutex>
#include <random>
#include <thread>

using namespace redlock;
using namespace redlock::test;
namespace resp = redlock::resp;

namespace {

int io_thread_count()
{
    if (const char* v = std::getenv("REDLOCK_TEST_THREADS"))
    {
        const int n = std::atoi(v);
        if (n >= 1 && n <= 64)
            return n;
    }
    return 4;
}

/// A script that answers `n` commands normally, then sends garbage: the client sees a protocol
/// error, drops the connection and reconnects (to the same script again).
fake_script breaks_after(int n)
{
    fake_script s;
    for (int i = 0; i < n; ++i)
        s.any().normal();
    s.any().reply("garbage\r\n");
    return s;
}

/// Waits (polling) until `pred` holds or `limit` passes.
template <class Pred>
bool wait_for(Pred pred, steady::duration limit)
{
    const auto deadline = steady::now() + limit;
    while (!pred())
    {
        if (steady::now() >= deadline)
            return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

client_config fast_config(std::vector<std::string> uris)
{
    client_config cfg;
    cfg.masters = std::move(uris);
    cfg.defaults.ttl = 5000ms;
    cfg.defaults.attempt_timeout = 200ms;
    cfg.defaults.release_timeout = 200ms;
    cfg.defaults.max_attempts = 3;
    cfg.defaults.retry_delay = 1ms;
    cfg.defaults.retry_jitter = 5ms;
    cfg.connection.reconnect_min_delay = 2ms;
    cfg.connection.reconnect_max_delay = 10ms;
    cfg.connection.health_check_timeout = 500ms;
    return cfg;
}

}  // namespace

TEST_CASE(
    "threads: lock/unlock from many coroutines on a multi-threaded io_context, a breaking master, "
    "contention and cancellation from another thread",
    "[live][fake][client][tsan]")
{
    const int threads = io_thread_count();
    fake_server good1, good2, flaky;
    flaky.set_default(breaks_after(40));

    asio::io_context io(threads);
    client c(io.get_executor(), fast_config({good1.uri(), flaky.uri(), good2.uri()}));

    constexpr int n_workers = 32;    // each on its own strand
    constexpr int n_contenders = 8;  // of which these share 2 resources
    constexpr int iterations = 40;
    std::atomic<int> holders[2] = {0, 0};
    std::atomic<int> overlaps{0};
    std::atomic<long> acquired{0}, aborted{0}, failed{0};
    std::atomic<int> finished{0};
    error_log errors;

    struct worker_state
    {
        explicit worker_state(asio::io_context& io) : strand(asio::make_strand(io)) {}
        asio::strand<asio::io_context::executor_type> strand;
        asio::cancellation_signal signal;  // used only on `strand`
    };
    std::deque<worker_state> workers;
    for (int k = 0; k < n_workers; ++k)
        workers.emplace_back(io);

    auto body = [&](int k) -> asio::awaitable<void> {
        auto& w = workers[static_cast<std::size_t>(k)];
        const bool contender = k < n_contenders;
        for (int j = 0; j < iterations; ++j)
        {
            const std::string resource = contender
                                             ? "shared:" + std::to_string(k % 2)
                                             : "own:" + std::to_string(k) + ":" + std::to_string(j);
            auto [ec, l] = co_await c.async_lock(
                resource, asio::bind_cancellation_slot(w.signal.slot(), tuple_awaitable));
            if (ec == asio::error::operation_aborted)
            {
                ++aborted;
                continue;
            }
            if (ec == error::contended || ec == error::no_quorum || ec == error::validity_expired)
            {
                ++failed;
                continue;
            }
            if (ec)
            {
                errors.add(resource + " lock: " + ec.message() + " " + l.describe());
                continue;
            }
            ++acquired;
            if (contender)
            {
                auto& h = holders[k % 2];
                if (h.fetch_add(1) != 0)
                    ++overlaps;
                co_await sleep_for(1ms);
                h.fetch_sub(1);
            }
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            if (uec && uec != error::no_quorum)
                errors.add(resource + " unlock: " + uec.message());
        }
        co_return;
    };
    for (int k = 0; k < n_workers; ++k)
        asio::co_spawn(workers[static_cast<std::size_t>(k)].strand, body(k),
                       [&](std::exception_ptr e) {
                           if (e)
                               errors.add("a worker threw");
                           ++finished;
                       });

    const auto t0 = steady::now();
    {
        io_threads runner(io, threads);
        // The canceller: a thread that runs none of the io_context. Each emit is posted to
        // the strand that owns the signal, as Asio requires; the operation it cancels runs on
        // the client's strand, on whichever io thread.
        std::jthread canceller([&](std::stop_token st) {
            std::minstd_rand rng(7);
            while (!st.stop_requested() && finished.load() < n_workers)
            {
                auto& w = workers[rng() % n_workers];
                asio::post(w.strand, [&w] { w.signal.emit(asio::cancellation_type::terminal); });
                std::this_thread::sleep_for(3ms);
            }
        });
        const bool all_done = wait_for([&] { return finished.load() == n_workers; }, 60s);
        canceller.request_stop();
        canceller.join();
        INFO(errors.str());
        REQUIRE(all_done);
        c.close();
        std::this_thread::sleep_for(20ms);
        runner.stop();
    }
    const auto elapsed = steady::now() - t0;

    INFO(errors.str());
    CHECK(errors.size() == 0);
    CHECK(overlaps.load() == 0);
    CHECK(acquired.load() > n_workers * iterations / 4);
    CHECK(flaky.connections() > 1);  // it did break and come back
    WARN(threads << " io threads: " << acquired << " acquired, " << aborted << " aborted, "
                 << failed << " failed, in " << ms(elapsed) << " ms; the flaky master accepted "
                 << flaky.connections() << " connections");
    for (auto* m : {&good1, &good2, &flaky})
        CHECK(m->errors().empty());
}

TEST_CASE("threads: a connection shared by 8 submitting threads while its master keeps breaking",
          "[live][fake][connection][tsan]")
{
    const int threads = io_thread_count();
    fake_server flaky;
    flaky.set_default(breaks_after(100));
    asio::io_context io(threads);
    redlock::connection_options opts;
    opts.reconnect_min_delay = 2ms;
    opts.reconnect_max_delay = 10ms;
    connection conn(io.get_executor(), flaky.uri(), opts);
    io_threads runner(io, threads);

    constexpr int submitters = 8;
    constexpr int per_thread = 500;
    // Each thread submits at least per_thread commands, and goes on until the master broke
    // twice (three connections): whether it breaks is then the loop's outcome, not a race
    // between the submitters and a slow first connection (under ASan every command could fail
    // as not_connected before one reached it). Bounded: a master that never breaks fails the
    // test below, it does not hang it.
    constexpr int most_per_thread = 50 * per_thread;
    constexpr int max_in_flight = 400;
    std::atomic<int> submitted{0}, completed{0}, ok{0}, wrong{0}, unexpected{0};
    std::mutex first_unexpected_mutex;
    std::string first_unexpected;  // the first unexpected error, for the failure's message
    std::latch start(submitters);
    {
        std::vector<std::jthread> ts;
        for (int t = 0; t < submitters; ++t)
            ts.emplace_back([&, t] {
                start.arrive_and_wait();
                for (int i = 0; i < most_per_thread && (i < per_thread || flaky.connections() < 3);
                     ++i)
                {
                    ++submitted;
                    std::string payload = std::to_string(t) + ":" + std::to_string(i);
                    conn.async_exec(
                        command("ECHO", payload), 2s, [&, payload](error_code ec, resp::reply r) {
                            if (!ec)
                            {
                                if (r.size() == 1 && r[0].value == payload)
                                    ++ok;
                                else
                                    ++wrong;
                            }
                            // The failures a breaking master may cause; connect_failed: a
                            // request queued during a reconnection that timed out fails with
                            // its cause (node_connection.hpp).
                            else if (ec != error::protocol_error && ec != error::not_connected &&
                                     ec != error::connection_lost && ec != error::request_timeout &&
                                     ec != error::connect_failed)
                            {
                                if (++unexpected == 1)
                                {
                                    const std::lock_guard g(first_unexpected_mutex);
                                    first_unexpected =
                                        ec.message() + " (" + std::to_string(ec.value()) + ") at " +
                                        payload + ", " + std::to_string(flaky.connections()) +
                                        " connections";
                                }
                            }
                            ++completed;
                        });
                    // At most max_in_flight requests outstanding: on an overloaded machine (TSan,
                    // 2 cores) an unbounded flood queues the reconnection's handshake reply
                    // behind every posted request until its connect_timeout ends the attempt.
                    while (submitted.load() - completed.load() > max_in_flight)
                        std::this_thread::sleep_for(1ms);
                    if (i % 10 == 0)
                        std::this_thread::sleep_for(1ms);
                }
            });
    }
    const bool all = wait_for([&] { return completed.load() == submitted.load(); }, 60s);
    conn.close();
    std::this_thread::sleep_for(20ms);
    runner.stop();
    REQUIRE(all);
    CHECK(wrong.load() == 0);  // a reply never reaches another request
    {
        const std::lock_guard g(first_unexpected_mutex);
        INFO("first unexpected error: " << first_unexpected);
        CHECK(unexpected.load() == 0);
    }
    CHECK(ok.load() > 0);
    CHECK(flaky.connections() > 1);
    WARN(ok << " of " << submitted << " answered over " << flaky.connections() << " connections");
}

TEST_CASE(
    "threads: close() from a thread that runs nothing, with operations in flight on 4 threads",
    "[live][fake][client][tsan]")
{
    const int threads = io_thread_count();
    fake_server m1, m2, m3;
    asio::io_context io(threads);
    auto c =
        std::make_unique<client>(io.get_executor(), fast_config({m1.uri(), m2.uri(), m3.uri()}));
    std::atomic<int> finished{0};
    std::atomic<long> ops{0};
    error_log errors;
    constexpr int n = 16;
    for (int k = 0; k < n; ++k)
        asio::co_spawn(
            asio::make_strand(io),
            [&, k]() -> asio::awaitable<void> {
                for (int j = 0;; ++j)
                {
                    auto [ec, l] = co_await c->async_lock(
                        "r" + std::to_string(k) + ":" + std::to_string(j), tuple_awaitable);
                    ++ops;
                    if (ec == error::connection_closed)
                        co_return;
                    if (ec)
                    {
                        errors.add("lock: " + ec.message());
                        co_return;
                    }
                    auto [uec] = co_await c->async_unlock(l, tuple_awaitable);
                    if (uec == error::connection_closed)
                        co_return;
                    if (uec)
                        errors.add("unlock: " + uec.message());
                }
            },
            [&](std::exception_ptr e) {
                if (e)
                    errors.add("a worker threw");
                ++finished;
            });
    io_threads runner(io, threads);
    CHECK(wait_for([&] { return ops.load() > 200; }, 30s));
    c->close();  // from the test thread, which runs none of the io_context
    const bool all = wait_for([&] { return finished.load() == n; }, 30s);
    runner.stop();
    c.reset();
    INFO(errors.str());
    REQUIRE(all);
    CHECK(errors.size() == 0);
}

TEST_CASE(
    "threads: a holder's accessors and master_states() from threads that run nothing, while the "
    "extensions run on 4 threads",
    "[live][client][tsan]")
{
    // hold.hpp and client.hpp promise both may be called from any thread: under TSan, any
    // unsynchronised access between these readers and the extensions is a reported race.
    local_masters m({.count = 3});
    asio::io_context io(io_thread_count());
    client c(io.get_executor(), config_for(m));
    io_threads runner(io, io_thread_count());

    auto o = lasting(300ms);  // an extension every ~100 ms
    std::future<lock> acquired = c.async_lock("threads:holder", o, asio::use_future);
    REQUIRE(acquired.wait_for(10s) == std::future_status::ready);
    const lock l = acquired.get();
    auto holder = std::make_unique<lock_holder>(c, l, asio::make_strand(io));

    std::atomic<bool> stop{false};
    std::atomic<long> reads{0};
    error_log errors;
    auto reader = [&] {
        while (!stop.load())
        {
            if (holder->current().token() != l.token())
                errors.add("current() changed token");
            (void)holder->held();
            (void)holder->status();
            (void)holder->extensions();
            (void)holder->masters_holding();
            const auto states = c.master_states();
            if (states.size() != 3)
                errors.add("master_states() has " + std::to_string(states.size()) + " entries");
            ++reads;
        }
    };
    std::thread r1(reader), r2(reader);
    const bool extended = wait_for([&] { return holder->extensions() >= 5; }, 10s);
    stop = true;
    r1.join();
    r2.join();
    CHECK(extended);
    CHECK(holder->held());
    CHECK(reads.load() > 0);
    INFO(errors.str());
    CHECK(errors.size() == 0);

    holder->release();  // from this thread too
    CHECK(wait_for([&] { return holder->status() == error::released; }, 5s));
    holder.reset();
    c.close();
    CHECK(wait_for([&] { return c.master_states()[0].state == master_state::closed; }, 5s));
    runner.stop();
}
