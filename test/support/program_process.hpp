// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// A program of this project run as a child process by a test (the tool tests' redlock-run, the
// bench tests' redlock-bench): what it writes kept in a file, its exit awaited with a bound, and
// the process killed by PID if the test ends first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "file_text.hpp"  // read_text(), for the tests that read what a program wrote

namespace redlock::test {

/// How a program_process runs.
struct process_options
{
    /// Added to this process's environment ("NAME=value"), each replacing a variable of the
    /// same name.
    std::vector<std::string> env = {};
    /// stdout as well as stderr to the output file (else stdout is this process's).
    bool capture_stdout = false;
    /// Its own process group (the tools start their commands in it), so that the test can
    /// signal it without signalling itself.
    bool own_process_group = false;
    /// When the test ends first: SIGTERM, and SIGKILL if it is not gone within this (zero:
    /// SIGKILL at once).
    std::chrono::milliseconds term_grace{0};
    /// The output file's name, to which mkstemp adds six characters.
    std::string output_prefix = "/tmp/redlock-child-output-";
};

class program_process
{
public:
    /// Starts `argv` (argv[0] a path) as `options` says.
    explicit program_process(const std::vector<std::string>& argv, process_options options = {});
    ~program_process();
    program_process(const program_process&) = delete;
    program_process& operator=(const program_process&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// Its exit status (128 + N when killed by signal N), or nullopt if it is still running
    /// after `bound` (it keeps running).
    std::optional<int> wait_exit(std::chrono::milliseconds bound);

    /// What it wrote to the output file so far.
    std::string output() const;

    void signal(int signo) const;

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::chrono::milliseconds term_grace_;
    std::string output_file_;
};

/// Polls `done` every 10 ms until it returns true or `bound` passes; returns its last value.
template <class F>
bool eventually(F done, std::chrono::milliseconds bound)
{
    auto end = std::chrono::steady_clock::now() + bound;
    while (!done())
    {
        if (std::chrono::steady_clock::now() >= end)
            return done();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

}  // namespace redlock::test
