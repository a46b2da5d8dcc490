// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Runs the build's redlock-bench as a child process, for the bench tests: its stdout and stderr
// to one file, its exit awaited with a bound, and the process killed by PID if the test ends
// first (the masters it spawned die with it: PR_SET_PDEATHSIG).
#ifndef REDLOCK_BENCH_TEST_BENCH_PROCESS_HPP
#define REDLOCK_BENCH_TEST_BENCH_PROCESS_HPP

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "program_process.hpp"  // test/support/

namespace redlock::bench::test {

class bench_process : public redlock::test::program_process
{
public:
    /// Starts redlock-bench with `args`, in this process's environment, with PATH replaced by
    /// `path` when given; its stdout and stderr to one file, output().
    explicit bench_process(const std::vector<std::string>& args,
                           std::optional<std::string> path = {});

    /// Whether what it wrote contains `text` within `bound`.
    bool wait_output(std::string_view text, std::chrono::milliseconds bound) const;
};

/// The whole content of a file ("" if it does not exist).
inline std::string read_file(const std::string& path) { return redlock::test::read_text(path); }

}  // namespace redlock::bench::test

#endif
