// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_process.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace redlock::bench::test {

bench_process::bench_process(const std::vector<std::string>& args, std::optional<std::string> path)
{
    char name[] = "/tmp/redlock-bench-output-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0)
        throw std::runtime_error("mkstemp failed");
    ::close(fd);
    output_file_ = name;

    std::vector<std::string> argv{REDLOCK_BENCH_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> argp;
    for (auto& a : argv)
        argp.push_back(a.data());
    argp.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (!path || std::strncmp(*e, "PATH=", 5) != 0)
            env.emplace_back(*e);
    if (path)
        env.push_back("PATH=" + *path);
    std::vector<char*> envp;
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, output_file_.c_str(), O_WRONLY | O_TRUNC, 0);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    const int rc = ::posix_spawn(&pid_, argp[0], &files, nullptr, argp.data(), envp.data());
    posix_spawn_file_actions_destroy(&files);
    if (rc != 0)
    {
        ::unlink(output_file_.c_str());
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
}

bench_process::~bench_process()
{
    if (!reaped_)
    {
        ::kill(pid_, SIGKILL);
        int st = 0;
        ::waitpid(pid_, &st, 0);
    }
    ::unlink(output_file_.c_str());
}

std::optional<int> bench_process::wait_exit(std::chrono::milliseconds bound)
{
    const auto end = std::chrono::steady_clock::now() + bound;
    for (;;)
    {
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) == pid_)
        {
            reaped_ = true;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (std::chrono::steady_clock::now() >= end)
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool bench_process::wait_output(std::string_view text, std::chrono::milliseconds bound) const
{
    const auto end = std::chrono::steady_clock::now() + bound;
    while (output().find(text) == std::string::npos)
    {
        if (std::chrono::steady_clock::now() >= end)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

std::string bench_process::output() const { return read_file(output_file_); }

void bench_process::signal(int signo) const
{
    if (!reaped_)
        ::kill(pid_, signo);
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

temp_dir::temp_dir()
{
    char name[] = "/tmp/redlock-bench-test-XXXXXX";
    if (!::mkdtemp(name))
        throw std::runtime_error("mkdtemp failed");
    dir_ = name;
}

temp_dir::~temp_dir()
{
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

}  // namespace redlock::bench::test
