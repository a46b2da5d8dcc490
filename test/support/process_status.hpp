// The state of child processes, for the harnesses' error messages and the harness tests.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace redlock::test {

/// "exit status N", "signal NAME" or "wait status N" for a status from waitpid().
inline std::string describe_status(int status)
{
    if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("signal ") + ::strsignal(WTERMSIG(status));
    return "wait status " + std::to_string(status);
}

/// True when no process `pid` exists any more (it was reaped).
inline bool process_gone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

/// True while this process has a child, running or not yet reaped.
inline bool has_children()
{
    int status = 0;
    return !(::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD);
}

}  // namespace redlock::test
