#include "tool_process.hpp"

#include "exec_vectors.hpp"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace redlock::test {

tool_process::tool_process(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env)
{
    char name[] = "/tmp/redlock-tool-stderr-XXXXXX";
    int fd = ::mkstemp(name);
    if (fd < 0)
        throw std::runtime_error("mkstemp failed");
    ::close(fd);
    stderr_file_ = name;

    auto args = redlock::run::exec_argv(argv);
    auto envp = redlock::run::exec_envp(env);

    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 2, stderr_file_.c_str(), O_WRONLY | O_TRUNC, 0);
    // Its own process group, so that the test can signal it without signalling itself.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    int rc = ::posix_spawn(&pid_, args[0], &files, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
    {
        ::unlink(stderr_file_.c_str());
        throw std::runtime_error("cannot start " + argv.at(0));
    }
}

tool_process::~tool_process()
{
    if (!reaped_)
    {
        // SIGTERM first: the tool passes it to the command it started and waits for it, so
        // that nothing the test started outlives it; SIGKILL if it is not gone within 2 s.
        ::kill(pid_, SIGTERM);
        if (!wait_exit(std::chrono::milliseconds(2000)))
        {
            ::kill(pid_, SIGKILL);
            int st;
            ::waitpid(pid_, &st, 0);
        }
    }
    ::unlink(stderr_file_.c_str());
}

std::optional<int> tool_process::wait_exit(std::chrono::milliseconds bound)
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

std::string tool_process::error_output() const { return read_text(stderr_file_); }

void tool_process::signal(int signo) const
{
    if (!reaped_)
        ::kill(pid_, signo);
}

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

}  // namespace redlock::test
