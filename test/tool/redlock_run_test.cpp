// redlock-run end to end: the binary against real masters started by the test (docs/cli.md).
#include "local_masters.hpp"
#include "tool_process.hpp"

#include <catch2/catch.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <utility>
#include <string>
#include <vector>

using namespace redlock::test;
using namespace std::chrono_literals;

namespace {

constexpr int conflict = 75;
constexpr int lock_lost = 79;

// A scratch directory for the commands' files, removed at the end.
struct scratch
{
    std::string dir;
    scratch()
    {
        char name[] = "/tmp/redlock-run-test-XXXXXX";
        if (::mkdtemp(name) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        dir = name;
    }
    ~scratch() { std::system(("rm -rf '" + dir + "'").c_str()); }
    std::string file(const std::string& name) const { return dir + "/" + name; }
};

std::vector<std::string> run_args(const local_masters& m, std::vector<std::string> options, const std::string& resource,
                                  std::vector<std::string> command)
{
    std::vector<std::string> args{REDLOCK_RUN_PATH};
    for (const auto& uri : m.uris())
    {
        args.push_back("--master");
        args.push_back(uri);
    }
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(resource);
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
}

std::vector<std::string> sh(const std::string& script)
{
    return {"/bin/sh", "-c", script};
}

// Another owner holds `key` on every master.
void hold_elsewhere(const local_masters& m, const std::string& key)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        m.command(i, {"SET", key, "someone-else", "PX", "60000"});
}

// The other owner's keys are untouched.
bool still_elsewhere(const local_masters& m, const std::string& key)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        if (m.command(i, {"GET", key}) != "$12\r\nsomeone-else\r\n")
            return false;
    return true;
}

// No master holds `key` any more.
bool no_key_left(const local_masters& m, const std::string& key)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        if (m.command(i, {"EXISTS", key}) != ":0\r\n")
            return false;
    return true;
}

}  // namespace

TEST_CASE("redlock-run: COMMAND's status is passed through and no key remains", "[tool][live]")
{
    local_masters m;
    tool_process run(run_args(m, {}, "job:status", sh("exit 7")));
    CHECK(run.wait_exit(20s) == 7);
    CHECK(no_key_left(m, "job:status"));

    tool_process missing(run_args(m, {}, "job:status", {"/nonexistent/command"}));
    CHECK(missing.wait_exit(20s) == 127);
    CHECK_THAT(missing.error_output(), Catch::Contains("/nonexistent/command"));
    CHECK(no_key_left(m, "job:status"));
}

TEST_CASE("redlock-run: with --wait 0 a held lock exits with the conflict status, leaving the holder's keys",
          "[tool][live]")
{
    local_masters m;
    hold_elsewhere(m, "job:held");
    scratch s;

    tool_process run(run_args(m, {}, "job:held", sh("touch " + s.file("ran"))));
    CHECK(run.wait_exit(20s) == conflict);
    // Never silent: one line says why COMMAND did not run; --quiet leaves it out.
    CHECK_THAT(run.error_output(), Catch::Contains("redlock-run: job:held is held by someone else, /bin/sh not run\n"));
    tool_process custom(run_args(m, {"--conflict-exit-code", "3"}, "job:held", sh("touch " + s.file("ran"))));
    CHECK(custom.wait_exit(20s) == 3);
    tool_process quiet(run_args(m, {"--quiet"}, "job:held", sh("touch " + s.file("ran"))));
    CHECK(quiet.wait_exit(20s) == conflict);
    CHECK(quiet.error_output().empty());

    CHECK(read_text(s.file("ran")).empty());
    CHECK_FALSE(std::ifstream(s.file("ran")).good());  // COMMAND never started
    CHECK(still_elsewhere(m, "job:held"));
}

TEST_CASE("redlock-run: two runs exclude each other, the second waiting for the first's release", "[tool][live]")
{
    local_masters m;
    scratch s;
    auto log = s.file("log");
    auto script = "echo start >> " + log + "; sleep 0.5; echo end >> " + log;

    tool_process first(run_args(m, {"--wait", "30s"}, "job:shared", sh(script)));
    tool_process second(run_args(m, {"--wait", "30s"}, "job:shared", sh(script)));
    CHECK(first.wait_exit(30s) == 0);
    CHECK(second.wait_exit(30s) == 0);
    CHECK(read_text(log) == "start\nend\nstart\nend\n");
    CHECK(no_key_left(m, "job:shared"));
}

TEST_CASE("redlock-run: a lock taken over on a majority stops COMMAND before the TTL and exits 79",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto started = s.file("started"), got_term = s.file("got-term");

    // Starts redlock-run with --ttl 6s (extended every 2 s, so a take-over is seen within about
    // 2 s) and a --kill-after longer than the TTL; once COMMAND has started, overwrites the
    // key on 3 of the 5 masters. Returns when the take-over happened.
    auto start_and_steal = [&](const std::string& script) {
        auto run = std::make_unique<tool_process>(
            run_args(m, {"--ttl", "6s", "--kill-after", "30s"}, "job:stolen", sh(script)));
        REQUIRE(eventually([&] { return std::ifstream(started).good(); }, 20s));
        for (std::size_t i = 0; i < 3; ++i)
            m.command(i, {"SET", "job:stolen", "thief"});
        return std::pair(std::move(run), std::chrono::steady_clock::now());
    };

    SECTION("COMMAND stops on SIGTERM")
    {
        auto [run, stolen_at] = start_and_steal("trap 'touch " + got_term + "; exit 3' TERM; touch " + started +
                                                "; sleep 20 & wait");
        CHECK(run->wait_exit(20s) == lock_lost);
        // The end-to-end promise of docs/cli.md: stopped before the keys' TTL, although
        // --kill-after is longer.
        CHECK(std::chrono::steady_clock::now() - stolen_at < 6s);
        CHECK(std::ifstream(got_term).good());
        CHECK_THAT(run->error_output(), Catch::Contains("lost the lock"));
    }
    SECTION("COMMAND ignores SIGTERM: SIGKILL comes before the keys expire")
    {
        auto [run, stolen_at] = start_and_steal("trap '' TERM; touch " + started + "; sleep 20");
        CHECK(run->wait_exit(20s) == lock_lost);
        CHECK(std::chrono::steady_clock::now() - stolen_at < 12s);  // not the 20 s of sleep
        CHECK_THAT(run->error_output(), Catch::Contains("SIGKILL"));
    }
    // The thief's keys are left alone; ours are gone from the other masters.
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(m.command(i, {"GET", "job:stolen"}) == "$5\r\nthief\r\n");
    CHECK(m.command(3, {"EXISTS", "job:stolen"}) == ":0\r\n");
    CHECK(m.command(4, {"EXISTS", "job:stolen"}) == ":0\r\n");
}

TEST_CASE("redlock-run: --max-hold stops COMMAND with SIGTERM while the lock is still held, then releases it and exits 79",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto started = s.file("started"), got_term = s.file("got-term"), may_exit = s.file("may-exit");
    // A 10 s TTL and a 1 s --max-hold: COMMAND must get SIGTERM while the keys are still on the
    // masters (not when they expire), and it may take its time to stop: it waits for the test.
    tool_process run(run_args(m, {"--ttl", "10s", "--max-hold", "1s", "--kill-after", "30s"}, "job:bounded",
                              sh("trap 'touch " + got_term + "; while [ ! -e " + may_exit + " ]; do sleep 0.05; done; exit 3' TERM; "
                                 "touch " + started + "; sleep 30 & wait")));
    REQUIRE(eventually([&] { return std::ifstream(started).good(); }, 20s));
    REQUIRE(eventually([&] { return std::ifstream(got_term).good(); }, 20s));
    // SIGTERM came, and the lock is still held on every master: COMMAND has the rest of the
    // validity to stop.
    for (std::size_t i = 0; i < m.size(); ++i)
        CHECK(m.command(i, {"EXISTS", "job:bounded"}) == ":1\r\n");
    std::ofstream(may_exit).put('\n');
    CHECK(run.wait_exit(20s) == lock_lost);
    CHECK_THAT(run.error_output(), Catch::Contains("--max-hold"));
    CHECK_THAT(run.error_output(), !Catch::Contains("SIGKILL"));
    // Released once COMMAND exited, not left to expire.
    CHECK(no_key_left(m, "job:bounded"));
}

namespace {

// The process is gone: no such PID, or a zombie nobody reaped yet (its parent died).
bool process_gone(pid_t pid)
{
    if (pid <= 0 || ::kill(pid, 0) != 0)
        return true;
    const auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto close_paren = stat.rfind(')');
    return close_paren == std::string::npos || stat.compare(close_paren, 3, ") Z") == 0;
}

// COMMAND's shell, which wrote its PID (it leads COMMAND's process group).
pid_t command_pid(const scratch& s)
{
    const auto text = read_text(s.file("pid"));
    return text.empty() ? -1 : static_cast<pid_t>(std::stol(text));
}

}  // namespace

// cli.md: on a loss or at --max-hold, COMMAND's whole process group is stopped before the lock
// goes to others; a child that ignores SIGTERM does not outlive COMMAND's own exit.
TEST_CASE("redlock-run: --max-hold leaves no process of COMMAND's group behind, even one that ignores SIGTERM",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto child = s.file("child");
    // COMMAND (the group's leader) exits at SIGTERM; its child ignores SIGTERM (as does the
    // sleep it runs) and would run for 30 s.
    tool_process run(run_args(m, {"--ttl", "10s", "--max-hold", "1s", "--kill-after", "30s"}, "job:stragglers",
                              sh("sh -c 'trap \"\" TERM; sleep 30' & echo $! > " + child + "; wait")));
    REQUIRE(eventually([&] { return !read_text(child).empty(); }, 20s));
    const auto pid = static_cast<pid_t>(std::stol(read_text(child)));
    CHECK(run.wait_exit(20s) == lock_lost);
    // Gone by the time redlock-run has released the lock and exited.
    CHECK(eventually([&] { return process_gone(pid); }, 2s));
    CHECK(no_key_left(m, "job:stragglers"));
    if (!process_gone(pid))
        ::kill(pid, SIGKILL);
}

TEST_CASE("redlock-run: killed itself (SIGKILL), it leaves no COMMAND running: SIGTERM at once, SIGKILL by the validity end",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto started = s.file("started"), got_term = s.file("got-term");
    std::unique_ptr<tool_process> run;
    pid_t command = -1;
    // The shell's own PID is its group's: stopped at the end whatever happened.
    struct stop_group
    {
        pid_t& pid;
        ~stop_group()
        {
            if (pid > 1)
                ::kill(-pid, SIGKILL);
        }
    } stop{command};
    auto start_and_kill = [&](std::vector<std::string> options, const std::string& script) {
        run = std::make_unique<tool_process>(run_args(m, std::move(options), "job:orphan",
                                                      sh("echo $$ > " + s.file("pid") + "; " + script)));
        REQUIRE(eventually([&] { return std::ifstream(started).good(); }, 20s));
        command = command_pid(s);
        REQUIRE(command > 1);
        run->signal(SIGKILL);
        CHECK(run->wait_exit(20s) == 128 + SIGKILL);
    };

    SECTION("COMMAND stops on SIGTERM")
    {
        start_and_kill({"--ttl", "30s"}, "trap 'touch " + got_term + "; kill $!; exit 3' TERM; touch " + started +
                                             "; sleep 30 & wait");
        CHECK(eventually([&] { return std::ifstream(got_term).good(); }, 10s));
        CHECK(eventually([&] { return process_gone(command); }, 10s));
    }
    SECTION("COMMAND ignores SIGTERM: SIGKILL at the validity end, although --kill-after is longer")
    {
        // A 3 s TTL against a 60 s --kill-after: gone within 20 s means the validity set the time.
        start_and_kill({"--ttl", "3s", "--kill-after", "60s"}, "trap '' TERM; touch " + started + "; sleep 30");
        CHECK(eventually([&] { return process_gone(command); }, 20s));
    }
}

TEST_CASE("redlock-run: SIGTERM, SIGINT and SIGHUP reach COMMAND, and the lock is released after it exits", "[tool][live]")
{
    local_masters m;
    scratch s;
    auto started = s.file("started"), got = s.file("got");
    int signo = GENERATE(SIGTERM, SIGINT, SIGHUP);

    // The trap stops the background sleep too: a non-interactive sh starts it with SIGINT
    // ignored, and left running it would outlive the test (holding its output open).
    tool_process run(run_args(m, {}, "job:signal",
                              sh("trap 'echo got >> " + got + "; kill $!; exit 3' TERM INT HUP; touch " + started +
                                 "; sleep 20 & wait")));
    REQUIRE(eventually([&] { return std::ifstream(started).good(); }, 20s));
    run.signal(signo);
    CHECK(run.wait_exit(20s) == 3);
    CHECK(read_text(got) == "got\n");
    CHECK(no_key_left(m, "job:signal"));
}

TEST_CASE("redlock-run: a signal while waiting for a held lock ends the wait and takes nothing", "[tool][live]")
{
    local_masters m;
    hold_elsewhere(m, "job:busy");
    tool_process run(run_args(m, {"--wait", "60s"}, "job:busy", {"true"}));
    // Waiting: after the refusal it turned on client tracking (the 't' flag) to be told of
    // the release, on the masters whose refusal it read (not always master 0: an answer that
    // comes after the outcome is decided is not waited for).
    auto tracking_somewhere = [&] {
        for (std::size_t i = 0; i < m.size(); ++i)
        {
            const auto clients = m.command(i, {"CLIENT", "LIST", "TYPE", "normal"});
            for (std::size_t at = clients.find("name=redlock-run"); at != std::string::npos;
                 at = clients.find("name=redlock-run", at + 1))
            {
                const auto line = clients.substr(at, clients.find('\n', at) - at);
                if (line.find(" flags=t ") != std::string::npos)
                    return true;
            }
        }
        return false;
    };
    REQUIRE(eventually(tracking_somewhere, 20s));
    run.signal(SIGINT);
    CHECK(run.wait_exit(20s) == 128 + SIGINT);
    CHECK(still_elsewhere(m, "job:busy"));
}

TEST_CASE("redlock-run: --fencing gives COMMAND a token that grows with each holder", "[tool][live]")
{
    local_masters m;
    scratch s;
    auto out = s.file("tokens");
    for (int i = 0; i < 2; ++i)
    {
        tool_process run(run_args(m, {"--fencing"}, "job:fenced", sh("echo $REDLOCK_FENCING_TOKEN >> " + out)));
        CHECK(run.wait_exit(20s) == 0);
    }
    unsigned long first = 0, second = 0;
    REQUIRE(std::sscanf(read_text(out).c_str(), "%lu\n%lu", &first, &second) == 2);
    CHECK(first >= 1);
    CHECK(second > first);
}

TEST_CASE("redlock-run: a password from a file or the environment, never from the command line", "[tool][live]")
{
    local_masters m({.count = 3, .extra_config = {"requirepass s3cret-pw"}, .admin_password = "s3cret-pw"});
    scratch s;
    auto pw = s.file("password");
    std::ofstream(pw) << "s3cret-pw\n";

    tool_process from_file(run_args(m, {"--password-file", pw}, "job:auth", {"true"}));
    CHECK(from_file.wait_exit(20s) == 0);
    tool_process from_env(run_args(m, {}, "job:auth", {"true"}), {"REDLOCK_PASSWORD=s3cret-pw"});
    CHECK(from_env.wait_exit(20s) == 0);

    // Without it: the masters refuse the connections, and no quorum is reached (69).
    tool_process none(run_args(m, {}, "job:auth", {"true"}));
    CHECK(none.wait_exit(20s) == 69);

    std::vector<std::string> in_argv{REDLOCK_RUN_PATH, "--master",
                                     "redis://:s3cret-pw@127.0.0.1:" + std::to_string(m.port(0)), "job:auth", "--",
                                     "true"};
    tool_process refused(in_argv);
    CHECK(refused.wait_exit(20s) == 64);
    CHECK_THAT(refused.error_output(), Catch::Contains("--password-file") && !Catch::Contains("s3cret"));
    CHECK(no_key_left(m, "job:auth"));
}

TEST_CASE("redlock-run: a master that can lose lock keys is named on stderr once, without --verbose",
          "[tool][live]")
{
    local_masters m({.count = 3,
                     .extra_config = {"requirepass s3cret-pw", "maxmemory 100mb", "maxmemory-policy allkeys-lru",
                                      "appendonly yes"},
                     .admin_password = "s3cret-pw"});
    scratch s;
    auto pw = s.file("password");
    std::ofstream(pw) << "s3cret-pw\n";

    tool_process run(run_args(m, {"--password-file", pw}, "job:evicting", {"true"}));
    CHECK(run.wait_exit(20s) == 0);
    const auto err = run.error_output();
    CHECK_THAT(err, Catch::Contains("warning: master 0 (redis://") && Catch::Contains("eviction can drop lock keys") &&
                        !Catch::Contains("s3cret") && !Catch::Contains("persistence"));
    std::size_t lines = 0;
    for (auto at = err.find("eviction can drop"); at != std::string::npos; at = err.find("eviction can drop", at + 1))
        ++lines;
    CHECK(lines == 3);
    CHECK(no_key_left(m, "job:evicting"));

    // --quiet (for cron, which mails what a job prints) leaves them out.
    tool_process quiet(run_args(m, {"--password-file", pw, "--quiet"}, "job:evicting", {"true"}));
    CHECK(quiet.wait_exit(20s) == 0);
    CHECK_THAT(quiet.error_output(), !Catch::Contains("warning"));
    CHECK(no_key_left(m, "job:evicting"));
}
