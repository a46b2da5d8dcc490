// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-example-fencing: the counterexample to Redlock without fencing (a holder paused past
// its validity writes after the next holder), made real with a process and SIGSTOP, and what a
// fencing token changes.
//
// Given 3 masters (--master URI, or REDLOCK_MASTERS) and a fourth Redis server, the protected
// store (--store URI, or REDLOCK_STORE; a second
// store, a file, gets the same writes: fenced_file.hpp). It forks process A, which takes the
// lock "report" with a short TTL, checks that it still holds it, and then, before its write to
// the store, is stopped by the parent with SIGSTOP (a GC pause, a swapped-out page, a VM
// migration: anything that freezes a process). While A is stopped its keys expire; the parent,
// as process B, takes the lock and writes. Then A is resumed and writes what it prepared while
// it believed it held the lock.
//
//   without fencing: both writes are accepted; A's stale write overwrites B's.
//   with fencing:    B's token is larger than A's; the store, which keeps the highest token
//                    it has seen (redlock::fenced_set), refuses A's write.
//
// Exits 0 only if both outcomes are what this comment says.

#include <redlock/redlock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "example_checks.hpp"
#include "example_masters.hpp"
#include "fenced_file.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::use_tuple;

namespace {

// Exit codes of process A.
enum a_exit_code : int { write_accepted = 20, write_refused = 21, failed = 22 };

redlock::lock_options options(bool fencing)
{
    redlock::lock_options o;
    o.ttl = 300ms;
    o.fencing = fencing;
    o.max_attempts = 20;
    return o;
}

// [fencing] A holder's write to the protected store: with a fencing token, the store decides
// whether this holder is still the latest (fenced_set); without, it takes any write.
asio::awaitable<bool> write_report(redlock::connection& store, const redlock::lock& l, const std::string& text)
{
    // The command in a variable, not a temporary beside co_await (GCC 12: usage.md §17).
    if (l.fencing_token() == 0)
    {
        const redlock::command set("SET", "report", text);
        co_await store.async_exec(set, use_tuple);
        co_return true;
    }
    const redlock::command fenced = redlock::fenced_set("report", text, l.fencing_token());
    auto [ec, reply] = co_await store.async_exec(fenced, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "fenced write");
    const bool accepted = redlock::fenced_write_accepted(reply, ec);
    if (ec)
        throw boost::system::system_error(ec, "fenced write");
    co_return accepted;
}
// [fencing]

// The same write to the second store, a file (fenced_file.hpp); both must agree.
asio::awaitable<bool> write_both(redlock::connection& store, const std::string& file, const redlock::lock& l,
                                 const std::string& text)
{
    const bool in_redis = co_await write_report(store, l, text);
    const redlock_example::fenced_file f(file);
    bool in_file = true;
    if (l.fencing_token() == 0)
        f.overwrite(text);
    else
        in_file = f.write_if_latest(l.fencing_token(), text);
    if (in_redis != in_file)
        throw std::runtime_error("the Redis store and the file store disagree about " + text);
    co_return in_redis;
}

// Process A: lock, check, report "checked" to the parent, then (stopped by the parent during
// the pause below) write.
int process_a(const std::vector<std::string>& masters, const std::string& store_uri, const std::string& file,
              bool fencing, int to_parent)
{
    asio::io_context io;
    redlock::client locks(io.get_executor(), redlock_example::config_of(masters));
    redlock::connection store(io.get_executor(), store_uri);
    int code = failed;
    auto body = [&]() -> asio::awaitable<int> {
        co_await locks.async_wait_connected(use_tuple);
        auto [ec, l] = co_await locks.async_lock("report", options(fencing), use_tuple);
        if (ec || !l.held())
            co_return failed;
        const std::string line = "checked " + std::to_string(l.fencing_token()) + "\n";
        if (::write(to_parent, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            co_return failed;
        // The work between the check and the write; the parent's SIGSTOP lands here.
        asio::steady_timer work(co_await asio::this_coro::executor, 1s);
        co_await work.async_wait(use_tuple);
        co_return co_await write_both(store, file, l, "from A (token " + std::to_string(l.fencing_token()) + ")")
            ? write_accepted
            : write_refused;
    };
    asio::co_spawn(io, body(), [&](std::exception_ptr e, int r) {
        code = e ? failed : r;
        locks.close();
        store.close();
    });
    io.run_for(20s);
    return code;
}

// Reads one line from `fd` within `limit`.
std::string read_line(int fd, std::chrono::milliseconds limit)
{
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char c = 0;
    while (c != '\n')
    {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{fd, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
            throw std::runtime_error("process A did not report its lock in time");
        if (::read(fd, &c, 1) != 1)
            throw std::runtime_error("process A ended before it reported its lock");
        line += c;
    }
    return line;
}

struct outcome
{
    int a_code = failed;
    std::uint64_t a_token = 0, b_token = 0;
    bool b_accepted = false;
    std::string stored;
    std::string stored_in_file;
};

outcome scenario(const std::vector<std::string>& uris, const std::string& store_uri, const std::string& dir,
                 bool fencing)
{
    const std::string file = dir + (fencing ? "/report-fenced.txt" : "/report.txt");
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0)
        throw std::runtime_error("pipe failed");
    const pid_t a = redlock_example::fork_process([&] {
        ::close(pipe_fds[0]);
        return process_a(uris, store_uri, file, fencing, pipe_fds[1]);
    });
    ::close(pipe_fds[1]);
    outcome out;
    try
    {
        const auto line = read_line(pipe_fds[0], 10s);
        ::kill(a, SIGSTOP);
        out.a_token = std::stoull(line.substr(line.find(' ') + 1));
        std::printf("  A holds the lock (fencing token %llu), checked it, and is stopped before its write\n",
                    static_cast<unsigned long long>(out.a_token));
        // A's keys expire while it is stopped.
        std::this_thread::sleep_for(400ms);

        asio::io_context io;
        redlock::client locks(io.get_executor(), redlock_example::config_of(uris));
        redlock::connection store(io.get_executor(), store_uri);
        asio::co_spawn(
            io,
            [&]() -> asio::awaitable<void> {
                co_await locks.async_wait_connected(use_tuple);
                redlock::lock l = co_await locks.async_lock("report", options(fencing), asio::use_awaitable);
                out.b_token = l.fencing_token();
                out.b_accepted =
                    co_await write_both(store, file, l, "from B (token " + std::to_string(out.b_token) + ")");
                co_await locks.async_unlock(l, use_tuple);
            },
            [&](std::exception_ptr e) {
                locks.close();
                store.close();
                if (e)
                    std::rethrow_exception(e);
            });
        io.run_for(20s);
        std::printf("  B took the lock (fencing token %llu) and wrote: %s\n",
                    static_cast<unsigned long long>(out.b_token), out.b_accepted ? "accepted" : "refused");
    }
    catch (...)
    {
        ::kill(a, SIGKILL);
        ::waitpid(a, nullptr, 0);
        ::close(pipe_fds[0]);
        throw;
    }
    ::kill(a, SIGCONT);
    out.a_code = redlock_example::exit_code_of(a, failed);
    ::close(pipe_fds[0]);
    std::printf("  A resumed and wrote: %s\n",
                out.a_code == write_accepted  ? "accepted"
                : out.a_code == write_refused ? "refused"
                                              : "(failed)");
    out.stored = redlock_example::command_on(store_uri, {"GET", "report"});
    out.stored_in_file = redlock_example::fenced_file(file).content();
    std::printf("  the store holds: \"%s\"; the file store: \"%s\"\n\n", out.stored.c_str(),
                out.stored_in_file.c_str());
    redlock_example::command_on(store_uri, {"DEL", "report", "{report}:token"});
    std::remove(file.c_str());
    return out;
}

// The store: `--store URI`, else REDLOCK_STORE; a Redis server other than the masters.
std::string store_from(int argc, char** argv)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string_view(argv[i]) == "--store")
            return argv[i + 1];
    if (const char* env = std::getenv("REDLOCK_STORE"))
        return env;
    throw std::runtime_error("this example needs a store, a Redis server other than the masters: --store URI or "
                             "REDLOCK_STORE=URI");
}

}  // namespace

int main(int argc, char** argv)
{
    using redlock_example::check;
    return redlock_example::run_example("redlock-example-fencing", [&] {
        const auto masters = redlock_example::masters_from(argc, argv, 3);
        const auto store = store_from(argc, argv);
        char dir[] = "/tmp/redlock-fencing-XXXXXX";
        if (::mkdtemp(dir) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        redlock_example::command_on(store, {"DEL", "report", "{report}:token"});

        std::printf("without fencing:\n");
        const auto plain = scenario(masters, store, dir, false);
        check(plain.b_accepted && plain.a_code == write_accepted, "both writes were accepted");
        check(plain.stored.rfind("from A", 0) == 0 && plain.stored_in_file.rfind("from A", 0) == 0,
              "the paused holder's stale write overwrote the newer one (in both stores)");

        std::printf("\nwith fencing:\n");
        const auto fenced = scenario(masters, store, dir, true);
        check(fenced.a_token > 0 && fenced.b_token > fenced.a_token, "B's fencing token is larger than A's");
        check(fenced.b_accepted, "B's write was accepted");
        check(fenced.a_code == write_refused, "A's stale write was refused by both stores");
        check(fenced.stored.rfind("from B", 0) == 0 && fenced.stored_in_file.rfind("from B", 0) == 0,
              "both stores keep B's write");
        ::rmdir(dir);
    });
}
