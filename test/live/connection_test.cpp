// redlock::connection against real redis-server processes: pipelining and coalescing, failure
// detection and recovery, deadlines, cancellation, TLS, authentication, Unix sockets, server
// error replies, bad input, completion tokens and multi-threaded use.
//
// Every test starts its own masters and io_context. The io_context is either run by the test
// thread in bounded slices (run_until) or by threads that a guard stops and joins; every wait
// has a limit, so a bug fails the test instead of hanging it.
#include <redlock/config.hpp>
#include <redlock/connection.hpp>
#include <redlock/error.hpp>
#include <redlock/resp.hpp>

#include "connection_helpers.hpp"
#include "io_helpers.hpp"
#include "local_masters.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace redlock;
using namespace redlock::test;
using Catch::Matchers::Contains;
using clock_type = std::chrono::steady_clock;

namespace {

/// One master of its own, an io_context and a connection to it: what most tests start from.
struct one_master
{
    explicit one_master(const connection_options& opts = {})
        : conn(io.get_executor(), masters.uri(0), opts)
    {}

    local_masters masters{{.count = 1}};
    asio::io_context io;
    connection conn;
};

long long ms_since(clock_type::time_point t0)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count();
}

/// One master and a connection to it that has connected.
struct connected_master : one_master
{
    explicit connected_master(const connection_options& opts = {}) : one_master(opts)
    {
        REQUIRE_FALSE(wait_connected(io, conn));
    }
};

/// The single value of a simple reply ("PONG", "42", the bulk string...).
std::string value_of(const outcome& o)
{
    REQUIRE(o.reply.size() == 1);
    return o.reply[0].value;
}

/// One master and a connection to it that has connected and answered a PING.
struct pinged_master : connected_master
{
    explicit pinged_master(const connection_options& opts = {}) : connected_master(opts)
    {
        REQUIRE(value_of(exec(io, conn, command("PING"))) == "PONG");
    }
};

/// Options whose health check drops a connection after `timeout` without an answer.
connection_options health_timeout(std::chrono::milliseconds timeout)
{
    connection_options opts;
    opts.health_check_timeout = timeout;
    return opts;
}

/// A pinged master (TEST_CASE_METHOD) that a test may pause: the health check (10 s) does not
/// drop the connection meanwhile.
struct pausable_master : pinged_master
{
    pausable_master() : pinged_master(health_timeout(10s)) {}
};

/// Retries PING (each bounded by 500 ms) until it succeeds or `limit` has passed.
bool ping_until_ok(asio::io_context& io, connection& conn, std::chrono::milliseconds limit)
{
    const auto deadline = clock_type::now() + limit;
    while (clock_type::now() < deadline)
    {
        auto o = std::make_shared<outcome>();
        conn.async_exec(command("PING"), 500ms, record(o));
        if (!run_until(
                io, [&] { return o->done; }, 2s))
            return false;
        if (!o->ec && o->reply.size() == 1 && o->reply[0].value == "PONG")
            return true;
        run_for(io, 20ms);
    }
    return false;
}

/// Sends ECHO with `n` distinct payloads and checks that each request gets its own back.
void check_fifo_in_sync(asio::io_context& io, connection& conn, const std::string& prefix,
                        int n = 20)
{
    std::vector<std::shared_ptr<outcome>> outs;
    for (int i = 0; i < n; ++i)
    {
        outs.push_back(std::make_shared<outcome>());
        conn.async_exec(command("ECHO", prefix + std::to_string(i)), 2s, record(outs.back()));
    }
    REQUIRE(run_until(
        io, [&] { return std::all_of(outs.begin(), outs.end(), [](auto& o) { return o->done; }); },
        5s));
    for (int i = 0; i < n; ++i)
    {
        INFO("request " << i << ": " << outs[i]->ec.message());
        REQUIRE_FALSE(outs[i]->ec);
        CHECK(value_of(*outs[i]) == prefix + std::to_string(i));
    }
}

/// A loopback TCP port that is bound but not listening: connecting to it is refused.
class refused_port
{
public:
    refused_port()
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd_ >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
        socklen_t len = sizeof addr;
        REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
        port_ = ntohs(addr.sin_port);
    }
    ~refused_port() { ::close(fd_); }
    refused_port(const refused_port&) = delete;
    refused_port& operator=(const refused_port&) = delete;
    std::uint16_t port() const { return port_; }

private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

// Connects `conn` and checks that its TLS handshake succeeds (`ok`) or fails with
// tls_handshake_failed; then shuts it.
void check_tls_handshake(asio::io_context& io, connection& conn, bool ok)
{
    const auto ec = wait_connected(io, conn);
    INFO(ec.message() << ": " << conn.last_error_detail());
    if (ok)
        CHECK_FALSE(ec);
    else
        CHECK(ec == error::tls_handshake_failed);
    shut(io, conn);
}

}  // namespace

// ---- 1. Pipelining and write coalescing ---------------------------------------------------

TEST_CASE(
    "connection: 10000 concurrent requests on one connection complete in order and are coalesced",
    "[live][connection]")
{
    connected_master m;
    auto& [masters, io, conn] = m;
    const auto before = conn.stats();

    constexpr int n = 10'000;
    std::vector<resp::reply> replies(n);
    std::vector<error_code> errors(n);
    std::vector<int> completion_order;
    completion_order.reserve(n);
    int launched = 0;
    int launched_at_first_completion = -1;

    // The io_context does not run while the loop submits, so every request is launched
    // before any completes. Three kinds of commands, so that a reply given to the wrong
    // request cannot go unnoticed: SET (+OK), INCR (1, 2, 3... in FIFO order), ECHO.
    const auto t0 = clock_type::now();
    for (int i = 0; i < n; ++i)
    {
        const std::string s = std::to_string(i);
        command cmd = i % 3 == 0   ? command("SET", "k" + s, "v" + s)
                      : i % 3 == 1 ? command("INCR", "counter")
                                   : command("ECHO", "e" + s);
        conn.async_exec(std::move(cmd), [&, i](error_code ec, resp::reply r) {
            if (launched_at_first_completion < 0)
                launched_at_first_completion = launched;
            errors[i] = ec;
            replies[i] = std::move(r);
            completion_order.push_back(i);
        });
        ++launched;
    }
    REQUIRE(run_until(
        io, [&] { return completion_order.size() == n; }, 20s));
    const auto elapsed = ms_since(t0);

    CHECK(launched_at_first_completion == n);
    CHECK(std::is_sorted(completion_order.begin(), completion_order.end()));
    CHECK(std::adjacent_find(completion_order.begin(), completion_order.end()) ==
          completion_order.end());

    int bad = 0;
    std::int64_t next_incr = 1;
    for (int i = 0; i < n && bad < 5; ++i)
    {
        const std::string s = std::to_string(i);
        const std::string expected = i % 3 == 0   ? "OK"
                                     : i % 3 == 1 ? std::to_string(next_incr++)
                                                  : "e" + s;
        const auto type = i % 3 == 0   ? resp::type::simple_string
                          : i % 3 == 1 ? resp::type::integer
                                       : resp::type::bulk_string;
        if (errors[i] || replies[i].size() != 1 || replies[i][0].value != expected ||
            replies[i][0].data_type != type)
        {
            ++bad;
            FAIL_CHECK(
                "request " << i << ": " << errors[i].message() << ", expected '" << expected
                           << "' got '"
                           << (replies[i].empty() ? std::string("<none>") : replies[i][0].value)
                           << "'");
        }
    }
    CHECK(bad == 0);

    // The SETs really happened, on the server.
    CHECK(masters.command(0, {"GET", "k0"}) == "$2\r\nv0\r\n");
    CHECK(masters.command(0, {"GET", "k9999"}) == "$5\r\nv9999\r\n");
    CHECK(masters.command(0, {"GET", "counter"}) == "$4\r\n3333\r\n");

    const auto after = conn.stats();
    const auto requests = after.requests - before.requests;
    const auto writes = after.writes - before.writes;
    INFO("requests " << requests << ", writes " << writes << ", replies "
                     << after.replies - before.replies << ", elapsed " << elapsed << " ms");
    CHECK(requests >= n);
    CHECK(writes >= 1);
    CHECK(writes < n / 10);
    WARN("10,000 pipelined requests: " << writes << " writes, " << elapsed << " ms");
    shut(io, conn);
}

// ---- 2. A master dies with requests in flight, and comes back ------------------------------

TEST_CASE("connection: requests in flight fail promptly when the master dies and the connection "
          "recovers by itself",
          "[live][connection]")
{
    pinged_master m;
    auto& [masters, io, conn] = m;
    const auto before = conn.stats();

    // Paused, the master keeps its socket open but answers nothing: the requests are written
    // and stay in flight.
    masters.pause(0);
    constexpr int n = 200;
    std::vector<std::shared_ptr<outcome>> outs;
    for (int i = 0; i < n; ++i)
    {
        outs.push_back(std::make_shared<outcome>());
        conn.async_exec(command("ECHO", "inflight" + std::to_string(i)), record(outs.back()));
    }
    REQUIRE(run_until(
        io, [&] { return conn.stats().writes > before.writes; }, 1s));
    run_for(io, 50ms);
    REQUIRE(std::none_of(outs.begin(), outs.end(), [](auto& o) { return o->done; }));

    masters.kill(0);
    const auto killed_at = clock_type::now();
    REQUIRE(run_until(
        io, [&] { return std::all_of(outs.begin(), outs.end(), [](auto& o) { return o->done; }); },
        3s));
    long long slowest = 0;
    for (int i = 0; i < n; ++i)
    {
        slowest = std::max<long long>(
            slowest,
            std::chrono::duration_cast<std::chrono::milliseconds>(outs[i]->at - killed_at).count());
        INFO("request " << i << ": " << outs[i]->ec.message());
        REQUIRE(outs[i]->ec == error::connection_lost);
        REQUIRE(outs[i]->reply.empty());
    }
    INFO("slowest failure " << slowest << " ms after SIGKILL");
    CHECK(slowest < 1000);
    CHECK(conn.stats().drops == before.drops + 1);

    // While the master is down, requests fail fast: they are refused, not left waiting.
    {
        const auto t0 = clock_type::now();
        const auto o = exec(io, conn, command("PING"), 0ms, 3s);
        INFO(o.ec.message() << " after " << ms_since(t0) << " ms");
        CHECK((o.ec == error::not_connected || o.ec == error::connect_failed));
        CHECK(ms_since(t0) < 1000);
        CHECK_FALSE(conn.last_error_detail().empty());
    }

    masters.restart(0);
    const auto restarted_at = clock_type::now();
    REQUIRE(ping_until_ok(io, conn, 5s));
    INFO("recovered " << ms_since(restarted_at) << " ms after the restart");
    CHECK(conn.stats().connects > before.connects);
    CHECK(conn.last_error_detail().empty());
    check_fifo_in_sync(io, conn, "back");
    WARN("SIGKILL: 200 in-flight requests failed within "
         << slowest << " ms; reconnected " << ms_since(restarted_at) << " ms after restart");
    shut(io, conn);
}

// ---- 3. Per-request deadlines on a stalled master --------------------------------------------

TEST_CASE_METHOD(pausable_master,
                 "connection: request deadlines on a paused master and late replies never reach "
                 "the wrong request",
                 "[live][connection]")
{
    const auto before = conn.stats();

    masters.pause(0);
    constexpr int n = 20;
    constexpr auto deadline = 100ms;
    std::vector<std::shared_ptr<outcome>> outs(n);
    std::vector<clock_type::time_point> submitted(n);
    std::vector<std::unique_ptr<asio::steady_timer>> timers;
    for (int i = 0; i < n; ++i)
    {
        outs[i] = std::make_shared<outcome>();
        timers.push_back(
            std::make_unique<asio::steady_timer>(io, std::chrono::milliseconds(i * 17)));
        timers.back()->async_wait([&, i](error_code) {
            submitted[i] = clock_type::now();
            conn.async_exec(command("ECHO", "late" + std::to_string(i)), deadline, record(outs[i]));
        });
    }
    REQUIRE(run_until(
        io, [&] { return std::all_of(outs.begin(), outs.end(), [](auto& o) { return o->done; }); },
        5s));
    long long min_wait = 1'000'000, max_wait = 0;
    for (int i = 0; i < n; ++i)
    {
        const long long waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(outs[i]->at - submitted[i])
                .count();
        min_wait = std::min(min_wait, waited);
        max_wait = std::max(max_wait, waited);
        INFO("request " << i << ": " << outs[i]->ec.message() << " after " << waited << " ms");
        CHECK(outs[i]->ec == error::request_timeout);
        CHECK(outs[i]->reply.empty());
        CHECK(waited >= 100);
        CHECK(waited <= 180);
    }
    WARN("deadline 100 ms: timeouts reported after " << min_wait << ".." << max_wait << " ms");
    CHECK(conn.stats().drops == before.drops);  // timeouts do not drop the connection

    masters.resume(0);
    // The 20 late replies arrive first; each new request must get its own payload.
    check_fifo_in_sync(io, conn, "fresh");
    const auto after = conn.stats();
    CHECK(after.replies - before.replies >= 2 * n);  // the late replies were read and dropped
    CHECK(after.drops == before.drops);
    shut(io, conn);
}

// ---- 4. Health check --------------------------------------------------------------------------

TEST_CASE(
    "connection: the health check declares a stalled master dead and the connection comes back",
    "[live][connection]")
{
    pinged_master m(health_timeout(300ms));
    auto& [masters, io, conn] = m;
    const auto before = conn.stats();

    masters.pause(0);
    const auto t0 = clock_type::now();
    const auto o = exec(io, conn, command("ECHO", "stalled"), 0ms, 3s);  // no deadline of its own
    const auto detected = ms_since(t0);
    INFO(o.ec.message() << " after " << detected << " ms; " << conn.last_error_detail());
    CHECK(o.ec == error::connection_lost);
    CHECK(detected >= 200);
    CHECK(detected < 1000);
    CHECK(conn.stats().drops == before.drops + 1);
    CHECK_THAT(conn.last_error_detail(), Contains("health check"));

    masters.resume(0);
    const auto resumed_at = clock_type::now();
    REQUIRE(ping_until_ok(io, conn, 6s));
    INFO("recovered " << ms_since(resumed_at) << " ms after SIGCONT");
    CHECK(conn.stats().connects > before.connects);
    check_fifo_in_sync(io, conn, "healthy");
    WARN("health check: stall detected after " << detected << " ms; recovered "
                                               << ms_since(resumed_at) << " ms after SIGCONT");
    shut(io, conn);
}

TEST_CASE("connection: the idle health PING detects a stalled master with no request outstanding",
          "[live][connection]")
{
    connection_options opts;
    opts.health_check_interval = 200ms;
    opts.health_check_timeout = 300ms;
    connected_master m(opts);
    auto& [masters, io, conn] = m;
    run_for(io, 500ms);  // idle: the health PINGs are answered, nothing drops
    const auto before = conn.stats();
    CHECK(before.requests >= 2);
    CHECK(before.drops == 0);

    masters.pause(0);
    const auto t0 = clock_type::now();
    // interval (200) + timeout (300) + a tick or two of slack.
    const bool dropped = run_until(
        io, [&] { return conn.stats().drops > before.drops; }, 2s);
    const auto detected = ms_since(t0);
    INFO("detected after " << detected << " ms: " << conn.last_error_detail());
    REQUIRE(dropped);
    CHECK(detected < 1000);
    CHECK_THAT(conn.last_error_detail(), Contains("health check"));

    masters.resume(0);
    REQUIRE(ping_until_ok(io, conn, 6s));
    CHECK(conn.stats().connects > before.connects);
    shut(io, conn);
}

// ---- 5. Per-operation cancellation -------------------------------------------------------------

TEST_CASE_METHOD(
    pausable_master,
    "connection: cancellation completes at once and the cancelled request's reply is consumed",
    "[live][connection]")
{
    masters.pause(0);
    const auto before = conn.stats();
    const asio::cancellation_type types[] = {asio::cancellation_type::terminal,
                                             asio::cancellation_type::partial,
                                             asio::cancellation_type::total};
    asio::cancellation_signal signals[3];
    std::shared_ptr<outcome> outs[3];
    for (int i = 0; i < 3; ++i)
    {
        outs[i] = std::make_shared<outcome>();
        conn.async_exec(command("ECHO", "cancelled" + std::to_string(i)),
                        asio::bind_cancellation_slot(signals[i].slot(), record(outs[i])));
    }
    // Let the requests go out (they sit in the paused server's socket buffer).
    REQUIRE(run_until(
        io, [&] { return conn.stats().writes > before.writes; }, 1s));
    run_for(io, 30ms);
    for (int i = 0; i < 3; ++i)
    {
        INFO("cancellation type " << static_cast<int>(types[i]));
        REQUIRE_FALSE(outs[i]->done);
        const auto t0 = clock_type::now();
        signals[i].emit(types[i]);
        REQUIRE(run_until(
            io, [&] { return outs[i]->done; }, 1s));
        CHECK(ms_since(t0) < 50);
        CHECK(outs[i]->ec == asio::error::operation_aborted);
        CHECK(outs[i]->reply.empty());
    }

    masters.resume(0);
    check_fifo_in_sync(io, conn, "after-cancel");
    // The three cancelled requests' replies were read (and dropped), not left in the stream.
    CHECK(conn.stats().replies - before.replies >= 3 + 20);
    shut(io, conn);
}

TEST_CASE_METHOD(pausable_master,
                 "connection: cancellation emitted right after async_exec returns is honoured",
                 "[live][connection]")
{
    // Per-operation cancellation applies from the moment the initiating function returns.
    // Here async_exec is called from outside the connection's strand (the io_context is not
    // running), and the signal is emitted before the io_context runs again.
    masters.pause(0);
    asio::cancellation_signal sig;
    auto o = std::make_shared<outcome>();
    conn.async_exec(command("ECHO", "cancelled-early"),
                    asio::bind_cancellation_slot(sig.slot(), record(o)));
    sig.emit(asio::cancellation_type::terminal);
    const auto t0 = clock_type::now();
    const bool completed = run_until(
        io, [&] { return o->done; }, 1s);
    INFO("completed: " << completed << " after " << ms_since(t0) << " ms, " << o->ec.message());
    CHECK(completed);
    CHECK(o->ec == asio::error::operation_aborted);

    masters.resume(0);
    REQUIRE(run_until(
        io, [&] { return o->done; }, 2s));  // in case it was not cancelled
    check_fifo_in_sync(io, conn, "after-early-cancel");
    shut(io, conn);
}

// ---- 6. TLS -------------------------------------------------------------------------------------

TEST_CASE("connection: TLS with the right CA works and a wrong CA is refused", "[live][connection]")
{
    local_masters masters({.count = 1, .tls = true});
    asio::io_context io;

    SECTION("the CA that signed the server certificate")
    {
        auto cfg = redlock::parse_master_uri(masters.tls_uri(0));
        REQUIRE(cfg.transport == redlock::master_config::transport_kind::tls);
        cfg.tls.ca_file = masters.ca_file();
        connection conn(io.get_executor(), cfg);
        const auto ec = wait_connected(io, conn);
        INFO(ec.message() << ": " << conn.last_error_detail());
        REQUIRE_FALSE(ec);
        CHECK(value_of(exec(io, conn, command("PING"))) == "PONG");
        check_fifo_in_sync(io, conn, "tls");
        shut(io, conn);
    }
    SECTION(
        "the host name is verified: the URI's host by default, tls_options::server_name when set")
    {
        // The certificate names 127.0.0.1 and localhost. "127.1" reaches the same address
        // (the classic inet_aton form) but is neither: with the right CA the handshake is
        // refused for it, so the name checked is the URI's host; naming "localhost" in
        // server_name makes it pass, and naming another host makes 127.0.0.1 fail.
        struct case_t
        {
            std::string host;
            std::string server_name;
            bool ok;
        };
        const case_t cases[] = {{"127.0.0.1", "", true},
                                {"localhost", "", true},
                                {"127.1", "", false},
                                {"127.1", "localhost", true},
                                {"127.0.0.1", "another.example", false}};
        for (const auto& [host, server_name, ok] : cases)
        {
            INFO("host " << host << ", server_name '" << server_name << "'");
            auto cfg = redlock::parse_master_uri("rediss://" + host + ":" +
                                                 std::to_string(masters.tls_port(0)));
            cfg.tls.ca_file = masters.ca_file();
            cfg.tls.server_name = server_name;
            connection conn(io.get_executor(), cfg);
            check_tls_handshake(io, conn, ok);
        }
    }
    SECTION("without a CA configured, OpenSSL's default trust store is used")
    {
        // The default store is found through SSL_CERT_FILE when it is set (OpenSSL's
        // X509_get_default_cert_file_env): pointed at the CA that signed the server it is
        // trusted, at an unrelated CA it is not. Restored afterwards.
        const char* saved = std::getenv("SSL_CERT_FILE");
        const std::string previous = saved ? saved : "";
        for (const bool right_ca : {true, false})
        {
            INFO("SSL_CERT_FILE is the " << (right_ca ? "right" : "unrelated") << " CA");
            ::setenv("SSL_CERT_FILE",
                     (right_ca ? masters.ca_file() : masters.other_ca_file()).c_str(), 1);
            connection conn(io.get_executor(), masters.tls_uri(0));
            check_tls_handshake(io, conn, right_ca);
        }
        if (saved)
            ::setenv("SSL_CERT_FILE", previous.c_str(), 1);
        else
            ::unsetenv("SSL_CERT_FILE");
    }
    SECTION("an unrelated CA: the handshake fails and requests are refused")
    {
        auto cfg = redlock::parse_master_uri(masters.tls_uri(0));
        cfg.tls.ca_file = masters.other_ca_file();
        connection conn(io.get_executor(), cfg);
        const auto ec = wait_connected(io, conn);
        INFO(ec.message() << ": " << conn.last_error_detail());
        CHECK(ec == error::tls_handshake_failed);
        CHECK_THAT(conn.last_error_detail(), Contains("TLS"));
        const auto o = exec(io, conn, command("PING"), 0ms, 5s);
        INFO("exec: " << o.ec.message());
        CHECK((o.ec == error::not_connected || o.ec == error::tls_handshake_failed));
        CHECK(conn.stats().connects == 0);
        shut(io, conn);
    }
    SECTION("verify_peer = false accepts any certificate (insecure: for tests only)")
    {
        // Without verification anyone on the path can impersonate the master; this only
        // shows that the option does what it says.
        auto cfg = redlock::parse_master_uri(masters.tls_uri(0));
        cfg.tls.ca_file = masters.other_ca_file();
        cfg.tls.verify_peer = false;
        connection conn(io.get_executor(), cfg);
        const auto ec = wait_connected(io, conn);
        INFO(ec.message() << ": " << conn.last_error_detail());
        REQUIRE_FALSE(ec);
        CHECK(value_of(exec(io, conn, command("PING"))) == "PONG");
        shut(io, conn);
    }
}

// ---- 7. Authentication ----------------------------------------------------------------------

namespace {

// Logs in with `uri` and checks that the master sees `user`.
void check_login(asio::io_context& io, const std::string& uri, std::string_view user)
{
    connection conn(io.get_executor(), uri);
    const auto ec = wait_connected(io, conn);
    INFO(ec.message() << ": " << conn.last_error_detail());
    REQUIRE_FALSE(ec);
    CHECK(value_of(exec(io, conn, command("ACL", "WHOAMI"))) == user);
    shut(io, conn);
}

// Logs in with `uri`: refused with `expected`, no connection counted, and the message names
// none of `secrets` (the password given, the real one).
void check_refused_login(asio::io_context& io, const std::string& uri, error expected,
                         std::initializer_list<std::string_view> secrets)
{
    connection conn(io.get_executor(), uri);
    const auto ec = wait_connected(io, conn);
    const auto detail = conn.last_error_detail();
    INFO(ec.message() << ": " << detail);
    CHECK(ec == expected);
    if (expected == error::wrongpass)
        CHECK_THAT(detail, Contains("WRONGPASS"));
    for (const auto secret : secrets)
        CHECK_THAT(detail, !Contains(std::string(secret)));
    CHECK(conn.stats().connects == 0);
    shut(io, conn);
}

}  // namespace

TEST_CASE("connection: ACL user login and a wrong password is reported without leaking it",
          "[live][connection]")
{
    local_masters masters({.count = 1, .extra_config = {"user alice on >s3cret ~* +@all"}});
    asio::io_context io;
    const auto port = std::to_string(masters.port(0));
    check_login(io, "redis://alice:s3cret@127.0.0.1:" + port, "alice");
    check_refused_login(io, "redis://alice:wr0ngpw@127.0.0.1:" + port, error::wrongpass,
                        {"wr0ngpw", "s3cret"});
}

TEST_CASE("connection: password-only AUTH for the default user (requirepass)", "[live][connection]")
{
    local_masters masters(
        {.count = 1, .extra_config = {"requirepass hunter22"}, .admin_password = "hunter22"});
    asio::io_context io;
    const auto port = std::to_string(masters.port(0));
    check_login(io, "redis://:hunter22@127.0.0.1:" + port, "default");
    check_refused_login(io, "redis://:letmein@127.0.0.1:" + port, error::wrongpass,
                        {"letmein", "hunter22"});
    // No password: the handshake's CLIENT SETNAME is refused with NOAUTH.
    check_refused_login(io, masters.uri(0), error::noauth, {"hunter22"});
}

// ---- 8. Unix sockets and SELECT ------------------------------------------------------------

TEST_CASE("connection: Unix socket and the db of the URI is selected", "[live][connection]")
{
    local_masters masters({.count = 1, .unix_sockets = true});
    asio::io_context io;

    SECTION("unix://")
    {
        connection conn(io.get_executor(), masters.unix_uri(0));
        REQUIRE_FALSE(wait_connected(io, conn));
        CHECK(value_of(exec(io, conn, command("SET", "over-unix", "yes"))) == "OK");
        CHECK(masters.unix_command(0, {"GET", "over-unix"}) == "$3\r\nyes\r\n");
        const auto info = value_of(exec(io, conn, command("CLIENT", "INFO")));
        INFO(info);
        CHECK_THAT(info, Contains(masters.unix_path(0)));
        check_fifo_in_sync(io, conn, "unix");
        shut(io, conn);
    }
    SECTION("redis://host:port/3")
    {
        connection conn(io.get_executor(), masters.uri(0) + "/3");
        REQUIRE_FALSE(wait_connected(io, conn));
        CHECK(value_of(exec(io, conn, command("SET", "in-db3", "three"))) == "OK");
        const auto info = value_of(exec(io, conn, command("CLIENT", "INFO")));
        INFO(info);
        CHECK_THAT(info, Contains(" db=3 "));
        CHECK_THAT(info, Contains("name=redlock"));
        CHECK(value_of(exec(io, conn, command("GET", "in-db3"))) == "three");
        // Not in db 0 (where the harness's fresh connection lands), but in db 3.
        CHECK(masters.command(0, {"EXISTS", "in-db3"}) == ":0\r\n");
        CHECK(
            masters.command(0, {"EVAL", "redis.call('SELECT', 3) return redis.call('GET', KEYS[1])",
                                "1", "in-db3"}) == "$5\r\nthree\r\n");
        shut(io, conn);
    }
}

// ---- 9. Server error replies --------------------------------------------------------------------

TEST_CASE(
    "connection: server error replies complete with the error of their prefix and the message",
    "[live][connection]")
{
    connected_master m;
    auto& [masters, io, conn] = m;

    const auto noscript =
        exec(io, conn, command("EVALSHA", "0000000000000000000000000000000000000000", "0"));
    CHECK(noscript.ec == error::noscript);
    REQUIRE(noscript.reply.size() == 1);
    CHECK(resp::is_error(noscript.reply[0].data_type));
    CHECK_THAT(noscript.reply[0].value, Contains("NOSCRIPT"));

    REQUIRE(value_of(exec(io, conn, command("SET", "a-string", "x"))) == "OK");
    const auto wrongtype = exec(io, conn, command("LPUSH", "a-string", "y"));
    CHECK(wrongtype.ec == error::wrongtype);
    REQUIRE(wrongtype.reply.size() == 1);
    CHECK(resp::is_error(wrongtype.reply[0].data_type));
    CHECK_THAT(wrongtype.reply[0].value, Contains("WRONGTYPE"));

    const auto unknown = exec(io, conn, command("NOSUCHCOMMAND", "arg"));
    CHECK(unknown.ec == error::server_error);
    REQUIRE(unknown.reply.size() == 1);
    CHECK(resp::is_error(unknown.reply[0].data_type));
    CHECK_THAT(unknown.reply[0].value, Contains("ERR") && Contains("unknown command"));

    // An error reply is a reply: the stream stays in sync and the connection stays up.
    check_fifo_in_sync(io, conn, "after-errors");
    CHECK(conn.stats().drops == 0);
    shut(io, conn);
}

TEST_CASE("connection: a batch gives every reply in order, the first server error with all "
          "replies, an empty one at once",
          "[live][connection]")
{
    connected_master m;
    auto& [masters, io, conn] = m;
    struct batch_outcome
    {
        bool done = false;
        error_code ec;
        std::vector<resp::reply> replies;
    };
    auto run_batch = [&](request req) {
        auto o = std::make_shared<batch_outcome>();
        conn.async_exec(std::move(req), std::chrono::milliseconds(0),
                        [o](error_code ec, std::vector<resp::reply> r) {
                            o->done = true;
                            o->ec = ec;
                            o->replies = std::move(r);
                        });
        REQUIRE(run_until(
            io, [&] { return o->done; }, std::chrono::milliseconds(5000)));
        return *o;
    };

    // Success: one reply per command, in the order of the commands.
    request ok;
    ok.push("SET", "batch:a", "1").push("INCR", "batch:a").push("GET", "batch:a").push("PING");
    const auto good = run_batch(ok);
    CHECK_FALSE(good.ec);
    REQUIRE(good.replies.size() == 4);
    CHECK(good.replies[0][0].value == "OK");
    CHECK(good.replies[1][0].value == "2");
    CHECK(good.replies[2][0].value == "2");
    CHECK(good.replies[3][0].value == "PONG");

    // Server errors: the first one's code, every reply still there (the commands after it ran).
    request bad;
    bad.push("SET", "batch:s", "x")
        .push("LPUSH", "batch:s", "y")                                     // WRONGTYPE
        .push("EVALSHA", "0000000000000000000000000000000000000000", "0")  // NOSCRIPT
        .push("INCRBY", "batch:n", 5);
    const auto errs = run_batch(bad);
    CHECK(errs.ec == error::wrongtype);
    REQUIRE(errs.replies.size() == 4);
    CHECK(resp::is_error(errs.replies[1][0].data_type));
    CHECK(resp::is_error(errs.replies[2][0].data_type));
    CHECK_THAT(errs.replies[2][0].value, Contains("NOSCRIPT"));
    CHECK(errs.replies[3][0].value == "5");

    // An empty request completes with no reply and no error, the connection untouched.
    bool empty_done = false;
    error_code empty_ec = error::server_error;
    std::size_t empty_replies = 99;
    conn.async_exec(request{}, std::chrono::milliseconds(0),
                    [&](error_code ec, std::vector<resp::reply> r) {
                        empty_done = true;
                        empty_ec = ec;
                        empty_replies = r.size();
                    });
    REQUIRE(run_until(
        io, [&] { return empty_done; }, std::chrono::milliseconds(1000)));
    CHECK_FALSE(empty_ec);
    CHECK(empty_replies == 0);
    CHECK(value_of(exec(io, conn, command("GET", "batch:a"))) == "2");  // still in step
    shut(io, conn);
}

// ---- 10. Bad input ------------------------------------------------------------------------------

TEST_CASE("connection: bad URI / unresolvable host / refused port", "[live][connection]")
{
    asio::io_context io;

    SECTION("a bad URI throws invalid_uri")
    {
        for (const char* uri :
             {"redis://127.0.0.1:notaport", "http://127.0.0.1:6379", "redis://alice@127.0.0.1"})
        {
            INFO(uri);
            try
            {
                connection conn(io.get_executor(), uri);
                FAIL("no exception");
            }
            catch (const boost::system::system_error& e)
            {
                CHECK(e.code() == error::invalid_uri);
            }
        }
    }
    SECTION("bad options throw invalid_option")
    {
        connection_options opts;
        opts.client_name = "has space";
        try
        {
            connection conn(io.get_executor(), "redis://127.0.0.1:6379", opts);
            FAIL("no exception");
        }
        catch (const boost::system::system_error& e)
        {
            CHECK(e.code() == error::invalid_option);
        }
    }
    SECTION("a host that cannot be resolved")
    {
        connection_options opts;
        opts.connect_timeout = 1500ms;
        connection conn(io.get_executor(), "redis://nonexistent.invalid:6379", opts);
        const auto t0 = clock_type::now();
        const auto ec = wait_connected(io, conn, 5s);
        INFO(ec.message() << " after " << ms_since(t0) << " ms: " << conn.last_error_detail());
        CHECK(ec == error::resolve_failed);
        CHECK(ms_since(t0) <= 1500 + 200);
        CHECK_THAT(conn.last_error_detail(), Contains("nonexistent.invalid"));
        shut(io, conn);
    }
    SECTION("a closed port")
    {
        refused_port closed;
        connection conn(io.get_executor(), "redis://127.0.0.1:" + std::to_string(closed.port()));
        const auto t0 = clock_type::now();
        const auto ec = wait_connected(io, conn, 5s);
        INFO(ec.message() << " after " << ms_since(t0) << " ms: " << conn.last_error_detail());
        CHECK(ec == error::connect_failed);
        CHECK(ms_since(t0) < 500);
        CHECK_THAT(conn.last_error_detail(),
                   Contains("127.0.0.1:" + std::to_string(closed.port())));
        const auto o = exec(io, conn, command("PING"), 0ms, 3s);
        CHECK((o.ec == error::not_connected || o.ec == error::connect_failed));
        shut(io, conn);
    }
}

// ---- close() -------------------------------------------------------------------------------------

TEST_CASE(
    "connection: close() fails outstanding requests with connection_closed and refuses new ones",
    "[live][connection]")
{
    local_masters masters({.count = 1});
    asio::io_context io;
    connection_options opts;
    opts.health_check_timeout = 10s;
    auto conn = std::make_unique<connection>(io.get_executor(), masters.uri(0), opts);
    REQUIRE_FALSE(wait_connected(io, *conn));

    masters.pause(0);
    auto pending = std::make_shared<outcome>();
    conn->async_exec(command("ECHO", "never-answered"), record(pending));
    run_for(io, 50ms);
    REQUIRE_FALSE(pending->done);

    SECTION("close()")
    {
        conn->close();
        REQUIRE(run_until(
            io, [&] { return pending->done; }, 1s));
        CHECK(pending->ec == error::connection_closed);
        const auto after = exec(io, *conn, command("PING"), 0ms, 1s);
        CHECK(after.ec == error::connection_closed);
        auto waited = std::make_shared<std::optional<error_code>>();
        conn->async_wait_connected([waited](error_code ec) { *waited = ec; });
        REQUIRE(run_until(
            io, [&] { return waited->has_value(); }, 1s));
        CHECK(**waited == error::connection_closed);
        conn->close();  // idempotent
        run_for(io, 20ms);
    }
    SECTION("destruction")
    {
        conn.reset();
        REQUIRE(run_until(
            io, [&] { return pending->done; }, 1s));
        CHECK(pending->ec == error::connection_closed);
    }
    masters.resume(0);
}

// ---- 11. Completion tokens ----------------------------------------------------------------------

TEST_CASE("connection: every completion-token style works with async_exec", "[live][connection]")
{
    one_master m;
    auto& [masters, io, conn] = m;
    auto runner = std::make_unique<io_threads>(io, 1);  // futures need io on another thread

    auto wait = [](auto& fut) { return fut.wait_for(5s) == std::future_status::ready; };
    {
        std::promise<error_code> p;
        auto f = p.get_future();
        conn.async_wait_connected([&p](error_code ec) { p.set_value(ec); });
        REQUIRE(wait(f));
        REQUIRE_FALSE(f.get());
    }

    SECTION("callback")
    {
        std::promise<std::pair<error_code, resp::reply>> p;
        auto f = p.get_future();
        conn.async_exec(command("ECHO", "callback"), [&p](error_code ec, resp::reply r) {
            p.set_value({ec, std::move(r)});
        });
        REQUIRE(wait(f));
        auto [ec, r] = f.get();
        CHECK_FALSE(ec);
        REQUIRE(r.size() == 1);
        CHECK(r[0].value == "callback");
    }
    SECTION("use_future")
    {
        auto f = conn.async_exec(command("ECHO", "future"), asio::use_future);
        REQUIRE(wait(f));
        auto r = f.get();
        REQUIRE(r.size() == 1);
        CHECK(r[0].value == "future");

        auto bad =
            conn.async_exec(command("EVALSHA", "0000000000000000000000000000000000000000", "0"), 2s,
                            asio::use_future);
        REQUIRE(wait(bad));
        try
        {
            bad.get();
            FAIL("no exception");
        }
        catch (const boost::system::system_error& e)
        {
            CHECK(e.code() == error::noscript);
        }
    }
    SECTION("use_awaitable through co_spawn")
    {
        auto f = asio::co_spawn(
            io,
            [&]() -> asio::awaitable<std::string> {
                auto r =
                    co_await conn.async_exec(command("ECHO", "awaitable"), asio::use_awaitable);
                std::string out = r.at(0).value;
                try
                {
                    co_await conn.async_exec(command("NOSUCHCOMMAND"), 1s, asio::use_awaitable);
                    out += ":no-throw";
                }
                catch (const boost::system::system_error& e)
                {
                    out += e.code() == error::server_error ? ":threw" : ":wrong-error";
                }
                co_return out;
            },
            asio::use_future);
        REQUIRE(wait(f));
        CHECK(f.get() == "awaitable:threw");
    }
    SECTION("deferred: co_await the default token, and compose deferred operations")
    {
        auto f = asio::co_spawn(
            io,
            [&]() -> asio::awaitable<std::string> {
                // The default token is asio::deferred: the operation can be awaited directly.
                auto r = co_await conn.async_exec(command("ECHO", "deferred"));
                std::string out = r.at(0).value;

                // A deferred operation is a value: compose two, launch once.
                auto set_then_get = conn.async_exec(command("SET", "dk", "composed"))(
                    asio::deferred([&conn](error_code, resp::reply) {
                        return conn.async_exec(command("GET", "dk"));
                    }));
                auto g = co_await std::move(set_then_get);
                out += ":" + g.at(0).value;
                co_return out;
            },
            asio::use_future);
        REQUIRE(wait(f));
        CHECK(f.get() == "deferred:composed");

        // A deferred operation can also be launched later with any other token.
        auto later = conn.async_exec(command("ECHO", "launched-later"));
        auto f2 = std::move(later)(asio::use_future);
        REQUIRE(wait(f2));
        CHECK(f2.get().at(0).value == "launched-later");
    }
    SECTION("as_tuple")
    {
        auto f = asio::co_spawn(
            io,
            [&]() -> asio::awaitable<std::string> {
                auto [ec, r] = co_await conn.async_exec(command("NOSUCHCOMMAND"),
                                                        asio::as_tuple(asio::use_awaitable));
                std::string out =
                    ec == error::server_error && !r.empty() ? "error-as-value" : "wrong";
                auto [ec2, r2] = co_await conn.async_exec(command("ECHO", "tuple"),
                                                          asio::as_tuple(asio::deferred));
                out += ":" + (ec2 ? ec2.message() : r2.at(0).value);
                co_return out;
            },
            asio::use_future);
        REQUIRE(wait(f));
        CHECK(f.get() == "error-as-value:tuple");
    }

    conn.close();
    std::this_thread::sleep_for(20ms);
    runner.reset();
}

// ---- 12. Many threads ---------------------------------------------------------------------------

TEST_CASE(
    "connection: 8 threads x 2000 requests on one connection with the io_context on 4 threads",
    "[live][connection]")
{
    one_master m;
    auto& [masters, io, conn] = m;
    auto runner = std::make_unique<io_threads>(io, 4);
    {
        std::promise<error_code> p;
        auto f = p.get_future();
        conn.async_wait_connected([&p](error_code ec) { p.set_value(ec); });
        REQUIRE(f.wait_for(5s) == std::future_status::ready);
        REQUIRE_FALSE(f.get());
    }

    constexpr int submitters = 8;
    constexpr int per_thread = 2000;
    struct result
    {
        std::vector<int> order;  // completion order of this thread's requests
        int mismatches = 0;
        int errors = 0;
    };
    // Completion handlers run on the connection's strand, so they never run concurrently;
    // the atomic counter publishes their writes to this thread.
    std::vector<result> results(submitters);
    for (auto& r : results)
        r.order.reserve(per_thread);
    std::atomic<int> completed{0};
    std::latch start(submitters);
    const auto t0 = clock_type::now();
    {
        std::vector<std::jthread> threads;
        for (int t = 0; t < submitters; ++t)
        {
            threads.emplace_back([&, t] {
                start.arrive_and_wait();
                for (int i = 0; i < per_thread; ++i)
                {
                    std::string payload = "t" + std::to_string(t) + "-" + std::to_string(i);
                    conn.async_exec(command("ECHO", payload),
                                    [&, t, i, payload](error_code ec, resp::reply r) {
                                        auto& res = results[t];
                                        if (ec)
                                            ++res.errors;
                                        else if (r.size() != 1 || r[0].value != payload)
                                            ++res.mismatches;
                                        res.order.push_back(i);
                                        completed.fetch_add(1, std::memory_order_release);
                                    });
                }
            });
        }
    }
    const auto total = submitters * per_thread;
    const auto limit = clock_type::now() + 30s;
    while (completed.load(std::memory_order_acquire) < total && clock_type::now() < limit)
        std::this_thread::sleep_for(2ms);
    const auto elapsed = ms_since(t0);
    REQUIRE(completed.load(std::memory_order_acquire) == total);

    for (int t = 0; t < submitters; ++t)
    {
        INFO("thread " << t);
        CHECK(results[t].errors == 0);
        CHECK(results[t].mismatches == 0);
        REQUIRE(results[t].order.size() == per_thread);
        // One thread's requests are submitted in order, so they complete in order.
        CHECK(std::is_sorted(results[t].order.begin(), results[t].order.end()));
    }

    std::promise<redlock::connection_stats> sp;
    auto sf = sp.get_future();
    asio::post(conn.get_executor(), [&] { sp.set_value(conn.stats()); });
    REQUIRE(sf.wait_for(5s) == std::future_status::ready);
    const auto stats = sf.get();
    INFO("requests " << stats.requests << ", writes " << stats.writes);
    CHECK(stats.replies >= static_cast<std::uint64_t>(total));
    CHECK(stats.drops == 0);
    WARN("8 x 2,000 requests from 8 threads: " << elapsed << " ms, " << stats.writes << " writes");

    conn.close();
    std::this_thread::sleep_for(20ms);
    runner.reset();
}
