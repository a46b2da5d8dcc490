// The torture test's worker process (see worker.hpp).
#include "worker.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <random>
#include <type_traits>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <redlock/redlock.hpp>

namespace redlock::torture {

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// std::chrono::steady_clock is CLOCK_MONOTONIC on Linux with libstdc++, the clock that every
// process of the machine shares: the ledgers of several processes can be compared.
static_assert(steady::is_steady);
static_assert(std::is_same_v<steady::duration, std::chrono::nanoseconds>);

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void store(const error_code& ec, error_domain& domain, std::int32_t& value)
{
    if (!ec)
    {
        domain = error_domain::none;
        value = 0;
        return;
    }
    domain = ec.category() == redlock::category() ? error_domain::redlock : error_domain::other;
    value = ec.value();
}

class worker
{
public:
    worker(const worker_config& cfg, client& c, ledger_writer& ledger, int index)
        : cfg_(cfg),
          c_(c),
          ledger_(ledger),
          index_(index),
          rng_(cfg.seed * 0x9E3779B97F4A7C15ull +
               static_cast<std::uint64_t>(cfg.process) * 1000003u +
               static_cast<std::uint64_t>(index))
    {}

    asio::awaitable<void> run()
    {
        asio::steady_timer timer(co_await asio::this_coro::executor);
        while (now_ns() < cfg_.until)
            co_await once(timer);
    }

private:
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool percent(int p) { return uniform(0, 99) < p; }

    asio::awaitable<void> sleep(asio::steady_timer& t, steady::duration d)
    {
        t.expires_after(d);
        co_await t.async_wait(tuple_awaitable);
    }

    /// A random critical section that leaves some validity: at most a third of what is left.
    steady::duration work_time(const lock& l)
    {
        const auto cap = std::min<steady::duration>(std::chrono::milliseconds(cfg_.hold_max_ms),
                                                    l.remaining() / 3);
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(cap).count();
        return std::chrono::microseconds(
            us > 0 ? std::uniform_int_distribution<long long>(0, us)(rng_) : 0);
    }

    asio::awaitable<void> once(asio::steady_timer& timer)
    {
        record r;
        r.process = static_cast<std::uint16_t>(cfg_.process);
        r.worker = static_cast<std::uint16_t>(index_);
        r.resource = static_cast<std::uint32_t>(uniform(0, cfg_.resources - 1));
        r.ttl_ms = cfg_.ttls_ms[static_cast<std::size_t>(
            uniform(0, static_cast<int>(cfg_.ttls_ms.size()) - 1))];
        lock_options o;  // the defaults, but for the TTL and the kind
        o.ttl = std::chrono::milliseconds(r.ttl_ms);
        std::optional<std::uint32_t> second;  // a multi-resource lock's other resource
        r.lock_kind = pick_kind(r.resource, second);
        switch (r.lock_kind)
        {
        case held_kind::fenced: o.fencing = true; break;
        case held_kind::permit:
            o.permits = static_cast<std::uint32_t>(cfg_.permits);
            r.permits = static_cast<std::uint16_t>(cfg_.permits);
            break;
        case held_kind::reader: o.role = lock_role::reader; break;
        case held_kind::writer: o.role = lock_role::writer; break;
        case held_kind::fenced_writer:
            o.role = lock_role::writer;
            o.fencing = true;
            break;
        default: break;
        }
        const std::string name = resource_name(r.resource);

        error_code ec;
        lock l;
        if (second)
        {
            // A multi-resource lock has no try_lock: async_lock_all, with the usual retries.
            // (Built before the co_await: GCC 12 rejects a braced list inside it.)
            std::vector<std::string> both;
            both.push_back(name);
            both.push_back(resource_name(*second));
            r.t_start = now_ns();
            auto [e, got] = co_await c_.async_lock_all(std::move(both), o, tuple_awaitable);
            r.t_acquired = now_ns();
            ec = e;
            l = got;
        }
        else if (percent(cfg_.try_lock_pct))
        {
            r.flags |= flag_try_lock;
            r.t_start = now_ns();
            auto [e, maybe] = co_await c_.async_try_lock(name, o, tuple_awaitable);
            r.t_acquired = now_ns();
            ec = e;
            if (!ec && !maybe)
                ec = error::contended;  // try_lock reports contention as an empty optional
            else if (!ec)
                l = *maybe;
        }
        else
        {
            r.t_start = now_ns();
            auto [e, got] = co_await c_.async_lock(name, o, tuple_awaitable);
            r.t_acquired = now_ns();
            ec = e;
            l = got;
        }
        if (debug_ && r.t_acquired - r.t_start > 1'000'000'000)
            std::fprintf(stderr, "[debug] p%d w%d %s took %.1f ms (ttl %d): %s; %s\n", cfg_.process,
                         index_, (r.flags & flag_try_lock) ? "try_lock" : "lock",
                         static_cast<double>(r.t_acquired - r.t_start) / 1e6, r.ttl_ms,
                         ec.message().c_str(), l.describe().c_str());
        if (ec)
        {
            r.kind = record_kind::failure;
            store(ec, r.acquire_domain, r.acquire_error);
            ledger_.append(r);
            co_return;
        }

        r.kind = record_kind::hold;
        const auto token = l.token();
        std::memcpy(r.token, token.data(), std::min(token.size(), sizeof r.token));
        r.valid_until = to_ns(l.valid_until());
        r.fence = l.fencing_token();

        // The critical section. Now and then a holder oversleeps its validity on purpose, so
        // that others take the lock over by expiry while it still "works", and then its release
        // must leave the new holder's keys alone.
        if (r.ttl_ms <= 500 && percent(cfg_.overrun_pct))
        {
            r.flags |= flag_overran;
            co_await sleep(timer, l.remaining() + std::chrono::milliseconds(uniform(1, 30)));
        }
        else
        {
            co_await sleep(timer, work_time(l));
            if (percent(cfg_.extend_pct) && l.remaining() > 20ms)
            {
                r.flags |= flag_extend_tried;
                r.extend_ttl_ms = cfg_.ttls_ms[static_cast<std::size_t>(
                    uniform(0, static_cast<int>(cfg_.ttls_ms.size()) - 1))];
                r.t_extend = now_ns();
                auto [e, extended] = co_await c_.async_extend(
                    l, std::chrono::milliseconds(r.extend_ttl_ms), tuple_awaitable);
                r.t_extend_done = now_ns();
                store(e, r.extend_domain, r.extend_error);
                if (e)
                {
                    // A failed extension has released the keys: the lock is gone, stop here.
                    r.t_release = r.t_extend;
                    append_hold(r, second);
                    co_return;
                }
                r.flags |= flag_extend_ok;
                r.valid_until_ext = to_ns(extended.valid_until());
                l = extended;
                co_await sleep(timer, work_time(l));
            }
        }

        r.flags |= flag_unlock_called;
        r.t_release = now_ns();
        auto [ue] = co_await c_.async_unlock(l, tuple_awaitable);
        r.t_released = now_ns();
        if (debug_ && r.t_released - r.t_release > 250'000'000)
            std::fprintf(stderr, "[debug] p%d w%d unlock took %.1f ms: %s\n", cfg_.process, index_,
                         static_cast<double>(r.t_released - r.t_release) / 1e6,
                         ue.message().c_str());
        store(ue, r.unlock_domain, r.unlock_error);
        append_hold(r, second);
    }

    /// The kind of this acquisition of `resource` (and, for a multi-resource lock, its other
    /// resource): see worker_config::kinds.
    held_kind pick_kind(std::uint32_t resource, std::optional<std::uint32_t>& second)
    {
        if (!cfg_.kinds)
            return percent(cfg_.fencing_pct) ? held_kind::fenced : held_kind::mutex;
        const int u = uniform(0, 99);
        switch (family_of(resource))
        {
        case 0:
        {
            // A third each: multi-resource, fenced, plain (the unsafe-restart check needs an
            // overlap of each, and a multi-resource lock's were the rarest at 20%).
            if (u < 33)
            {
                // Another resource of the mutex family, when there is one.
                std::vector<std::uint32_t> others;
                for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(cfg_.resources); ++i)
                    if (family_of(i) == 0 && i != resource)
                        others.push_back(i);
                if (!others.empty())
                {
                    second = others[static_cast<std::size_t>(
                        uniform(0, static_cast<int>(others.size()) - 1))];
                    return held_kind::multi;
                }
            }
            return u < 66 ? held_kind::fenced : held_kind::mutex;
        }
        case 1:
            return u < 50   ? held_kind::reader
                   : u < 80 ? held_kind::writer
                            : held_kind::fenced_writer;
        default: return held_kind::permit;
        }
    }

    /// Writes a hold's record, and a multi-resource lock's record for its other resource.
    void append_hold(record r, std::optional<std::uint32_t> second)
    {
        ledger_.append(r);
        if (!second)
            return;
        r.resource = *second;
        r.flags |= flag_further_resource;
        ledger_.append(r);
    }

    const worker_config& cfg_;
    client& c_;
    ledger_writer& ledger_;
    int index_;
    std::mt19937_64 rng_;
    bool debug_ = std::getenv("REDLOCK_TORTURE_DEBUG") != nullptr;
};

/// How late a 10 ms ticker runs on the worker's io_context: when operations take longer
/// than their deadlines allow, this says whether the process was starved of CPU.
asio::awaitable<void> measure_lag(nanos until, nanos& worst)
{
    asio::steady_timer t(co_await asio::this_coro::executor);
    while (now_ns() < until)
    {
        const auto due = steady::now() + 10ms;
        t.expires_at(due);
        co_await t.async_wait(tuple_awaitable);
        const nanos lag = to_ns(steady::now()) - to_ns(due);
        if (std::getenv("REDLOCK_TORTURE_DEBUG") && lag > 30'000'000)
            std::fprintf(stderr, "[debug] event-loop lag %.1f ms at mono %.3f\n",
                         static_cast<double>(lag) / 1e6, static_cast<double>(to_ns(due)) / 1e9);
        worst = std::max<nanos>(worst, lag);
    }
}

}  // namespace

std::string resource_name(std::uint32_t i) { return "torture:" + std::to_string(i); }

nanos to_ns(steady::time_point t) noexcept
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

nanos now_ns() noexcept { return to_ns(steady::now()); }

int run_worker(const worker_config& cfg)
{
    try
    {
        asio::io_context io(1);
        client_config cc;
        cc.masters = cfg.masters;
        if (cfg.no_quarantine)
            cc.restart_quarantine =
                std::chrono::milliseconds(0);  // the client's delayed restart, off
        client c(io.get_executor(), cc);
        ledger_writer ledger(cfg.ledger);

        std::vector<std::unique_ptr<worker>> workers;
        int running = cfg.workers;
        std::exception_ptr failure;
        for (int w = 0; w < cfg.workers; ++w)
        {
            workers.push_back(std::make_unique<worker>(cfg, c, ledger, w));
            asio::co_spawn(io, workers.back()->run(), [&](std::exception_ptr e) {
                if (e && !failure)
                    failure = e;
                --running;
            });
        }
        nanos worst_lag = 0;
        asio::co_spawn(io, measure_lag(cfg.until, worst_lag), [](std::exception_ptr) {});
        // Every operation has a deadline; a coroutine still running a minute after the end is
        // a hang, which the parent reports.
        const auto hard_stop = steady::time_point(std::chrono::nanoseconds(cfg.until)) + 60s;
        while (running > 0 && steady::now() < hard_stop)
            io.run_one_for(100ms);
        if (running > 0)
        {
            std::fprintf(
                stderr,
                "redlock-torture worker %d: %d coroutines still running 60 s after the end\n",
                cfg.process, running);
            return 3;
        }
        record st;
        st.kind = record_kind::stats;
        st.process = static_cast<std::uint16_t>(cfg.process);
        st.t_start = worst_lag;
        ledger.append(st);
        // Let requests that nobody awaits (releases behind timed-out SETs) reach the sockets.
        io.run_for(300ms);
        c.close();
        io.run_for(200ms);
        if (failure)
            std::rethrow_exception(failure);
        return 0;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-torture worker %d: %s\n", cfg.process, e.what());
        return 4;
    }
}

}  // namespace redlock::torture
