// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What redlock-run does while COMMAND runs, as a state machine without I/O: events in (COMMAND
// exited, the lock was lost, a signal arrived, the kill timer fired), one action out (signal
// COMMAND's process group, arm the kill timer, release and exit with a status). The driver
// (runner.cpp) does the I/O; the decisions are tested by stepping this class.
#pragma once

#include <chrono>
#include <optional>

namespace redlock::run {

struct supervisor_action
{
    int signal = 0;             ///< Send this signal to COMMAND's process group (0: none).
    bool and_continue = false;  ///< Then SIGCONT, so that a stopped COMMAND sees it.
    std::optional<std::chrono::milliseconds> kill_in;  ///< Arm the kill timer.
    std::optional<int> exit_with;  ///< COMMAND is gone: release the lock, then exit with this.
};

class supervisor
{
public:
    supervisor(std::chrono::milliseconds kill_after, int lock_lost_status)
        : kill_after_(kill_after),
          lost_status_(lock_lost_status)
    {}

    /// COMMAND's process was reaped with this wait(2) status.
    supervisor_action child_exited(int wait_status);

    /// The lock was lost; `validity_left` is how long its keys may still hold our token (zero
    /// when they may be someone else's already).
    supervisor_action lock_lost(std::chrono::milliseconds validity_left);

    /// redlock-run received SIGINT, SIGTERM or SIGHUP.
    supervisor_action signal_received(int signo);

    /// The timer armed by lock_lost fired.
    supervisor_action kill_timer_fired();

    bool child_running() const noexcept { return running_; }
    bool lost() const noexcept { return lost_; }

private:
    std::chrono::milliseconds kill_after_;
    int lost_status_;
    bool running_ = true;
    bool lost_ = false;
    bool killed_ = false;
};

}  // namespace redlock::run
