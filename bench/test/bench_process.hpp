// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Runs the build's redlock-bench as a child process, for the bench tests: its stdout and stderr
// to one file, its exit awaited with a bound, and the process killed by PID if the test ends
// first (the masters it spawned die with it: PR_SET_PDEATHSIG).
#ifndef REDLOCK_BENCH_TEST_BENCH_PROCESS_HPP
#define REDLOCK_BENCH_TEST_BENCH_PROCESS_HPP

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::bench::test {

class bench_process
{
public:
    /// Starts redlock-bench with `args`, in this process's environment, with PATH replaced by
    /// `path` when given.
    explicit bench_process(const std::vector<std::string>& args,
                           std::optional<std::string> path = {});
    ~bench_process();
    bench_process(const bench_process&) = delete;
    bench_process& operator=(const bench_process&) = delete;

    /// Its exit status (128 + N when killed by signal N), or nullopt if it is still running
    /// after `bound` (it keeps running).
    std::optional<int> wait_exit(std::chrono::milliseconds bound);
    /// Whether what it wrote contains `text` within `bound`.
    bool wait_output(std::string_view text, std::chrono::milliseconds bound) const;
    /// What it wrote to stdout and stderr so far.
    std::string output() const;
    void signal(int signo) const;

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::string output_file_;
};

/// The whole content of a file ("" if it does not exist).
std::string read_file(const std::string& path);

/// A fresh directory under /tmp, removed with what it holds when this goes away.
class temp_dir
{
public:
    temp_dir();
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    std::string path(std::string_view name) const { return dir_ + "/" + std::string(name); }

private:
    std::string dir_;
};

}  // namespace redlock::bench::test

#endif
