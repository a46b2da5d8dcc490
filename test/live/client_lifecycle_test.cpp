// Closing and destroying a client (or a connection) while operations are under way: every
// handler is called promptly, or destroyed uncalled with its io_context, and nothing is touched
// after the client is gone.
#include "client_fixture.hpp"

#include "io_helpers.hpp"
#include <vector>

#include <memory>

#include <redlock/hold.hpp>

namespace redlock::test {

TEST_CASE("client: close completes an acquisition that is in flight or in a retry delay",
          "[live][client]")
{
    local_masters m({.count = 3});
    const auto attempts = GENERATE(1u, 3u);
    CAPTURE(attempts);

    asio::io_context io;
    auto c = std::make_unique<client>(io.get_executor(), config_for(m));
    for (std::size_t i = 0; i < m.size(); ++i)
        m.pause(i);  // the attempts stay in flight until the client closes

    lock_options o = c->default_options();
    o.max_attempts = attempts;
    o.attempt_timeout = 20ms;  // the first attempt fails fast, then a retry delay follows
    o.retry_delay = 1000ms;
    std::optional<error_code> result;
    c->async_lock("r", o, [&](error_code ec, lock) { result = ec; });

    asio::steady_timer t(io, 60ms);  // past the first attempt and its release
    t.async_wait([&](error_code) { c->close(); });
    const auto t0 = steady::now();
    io.run_for(3s);

    for (std::size_t i = 0; i < m.size(); ++i)
        m.resume(i);
    REQUIRE(result.has_value());
    CHECK(ms(steady::now() - t0) < 1000);
    if (attempts > 1)
        CHECK(*result == error::connection_closed);
    else
        CHECK((*result == error::no_quorum || *result == error::connection_closed));
}

TEST_CASE("client: close completes the unlock and the extension and the check in flight with "
          "connection_closed",
          "[live][client]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    lock_options d;
    d.attempt_timeout = 10s;  // nothing ends by a deadline: only close() can end them
    d.release_timeout = 10s;
    auto c = std::make_unique<client>(io.get_executor(), config_for(m, d));
    std::optional<lock> held;
    c->async_lock("r", [&](error_code ec, lock l) {
        REQUIRE_FALSE(ec);
        held = std::move(l);
    });
    // Until the lock is held (run_for would take the whole 5 s: the client keeps timers).
    REQUIRE(run_until(
        io, [&] { return held.has_value(); }, 5s));
    io.restart();

    for (std::size_t i = 0; i < m.size(); ++i)
        m.pause(i);  // the requests stay unanswered until the client closes
    std::optional<error_code> unlocked, extended, checked;
    c->async_unlock(*held, [&](error_code ec) { unlocked = ec; });
    c->async_extend(*held, 30s, [&](error_code ec, lock) { extended = ec; });
    c->async_check(*held, [&](error_code ec, check_result) { checked = ec; });
    asio::steady_timer t(io, 50ms);  // the three are under way, their requests queued
    t.async_wait([&](error_code) { c->close(); });
    io.run_for(5s);
    for (std::size_t i = 0; i < m.size(); ++i)
        m.resume(i);

    REQUIRE(unlocked);
    REQUIRE(extended);
    REQUIRE(checked);
    CHECK(*unlocked == error::connection_closed);
    CHECK(*extended == error::connection_closed);
    CHECK(*checked == error::connection_closed);
}

TEST_CASE("client: destroying a client as its attempt deadline expires is safe", "[live][client]")
{
    // The deadline timer's handler may already be queued when the client is destroyed; it
    // must not touch the freed client (AddressSanitizer builds report it if it does).
    local_masters m({.count = 3});
    int completed = 0, closed = 0;
    std::vector<error_code> others;
    for (int iter = 0; iter < 50; ++iter)
    {
        asio::io_context io;
        client_config cfg = config_for(m);
        cfg.defaults.attempt_timeout = 10ms;
        auto c = std::make_unique<client>(io.get_executor(), cfg);
        asio::steady_timer t(io);
        c->async_wait_connected([&](error_code, std::size_t) {
            const auto t0 = steady::now();
            c->async_lock("r" + std::to_string(iter), [&](error_code ec, lock) {
                ++completed;
                if (ec == error::connection_closed)
                    ++closed;
                else if (ec)
                    others.push_back(ec);
            });
            t.expires_at(t0 + 10ms);
            t.async_wait([&](error_code) { c.reset(); });
        });
        io.run_for(5s);
        REQUIRE(io.stopped());
    }
    // Each lock either succeeded before the reset or completed with connection_closed.
    INFO(closed << " of 50 completed with connection_closed");
    CHECK(completed == 50);
    CHECK(others.empty());
}

// client.hpp, object lifetimes: destroying the client closes the connections, and the
// operations still in progress complete with connection_closed once the io_context runs.
TEST_CASE("client: destroying the client, closed twice or not, completes its operations in "
          "progress with connection_closed",
          "[live][client]")
{
    // Destroyed as it is, or after close() twice (close() is idempotent; the destructor calls it).
    const bool close_twice_first = GENERATE(false, true);
    CAPTURE(close_twice_first);
    local_masters m({.count = 3});
    for (std::size_t i = 0; i < m.size(); ++i)
        m.command(i, {"SET", "busy", "someone-else", "PX", "60000"});
    asio::io_context io;
    auto c = std::make_unique<client>(io.get_executor(), config_for(m));
    lock_options o;
    o.max_attempts = 1000;  // retrying for as long as the test runs
    o.retry_delay = 20ms;
    o.retry_jitter = 10ms;
    std::vector<error_code> results;
    asio::steady_timer t(io);
    c->async_wait_connected([&](error_code ec, std::size_t) {
        REQUIRE_FALSE(ec);
        for (int k = 0; k < 10; ++k)
            c->async_lock("busy", o, [&](error_code lec, lock) { results.push_back(lec); });
        // Some are between attempts then, some in an attempt.
        t.expires_after(100ms);
        t.async_wait([&](error_code) {
            if (close_twice_first)
            {
                c->close();
                c->close();
            }
            c.reset();
        });
    });
    io.run_for(5s);
    REQUIRE(results.size() == 10);
    for (const auto& ec : results)
        CHECK(ec == error::connection_closed);
    CHECK(on_every_master(m, "busy", "someone-else"));
}

namespace {

std::size_t connected_clients(const local_masters& m, std::size_t i)
{
    const auto info = m.command(i, {"INFO", "clients"});
    const auto at = info.find("connected_clients:");
    REQUIRE(at != std::string::npos);
    return std::stoul(info.substr(at + 18));
}

// Waits until master i counts `n` connected clients (the query's own included) or `limit`
// passes; returns the last count.
std::size_t settled_clients(const local_masters& m, std::size_t i, std::size_t n,
                            steady::duration limit = 2s)
{
    const auto deadline = steady::now() + limit;
    auto count = connected_clients(m, i);
    while (count != n && steady::now() < deadline)
    {
        std::this_thread::sleep_for(5ms);
        count = connected_clients(m, i);
    }
    return count;
}

/// Masters, and how many clients each counted (INFO clients) before the test's client
/// connected: check_clients_back() checks that each comes back to that count, i.e. that what
/// the test destroyed closed its sockets.
struct counted_masters
{
    local_masters m;
    std::vector<std::size_t> baseline;

    explicit counted_masters(std::size_t count) : m({.count = count})
    {
        for (std::size_t i = 0; i < m.size(); ++i)
            baseline.push_back(connected_clients(m, i));
    }

    void check_clients_back() const
    {
        for (std::size_t i = 0; i < m.size(); ++i)
        {
            CAPTURE(i);
            CHECK(settled_clients(m, i, baseline[i]) == baseline[i]);
        }
    }
};

template <class Pred>
bool run_handlers_until(asio::io_context& io, Pred done, steady::duration limit = 5s)
{
    const auto deadline = steady::now() + limit;
    while (!done() && steady::now() < deadline)
        io.run_one_until(deadline);
    return done();
}

}  // namespace

TEST_CASE("client: destroying the io_context with operations in flight destroys their handlers and "
          "the client",
          "[live][client]")
{
    // Asio's rule: handlers still pending when the execution context is destroyed are destroyed
    // without being called. Ours are owned by operations that own themselves while they run;
    // the context's shutdown must let them go, or the handlers, the client and its sockets
    // would live on (LeakSanitizer reports that in the asan stage; here, the masters' client
    // counts and the handlers' reference counts show it).
    counted_masters masters(3);
    local_masters& m = masters.m;
    auto sentinel = std::make_shared<int>(0);
    int called = 0;
    {
        asio::io_context io;
        client_config cfg = config_for(m);
        cfg.defaults.ttl = 30s;
        cfg.defaults.attempt_timeout = 5s;
        cfg.defaults.release_timeout = 5s;
        auto c = std::make_unique<client>(io.get_executor(), cfg);
        std::optional<lock> a, b;
        c->async_lock("life:a", [&](error_code ec, lock l) {
            if (!ec)
                a = std::move(l);
        });
        c->async_lock("life:b", [&](error_code ec, lock l) {
            if (!ec)
                b = std::move(l);
        });
        // Every connection up first: one still in its handshake when its master is paused would
        // keep the async_wait_connected below waiting (slow builds see that).
        std::optional<std::size_t> ready;
        c->async_wait_connected([&](error_code, std::size_t n) { ready = n; });
        REQUIRE(run_handlers_until(io, [&] { return a && b && ready; }));
        REQUIRE(*ready == m.size());

        for (std::size_t i = 0; i < m.size(); ++i)
            m.pause(i);  // every request from now on stays unanswered
        c->async_lock("life:c", [&, s = sentinel](error_code, lock) { ++called; });
        c->async_try_lock("life:d",
                          [&, s = sentinel](error_code, std::optional<lock>) { ++called; });
        c->async_extend(*a, 20s, [&, s = sentinel](error_code, lock) { ++called; });
        c->async_check(*a, [&, s = sentinel](error_code, check_result) { ++called; });
        c->async_unlock(*a, [&, s = sentinel](error_code) { ++called; });
        c->async_wait_connected([&, s = sentinel](error_code, std::size_t) { ++called; });
        {
            lock_holder h(*c, std::move(*b));
            h.async_release([&, s = sentinel](error_code) { ++called; });
        }
        io.run_for(50ms);  // everything is sent; nothing is answered
        const auto in_flight = sentinel.use_count() - 1;
        c.reset();           // its close() is queued on the strand, which never runs again
        CHECK(called == 1);  // async_wait_connected: the connections were up
        CHECK(in_flight == 6);
    }
    for (std::size_t i = 0; i < m.size(); ++i)
        m.resume(i);
    CHECK(called == 1);
    CHECK(sentinel.use_count() == 1);  // every pending handler was destroyed
    masters.check_clients_back();      // the client's sockets were closed
}

TEST_CASE("client: an unlock completes at the quorum and destroying everything during its "
          "background part leaks nothing",
          "[live][client]")
{
    // The release completes once a majority deleted the key and the delete to every other
    // master has left the process in a form that needs nothing more from it: the masters that
    // are slow then delete without us. Warm: each connection has seen the script run, the
    // release goes as EVALSHA. Cold: the first release on each connection, sent as EVAL (an
    // EVALSHA there might meet NOSCRIPT, which would need our EVAL).
    const bool warm = GENERATE(true, false);
    CAPTURE(warm);
    counted_masters masters(5);
    local_masters& m = masters.m;
    double took_ms = 0;
    const auto release_timeout = 300ms;
    {
        asio::io_context io;
        client_config cfg = config_for(m);
        cfg.defaults.release_timeout = release_timeout;
        auto c = std::make_unique<client>(io.get_executor(), cfg);
        auto lock_on_all = [&](const std::string& r) {
            std::optional<lock> l;
            c->async_lock(r, [&](error_code ec, lock got) {
                if (!ec)
                    l = std::move(got);
            });
            REQUIRE(run_handlers_until(io, [&] { return l.has_value(); }));
            // The acquisition completed at the quorum; wait until every master has the key.
            REQUIRE(run_handlers_until(io, [&] {
                io.run_for(2ms);
                return total_keys(m) == 5;
            }));
            return *l;
        };
        if (warm)
        {
            // One release on every master: each connection has seen the script run.
            auto first = lock_on_all("early:warm-up");
            bool done = false;
            c->async_unlock(first, [&](error_code) { done = true; });
            REQUIRE(run_handlers_until(io, [&] { return done; }));
            REQUIRE(total_keys(m) == 0);
        }
        auto l = lock_on_all("early");

        m.pause(3);
        m.pause(4);
        std::optional<error_code> result;
        const auto t0 = steady::now();
        c->async_unlock(l, [&](error_code ec) { result = ec; });
        REQUIRE(run_handlers_until(io, [&] { return result.has_value(); }));
        took_ms = ms(steady::now() - t0);
        CHECK_FALSE(*result);
        // Three masters deleted the key; two are silent, their deletes written to them.
        for (std::size_t i = 0; i < 3; ++i)
            CHECK(keys_on(m, i).empty());
        c.reset();
    }  // the io_context goes while the release still waits for masters 3 and 4
    m.resume(3);
    m.resume(4);
    INFO("unlock completed after " << took_ms << " ms with 2 of 5 masters paused, release deadline "
                                   << release_timeout.count() << " ms");
    CHECK(took_ms < 100);
    // The deletes the paused masters had received are executed when they wake.
    CHECK(settled_keys_sync(m, 2s) == 0);
    masters.check_clients_back();
}

TEST_CASE("connection: destroying the io_context with requests in flight destroys their handlers "
          "and the connection",
          "[live][connection]")
{
    local_masters m({.count = 1});
    const auto baseline = connected_clients(m, 0);
    auto sentinel = std::make_shared<int>(0);
    int called = 0;
    {
        asio::io_context io;
        auto conn = std::make_unique<connection>(io.get_executor(), m.uri(0));
        bool up = false;
        conn->async_wait_connected([&](error_code ec) { up = !ec; });
        REQUIRE(run_handlers_until(io, [&] { return up; }));
        m.pause(0);
        asio::cancellation_signal never_emitted;
        conn->async_exec(command("PING"), [&, s = sentinel](error_code, resp::reply) { ++called; });
        conn->async_exec(command("PING"), 5000ms,
                         [&, s = sentinel](error_code, resp::reply) { ++called; });
        request batch;
        batch.push("PING");
        batch.push("ECHO", "x");
        conn->async_exec(std::move(batch), 0ms,
                         [&, s = sentinel](error_code, std::vector<resp::reply>) { ++called; });
        conn->async_exec(
            command("PING"),
            asio::bind_cancellation_slot(never_emitted.slot(),
                                         [&, s = sentinel](error_code, resp::reply) { ++called; }));
        io.run_for(50ms);  // sent, unanswered
        CHECK(sentinel.use_count() == 5);
        conn.reset();
    }
    m.resume(0);
    CHECK(called == 0);
    CHECK(sentinel.use_count() == 1);
    CHECK(settled_clients(m, 0, baseline) == baseline);
}

TEST_CASE("client: one connection per master, shared by every operation", "[live][client]")
{
    // 200 acquisitions and releases at once, then the masters' own list of their clients: one
    // connection named as the client's (client_config::client_name) on each.
    live_client live({.count = 3});
    auto& c = live.c;
    live.run(
        [&]() -> asio::awaitable<void> {
            int done = 0;
            for (int i = 0; i < 200; ++i)
                c.async_lock("one-conn:" + std::to_string(i), [&](error_code ec, lock l) {
                    CHECK_FALSE(ec);
                    c.async_unlock(l, [&](error_code) { ++done; });
                });
            REQUIRE(co_await eventually([&] { return done == 200; }, 10s));
            for (std::size_t i = 0; i < live.m.size(); ++i)
            {
                const auto list = live.m.command(i, {"CLIENT", "LIST"});
                std::size_t ours = 0;
                for (std::size_t at = list.find("name=redlock "); at != std::string::npos;
                     at = list.find("name=redlock ", at + 1))
                    ++ours;
                INFO("master " << i << ":\n" << list);
                CHECK(ours == 1);
            }
            CHECK(c.master_states()[0].connects == 1);
        },
        20s);
}

TEST_CASE("client: an unlock waits for the client's release_timeout, not another", "[live][client]")
{
    // Three of five masters paused: the unlock cannot reach a majority and ends at its deadline,
    // the client's release_timeout (1.5 s here; 200 ms by default). Only a lower bound is
    // checked: the deadline is the state machine's (unit:unlock_fsm), this is its wiring.
    lock_options defaults;
    defaults.release_timeout = 1500ms;
    live_client live({.count = 5}, defaults);
    auto& c = live.c;
    live.run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "release-timeout");
            for (std::size_t i = 0; i < 3; ++i)
                live.m.pause(i);
            const auto t0 = steady::now();
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            const auto took = steady::now() - t0;
            for (std::size_t i = 0; i < 3; ++i)
                live.m.resume(i);
            CHECK(uec == error::no_quorum);
            CHECK(took >= 1500ms);
        },
        20s);
}

}  // namespace redlock::test
