// redlock-with-masters: runs a program against local masters started for it, as the examples
// (user code that is given its masters) are run by the tests.
//
//   redlock-with-masters [--count N] [--store] [--uris-as-arguments] -- PROGRAM [ARG...]
//
// Starts N redis-server masters (default 5) on loopback, and with --store one more server for
// the program's protected store; runs PROGRAM with REDLOCK_MASTERS (and REDLOCK_STORE) set to
// their URIs, and with --uris-as-arguments the masters' URIs also as arguments after its ARGs
// (README.md's program takes them so); stops every server by PID when PROGRAM ends, also if it
// fails; exits with PROGRAM's status (2 when it cannot be run).
#include "local_masters.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

std::string joined(const std::vector<std::string>& uris)
{
    std::string s;
    for (const auto& u : uris)
        s += (s.empty() ? "" : ",") + u;
    return s;
}

}  // namespace

int main(int argc, char** argv)
{
    std::size_t count = 5;
    bool store = false;
    bool uris_as_arguments = false;
    int i = 1;
    for (; i < argc && std::string_view(argv[i]) != "--"; ++i)
    {
        const std::string_view a = argv[i];
        if (a == "--count" && i + 1 < argc)
            count = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--store")
            store = true;
        else if (a == "--uris-as-arguments")
            uris_as_arguments = true;
        else
        {
            std::fprintf(stderr, "usage: redlock-with-masters [--count N] [--store] "
                                 "[--uris-as-arguments] -- PROGRAM [ARG...]\n");
            return 2;
        }
    }
    if (i + 1 >= argc || count == 0)
    {
        std::fprintf(stderr, "usage: redlock-with-masters [--count N] [--store] "
                             "[--uris-as-arguments] -- PROGRAM [ARG...]\n");
        return 2;
    }
    try
    {
        redlock::test::local_masters masters({.count = count});
        std::optional<redlock::test::local_masters> store_server;
        if (store)
            store_server.emplace(redlock::test::local_masters::options{.count = 1});
        ::setenv("REDLOCK_MASTERS", joined(masters.uris()).c_str(), 1);
        if (store_server)
            ::setenv("REDLOCK_STORE", store_server->uri(0).c_str(), 1);

        // PROGRAM's arguments: its own, then the masters' URIs if asked.
        const std::vector<std::string> uris = masters.uris();
        std::vector<char*> args(argv + i + 1, argv + argc);
        if (uris_as_arguments)
            for (const auto& u : uris)
                args.push_back(const_cast<char*>(u.c_str()));
        args.push_back(nullptr);

        pid_t pid = -1;
        if (int rc = ::posix_spawnp(&pid, argv[i + 1], nullptr, nullptr, args.data(), environ);
            rc != 0)
        {
            std::fprintf(stderr, "redlock-with-masters: %s: %s\n", argv[i + 1], std::strerror(rc));
            return 2;
        }
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
        {}
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-with-masters: %s\n", e.what());
        return 2;
    }
}
