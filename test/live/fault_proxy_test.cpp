// The fault proxy of the reliability tests (test/support/fault_proxy.hpp) against a real
// master: forwarding, latency per direction, buffering and dropping stalls, cuts, refused
// connections, a master that is down, control from several threads, and teardown.
#include "client_fixture.hpp"
#include "fault_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

using namespace redlock;
using namespace redlock::test;
namespace resp = redlock::resp;

namespace {

using direction = fault_proxy::direction;
using stall_mode = fault_proxy::stall_mode;

// ---- A raw loopback socket, for what a redlock::connection would hide --------------------

class raw_socket
{
public:
    explicit raw_socket(std::uint16_t port)
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd_ >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    }
    ~raw_socket() { ::close(fd_); }
    raw_socket(const raw_socket&) = delete;
    raw_socket& operator=(const raw_socket&) = delete;

    void send(std::string_view bytes)
    {
        REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(bytes.size()));
    }

    /// What the peer did within `limit`: bytes, end of stream (""), reset, or nothing.
    struct outcome
    {
        enum kind_t
        {
            data,
            eof,
            reset,
            timeout
        } kind;
        std::string bytes;
    };

    /// Reads until `want` bytes arrived, the stream ended or failed, or `limit` passed.
    outcome read(std::size_t want, std::chrono::milliseconds limit)
    {
        outcome out{outcome::timeout, {}};
        const auto deadline = steady::now() + limit;
        while (out.bytes.size() < want)
        {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
            if (left.count() <= 0)
                return out;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
                continue;
            char buf[4096];
            const auto n = ::recv(fd_, buf, sizeof buf, 0);
            if (n == 0)
                return {outcome::eof, std::move(out.bytes)};
            if (n < 0)
                return {errno == ECONNRESET ? outcome::reset : outcome::eof, std::move(out.bytes)};
            out.bytes.append(buf, static_cast<std::size_t>(n));
        }
        out.kind = outcome::data;
        return out;
    }

private:
    int fd_ = -1;
};

/// The reply of `cmd` over `c`, or its error, within `timeout`.
asio::awaitable<std::pair<error_code, std::string>> exec(connection& c, command cmd,
                                                         std::chrono::milliseconds timeout = 2000ms)
{
    auto [ec, r] = co_await c.async_exec(std::move(cmd), timeout, tuple_awaitable);
    std::string value;
    if (!ec && !r.empty())
        value = r.front().value;
    co_return std::pair{ec, value};
}

/// Round trip of one PING, in milliseconds; fails the test if it does not succeed.
asio::awaitable<double> ping_ms(connection& c)
{
    const auto t0 = steady::now();
    auto [ec, v] = co_await exec(c, command("PING"));
    const double elapsed = ms(steady::now() - t0);
    REQUIRE_FALSE(ec);
    REQUIRE(v == "PONG");
    co_return elapsed;
}

/// Polls PING until it succeeds (the connection reconnects in the background).
asio::awaitable<bool> eventually_pings(connection& c, steady::duration limit = 5s)
{
    const auto deadline = steady::now() + limit;
    while (steady::now() < deadline)
    {
        auto [ec, v] = co_await exec(c, command("PING"), 300ms);
        if (!ec && v == "PONG")
            co_return true;
        co_await sleep_for(20ms);
    }
    co_return false;
}

connection_options quiet_options()
{
    connection_options o;
    o.reconnect_min_delay = 10ms;
    o.reconnect_max_delay = 100ms;
    return o;
}

constexpr double latency_slack_ms = 60.0;

/// One master behind a fault proxy and a connection through it: the setting of most tests here.
struct proxied
{
    local_masters m{local_masters::options{.count = 1}};
    fault_proxy proxy{m.port(0)};
    asio::io_context io;
    connection c{io.get_executor(), proxy.uri(), quiet_options()};

    /// Runs the coroutine `body()` once the connection is up, failing the test past `limit`.
    template <class Body>
    void run(Body body, steady::duration limit)
    {
        run_bounded(
            io,
            [&]() -> asio::awaitable<void> {
                REQUIRE_FALSE(std::get<0>(co_await c.async_wait_connected(tuple_awaitable)));
                co_await body();
            }(),
            limit);
    }
};

}  // namespace

TEST_CASE_METHOD(proxied, "fault_proxy: forwards commands and replies both ways", "[live][proxy]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto [sec, sv] = co_await exec(c, command("SET", "proxied", "value"));
            REQUIRE_FALSE(sec);
            CHECK(sv == "OK");
            auto [gec, gv] = co_await exec(c, command("GET", "proxied"));
            REQUIRE_FALSE(gec);
            CHECK(gv == "value");
            // The command really went to the master behind the proxy.
            CHECK(get_on(m, 0, "proxied") == std::string("value"));

            // A large value crosses in many chunks and comes back whole.
            const std::string big(1 << 20, 'x');
            auto [bec, bv] = co_await exec(c, command("SET", "big", big));
            REQUIRE_FALSE(bec);
            auto [g2ec, g2v] = co_await exec(c, command("GET", "big"));
            REQUIRE_FALSE(g2ec);
            CHECK(g2v == big);
        },
        10s);

    const auto s = proxy.stats();
    CHECK(s.accepted == 1);
    CHECK(s.active == 1);
    CHECK(s.bytes_to_master > (1u << 20));
    CHECK(s.bytes_to_client > (1u << 20));
    CHECK(s.refused == 0);
    CHECK(s.cut == 0);
    CHECK(s.bytes_dropped == 0);
}

TEST_CASE_METHOD(proxied, "fault_proxy: latency delays each direction by the set time, in order",
                 "[live][proxy]")
{
    run(
        [&]() -> asio::awaitable<void> {
            const double base = co_await ping_ms(c);
            INFO("baseline PING " << base << " ms");
            CHECK(base < 20.0);

            struct step
            {
                std::chrono::milliseconds up, down;
            };
            for (const auto s : {step{100ms, 0ms}, step{0ms, 80ms}, step{50ms, 50ms}})
            {
                proxy.set_latency(s.up, s.down);
                const double expected = static_cast<double>((s.up + s.down).count());
                const double rtt = co_await ping_ms(c);
                INFO("latency " << s.up.count() << " + " << s.down.count() << " ms: PING took "
                                << rtt << " ms");
                CHECK(rtt >= expected);
                CHECK(rtt <= expected + latency_slack_ms);
            }

            // A pipelined burst keeps its order through the delay.
            proxy.set_latency(30ms);
            redlock::request burst;
            for (int k = 0; k < 50; ++k)
                burst.push("INCR", "counter");
            auto [bec, replies] = co_await c.async_exec(std::move(burst), 2000ms, tuple_awaitable);
            REQUIRE_FALSE(bec);
            REQUIRE(replies.size() == 50);
            for (std::size_t k = 0; k < replies.size(); ++k)
                CHECK(replies[k].front().value == std::to_string(k + 1));

            // A chunk read after the latency drops never overtakes one still delayed: the INCR
            // (delayed 300 ms) reaches the master before the SET sent after it with no delay.
            proxy.set_latency(300ms, 0ms);
            std::optional<error_code> incr;
            c.async_exec(command("INCR", "order"), 2000ms,
                         [&](error_code ec, resp::reply) { incr = ec; });
            co_await sleep_for(20ms);
            proxy.set_latency(0ms);
            auto [oec, ov] = co_await exec(c, command("SET", "order", "100"));
            REQUIRE_FALSE(oec);
            CHECK(get_on(m, 0, "order") == std::string("100"));
            CHECK(incr == error_code());

            proxy.heal();
            const double healed = co_await ping_ms(c);
            CHECK(healed < 20.0);
        },
        20s);
}

TEST_CASE_METHOD(proxied,
                 "fault_proxy: a buffering stall holds the bytes and delivers them when it ends",
                 "[live][proxy]")
{
    run(
        [&]() -> asio::awaitable<void> {
            SECTION("towards the master: the request waits in the proxy")
            {
                proxy.stall(stall_mode::buffer, direction::to_master);
                auto [ec, v] = co_await exec(c, command("SET", "held", "1"), 200ms);
                CHECK(ec == error::request_timeout);
                CHECK_FALSE(get_on(m, 0, "held"));  // not delivered
                proxy.unstall(direction::to_master);
                CHECK(
                    co_await eventually([&] { return get_on(m, 0, "held") == std::string("1"); }));
            }
            SECTION("towards the client: the request runs, the reply waits in the proxy")
            {
                proxy.stall(stall_mode::buffer, direction::to_client);
                auto [ec, v] = co_await exec(c, command("SET", "held", "2"), 200ms);
                CHECK(ec == error::request_timeout);
                CHECK(get_on(m, 0, "held") == std::string("2"));
                proxy.unstall(direction::to_client);
            }
            // The same connection goes on: the late reply was read and dropped in its place.
            auto [gec, gv] = co_await exec(c, command("ECHO", "after"));
            REQUIRE_FALSE(gec);
            CHECK(gv == "after");
            const auto s = proxy.stats();
            CHECK(s.accepted == 1);
            CHECK(s.cut == 0);
            CHECK(s.bytes_dropped == 0);
        },
        10s);
}

TEST_CASE_METHOD(
    proxied, "fault_proxy: a dropping stall loses the bytes and cuts the connection when it ends",
    "[live][proxy]")
{
    run(
        [&]() -> asio::awaitable<void> {
            proxy.stall(stall_mode::drop);
            auto [ec, v] = co_await exec(c, command("SET", "lost", "1"), 200ms);
            CHECK(ec == error::request_timeout);
            proxy.unstall();
            // The connection with a hole is cut; the client reconnects by itself.
            {
                const bool pings = co_await eventually_pings(c);
                CHECK(pings);
            }
            CHECK_FALSE(get_on(m, 0, "lost"));
            const auto s = proxy.stats();
            CHECK(s.cut == 1);
            CHECK(s.bytes_dropped > 0);
            CHECK(s.accepted == 2);
        },
        10s);

    // A raw socket sees the reset.
    proxy.stall(stall_mode::drop, direction::to_master);
    raw_socket raw(proxy.port());
    raw.send("*1\r\n$4\r\nPING\r\n");
    CHECK(raw.read(1, 200ms).kind == raw_socket::outcome::timeout);
    proxy.unstall(direction::to_master);
    const auto after = raw.read(1, 1000ms);
    CHECK((after.kind == raw_socket::outcome::reset || after.kind == raw_socket::outcome::eof));
    CHECK(after.bytes.empty());
}

TEST_CASE("fault_proxy: drop_connections resets every connection and clients reconnect",
          "[live][proxy]")
{
    local_masters m({.count = 1});
    fault_proxy proxy(m.port(0));
    asio::io_context io;
    connection a(io.get_executor(), proxy.uri(), quiet_options());
    connection b(io.get_executor(), proxy.uri(), quiet_options());

    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            REQUIRE_FALSE(std::get<0>(co_await a.async_wait_connected(tuple_awaitable)));
            REQUIRE_FALSE(std::get<0>(co_await b.async_wait_connected(tuple_awaitable)));
            // A request in flight when the cut comes fails with connection_lost at once.
            proxy.stall(stall_mode::buffer, direction::to_client);
            std::optional<error_code> in_flight;
            a.async_exec(command("PING"), 5000ms,
                         [&](error_code ec, resp::reply) { in_flight = ec; });
            co_await sleep_for(50ms);
            CHECK_FALSE(in_flight);
            const auto t0 = steady::now();
            proxy.drop_connections();
            CHECK(co_await eventually([&] { return in_flight.has_value(); }));
            CHECK(ms(steady::now() - t0) < 200.0);
            CHECK(in_flight == error_code(error::connection_lost));
            proxy.unstall();

            {
                const bool pings = co_await eventually_pings(a);
                CHECK(pings);
            }
            {
                const bool pings = co_await eventually_pings(b);
                CHECK(pings);
            }
            const auto s = proxy.stats();
            CHECK(s.cut == 2);
            CHECK(s.accepted == 4);
            CHECK(s.active == 2);
        }(),
        10s);

    // A raw socket sees a reset, not a clean end of stream.
    raw_socket raw(proxy.port());
    raw.send("*1\r\n$4\r\nPING\r\n");
    CHECK(raw.read(7, 1000ms).bytes == "+PONG\r\n");
    proxy.drop_connections();
    CHECK(raw.read(1, 1000ms).kind == raw_socket::outcome::reset);
}

TEST_CASE_METHOD(proxied,
                 "fault_proxy: refused connections are reset on accept until allowed again",
                 "[live][proxy]")
{
    run(
        [&]() -> asio::awaitable<void> {
            proxy.refuse_connections();
            proxy.drop_connections();
            co_await sleep_for(300ms);  // several reconnection attempts, all refused
            auto [ec, v] = co_await exec(c, command("PING"), 300ms);
            INFO("PING while refused: " << ec.message());
            CHECK(ec);
            CHECK(proxy.stats().refused >= 2);
            CHECK(proxy.stats().active == 0);

            proxy.refuse_connections(false);
            {
                const bool pings = co_await eventually_pings(c);
                CHECK(pings);
            }
            CHECK(proxy.stats().active == 1);
        },
        10s);

    proxy.refuse_connections();
    raw_socket raw(proxy.port());  // the connect itself succeeds
    const auto r = raw.read(1, 1000ms);
    CHECK((r.kind == raw_socket::outcome::reset || r.kind == raw_socket::outcome::eof));
    proxy.heal();
    raw_socket ok(proxy.port());
    ok.send("*1\r\n$4\r\nPING\r\n");
    CHECK(ok.read(7, 1000ms).bytes == "+PONG\r\n");
}

TEST_CASE_METHOD(proxied,
                 "fault_proxy: a master that is down or dies closes the client's connection",
                 "[live][proxy]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // The master dies under an open connection: the client learns at once.
            std::optional<error_code> in_flight;
            c.async_exec(command("BLPOP", "never", "0"), 5000ms,
                         [&](error_code ec, resp::reply) { in_flight = ec; });
            co_await sleep_for(50ms);
            const auto t0 = steady::now();
            m.kill(0);
            CHECK(co_await eventually([&] { return in_flight.has_value(); }));
            CHECK(ms(steady::now() - t0) < 200.0);
            CHECK(in_flight == error_code(error::connection_lost));

            // While it is down, every connection through the proxy is closed after accept.
            co_await sleep_for(200ms);
            CHECK(proxy.stats().upstream_failed >= 1);
            CHECK(proxy.stats().active == 0);

            m.restart(0);
            {
                const bool pings = co_await eventually_pings(c);
                CHECK(pings);
            }
        },
        20s);
}

TEST_CASE("fault_proxy: control from several threads while traffic flows, teardown closes all",
          "[live][proxy]")
{
    local_masters m({.count = 1});
    auto proxy = std::make_unique<fault_proxy>(m.port(0));
    asio::io_context io;
    connection c(io.get_executor(), proxy->uri(), quiet_options());

    std::atomic<bool> stop{false};
    std::vector<std::thread> controllers;
    for (int t = 0; t < 4; ++t)
        controllers.emplace_back([&, t] {
            int k = 0;
            while (!stop.load())
            {
                switch ((t + k++) % 6)
                {
                case 0: proxy->set_latency(std::chrono::milliseconds(k % 7)); break;
                case 1: proxy->stall(stall_mode::buffer); break;
                case 2: proxy->unstall(); break;
                case 3: (void)proxy->stats(); break;
                case 4: proxy->refuse_connections(k % 2 == 0); break;
                default: proxy->heal(); break;
                }
                std::this_thread::sleep_for(1ms);
            }
        });

    std::size_t ok = 0;
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            const auto end = steady::now() + 1s;
            while (steady::now() < end)
            {
                auto [ec, v] = co_await exec(c, command("INCR", "n"), 100ms);
                ok += ec ? 0 : 1;
            }
            // The controllers only talk to the proxy's thread: joining them here cannot deadlock.
            stop = true;
            for (auto& t : controllers)
                t.join();
            proxy->heal();
            INFO(ok << " INCRs succeeded while the proxy was being reconfigured");
            CHECK(ok > 0);
            const bool pings = co_await eventually_pings(c);
            CHECK(pings);
        }(),
        10s);
    stop = true;
    for (auto& t : controllers)
        if (t.joinable())
            t.join();

    // Destroying the proxy closes the connections it carries, promptly.
    raw_socket raw(proxy->port());
    raw.send("*1\r\n$4\r\nPING\r\n");
    REQUIRE(raw.read(7, 1000ms).bytes == "+PONG\r\n");
    const auto t0 = steady::now();
    proxy.reset();
    CHECK(ms(steady::now() - t0) < 1000.0);
    const auto r = raw.read(1, 1000ms);
    CHECK((r.kind == raw_socket::outcome::reset || r.kind == raw_socket::outcome::eof));
}

TEST_CASE("connection: with no handshake, a peer that accepts and closes at once is retried "
          "with backoff, not in a loop",
          "[live][proxy][connection]")
{
    // A master behind a proxy (or a load balancer) that is down: the connect succeeds, the
    // stream ends at once. With no AUTH, SELECT or CLIENT SETNAME to send, the connection is
    // ready as soon as TCP is; the drop that follows must back off like a failed attempt
    // (it used to reconnect at once: about 1000 connections a second).
    local_masters m({.count = 1});
    fault_proxy proxy(m.port(0));
    m.kill(0);
    for (const std::string& name : {std::string(), std::string("redlock")})
    {
        INFO("client_name '" << name << "'");
        asio::io_context io;
        connection_options o;
        o.client_name = name;  // the defaults: reconnect delays 50 ms .. 2 s
        const auto before = proxy.stats().accepted;
        {
            connection c(io.get_executor(), proxy.uri(), o);
            io.run_for(1s);
        }
        const auto attempts = proxy.stats().accepted - before;
        INFO(attempts << " connections in 1 s");
        // 25..50, 50..100, 100..200, 200..400 ms: at most 6 or 7 in a second.
        CHECK(attempts >= 2);
        CHECK(attempts <= 12);
    }

    // Once the master is back, the connection with no handshake recovers by itself.
    asio::io_context io;
    connection_options o;
    o.client_name.clear();
    o.reconnect_max_delay = 200ms;
    connection c(io.get_executor(), proxy.uri(), o);
    io.run_for(300ms);
    m.restart(0);
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            const bool pings = co_await eventually_pings(c);
            CHECK(pings);
        }(),
        10s);
}
