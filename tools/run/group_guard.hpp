// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#pragma once

// COMMAND's process group stopped when redlock-run itself dies (kill -9, the OOM killer): a
// small guard process, started by redlock-run, that outlives it. The lock lives only as long
// as redlock-run extends it, and unlike flock(1)'s, no descriptor of COMMAND holds it; without
// the guard, COMMAND would run on without the lock while the next holder starts beside it.
//
// The guard is a forked child in a process group of its own (a signal to redlock-run's group
// does not reach it), ignoring SIGINT, SIGTERM and SIGHUP. It holds one end of a socket pair
// whose other end only redlock-run holds. redlock-run sends it COMMAND's process group, then
// the lock's validity end after each grant or extension. When the socket reads end of file
// (redlock-run has died: the kernel closed its end), the guard sends SIGTERM and SIGCONT to the
// group, then SIGKILL once the group is still there at the validity end or after kill_after,
// whichever is sooner, and exits. When redlock-run ends normally it dismisses the guard.
//
// Not covered: a process of COMMAND that leaves the group on purpose (setsid, setpgid), a
// guard killed together with redlock-run (a signal to a whole session or cgroup, which reaches
// COMMAND too), and redlock-run dying in the microseconds between COMMAND's start and the
// message that names its group.

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace redlock::run {

class group_guard
{
public:
    /// Forks the guard. On failure returns nullopt with `error` set to the errno.
    static std::optional<group_guard> start(std::chrono::milliseconds kill_after, int& error);

    group_guard(group_guard&& other) noexcept;
    /// Dismisses this guard, then takes the other's.
    group_guard& operator=(group_guard&& other) noexcept;
    /// Dismisses the guard (see dismiss()).
    ~group_guard();

    /// The process group to stop if redlock-run dies.
    void watch(pid_t pgid) noexcept;
    /// The lock's validity end: the group is killed by then at the latest.
    void deadline(std::chrono::steady_clock::time_point valid_until) noexcept;
    /// Ends the guard without touching the group, and reaps it.
    void dismiss() noexcept;

    pid_t pid() const noexcept { return pid_; }

private:
    group_guard(pid_t pid, int fd) noexcept : pid_(pid), fd_(fd) {}
    void send(long long kind, long long value) noexcept;

    pid_t pid_ = -1;
    int fd_ = -1;
};

}  // namespace redlock::run
