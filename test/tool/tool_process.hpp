// Runs a tool of this project as a child process, for the tool tests: its stderr to a file,
// its exit awaited with a bound, and the process (with its process group, in which the tools
// start their commands) killed by PID if the test ends first.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "program_process.hpp"  // test/support/: also eventually() and read_text()

namespace redlock::test {

class tool_process : public program_process
{
public:
    /// Starts `argv` with this process's environment plus `env` ("NAME=value"), in its own
    /// process group. If the test ends first: SIGTERM first, since the tool passes it to the
    /// command it started and waits for it, so that nothing the test started outlives it;
    /// SIGKILL if it is not gone within 2 s.
    tool_process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {})
        : program_process(argv, {.env = env,
                                 .own_process_group = true,
                                 .term_grace = std::chrono::milliseconds(2000),
                                 .output_prefix = "/tmp/redlock-tool-stderr-"})
    {}

    /// What it wrote to stderr so far.
    std::string error_output() const { return output(); }
};

}  // namespace redlock::test
