// Availability figures (docs/reliability.md): with a minority of masters down or stalled,
// every uncontended acquisition succeeds within one attempt deadline; with a majority down,
// each fails within its deadline with per-master causes; once the masters are back the client
// recovers by itself; and meanwhile no operation runs past its deadline.
//
// Five masters, each behind a fault_proxy; the client uses the library's defaults but for a
// TTL of 4 s (attempt deadline derived from it: 200 ms) and one attempt per acquisition, so
// that each operation measures exactly one attempt. Three ways of being unavailable: killed
// (SIGKILL: the connection is refused), paused (SIGSTOP: connected, silent) and stalled (the
// proxy holds every byte both ways: connected, silent, the master itself fine).
//
// The figures are printed ("[availability] ...") for the docs. The machine may be shared, so
// every timing check allows for the event-loop lag measured during the operation itself (a
// 5 ms ticker on the same io_context): an operation may only be late by as much as its process
// was starved.
#include "client_fixture.hpp"
#include "fault_proxy.hpp"

#include <boost/asio/detached.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>

using namespace redlock;
using namespace redlock::test;

namespace {

enum class outage
{
    killed,
    paused,
    stalled
};

const char* name_of(outage o)
{
    static constexpr const char* names[] = {"killed", "paused", "stalled"};
    return names[static_cast<std::size_t>(o)];
}

// The section of one kind of outage: "availability: <out> of 5 masters <outage>, <what>".
std::string outage_section(int out, outage o, std::string_view what)
{
    return "availability: " + std::to_string(out) + " of 5 masters " + name_of(o) + ", " +
           std::string(what);
}

constexpr auto ttl = 4000ms;
constexpr auto attempt_deadline = 200ms;  // the default: ttl / 20, clamped to [10 ms, 200 ms]
constexpr auto release_deadline = 200ms;  // the default
// What an operation may take beyond its deadlines on an event loop that was not starved:
// dispatching the completion and the coroutine's resumption.
constexpr double deadline_slack_ms = 50.0;

/// Records how late a 5 ms ticker runs on the io_context, to tell a slow library from a
/// starved process.
class lag_probe
{
public:
    asio::awaitable<void> run(const bool& stop)
    {
        asio::steady_timer t(co_await asio::this_coro::executor);
        while (!stop)
        {
            const auto due = steady::now() + 5ms;
            t.expires_at(due);
            co_await t.async_wait(tuple_awaitable);
            samples_.push_back({steady::now(), steady::now() - due});
            if (samples_.size() > 100000)
                samples_.pop_front();
        }
    }

    /// The worst lag of a tick that ended within [from, to + 10 ms].
    double worst_ms(steady::time_point from, steady::time_point to) const
    {
        steady::duration worst{0};
        for (auto it = samples_.rbegin(); it != samples_.rend() && it->first >= from; ++it)
            if (it->first <= to + 10ms)
                worst = std::max(worst, it->second);
        return ms(worst);
    }

    double worst_ms() const
    {
        steady::duration worst{0};
        for (const auto& s : samples_)
            worst = std::max(worst, s.second);
        return ms(worst);
    }

private:
    std::deque<std::pair<steady::time_point, steady::duration>> samples_;
};

/// Latencies in milliseconds, with the figures the docs quote.
struct figures
{
    std::vector<double> v;
    void add(double x) { v.push_back(x); }
    double max() const { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }
    double min() const { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }
    double p50() const
    {
        if (v.empty())
            return 0.0;
        auto s = v;
        std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
        return s[s.size() / 2];
    }
};

/// Five masters behind five proxies, and one client over the proxies.
struct rig
{
    local_masters m{local_masters::options{.count = 5}};
    std::vector<std::unique_ptr<fault_proxy>> proxies;
    asio::io_context io;
    std::unique_ptr<client> c;
    lag_probe lag;

    rig()
    {
        client_config cfg;
        for (std::size_t i = 0; i < m.size(); ++i)
        {
            proxies.push_back(std::make_unique<fault_proxy>(m.port(i)));
            cfg.masters.push_back(proxies.back()->uri());
        }
        cfg.defaults.ttl = ttl;
        cfg.defaults.max_attempts = 1;
        c = std::make_unique<client>(io.get_executor(), cfg);
    }

    void impair(std::size_t i, outage o)
    {
        switch (o)
        {
        case outage::killed: m.kill(i); break;
        case outage::paused: m.pause(i); break;
        case outage::stalled: proxies[i]->stall(fault_proxy::stall_mode::buffer); break;
        }
    }

    void restore(std::size_t i, outage o)
    {
        switch (o)
        {
        case outage::killed: m.restart(i); break;
        case outage::paused: m.resume(i); break;
        case outage::stalled: proxies[i]->unstall(); break;
        }
    }
};

/// An operation's outcome, how long it took and the worst event-loop lag meanwhile (ms).
struct timed
{
    error_code ec;
    double took = 0;
    double lag = 0;
};

/// An acquisition, timed.
struct timed_lock : timed
{
    lock l;
};

/// Acquires `resource` through the rig's client, timing it.
asio::awaitable<timed_lock> lock_timed(rig& r, const std::string& resource)
{
    const auto t0 = steady::now();
    auto [ec, l] = co_await r.c->async_lock(resource, tuple_awaitable);
    const auto t1 = steady::now();
    co_return timed_lock{{ec, ms(t1 - t0), r.lag.worst_ms(t0, t1)}, std::move(l)};
}

/// Releases `l` through the rig's client, timing it.
asio::awaitable<timed> unlock_timed(rig& r, lock& l)
{
    const auto t0 = steady::now();
    auto [ec] = co_await r.c->async_unlock(l, tuple_awaitable);
    const auto t1 = steady::now();
    co_return timed{ec, ms(t1 - t0), r.lag.worst_ms(t0, t1)};
}

/// Operations run side by side with the measured ones, on other resources, until told to
/// stop: none may run past its deadline, whatever the masters do.
struct background
{
    std::size_t ops = 0;
    std::size_t acquired = 0;
    std::size_t late = 0;
    double worst_excess_ms = -1e9;  // over the deadline bound, after the allowance for lag
    std::string worst;

    asio::awaitable<void> run(rig& r, int id, const bool& stop)
    {
        const std::string res = "background:" + std::to_string(id);
        while (!stop)
        {
            auto a = co_await lock_timed(r, res);
            note("lock", a, ms(attempt_deadline + release_deadline));
            if (!a.ec)
            {
                ++acquired;
                note("unlock", co_await unlock_timed(r, a.l), ms(release_deadline));
            }
            else
            {
                co_await sleep_for(10ms);  // failing fast must not become a busy loop
            }
        }
    }

    void note(const char* what, const timed& op, double bound)
    {
        const auto [ec, took, lag] = op;
        ++ops;
        const double excess = took - bound - lag;
        if (excess > deadline_slack_ms)
            ++late;
        if (excess > worst_excess_ms)
        {
            worst_excess_ms = excess;
            worst = std::string(what) + " took " + std::to_string(took) + " ms (" + ec.message() +
                    ", lag " + std::to_string(lag) + " ms)";
        }
    }
};

/// Starts the lag probe and, once the client is connected, four background workers.
asio::awaitable<void> start_load(rig& r, background& bg, const bool& stop)
{
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, r.lag.run(stop), asio::detached);
    co_await require_connected(*r.c);
    for (int k = 0; k < 4; ++k)
        asio::co_spawn(ex, bg.run(r, k, stop), asio::detached);
}

/// "[1] timed_out (request timeout)" for each master that did not grant.
std::string causes(const lock& l)
{
    std::string out;
    for (const auto& d : l.masters())
    {
        if (d.status == master_status::granted || d.status == master_status::not_needed)
            continue;
        out += " [" + std::to_string(d.index) + "] " + std::string(to_string(d.status));
        if (d.ec)
            out += " (" + d.ec.message() + ")";
    }
    return out;
}

/// With ⌊N/2⌋ = 2 masters out, every uncontended acquisition succeeds at the first attempt.
void minority_out(outage o)
{
    rig r;
    bool stop = false;
    background bg;
    figures lock_ms, unlock_ms;
    std::size_t acquired = 0, attempts = 0, starved = 0;
    constexpr int count = 40;

    run_bounded(
        r.io,
        [&]() -> asio::awaitable<void> {
            co_await start_load(r, bg, stop);
            r.impair(1, o);
            r.impair(3, o);

            // Spread over 4 s: past the health check's 3 s, a paused or stalled master's
            // connection is declared dead and reconnected, and acquisitions must not notice.
            for (int k = 0; k < count; ++k)
            {
                auto a = co_await lock_timed(r, "minority:" + std::to_string(k));
                ++attempts;
                INFO(name_of(o) << " acquisition " << k << " took " << a.took << " ms, lag "
                                << a.lag << " ms: " << a.ec.message() << "; " << a.l.describe());
                if (a.ec && a.lag > ms(attempt_deadline) / 2)
                {
                    ++starved;  // the process was starved for most of a deadline: not the library's doing
                    continue;
                }
                REQUIRE_FALSE(a.ec);
                ++acquired;
                lock_ms.add(a.took);
                CHECK(a.took <= ms(attempt_deadline) + a.lag + deadline_slack_ms);
                CHECK(count_status(a.l, master_status::granted) >= 3);

                const auto u = co_await unlock_timed(r, a.l);
                unlock_ms.add(u.took);
                CHECK_FALSE(u.ec);
                CHECK(u.took <= ms(release_deadline) + u.lag + deadline_slack_ms);
                co_await sleep_for(100ms);
            }
            stop = true;
            co_await sleep_for(attempt_deadline + release_deadline + 100ms);
            r.restore(1, o);
            r.restore(3, o);
        }(),
        60s);

    std::printf(
        "[availability] 2 of 5 masters %-7s: %zu/%zu acquired at the first attempt (%zu starved); "
        "lock p50 %.2f ms, max %.2f ms (deadline %lld ms); unlock p50 %.2f ms, max %.2f ms "
        "(deadline %lld ms); background: %zu ops, %zu acquired, %zu late; worst event-loop lag "
        "%.1f ms\n",
        name_of(o), acquired, attempts, starved, lock_ms.p50(), lock_ms.max(),
        static_cast<long long>(attempt_deadline.count()), unlock_ms.p50(), unlock_ms.max(),
        static_cast<long long>(release_deadline.count()), bg.ops, bg.acquired, bg.late,
        r.lag.worst_ms());
    std::fflush(stdout);
    INFO("worst background operation: " << bg.worst);
    CHECK(acquired + starved == static_cast<std::size_t>(count));
    CHECK(starved <= 2);
    CHECK(bg.late == 0);
    CHECK(bg.acquired > 0);
}

/// With 3 of 5 masters out, each acquisition fails within its deadline, with the cause per
/// master; once they are back, the same client recovers by itself.
void majority_out(outage o)
{
    rig r;
    bool stop = false;
    background bg;
    figures fail_ms, recovery_ms, after_ms;
    std::string first_causes;
    std::size_t failed = 0, starved = 0, recovered_ok = 0;
    constexpr int count = 10;
    const std::array<std::size_t, 3> out{0, 2, 4};

    run_bounded(
        r.io,
        [&]() -> asio::awaitable<void> {
            co_await start_load(r, bg, stop);
            for (auto i : out)
                r.impair(i, o);
            co_await sleep_for(50ms);

            for (int k = 0; k < count; ++k)
            {
                const auto a = co_await lock_timed(r, "majority:" + std::to_string(k));
                const auto& l = a.l;
                INFO(name_of(o) << " attempt " << k << " took " << a.took << " ms, lag " << a.lag
                                << " ms: " << a.ec.message() << "; " << l.describe());
                CHECK(a.ec == error::no_quorum);
                CHECK_FALSE(l.held());
                // One attempt, then the release of what it set (its own deadline).
                CHECK(a.took <=
                      ms(attempt_deadline + release_deadline) + a.lag + deadline_slack_ms);
                fail_ms.add(a.took);
                ++failed;
                // Every master that is out says why.
                REQUIRE(l.masters().size() == 5);
                for (auto i : out)
                {
                    const auto& d = l.masters()[i];
                    INFO("master " << i << ": " << to_string(d.status) << " " << d.ec.message());
                    CHECK(
                        (d.status == master_status::error || d.status == master_status::timed_out));
                    CHECK(d.ec);
                    if (d.status == master_status::timed_out)
                        CHECK(d.ec == error::request_timeout);
                    else
                        CHECK((d.ec == error::not_connected || d.ec == error::connection_lost ||
                               d.ec == error::connect_failed || d.ec == error::handshake_failed));
                }
                if (first_causes.empty())
                    first_causes = causes(l);
                co_await sleep_for(100ms);
            }

            // Back: the client recovers without being told.
            for (auto i : out)
                r.restore(i, o);
            const auto t_back = steady::now();
            std::size_t k = 0;
            for (;;)
            {
                auto [ec, l] =
                    co_await r.c->async_lock("recovery:" + std::to_string(k++), tuple_awaitable);
                if (!ec)
                {
                    recovery_ms.add(ms(steady::now() - t_back));
                    co_await r.c->async_unlock(l, tuple_awaitable);
                    break;
                }
                REQUIRE(steady::now() - t_back < 10s);
                co_await sleep_for(20ms);
            }
            for (int j = 0; j < 10; ++j)
            {
                auto a = co_await lock_timed(r, "after:" + std::to_string(j));
                INFO("after recovery " << j << ": " << a.ec.message() << "; " << a.l.describe());
                if (a.ec && a.lag > ms(attempt_deadline) / 2)
                {
                    ++starved;
                    continue;
                }
                CHECK_FALSE(a.ec);
                recovered_ok += a.ec ? 0 : 1;
                after_ms.add(a.took);
                co_await r.c->async_unlock(a.l, tuple_awaitable);
            }
            stop = true;
            co_await sleep_for(attempt_deadline + release_deadline + 100ms);
        }(),
        60s);

    std::printf(
        "[availability] 3 of 5 masters %-7s: %zu/%d failed with no_quorum in %.2f..%.2f ms "
        "(attempt %lld ms + release %lld ms); causes:%s; first success %.0f ms after the masters "
        "came back, then %zu/10 acquired (max %.2f ms, %zu starved); background: %zu ops, %zu "
        "late; "
        "worst event-loop lag %.1f ms\n",
        name_of(o), failed, count, fail_ms.min(), fail_ms.max(),
        static_cast<long long>(attempt_deadline.count()),
        static_cast<long long>(release_deadline.count()), first_causes.c_str(), recovery_ms.max(),
        recovered_ok, after_ms.max(), starved, bg.ops, bg.late, r.lag.worst_ms());
    std::fflush(stdout);
    INFO("worst background operation: " << bg.worst);
    CHECK(failed == static_cast<std::size_t>(count));
    // Killed masters come back through the reconnection backoff (at most 2 s by default), and
    // then, having restarted empty, stay out of the quorums for the quarantine (the TTL, from
    // their start: client_config::restart_quarantine).
    CHECK(recovery_ms.max() < (o == outage::killed ? ms(ttl) + 5000.0 : 5000.0));
    CHECK(starved <= 2);
    CHECK(bg.late == 0);
}

}  // namespace

TEST_CASE("availability: 2 of 5 masters out, every acquisition succeeds at the first attempt",
          "[live][availability]")
{
    const auto o = GENERATE(outage::killed, outage::paused, outage::stalled);
    DYNAMIC_SECTION(outage_section(2, o, "every acquisition succeeds at the first attempt"))
    {
        minority_out(o);
    }
}

TEST_CASE("availability: 3 of 5 masters out, acquisitions fail within their deadline, then recover",
          "[live][availability]")
{
    const auto o = GENERATE(outage::killed, outage::paused, outage::stalled);
    DYNAMIC_SECTION(outage_section(3, o, "acquisitions fail within their deadline, then recover"))
    {
        majority_out(o);
    }
}
