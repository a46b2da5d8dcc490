// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-example-run-once: a job that must run once per period although several processes
// start it (one per machine of a cluster, say, from the same cron line). The parent starts 5
// local masters, forks 4 processes and releases them at the same moment; each asks for the
// lock "job:nightly-report:<period>". The winner runs the job and keeps the lock until its TTL
// (the rest of the period) so that a late starter sees contention too; the others see
// contention and skip. Exits 0 only if exactly one process ran the job and every other one
// reported contention.

#include <redlock/redlock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "example_checks.hpp"
#include "example_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::use_tuple;

namespace {

// Exit codes of a child.
enum child_exit_code : int { ran_the_job = 10, saw_contention = 11, failed = 12 };

// [run-once] One process's attempt. A plain async_try_lock makes one attempt: when processes
// start at the same moment, their SETs can split the masters so that nobody reaches a majority,
// and every one of them would see "contended". A few attempts with random backoff (async_lock)
// settle such a split vote; contention from a holder persists through them.
asio::awaitable<int> attempt_job(redlock::client& locks, const std::string& log_file)
{
    co_await locks.async_wait_connected(use_tuple);

    redlock::lock_options o;
    o.ttl = 30000ms;  // the rest of the period: the lock is the "already done" marker
    o.max_attempts = 4;
    o.retry_delay = 20ms;
    o.retry_jitter = 80ms;
    auto [ec, l] = co_await locks.async_lock("job:nightly-report:2026-11-21", o, use_tuple);
    if (ec == redlock::error::contended)
        co_return saw_contention;  // another process has it: nothing to do
    if (ec)
    {
        std::fprintf(stderr, "pid %d: %s\n", static_cast<int>(::getpid()), ec.message().c_str());
        co_return failed;
    }

    // The job, short compared with the TTL; it checks the validity left before it commits.
    asio::steady_timer work(co_await asio::this_coro::executor, 300ms);
    co_await work.async_wait(use_tuple);
    if (l.remaining() < 1s)
        co_return failed;
    std::ofstream(log_file, std::ios::app) << "report written by pid " << ::getpid() << "\n";
    // Not unlocked: the key expires at the end of the period, and until then everyone who
    // starts the job sees contention.
    co_return ran_the_job;
}
// [run-once]

int child(const std::vector<std::string>& masters, int go_fd, const std::string& log_file)
{
    // Wait for the parent's signal so that all processes start at once.
    char c;
    while (::read(go_fd, &c, 1) < 0 && errno == EINTR)
    {
    }
    asio::io_context io;
    redlock::client locks(io.get_executor(), redlock_example::config_of(masters));
    int code = failed;
    asio::co_spawn(io, attempt_job(locks, log_file), [&](std::exception_ptr e, int r) {
        code = e ? failed : r;
        locks.close();
    });
    io.run_for(20s);
    return code;
}

std::size_t count_lines(const std::string& file)
{
    std::ifstream in(file);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        ++n;
    return n;
}

}  // namespace

int main(int argc, char** argv)
{
    using redlock_example::check;
    return redlock_example::run_example("redlock-example-run-once", [&] {
        const auto uris = redlock_example::masters_from(argc, argv, 3);
        char dir[] = "/tmp/redlock-run-once-XXXXXX";
        if (::mkdtemp(dir) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        const std::string log_file = std::string(dir) + "/job.log";

        constexpr int processes = 4;
        int go[2];
        if (::pipe(go) != 0)
            throw std::runtime_error("pipe failed");
        std::vector<pid_t> children;
        for (int k = 0; k < processes; ++k)
            children.push_back(redlock_example::fork_process([&] {
                ::close(go[1]);
                return child(uris, go[0], log_file);
            }));
        ::close(go[0]);
        std::printf("%d processes started the job 'nightly-report' at the same moment\n", processes);
        ::close(go[1]);  // EOF on the pipe: go

        int ran = 0, contended = 0, other = 0;
        for (const pid_t pid : children)
        {
            const int code = redlock_example::exit_code_of(pid, -1);
            std::printf("  pid %d: %s\n", static_cast<int>(pid),
                        code == ran_the_job      ? "ran the job"
                        : code == saw_contention ? "saw contention, skipped"
                                                 : "failed");
            ran += code == ran_the_job;
            contended += code == saw_contention;
            other += code != ran_the_job && code != saw_contention;
        }
        std::printf("\n");
        check(ran == 1, "exactly one process ran the job");
        check(contended == processes - 1 && other == 0, "every other process saw contention");
        check(count_lines(log_file) == 1, "the job's output was written once");
        // The winner holds the key on a majority, not necessarily on every master: a master
        // that another process reached first granted that process, which released it.
        std::size_t holding = 0;
        std::string pttls;
        for (const auto& uri : uris)
        {
            const std::string pttl = redlock_example::command_on(uri, {"PTTL", "job:nightly-report:2026-11-21"});
            pttls += (pttls.empty() ? "" : ", ") + pttl;
            holding += std::stoll(pttl) > 20000;
        }
        check(holding >= uris.size() / 2 + 1,
              "the lock stays until the end of the period on a majority (PTTL " + pttls + " ms)");

        // So that the example can run again at once: the period is over, as far as it goes.
        redlock_example::command_on_all(uris, {"DEL", "job:nightly-report:2026-11-21"});
        std::remove(log_file.c_str());
        ::rmdir(dir);
    });
}
