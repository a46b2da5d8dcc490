// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: the results of a run, and their output (summary, JSON, plot).
#ifndef REDLOCK_BENCH_BENCH_REPORT_HPP
#define REDLOCK_BENCH_BENCH_REPORT_HPP

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "bench_options.hpp"
#include "bench_worker.hpp"

namespace redlock::bench {

/// How evenly the acquisitions went to the workers.
struct fairness
{
    std::uint64_t min = 0, max = 0;
    double mean = 0;
    /// Jain's fairness index, (sum x)^2 / (n * sum x^2): 1 when every worker got as many, 1/n
    /// when one got them all.
    double jain = 0;

    static fairness of(const std::vector<std::uint64_t>& per_worker);
};

/// The CPU time one spawned server process used in the measured window.
struct server_cpu
{
    std::size_t master = 0;  // which Redlock master it serves
    std::size_t node = 0;    // its node in that master's cluster (0 for a standalone master)
    pid_t pid = 0;
    bool replica = false;      // a replica of a shard's primary (--replicas)
    std::optional<double> us;  // nullopt: its /proc/<pid>/stat was unreadable at one end
};

struct result
{
    config cfg;
    std::vector<std::string> masters;  // printable
    double elapsed_s = 0;
    double cpu_us = 0;
    long rss_kib = 0;
    bool interrupted = false;
    bool counts_ok = false;
    std::unique_ptr<totals> t;
    std::map<std::string, std::uint64_t> other_errors;
    std::uint64_t fences_checked = 0, fence_violations = 0;  // --fencing
    // --permits, --read-share: acquisitions the witness checked, those beside too many
    // holders (a writer beside anyone), and the most holders (readers) of one resource at once
    std::uint64_t witness_checked = 0, witness_violations = 0;
    std::uint32_t witness_most = 0;
    std::vector<std::uint64_t> per_worker;  // acquisitions of each worker in the measured window
    // Every server process of spawned masters; empty with given masters (--master), whose
    // processes may be anywhere and are not measured.
    std::vector<server_cpu> servers;

    double cycles_per_s() const
    {
        return elapsed_s > 0 ? static_cast<double>(t->acquired) / elapsed_s : 0;
    }
    double attempts_per_s() const
    {
        return elapsed_s > 0 ? static_cast<double>(t->attempts) / elapsed_s : 0;
    }
    double cpu_per_cycle() const
    {
        return t->acquired ? cpu_us / static_cast<double>(t->acquired) : 0;
    }
    double cpu_per_attempt() const
    {
        return t->attempts ? cpu_us / static_cast<double>(t->attempts) : 0;
    }
    /// All servers' CPU in the window, replicas included (they serve the masters: every write
    /// reaches them); nullopt when not measured or when one server's is unknown (a sum without
    /// it would pass for the whole).
    std::optional<double> masters_cpu_us() const;
    std::optional<double> masters_cpu_per_cycle() const;
    /// The replicas' part of masters_cpu_us; nullopt as there, or when no replica was spawned.
    std::optional<double> replicas_cpu_us() const;
    std::optional<double> replicas_cpu_per_cycle() const;
    /// @brief With contention (fewer resources than workers) and a hold: the cycles/s the
    /// resources allow, R / hold, and R / mean held, the same with the hold as the workers saw
    /// it (their timers' lateness included, in this run): what a lock that hands a resource
    /// over in no time would reach here. nullopt without contention or without a hold.
    struct ceiling_figures
    {
        double per_hold = 0;
        double per_held = 0;
    };
    std::optional<ceiling_figures> ceiling() const;
};

/// The results and the configuration as one JSON object.
std::string to_json(const result& r);
/// The configuration on one line.
std::string describe_config(const result& r);
/// The summary printed at the end of a run.
void print_summary(const result& r);
/// A latency-percentile plot (gnuplot; .png or .svg); returns an error message or "".
std::string write_plot(const result& r, const std::string& file);

}  // namespace redlock::bench

#endif
