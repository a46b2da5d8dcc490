// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-example-prometheus: a service's lock metrics in the Prometheus text format, from
// client_config::on_event and client::master_states(), served at http://127.0.0.1:PORT/metrics
// with nothing but Asio. Given 3 masters (--master URI, or REDLOCK_MASTERS), runs contending
// workers, has one master drop its clients' connections, scrapes its own endpoint like
// Prometheus would, prints what it got, and exits 0 only if the figures show what happened.

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "example_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::error;
using redlock::error_code;
using redlock::event;
using redlock::event_kind;

namespace {

using redlock::use_tuple;

// ---- The metrics: counters fed by on_event ------------------------------------------------

/// The label values of an outcome: "ok", the short names of the errors in `named_errors`
/// (in that order), and "other" for any other error.
constexpr std::array<const char*, 9> outcomes = {"ok",        "contended",    "no_quorum",
                                                 "validity_expired", "lock_lost", "lock_expired",
                                                 "closed",    "cancelled",    "other"};

/// The index in `outcomes` of an operation's error.
std::size_t outcome_index(const error_code& ec)
{
    if (!ec)
        return 0;
    const std::array<error_code, outcomes.size() - 2> named_errors = {
        error::contended, error::no_quorum,         error::validity_expired,
        error::lock_lost, error::lock_expired,      error::connection_closed,
        asio::error::operation_aborted};
    for (std::size_t i = 0; i < named_errors.size(); ++i)
        if (ec == named_errors[i])
            return i + 1;
    return outcomes.size() - 1;
}

using counter = std::atomic<std::uint64_t>;  // on_event runs on the client's strand; a scrape may not

/// Acquisition waits, in the buckets of a Prometheus histogram (seconds).
constexpr std::array<double, 8> wait_buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1.0};

struct lock_metrics
{
    std::array<counter, outcomes.size()> acquisitions{};
    std::array<counter, outcomes.size()> extensions{};
    std::array<counter, outcomes.size()> releases{};
    std::array<counter, wait_buckets.size()> wait_le{};  // cumulative, as Prometheus wants
    counter wait_count{0};
    counter wait_sum_us{0};
    counter degraded{0};
    counter lost{0};
    std::array<counter, 16> master_down{};  // per master index

    void on(const event& e)
    {
        switch (e.kind)
        {
        case event_kind::acquired:
        case event_kind::acquire_failed:
        {
            ++acquisitions[outcome_index(e.ec)];
            const double seconds = std::chrono::duration<double>(e.elapsed).count();
            for (std::size_t b = 0; b < wait_buckets.size(); ++b)
                if (seconds <= wait_buckets[b])
                    ++wait_le[b];
            ++wait_count;
            wait_sum_us += static_cast<std::uint64_t>(e.elapsed.count());
            break;
        }
        case event_kind::extended:
        case event_kind::extend_failed: ++extensions[outcome_index(e.ec)]; break;
        case event_kind::released:
        case event_kind::release_failed: ++releases[outcome_index(e.ec)]; break;
        case event_kind::degraded: ++degraded; break;
        case event_kind::lost: ++lost; break;
        case event_kind::master_down:
            if (e.master < master_down.size())
                ++master_down[e.master];
            break;
        case event_kind::master_up: break;
        case event_kind::master_warning: break;  // master_states() lists them
        }
    }
};

std::string shortest(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

void family(std::string& out, const char* name, const char* type, const char* help)
{
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void by_outcome(std::string& out, const char* name, const char* help,
                const std::array<counter, outcomes.size()>& values)
{
    family(out, name, "counter", help);
    for (std::size_t i = 0; i < outcomes.size(); ++i)
        out += std::string(name) + "{outcome=\"" + outcomes[i] + "\"} " + std::to_string(values[i].load()) + "\n";
}

/// The exposition text (Prometheus text format 0.0.4).
std::string render(const lock_metrics& m, const redlock::client& c)
{
    std::string out;
    by_outcome(out, "redlock_acquisitions_total", "Lock acquisitions by outcome.", m.acquisitions);
    family(out, "redlock_acquire_wait_seconds", "histogram", "From the call to async_lock to its completion.");
    for (std::size_t b = 0; b < wait_buckets.size(); ++b)
        out += "redlock_acquire_wait_seconds_bucket{le=\"" + shortest(wait_buckets[b]) + "\"} " +
               std::to_string(m.wait_le[b].load()) + "\n";
    out += "redlock_acquire_wait_seconds_bucket{le=\"+Inf\"} " + std::to_string(m.wait_count.load()) + "\n";
    out += "redlock_acquire_wait_seconds_sum " + std::to_string(static_cast<double>(m.wait_sum_us.load()) / 1e6) + "\n";
    out += "redlock_acquire_wait_seconds_count " + std::to_string(m.wait_count.load()) + "\n";
    by_outcome(out, "redlock_extensions_total", "Lock extensions by outcome.", m.extensions);
    by_outcome(out, "redlock_releases_total", "Lock releases by outcome.", m.releases);
    family(out, "redlock_locks_degraded_total", "counter", "Held locks found on fewer masters than before, or back.");
    out += "redlock_locks_degraded_total " + std::to_string(m.degraded.load()) + "\n";
    family(out, "redlock_locks_lost_total", "counter", "Held locks lost.");
    out += "redlock_locks_lost_total " + std::to_string(m.lost.load()) + "\n";

    const auto masters = c.master_states();
    family(out, "redlock_master_up", "gauge", "1 when the master's connection is ready.");
    for (const auto& s : masters)
        out += "redlock_master_up{master=\"" + std::to_string(s.index) + "\"} " +
               (s.state == redlock::master_state::ready ? "1" : "0") + "\n";
    family(out, "redlock_master_down_total", "counter", "Times the master became unreachable.");
    for (const auto& s : masters)
        out += "redlock_master_down_total{master=\"" + std::to_string(s.index) + "\"} " +
               std::to_string(s.index < m.master_down.size() ? m.master_down[s.index].load() : 0) + "\n";
    family(out, "redlock_master_requests_total", "counter", "Requests sent to the master.");
    for (const auto& s : masters)
        out += "redlock_master_requests_total{master=\"" + std::to_string(s.index) + "\"} " +
               std::to_string(s.requests) + "\n";
    family(out, "redlock_master_connects_total", "counter", "Successful connections to the master.");
    for (const auto& s : masters)
        out += "redlock_master_connects_total{master=\"" + std::to_string(s.index) + "\"} " +
               std::to_string(s.connects) + "\n";
    return out;
}

// ---- The endpoint: GET /metrics over HTTP/1.0, one request per connection ------------------

asio::awaitable<void> serve_one(asio::ip::tcp::socket s, const lock_metrics& m, const redlock::client& c)
{
    asio::streambuf request;
    auto [ec, n] = co_await asio::async_read_until(s, request, "\r\n\r\n", use_tuple);
    if (ec)
        co_return;
    const std::string body = render(m, c);
    const std::string response = "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body;
    co_await asio::async_write(s, asio::buffer(response), use_tuple);
}

asio::awaitable<void> serve(asio::ip::tcp::acceptor& acceptor, const lock_metrics& m, const redlock::client& c)
{
    for (;;)
    {
        auto [ec, s] = co_await acceptor.async_accept(use_tuple);
        if (ec)
            co_return;  // closed
        asio::co_spawn(acceptor.get_executor(), serve_one(std::move(s), m, c), asio::detached);
    }
}

/// What Prometheus does: GET /metrics, the body.
asio::awaitable<std::string> scrape(asio::ip::tcp::endpoint at)
{
    asio::ip::tcp::socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(at, asio::use_awaitable);
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    co_await asio::async_write(s, asio::buffer(request), asio::use_awaitable);
    std::string response;
    auto [ec, n] = co_await asio::async_read(s, asio::dynamic_buffer(response), use_tuple);
    (void)n;  // ends with eof
    const auto body = response.find("\r\n\r\n");
    co_return body == std::string::npos ? std::string() : response.substr(body + 4);
}

// ---- The workload, and the checks ------------------------------------------------------------

asio::awaitable<void> worker(redlock::client& c, int id, std::chrono::steady_clock::time_point until)
{
    asio::steady_timer t(co_await asio::this_coro::executor);
    const std::string resource = "job:" + std::to_string(id % 3);  // contended: 8 workers, 3 jobs
    while (std::chrono::steady_clock::now() < until)
    {
        auto [ec, l] = co_await c.async_lock(resource, use_tuple);
        if (!ec)
        {
            t.expires_after(2ms);
            co_await t.async_wait(use_tuple);
            co_await c.async_unlock(l, use_tuple);
        }
    }
}

/// The value of the sample `name` in the exposition text (-1 when absent).
double sample(const std::string& text, const std::string& name)
{
    const auto at = text.find("\n" + name + " ");
    if (at == std::string::npos)
        return -1;
    return std::stod(text.substr(at + name.size() + 2));
}

int failures = 0;

void check(bool ok, const std::string& what)
{
    std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok)
        ++failures;
}

}  // namespace

// Every client connection of `master` is closed by the server (CLIENT KILL), as a restart would.
void drop_clients(const std::string& master)
{
    redlock_example::command_on(master, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
}

int main(int argc, char** argv)
{
    std::vector<std::string> masters;
    try
    {
        masters = redlock_example::masters_from(argc, argv, 3);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-example-prometheus: %s\n", e.what());
        return 2;
    }
    asio::io_context io;
    lock_metrics metrics;

    redlock::client_config cfg;
    cfg.masters = masters;
    cfg.defaults.ttl = 2000ms;
    cfg.defaults.max_attempts = 50;
    cfg.on_event = [&metrics](const event& e) { metrics.on(e); };  // [prometheus] hook
    redlock::client locks(io.get_executor(), cfg);

    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto endpoint = acceptor.local_endpoint();
    asio::co_spawn(io, serve(acceptor, metrics, locks), asio::detached);

    std::string first, second;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            co_await locks.async_wait_connected(use_tuple);
            auto until = std::chrono::steady_clock::now() + 500ms;
            for (int i = 0; i < 8; ++i)
                asio::co_spawn(io, worker(locks, i, until), asio::detached);
            asio::steady_timer t(io, 700ms);
            co_await t.async_wait(use_tuple);
            first = co_await scrape(endpoint);

            // Master 2 drops its clients' connections (a restart or a network cut would too);
            // the client counts the fall and reconnects.
            drop_clients(masters[2]);
            t.expires_after(300ms);
            co_await t.async_wait(use_tuple);
            second = co_await scrape(endpoint);
            acceptor.close();
            locks.close();
        },
        asio::detached);
    io.run_for(30s);

    std::printf("GET http://%s/metrics after the workload:\n\n%s\n", endpoint.address().to_string().c_str(),
                first.c_str());
    std::printf("checks:\n");
    const double acquired = sample(first, "redlock_acquisitions_total{outcome=\"ok\"}");
    check(acquired > 0, "acquisitions counted: " + std::to_string(acquired));
    check(sample(first, "redlock_releases_total{outcome=\"ok\"}") == acquired, "as many releases as acquisitions");
    check(sample(first, "redlock_acquire_wait_seconds_count") >= acquired, "every acquisition's wait observed");
    check(sample(first, "redlock_master_up{master=\"2\"}") == 1, "master 2 up before the drop");
    check(sample(second, "redlock_master_down_total{master=\"2\"}") == 1, "master 2's dropped connection counted once");
    check(sample(second, "redlock_master_up{master=\"2\"}") == 1, "master 2 up again: the client reconnected");
    check(sample(second, "redlock_master_up{master=\"0\"}") == 1, "master 0 still up");
    check(first.find("redlock_acquire_wait_seconds_bucket{le=\"+Inf\"}") != std::string::npos,
          "the wait histogram has its +Inf bucket");
    std::printf("%s\n", failures == 0 ? "all checks passed" : "SOME CHECKS FAILED");
    return failures == 0 ? 0 : 1;
}
