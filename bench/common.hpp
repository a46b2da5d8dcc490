// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Small pieces shared by the benchmark programs.
#ifndef REDLOCK_BENCH_COMMON_HPP
#define REDLOCK_BENCH_COMMON_HPP

#include <chrono>
#include <optional>
#include <string>

#include <sys/types.h>

namespace redlock::bench {

/// User + system CPU time of this process.
std::chrono::microseconds process_cpu_time();

/// User + system CPU time of process `pid` (all its threads), from `/proc/<pid>/stat`, to the
/// clock tick (10 ms at the usual 100 Hz); nullopt when that file cannot be read or parsed
/// (the process is gone, or no procfs).
std::optional<std::chrono::microseconds> process_cpu_time_of(pid_t pid);

/// Runs a shell command and returns its standard output (empty on failure).
std::string run_capture(const std::string& cmd);

/// Runs `redis-benchmark` with `args` (e.g. "-p 6379 -t set -P 32 -c 50 -n 1000000") and
/// returns the requests/s of its first test, parsed from its CSV output.
std::optional<double> redis_benchmark_rps(const std::string& args);

/// The value of `--name` in argv (or nullopt).
std::optional<std::string> arg_value(int argc, char** argv, const std::string& name);

}  // namespace redlock::bench

#endif
