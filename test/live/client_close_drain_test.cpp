// close() right after unlocks: every delete that left the client is executed by every master,
// also by those still reading them when the client closes, and also when the io_context is
// destroyed at once (issue 11, item 1: 79-289 keys were left at n = 500 before the drain).
#include "client_fixture.hpp"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace redlock::test {

namespace {

enum class ending
{
    close_and_run,      // close() in the last handler; the io_context runs on
    destroy_and_run,    // the client destroyed in the last handler; the io_context runs on
    close_and_destroy,  // close() and io_context::stop() in the last handler, then destroyed
};

// Two threads that keep both cores busy while they live: the masters and the client compete
// for the CPU, as on a loaded machine.
class cpu_load
{
public:
    cpu_load()
    {
        for (auto& t : threads_)
            t = std::thread([this] {
                while (!stop_.load(std::memory_order_relaxed))
                    ;
            });
    }
    ~cpu_load()
    {
        stop_ = true;
        for (auto& t : threads_)
            t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::thread threads_[2];
};

// n concurrent lock+unlock pairs, then the ending from the handler of the last to complete.
// Returns the number of unlocks that succeeded; the keys are checked by the caller.
std::size_t lock_unlock_then_end(local_masters& m, std::size_t n, ending how,
                                 bool unix_sockets = false)
{
    std::size_t unlocked = 0;
    std::size_t done = 0;
    asio::io_context io;
    auto cfg = config_for(m);
    if (unix_sockets)
        for (std::size_t i = 0; i < m.size(); ++i)
            cfg.masters[i] = m.unix_uri(i);
    auto c = std::make_unique<client>(io.get_executor(), cfg);
    auto end = [&] {
        if (++done != n)
            return;
        if (how == ending::destroy_and_run)
            return c.reset();
        c->close();
        if (how == ending::close_and_destroy)
            io.stop();
    };
    run_bounded(io, require_connected(*c), 5s);
    for (std::size_t i = 0; i < n; ++i)
    {
        c->async_lock("p9:" + std::to_string(i), [&](error_code ec, lock l) {
            if (ec)
                return end();
            c->async_unlock(l, [&](error_code uec) {
                unlocked += uec ? 0 : 1;
                end();
            });
        });
    }
    io.restart();
    io.run_for(30s);
    REQUIRE(done == n);
    return unlocked;  // the client, then the io_context, are destroyed here
}

}  // namespace

TEST_CASE("client: closing right after 1,000 unlocks leaves no key on any master",
          "[live][client][close]")
{
    local_masters m({.count = 5});
    const auto how =
        GENERATE(ending::close_and_run, ending::destroy_and_run, ending::close_and_destroy);
    CAPTURE(static_cast<int>(how));
    const char* env = std::getenv("REDLOCK_CLOSE_RUNS");
    const int runs = env ? std::atoi(env) : 20;
    cpu_load load;
    // A run whose every acquisition failed (a machine so loaded that each attempt timed out)
    // closes nothing in flight: it proves nothing, but it is no failure; most runs must unlock.
    int runs_that_unlocked = 0;
    for (int run = 0; run < runs; ++run)
    {
        CAPTURE(run);
        const auto unlocked = lock_unlock_then_end(m, 1000, how);
        runs_that_unlocked += unlocked > 0 ? 1 : 0;
        // The masters execute what reached them; they get a moment to get through it.
        const auto left = settled_keys_sync(m, 2s);
        std::string where;
        for (std::size_t i = 0; i < m.size() && left != 0; ++i)
            where += "master " + std::to_string(i) + ": " + std::to_string(keys_on(m, i).size()) +
                     " keys; ";
        INFO(where);
        REQUIRE(left == 0);
    }
    CHECK(runs_that_unlocked * 2 > runs);
}

TEST_CASE("client: closing right after 1,000 unlocks over Unix sockets leaves no key on any master",
          "[live][client][close]")
{
    // The synchronous drain from the io_context's destructor, over Unix sockets.
    local_masters m({.count = 5, .unix_sockets = true});
    const char* env = std::getenv("REDLOCK_CLOSE_RUNS");
    const int runs = env ? std::atoi(env) / 4 + 1 : 5;
    cpu_load load;
    int runs_that_unlocked = 0;  // as above: most runs must unlock
    for (int run = 0; run < runs; ++run)
    {
        CAPTURE(run);
        runs_that_unlocked +=
            lock_unlock_then_end(m, 1000, ending::close_and_destroy, true) > 0 ? 1 : 0;
        REQUIRE(settled_keys_sync(m, 2s) == 0);
    }
    CHECK(runs_that_unlocked * 2 > runs);
}

TEST_CASE("client: close() waits for a silent master at most close_timeout, and not at all with 0",
          "[live][client][close]")
{
    // Master 0 paused with an unlock's delete unanswered: the drain can wait for it only until
    // close_timeout. The client is closed and destroyed, then the io_context (in that order, as
    // Asio requires): the io_context's destructor drains synchronously, so the time from
    // close() to the end of that destructor is the drain's.
    local_masters m({.count = 3});
    const auto timeout = GENERATE(std::chrono::milliseconds(0), std::chrono::milliseconds(400));
    CAPTURE(timeout.count());
    std::chrono::steady_clock::duration took{};
    {
        auto io = std::make_unique<asio::io_context>();
        auto cfg = config_for(m);
        cfg.connection.close_timeout = timeout;
        auto c = std::make_unique<client>(io->get_executor(), cfg);
        run_bounded(*io, require_connected(*c), 5s);
        auto o = lasting(60000ms);
        lock l;
        run_bounded(
            *io,
            [&]() -> asio::awaitable<void> { l = co_await c->async_lock("drain-silent", o); }(),
            5s);
        m.pause(0);
        c->async_unlock(l, [](error_code) {});
        io->run_for(50ms);  // the deletes are written; master 0 does not answer
        const auto t0 = steady::now();
        c->close();
        c.reset();
        io.reset();  // the synchronous drain
        took = steady::now() - t0;
        m.resume(0);
    }
    INFO(ms(took) << " ms");
    CHECK(took < timeout + 300ms);
    if (timeout.count() > 0)
        CHECK(took >=
              timeout - 50ms);  // it did wait for the silent master: nothing is cut short early
}

}  // namespace redlock::test

namespace redlock::test {

TEST_CASE("client: an io_context destroyed with acquisitions still queued sends none of them",
          "[live][client][close]")
{
    // The operations are abandoned with the io_context, so no release would follow an
    // attempt that went out now: what had not left the client stays unsent (before, the
    // synchronous drain wrote it, and every such SET left its key to the TTL).
    local_masters m({.count = 3});
    {
        asio::io_context io;
        client c(io.get_executor(), config_for(m));
        run_bounded(io, require_connected(c), 5s);
        // On the client's strand the operations start at once: their SETs are queued and a
        // write is posted, which never runs.
        asio::post(c.get_executor(), [&] {
            for (int i = 0; i < 200; ++i)
                c.async_lock("queued:" + std::to_string(i), [](error_code, lock) {});
            io.stop();
        });
        io.restart();
        io.run();
    }
    CHECK(settled_keys_sync(m, 200ms) == 0);
}

}  // namespace redlock::test

namespace redlock::test {

namespace {

// When close() comes, in close_during_acquisitions below.
enum class cut
{
    first_grant,  // in the handler of the first acquisition to succeed: most SETs have left,
                  // some masters have answered them, others not
    after_1ms,    // from a timer 1 ms after the acquisitions started
};

// The keys on the masters that are not `held`'s.
std::vector<std::string> keys_not_held(const local_masters& m, const std::set<std::string>& held)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m.size(); ++i)
        for (auto& k : keys_on(m, i))
            if (!held.contains(k))
                out.push_back("master " + std::to_string(i) + ": " + k);
    return out;
}

}  // namespace

// client.hpp: "An acquisition attempt cut short still sends its release". close() fails every
// request still awaiting its reply, master by master; an attempt learns that it failed only
// once a majority of its masters have failed it, and its release must still reach the masters
// closed before that, whose SET has left (issue 29: 3,000 to 4,000 keys were left in 3 of 18
// runs of 1,000 acquisitions closed 1 ms in). The locks that were granted before close() stay
// held (close() does not release them): only their keys may remain.
TEST_CASE(
    "client: close() during 1,000 acquisitions leaves no key but those of the locks it granted",
    "[live][client][close]")
{
    local_masters m({.count = 5});
    const auto when = GENERATE(cut::first_grant, cut::after_1ms);
    CAPTURE(static_cast<int>(when));
    const char* env = std::getenv("REDLOCK_CLOSE_RUNS");
    const int runs = env ? std::atoi(env) : 10;
    std::size_t cut_short = 0;
    for (int run = 0; run < runs; ++run)
    {
        CAPTURE(run);
        std::set<std::string> held;
        std::size_t done = 0;
        {
            asio::io_context io;
            client c(io.get_executor(), config_for(m));
            run_bounded(io, require_connected(c), 5s);
            asio::steady_timer timer(io);
            for (int i = 0; i < 1000; ++i)
            {
                auto name = "cut:" + std::to_string(i);
                c.async_lock(name, [&, name](error_code ec, lock) {
                    ++done;
                    if (ec == error::connection_closed)
                        ++cut_short;
                    if (ec)
                        return;
                    held.insert(name);
                    if (when == cut::first_grant)
                        c.close();
                });
            }
            if (when == cut::after_1ms)
            {
                timer.expires_after(1ms);
                timer.async_wait([&](error_code) { c.close(); });
            }
            io.restart();
            io.run_for(30s);
            REQUIRE(done == 1000);
        }
        // What left the client reaches the masters after it is gone; give them a moment.
        auto left = keys_not_held(m, held);
        for (auto until = steady::now() + 2s; !left.empty() && steady::now() < until;
             left = keys_not_held(m, held))
            std::this_thread::sleep_for(5ms);
        INFO(left.size() << " keys of attempts close() cut short, e.g. "
                         << (left.empty() ? "" : left.front()));
        REQUIRE(left.empty());
        // ... and close() released none of the locks it granted: each still on a majority.
        for (const auto& name : held)
        {
            std::size_t on = 0;
            for (std::size_t i = 0; i < m.size(); ++i)
                on += m.command(i, {"EXISTS", name}) == ":1\r\n" ? 1 : 0;
            INFO(name << " on " << on << " masters");
            CHECK(on >= 3);
        }
        for (std::size_t i = 0; i < m.size(); ++i)
            m.command(i, {"FLUSHALL"});
    }
    // close() came while acquisitions were in flight, in some run at least.
    CHECK(cut_short > 0);
}

}  // namespace redlock::test
