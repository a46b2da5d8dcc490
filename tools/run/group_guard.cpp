// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "group_guard.hpp"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace redlock::run {

namespace {

// The messages: {kind, value}, one per SOCK_SEQPACKET record.
constexpr long long watch_kind = 1;     // value: the process group
constexpr long long deadline_kind = 2;  // value: the validity end, CLOCK_MONOTONIC nanoseconds
constexpr long long dismiss_kind = 3;

long long monotonic_ns() noexcept
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

void ignore(int signo) noexcept
{
    struct sigaction sa
    {};
    sa.sa_handler = SIG_IGN;
    ::sigaction(signo, &sa, nullptr);
}

// The guard's whole life, in the forked child: only async-signal-safe calls (redlock-run may
// have had other threads at the fork).
[[noreturn]] void guard_main(int fd, long long kill_after_ns) noexcept
{
    ::setpgid(0, 0);
    for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
        ignore(signo);
    struct sigaction dfl
    {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Nothing of redlock-run's stays open here (its masters' sockets, its signal pipe).
    if (fd != 3)
    {
        ::dup2(fd, 3);
        fd = 3;
    }
    ::close_range(4, ~0U, 0);

    pid_t group = 0;
    long long deadline = -1;
    for (;;)
    {
        long long msg[2];
        const ssize_t n = ::read(fd, msg, sizeof msg);
        if (n == static_cast<ssize_t>(sizeof msg))
        {
            if (msg[0] == watch_kind)
                group = static_cast<pid_t>(msg[1]);
            else if (msg[0] == deadline_kind)
                deadline = msg[1];
            else if (msg[0] == dismiss_kind)
                ::_exit(0);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break;  // end of file: redlock-run is gone
    }
    if (group <= 1)
        ::_exit(0);
    ::kill(-group, SIGTERM);
    ::kill(-group, SIGCONT);
    long long kill_at = monotonic_ns() + kill_after_ns;
    if (deadline >= 0 && deadline < kill_at)
        kill_at = deadline;
    const timespec step{0, 20'000'000};  // 20 ms
    while (::kill(-group, 0) == 0 && monotonic_ns() < kill_at)
        ::nanosleep(&step, nullptr);
    if (::kill(-group, 0) == 0)
        ::kill(-group, SIGKILL);
    ::_exit(0);
}

}  // namespace

std::optional<group_guard> group_guard::start(std::chrono::milliseconds kill_after, int& error)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    {
        error = errno;
        return std::nullopt;
    }
    const pid_t pid = ::fork();
    if (pid < 0)
    {
        error = errno;
        ::close(sv[0]);
        ::close(sv[1]);
        return std::nullopt;
    }
    if (pid == 0)
    {
        ::close(sv[0]);
        guard_main(sv[1], std::chrono::duration_cast<std::chrono::nanoseconds>(kill_after).count());
    }
    ::close(sv[1]);
    return group_guard(pid, sv[0]);
}

group_guard::group_guard(group_guard&& other) noexcept : pid_(other.pid_), fd_(other.fd_)
{
    other.pid_ = -1;
    other.fd_ = -1;
}

group_guard& group_guard::operator=(group_guard&& other) noexcept
{
    if (this != &other)
    {
        dismiss();
        pid_ = other.pid_;
        fd_ = other.fd_;
        other.pid_ = -1;
        other.fd_ = -1;
    }
    return *this;
}

group_guard::~group_guard() { dismiss(); }

void group_guard::send(long long kind, long long value) noexcept
{
    if (fd_ < 0)
        return;
    const long long msg[2] = {kind, value};
    // MSG_NOSIGNAL: a guard that died must not kill redlock-run with SIGPIPE.
    (void)::send(fd_, msg, sizeof msg, MSG_NOSIGNAL);
}

void group_guard::watch(pid_t pgid) noexcept { send(watch_kind, pgid); }

void group_guard::deadline(std::chrono::steady_clock::time_point valid_until) noexcept
{
    // steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux), the guard's clock.
    send(deadline_kind,
         std::chrono::duration_cast<std::chrono::nanoseconds>(valid_until.time_since_epoch())
             .count());
}

void group_guard::dismiss() noexcept
{
    if (pid_ < 0)
        return;
    send(dismiss_kind, 0);
    ::close(fd_);
    fd_ = -1;
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR)
    {}
    pid_ = -1;
}

}  // namespace redlock::run
