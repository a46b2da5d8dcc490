// Runs a tool of this project as a child process, for the tool tests: its stderr to a file,
// its exit awaited with a bound, and the process (with its process group, in which the tools
// start their commands) killed by PID if the test ends first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace redlock::test {

class tool_process
{
public:
    /// Starts `argv` with this process's environment plus `env` ("NAME=value").
    tool_process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
    ~tool_process();
    tool_process(const tool_process&) = delete;
    tool_process& operator=(const tool_process&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// Its exit status (128 + N when killed by signal N), or nullopt if it is still running
    /// after `bound` (it keeps running).
    std::optional<int> wait_exit(std::chrono::milliseconds bound);

    /// What it wrote to stderr so far.
    std::string error_output() const;

    void signal(int signo) const;

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::string stderr_file_;
};

/// Polls `done` every 10 ms until it returns true or `bound` passes; returns its last value.
template <class F>
bool eventually(F done, std::chrono::milliseconds bound);

/// The whole content of a file ("" if it does not exist).
std::string read_text(const std::string& path);

}  // namespace redlock::test

#include <thread>

template <class F>
bool redlock::test::eventually(F done, std::chrono::milliseconds bound)
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
