// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "program_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "exec_vectors.hpp"  // tools/run/: the argv and envp arrays redlock-run spawns with

namespace redlock::test {

program_process::program_process(const std::vector<std::string>& argv, process_options options)
    : term_grace_(options.term_grace)
{
    std::string name = options.output_prefix + "XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
        throw std::runtime_error("mkstemp failed");
    ::close(fd);
    output_file_ = name;

    auto args = redlock::run::exec_argv(argv);
    auto envp = redlock::run::exec_envp(options.env);

    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 2, output_file_.c_str(), O_WRONLY | O_TRUNC, 0);
    if (options.capture_stdout)
        posix_spawn_file_actions_adddup2(&files, 2, 1);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (options.own_process_group)
    {
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    }
    const int rc = ::posix_spawn(&pid_, args[0], &files, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
    {
        ::unlink(output_file_.c_str());
        throw std::runtime_error("cannot start " + argv.at(0) + ": " + std::strerror(rc));
    }
}

program_process::~program_process()
{
    if (!reaped_)
    {
        // SIGTERM first when asked: redlock-run passes it to the command it started and waits
        // for it, so that nothing the test started outlives it.
        if (term_grace_.count() > 0)
            ::kill(pid_, SIGTERM);
        if (term_grace_.count() == 0 || !wait_exit(term_grace_))
        {
            ::kill(pid_, SIGKILL);
            int st = 0;
            ::waitpid(pid_, &st, 0);
        }
    }
    ::unlink(output_file_.c_str());
}

std::optional<int> program_process::wait_exit(std::chrono::milliseconds bound)
{
    std::optional<int> status;
    eventually(
        [&] {
            int st = 0;
            if (::waitpid(pid_, &st, WNOHANG) != pid_)
                return false;
            reaped_ = true;
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            return true;
        },
        bound);
    return status;
}

std::string program_process::output() const { return read_text(output_file_); }

void program_process::signal(int signo) const
{
    if (!reaped_)
        ::kill(pid_, signo);
}

}  // namespace redlock::test
