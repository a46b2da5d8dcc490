// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "child_process.hpp"

#include "exec_vectors.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>

namespace redlock::run {

std::optional<child_process> child_process::spawn(const std::vector<std::string>& argv,
                                                  const std::vector<std::string>& extra_env,
                                                  int& error)
{
    auto args = exec_argv(argv);
    auto envp = exec_envp(extra_env);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group; every signal at its default and none blocked: Asio's signal_set
    // handlers are reset by exec anyway, but an ignored signal or a blocked mask would be
    // inherited.
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);

    pid_t pid = -1;
    // glibc's posix_spawnp reports a failed exec (ENOENT, EACCES, ...) as its result.
    error = ::posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (error != 0)
        return std::nullopt;
    return child_process(pid);
}

void child_process::signal_group(int signo) const noexcept
{
    // -pid: the group COMMAND leads. pid is never 0 or 1 here (spawn succeeded).
    ::kill(-pid_, signo);
}

std::optional<int> child_process::try_reap()
{
    int status = 0;
    for (;;)
    {
        pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_)
            return status;
        if (r < 0 && errno == EINTR)
            continue;
        return std::nullopt;
    }
}

}  // namespace redlock::run
