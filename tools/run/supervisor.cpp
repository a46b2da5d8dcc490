// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "supervisor.hpp"

#include <algorithm>
#include <csignal>
#include <sys/wait.h>

namespace redlock::run {

supervisor_action supervisor::child_exited(int wait_status)
{
    supervisor_action a;
    if (!running_)
        return a;
    running_ = false;
    // After a loss COMMAND ran (for a while) without the lock's protection: whatever it
    // returned, the caller must know. Otherwise its status, as a shell reports it.
    if (lost_)
        a.exit_with = lost_status_;
    else if (WIFEXITED(wait_status))
        a.exit_with = WEXITSTATUS(wait_status);
    else if (WIFSIGNALED(wait_status))
        a.exit_with = 128 + WTERMSIG(wait_status);
    else
        a.exit_with = lost_status_;  // not reachable with waitpid without WUNTRACED
    return a;
}

supervisor_action supervisor::lock_lost(std::chrono::milliseconds validity_left)
{
    supervisor_action a;
    if (!running_ || lost_)
        return a;
    lost_ = true;
    a.signal = SIGTERM;
    a.and_continue = true;
    // SIGKILL no later than the keys' expiry: past it, another holder may start.
    a.kill_in = std::clamp(validity_left, std::chrono::milliseconds::zero(), kill_after_);
    return a;
}

supervisor_action supervisor::signal_received(int signo)
{
    supervisor_action a;
    if (running_)
        a.signal = signo;
    return a;
}

supervisor_action supervisor::kill_timer_fired()
{
    supervisor_action a;
    if (running_ && lost_ && !killed_)
    {
        killed_ = true;
        a.signal = SIGKILL;
    }
    return a;
}

}  // namespace redlock::run
