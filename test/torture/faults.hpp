// The fault schedule of the torture test: pauses, kills with delayed restarts, stalls, latency
// spikes, cuts and refused connections, on at most a minority of masters at a time.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fault_proxy.hpp"
#include "local_masters.hpp"

namespace redlock::torture {

enum class fault_kind : std::uint8_t
{
    pause,           ///< SIGSTOP the master (sockets open, nothing answers), SIGCONT later.
    kill,            ///< SIGKILL the master; restart it (empty) only after the largest TTL.
    stall_buffer,    ///< The proxy holds the bytes of one or both directions, then lets them go.
    stall_drop,      ///< The proxy black-holes the bytes, then cuts the connections.
    latency,         ///< The proxy delays each direction by up to 150 ms.
    refuse,          ///< The proxy cuts every connection and resets new ones for a while.
    cut,             ///< The proxy cuts every connection once (not counted as an impairment).
    unsafe_restart,  ///< --unsafe-restarts: a majority killed and restarted at once.
    count_
};

inline constexpr std::size_t fault_kinds = static_cast<std::size_t>(fault_kind::count_);

/// A short name of a fault kind ("stall-buffer").
const char* to_string(fault_kind k) noexcept;

class fault_schedule
{
public:
    using clock = std::chrono::steady_clock;

    struct options
    {
        /// Masters impaired at once, at most: a minority, (N - 1) / 2.
        std::size_t max_impaired = 2;
        /// The largest TTL in use: a killed master is restarted only after it has passed.
        std::chrono::milliseconds max_ttl{2000};
        /// Kill a majority and restart it at once instead of the delayed restart: breaks an
        /// assumption of Redlock on purpose, to show that the checker sees what follows.
        bool unsafe_restarts = false;
        /// Print every fault as it is injected and lifted.
        bool verbose = false;
        std::uint64_t seed = 1;
    };

    fault_schedule(test::local_masters& masters,
                   std::vector<std::unique_ptr<test::fault_proxy>>& proxies, options o);

    /// Lifts the faults that are due and perhaps injects a new one. Call every few ms.
    void step(clock::time_point now);

    /// Lifts every fault: resumes, heals, and restarts killed masters once their restart time
    /// has come (waiting for it: the delayed restart is kept even at the end).
    void heal_all();

    /// Faults injected, by kind.
    const std::array<std::size_t, fault_kinds>& injected() const noexcept { return injected_; }
    std::size_t total_injected() const noexcept;
    /// The most masters impaired at the same time.
    std::size_t max_impaired_seen() const noexcept { return max_seen_; }
    /// The shortest time a killed master stayed down (-1 if none was killed).
    std::chrono::milliseconds min_downtime() const noexcept { return min_downtime_; }

private:
    struct master_state
    {
        bool impaired = false;
        fault_kind kind = fault_kind::pause;
        clock::time_point until{};  // when to lift it
        clock::time_point killed_at{};
    };

    std::size_t impaired_now() const noexcept;
    void inject(clock::time_point now);
    void lift(std::size_t i, clock::time_point now);
    void log(const std::string& what) const;
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

    test::local_masters& masters_;
    std::vector<std::unique_ptr<test::fault_proxy>>& proxies_;
    options o_;
    std::mt19937_64 rng_;
    std::vector<master_state> state_;
    clock::time_point next_{};
    clock::time_point origin_;
    std::array<std::size_t, fault_kinds> injected_{};
    std::size_t max_seen_ = 0;
    std::chrono::milliseconds min_downtime_{-1};
};

}  // namespace redlock::torture
