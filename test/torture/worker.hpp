// A worker process of the torture test: one redlock::client, many coroutines contending on a
// few resources through the public API, every hold written to the process's ledger.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ledger.hpp"

namespace redlock::torture {

struct worker_config
{
    int process = 0;                            ///< Index of this worker process.
    int workers = 16;                           ///< Coroutines in this process.
    int resources = 4;                          ///< Resources "torture:0" .. "torture:R-1".
    std::vector<std::string> masters{};         ///< URIs (the fault proxies).
    std::vector<int> ttls_ms{300, 1000, 2000};  ///< Each acquisition picks one.
    nanos until = 0;       ///< No acquisition is started after this (monotonic).
    std::string ledger{};  ///< This process's ledger file.
    std::uint64_t seed = 1;
    int try_lock_pct = 15;  ///< Acquisitions made with async_try_lock.
    int extend_pct = 10;    ///< Holds that call async_extend once.
    int overrun_pct = 3;    ///< Holds (TTL <= 500 ms) that sleep past their validity.
    int hold_max_ms = 20;   ///< Upper bound of the random critical section.
    int fencing_pct = 0;    ///< Acquisitions made with lock_options::fencing.
    /// Every kind of lock (--kinds): resource i belongs to family i % 3, whose kinds may be
    /// taken beside one another: 0 mutexes (plain, fenced, multi-resource over two resources
    /// of the family), 1 a read-write lock (readers, writers, fenced writers), 2 a semaphore of
    /// `permits` permits. Without it, every acquisition is a mutex (fenced: fencing_pct).
    bool kinds = false;
    int permits = 2;
    bool no_quarantine = false;  ///< client_config::restart_quarantine 0 (--unsafe-restarts).
};

/// The resource name of index `i`.
std::string resource_name(std::uint32_t i);

/// The family of resource `i` in a --kinds run (worker_config::kinds): 0 mutexes, 1 a
/// read-write lock, 2 a semaphore.
inline int family_of(std::uint32_t i) noexcept { return static_cast<int>(i % 3); }

/// Runs the worker until `until`, then lets its last releases go out and returns the process
/// exit status (0: ok; 3: coroutines still running a minute after the end; 4: an exception).
int run_worker(const worker_config& cfg);

/// The monotonic clock in nanoseconds: std::chrono::steady_clock, i.e. CLOCK_MONOTONIC.
nanos now_ns() noexcept;

/// A steady_clock time point in nanoseconds since the clock's epoch.
nanos to_ns(std::chrono::steady_clock::time_point t) noexcept;

}  // namespace redlock::torture
