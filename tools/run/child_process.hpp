// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// COMMAND as a child process in a process group of its own, so that losing the lock stops
// everything COMMAND started (a shell script's children too), as timeout(1) does.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace redlock::run {

class child_process
{
public:
    /// Starts `argv` (looked up in PATH when it has no slash) with this process's environment
    /// plus `extra_env` ("NAME=value"), default signal dispositions and an empty signal mask.
    /// On failure returns nullopt with `error` set to the errno of the spawn or exec.
    static std::optional<child_process> spawn(const std::vector<std::string>& argv,
                                              const std::vector<std::string>& extra_env,
                                              int& error);

    pid_t pid() const noexcept { return pid_; }

    /// Sends `signo` to the whole process group (COMMAND and what it started).
    void signal_group(int signo) const noexcept;

    /// Reaps the child if it has exited: its wait status, else nullopt (still running).
    std::optional<int> try_reap();

private:
    explicit child_process(pid_t pid) noexcept : pid_(pid) {}
    pid_t pid_;
};

}  // namespace redlock::run
