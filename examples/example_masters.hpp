// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What the examples share around their masters and processes. They are user code: they use
// the installed package's API only and are given their masters, as a service would be:
// `--master URI` arguments, else REDLOCK_MASTERS (URIs separated by commas or spaces). The
// tests start local masters and pass them in (test/support/with_masters.cpp). What an
// operator would do from redis-cli (delete a key, count the keys) goes through
// redlock::connection.
#pragma once

#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace redlock_example {

/// The masters: the `--master URI` arguments, else REDLOCK_MASTERS. Throws when there are
/// fewer than `at_least`.
inline std::vector<std::string> masters_from(int argc, char** argv, std::size_t at_least)
{
    std::vector<std::string> uris;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string_view(argv[i]) == "--master")
            uris.emplace_back(argv[++i]);
    if (uris.empty())
        if (const char* env = std::getenv("REDLOCK_MASTERS"))
        {
            // URIs separated by commas or spaces; an item without a scheme after a comma is the
            // next seed of the cluster URI before it (redis-cluster://a:7000,b:7000).
            std::string item;
            char separator = ' ';
            for (const char* p = env;; ++p)
            {
                if (*p == ',' || *p == ' ' || *p == '\0')
                {
                    if (!item.empty() && separator == ',' && !uris.empty() &&
                        item.find("://") == std::string::npos)
                        uris.back() += "," + item;
                    else if (!item.empty())
                        uris.push_back(item);
                    if (!item.empty() || *p == ',')
                        separator = *p;
                    item.clear();
                    if (*p == '\0')
                        break;
                }
                else
                {
                    item += *p;
                }
            }
        }
    if (uris.size() < at_least)
        throw std::runtime_error("this example needs " + std::to_string(at_least) +
                                 " masters: give --master URI for each, or REDLOCK_MASTERS=URI,URI,...");
    std::printf("masters:");
    for (const auto& u : uris)
        std::printf(" %s", redlock::parse_master_uri(u).to_string().c_str());
    std::printf("\n");
    return uris;
}

/// A client configuration of the masters at `uris`, every other setting at its default.
inline redlock::client_config config_of(std::vector<std::string> uris)
{
    redlock::client_config cfg;
    cfg.masters = std::move(uris);
    return cfg;
}

/// Runs one command on the master at `uri`, as redis-cli would, and returns its reply. Blocks:
/// its own io_context, its own connection. Throws on a failure.
inline redlock::resp::reply reply_of(const std::string& uri, std::initializer_list<std::string_view> args)
{
    boost::asio::io_context io;
    redlock::connection c(io.get_executor(), uri);
    redlock::error_code failure;
    redlock::resp::reply reply;
    c.async_exec(redlock::command(args), std::chrono::seconds(2), [&](redlock::error_code ec, redlock::resp::reply r) {
        failure = ec;
        reply = std::move(r);
        c.close();  // the connection would keep the io_context running (reconnects, health checks)
    });
    io.run();
    if (failure)
        throw boost::system::system_error(failure, "command on " + redlock::parse_master_uri(uri).to_string());
    return reply;
}

/// reply_of, and the reply's first value ("OK", "42", a bulk string; "" for a null).
inline std::string command_on(const std::string& uri, std::initializer_list<std::string_view> args)
{
    const auto nodes = reply_of(uri, args);
    return nodes.empty() ? std::string() : nodes.front().value;
}

/// command_on for every master in turn; the replies in order.
inline std::vector<std::string> command_on_all(const std::vector<std::string>& uris,
                                               std::initializer_list<std::string_view> args)
{
    std::vector<std::string> out;
    for (const auto& u : uris)
        out.push_back(command_on(u, args));
    return out;
}

/// The keys matching `pattern` on all the masters together (KEYS: fine for an example's few
/// keys, not for a production server).
inline std::size_t keys_on(const std::vector<std::string>& uris, std::string_view pattern)
{
    std::size_t n = 0;
    for (const auto& u : uris)
        n += reply_of(u, {"KEYS", pattern}).front().size;
    return n;
}

/// Forks a process that runs `body()` and exits with the code it returns; returns its pid.
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
