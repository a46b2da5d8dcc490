// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What the examples share around their masters and processes: starting the local masters, a
// client configuration of them, the tuple completion token, and forking a process and reaping
// it (run_once and fencing).
#pragma once

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "local_masters.hpp"

namespace redlock_example {

/// `co_await op(..., use_tuple)` yields (error_code, results...) instead of throwing.
inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

/// Starts `count` local redis-server masters, saying so.
inline redlock::test::local_masters start_masters(std::size_t count)
{
    std::printf("starting %zu local redis-server masters...\n", count);
    return redlock::test::local_masters({.count = count});
}

/// A client configuration of the masters at `uris`, every other setting at its default.
inline redlock::client_config config_of(std::vector<std::string> uris)
{
    redlock::client_config cfg;
    cfg.masters = std::move(uris);
    return cfg;
}

/// Forks a process that runs `body()` and exits with the code it returns; returns its pid.
/// The child leaves with _exit: the parent's objects (the servers among them) are the
/// parent's to stop.
template <class Body>
pid_t fork_process(Body&& body)
{
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0)
    {
        const int code = body();
        std::fflush(nullptr);
        ::_exit(code);
    }
    return pid;
}

/// Waits for the process `pid` to end; its exit code, or `otherwise` if it did not exit.
inline int exit_code_of(pid_t pid, int otherwise)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : otherwise;
}

}  // namespace redlock_example
