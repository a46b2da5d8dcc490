// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: what the workers count, the state they share, and one worker's
// acquire -> hold -> release loop.
#ifndef REDLOCK_BENCH_BENCH_WORKER_HPP
#define REDLOCK_BENCH_BENCH_WORKER_HPP

#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "histogram.hpp"
#include "holders_witness.hpp"
#include "majority_semaphore.hpp"

namespace redlock::bench {

namespace asio = boost::asio;
using clk = std::chrono::steady_clock;

/// Set by SIGINT / SIGTERM: the run stops early and prints what it has.
inline std::atomic<bool> g_interrupted{false};

// ---- Counting ---------------------------------------------------------------------------------

// A counter with one writing thread: a relaxed load + store, no locked instruction.
class counter
{
public:
    void inc() noexcept
    {
        v_.store(v_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> v_{0};
};

enum fail_kind : std::size_t
{
    contended,
    no_quorum,
    timed_out,
    other,
    fail_kinds
};
constexpr const char* acquire_fail_names[fail_kinds] = {"contended", "no_quorum", "timeout",
                                                        "other"};

enum release_kind : std::size_t
{
    lock_lost,
    release_no_quorum,
    release_timed_out,
    release_other,
    release_kinds
};
constexpr const char* release_fail_names[release_kinds] = {"lock_lost", "no_quorum", "timeout",
                                                           "other"};

inline fail_kind classify_acquire(const redlock::error_code& ec)
{
    if (ec == redlock::error::contended)
        return contended;
    if (ec == redlock::error::no_quorum)
        return no_quorum;
    if (ec == redlock::error::validity_expired || ec == redlock::error::request_timeout)
        return timed_out;
    return other;
}

inline release_kind classify_release(const redlock::error_code& ec)
{
    if (ec == redlock::error::lock_lost)
        return lock_lost;
    if (ec == redlock::error::no_quorum)
        return release_no_quorum;
    if (ec == redlock::error::request_timeout)
        return release_timed_out;
    return release_other;
}

// Everything one io thread records. Only that thread writes it; the main thread reads it.
struct alignas(64) thread_stats
{
    // The measured window only.
    counter attempts, acquired, released;
    counter failed[fail_kinds];
    counter release_failed[release_kinds];
    recorder acquire, release, failed_attempt;
    recorder handoff;  // resources shared by workers: a release's start to the next acquisition
    recorder
        held;  // --hold: from the acquisition's completion to the release's start (the timer's lateness included)
    // --read-share: the readers' acquisitions, and the writers' acquire latency.
    counter acquired_reads;
    recorder acquire_writer;
    // Every phase, for the progress line.
    counter all_cycles, all_failed;
    recorder all_acquire;
};

inline thread_local thread_stats* tls_stats = nullptr;

enum phase_t : int
{
    warming,
    measuring,
    stopping
};

struct run_state
{
    run_state(asio::io_context& i, redlock::client& c, const redlock::lock_options& o,
              std::chrono::milliseconds h)
        : io(i),
          client(c),
          opts(o),
          hold(h)
    {}

    asio::io_context& io;
    redlock::client& client;
    redlock::lock_options opts;
    std::chrono::milliseconds hold;
    std::atomic<int> phase{warming};
    std::atomic<std::size_t> running{0};

    std::mutex other_mutex;
    std::map<std::string, std::uint64_t> other_errors;  // message -> count (rare path)

    // --fencing: each resource's last holder's token; holders of a resource follow one another,
    // so each must see a token above the one before.
    std::unique_ptr<std::atomic<std::uint64_t>[]> last_fence;
    std::atomic<std::uint64_t> fences_checked{0}, fence_violations{0};

    void check_fence(std::size_t resource, std::uint64_t token)
    {
        const auto before = last_fence[resource].exchange(token, std::memory_order_acq_rel);
        fences_checked.fetch_add(1, std::memory_order_relaxed);
        if (token <= before)
            fence_violations.fetch_add(1, std::memory_order_relaxed);
    }

    // Workers sharing resources: when each resource's last release started (steady clock
    // ticks; 0: taken since), for the hand-off time. From the start, not the completion: a
    // waiter of the same client may take the lock before the release's answer is back.
    std::unique_ptr<std::atomic<clk::rep>[]> released_at;

    // --permits, --read-share: each resource's holders, checked at each acquisition.
    std::unique_ptr<holders_witness> witness;
    redlock::lock_options reader_opts;     // --read-share: the readers' (opts: the writers')
    majority_semaphore* unsafe = nullptr;  // --unsafe-majority-semaphore

    void note_other(const char* what, const redlock::error_code& ec)
    {
        std::lock_guard<std::mutex> g(other_mutex);
        ++other_errors[std::string(what) + ": " + ec.message()];
    }
};

// One acquire -> hold -> release loop, as callbacks: the bench adds as little of its own
// CPU time per cycle as it can, so that client CPU per cycle is mostly the client's.
class worker
{
public:
    worker(run_state& rs, std::string resource, std::size_t index, bool reader = false)
        : rs_(rs),
          resource_(std::move(resource)),
          index_(index),
          timer_(rs.io),
          reader_(reader)
    {
        if (rs_.unsafe)
            unsafe_key_ = resource_ + ":unsafe-majority";
    }

    void start()
    {
        asio::post(rs_.io, [this] { next(); });
    }

    /// Acquisitions in the measured window (read once the workers have stopped).
    std::uint64_t acquisitions() const noexcept { return acquired_.get(); }

private:
    void next()
    {
        const int ph = rs_.phase.load(std::memory_order_acquire);
        if (ph == stopping)
        {
            rs_.running.fetch_sub(1, std::memory_order_acq_rel);
            return;
        }
        measured_ = ph == measuring;
        t0_ = clk::now();
        if (rs_.unsafe)
        {
            unsafe_token_ = std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ":" +
                            std::to_string(++unsafe_count_);
            return rs_.unsafe->async_acquire(unsafe_key_, unsafe_token_,
                                             [this](redlock::error_code ec) { on_locked(ec, {}); });
        }
        rs_.client.async_lock(
            resource_, reader_ ? rs_.reader_opts : rs_.opts,
            [this](redlock::error_code ec, redlock::lock l) { on_locked(ec, std::move(l)); });
    }

    void on_locked(const redlock::error_code& ec, redlock::lock l)
    {
        const auto t1 = clk::now();
        thread_stats& s = *tls_stats;
        if (ec)
        {
            s.all_failed.inc();
            if (measured_)
            {
                s.attempts.inc();
                const auto k = classify_acquire(ec);
                s.failed[k].inc();
                s.failed_attempt.add(t1 - t0_);
                if (k == other)
                    rs_.note_other("acquire", ec);
            }
            return next();
        }
        s.all_acquire.add(t1 - t0_);
        if (measured_)
        {
            s.attempts.inc();
            s.acquired.inc();
            s.acquire.add(t1 - t0_);
            acquired_.inc();
            if (reader_)
                s.acquired_reads.inc();
            else if (rs_.reader_opts.role == redlock::lock_role::reader)
                s.acquire_writer.add(t1 - t0_);
        }
        if (rs_.witness)
            rs_.witness->enter(index_, !reader_ && rs_.opts.role == redlock::lock_role::writer);
        if (rs_.released_at)
        {
            const auto before = rs_.released_at[index_].exchange(0, std::memory_order_acq_rel);
            if (before != 0 && measured_)
                s.handoff.add(t1 - clk::time_point(clk::duration(before)));
        }
        if (rs_.last_fence)
            rs_.check_fence(index_, l.fencing_token());
        held_ = std::move(l);
        t1_ = t1;
        if (rs_.hold.count() > 0)
        {
            timer_.expires_after(rs_.hold);
            timer_.async_wait([this](const redlock::error_code&) { release(); });
        }
        else
        {
            release();
        }
    }

    void release()
    {
        t2_ = clk::now();
        if (measured_ && rs_.hold.count() > 0)
            tls_stats->held.add(t2_ - t1_);
        if (rs_.released_at)
            rs_.released_at[index_].store(t2_.time_since_epoch().count(),
                                          std::memory_order_release);
        if (rs_.witness)
            rs_.witness->leave(index_, !reader_ && rs_.opts.role == redlock::lock_role::writer);
        if (rs_.unsafe)
            return rs_.unsafe->async_release(unsafe_key_, unsafe_token_,
                                             [this] { on_released({}); });
        rs_.client.async_unlock(held_, [this](redlock::error_code ec) { on_released(ec); });
    }

    void on_released(const redlock::error_code& ec)
    {
        const auto t3 = clk::now();
        thread_stats& s = *tls_stats;
        s.all_cycles.inc();
        if (measured_)
        {
            s.release.add(t3 - t2_);
            if (ec)
            {
                const auto k = classify_release(ec);
                s.release_failed[k].inc();
                if (k == release_other)
                    rs_.note_other("release", ec);
            }
            else
            {
                s.released.inc();
            }
        }
        held_ = {};
        next();
    }

    run_state& rs_;
    std::string resource_;
    std::size_t index_;  // of the resource
    asio::steady_timer timer_;
    redlock::lock held_;
    clk::time_point t0_{}, t1_{}, t2_{};
    counter acquired_;
    bool measured_ = false;
    bool reader_ = false;                    // --read-share
    std::string unsafe_key_, unsafe_token_;  // --unsafe-majority-semaphore
    std::uint64_t unsafe_count_ = 0;
};

// What the main thread gathers from the threads' stats.
struct totals
{
    std::uint64_t attempts = 0, acquired = 0, released = 0;
    std::uint64_t failed[fail_kinds]{};
    std::uint64_t release_failed[release_kinds]{};
    std::uint64_t all_cycles = 0, all_failed = 0;
    std::uint64_t acquired_reads = 0;
    histogram_data acquire, release, failed_attempt, all_acquire, handoff, held, acquire_writer;

    std::uint64_t failed_sum() const
    {
        std::uint64_t n = 0;
        for (auto v : failed)
            n += v;
        return n;
    }
    std::uint64_t release_failed_sum() const
    {
        std::uint64_t n = 0;
        for (auto v : release_failed)
            n += v;
        return n;
    }
    /// Whether the measured window's counts add up (a run exits 1 otherwise): every attempt
    /// acquired or failed, every lock acquired released or failed to release, and every cycle
    /// with its two samples, acquire and release.
    bool add_up() const
    {
        return attempts == acquired + failed_sum() && acquired == released + release_failed_sum() &&
               acquire.count() == acquired && release.count() == acquired;
    }
};

// Each histogram_data is 30 KiB: totals live on the heap.
inline std::unique_ptr<totals> gather(const std::vector<std::unique_ptr<thread_stats>>& stats)
{
    auto t = std::make_unique<totals>();
    for (const auto& s : stats)
    {
        t->attempts += s->attempts.get();
        t->acquired += s->acquired.get();
        t->released += s->released.get();
        for (std::size_t k = 0; k < fail_kinds; ++k)
            t->failed[k] += s->failed[k].get();
        for (std::size_t k = 0; k < release_kinds; ++k)
            t->release_failed[k] += s->release_failed[k].get();
        t->all_cycles += s->all_cycles.get();
        t->all_failed += s->all_failed.get();
        t->acquired_reads += s->acquired_reads.get();
        s->acquire_writer.snapshot_into(t->acquire_writer);
        s->acquire.snapshot_into(t->acquire);
        s->release.snapshot_into(t->release);
        s->failed_attempt.snapshot_into(t->failed_attempt);
        s->all_acquire.snapshot_into(t->all_acquire);
        s->handoff.snapshot_into(t->handoff);
        s->held.snapshot_into(t->held);
    }
    return t;
}

}  // namespace redlock::bench

#endif
