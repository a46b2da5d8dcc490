// redlock-run end to end: the binary against real masters started by the test (docs/cli.md).
#include "run_helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace redlock::test;
using namespace std::chrono_literals;

namespace {

constexpr int conflict = conflict_status;
constexpr int lock_lost = lock_lost_status;

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

TEST_CASE("redlock-run: with --wait 0 a held lock exits with the conflict status, leaving the "
          "holder's keys",
          "[tool][live]")
{
    local_masters m;
    hold_elsewhere(m, "job:held");
    scratch s;

    tool_process run(run_args(m, {}, "job:held", sh("touch " + s.file("ran"))));
    CHECK(run.wait_exit(20s) == conflict);
    // Never silent: one line says why COMMAND did not run; --quiet leaves it out.
    CHECK_THAT(run.error_output(),
               Catch::Contains("redlock-run: job:held is held by someone else, /bin/sh not run\n"));
    tool_process custom(
        run_args(m, {"--conflict-exit-code", "3"}, "job:held", sh("touch " + s.file("ran"))));
    CHECK(custom.wait_exit(20s) == 3);
    tool_process quiet(run_args(m, {"--quiet"}, "job:held", sh("touch " + s.file("ran"))));
    CHECK(quiet.wait_exit(20s) == conflict);
    CHECK(quiet.error_output().empty());

    CHECK(read_text(s.file("ran")).empty());
    CHECK_FALSE(std::ifstream(s.file("ran")).good());  // COMMAND never started
    CHECK(still_elsewhere(m, "job:held"));
}

TEST_CASE("redlock-run: two runs exclude each other, the second waiting for the first's release",
          "[tool][live]")
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

// Two redlock-run of RESOURCE with `flags` whose COMMANDs write "start" to `log`, wait for the
// file `go`, then write "end": made once both have started (they run together: neither can end
// before `go` exists). finish() makes `go` and checks that both exit 0.
struct together_runs
{
    scratch s;
    std::string log = s.file("log");
    std::string go = s.file("go");
    tool_process first, second;

    together_runs(const local_masters& m, const std::vector<std::string>& flags,
                  const std::string& resource)
        : first(run_args(m, flags, resource, sh(script()))),
          second(run_args(m, flags, resource, sh(script())))
    {
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (count_lines(read_text(log), "start") < 2 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(20ms);
        REQUIRE(count_lines(read_text(log), "start") == 2);
    }

    std::string script() const
    {
        return "echo start >> " + log + "; while [ ! -e " + go + " ]; do sleep 0.05; done; " +
               "echo end >> " + log;
    }

    void finish()
    {
        std::ofstream(go).put('\n');
        CHECK(first.wait_exit(20s) == 0);
        CHECK(second.wait_exit(20s) == 0);
    }
};

TEST_CASE("redlock-run: --permits 2 runs two COMMANDs at once, and a third exits with the "
          "conflict status while they run, and no permit key is left",
          "[tool][live]")
{
    local_masters m;
    together_runs runs(m, {"--permits", "2"}, "job:pool");
    const auto& log = runs.log;

    tool_process third(run_args(m, {"--permits", "2"}, "job:pool", sh("echo third >> " + log)));
    CHECK(third.wait_exit(20s) == conflict);
    CHECK_THAT(third.error_output(),
               Catch::Contains("the 2 permits of job:pool are held by others, /bin/sh not run"));

    runs.finish();
    CHECK(read_text(log) == "start\nstart\nend\nend\n");
    CHECK(no_key_left(m, "{job:pool}:permit:0"));
    CHECK(no_key_left(m, "{job:pool}:permit:1"));
}

TEST_CASE("redlock-run: --shared runs two COMMANDs at once, a run without it exits with the "
          "conflict status while they run and runs once they are done, and no key is left",
          "[tool][live]")
{
    local_masters m;
    together_runs runs(m, {"--shared"}, "job:doc");
    const auto& log = runs.log;

    tool_process exclusive(run_args(m, {}, "job:doc", sh("echo exclusive >> " + log)));
    CHECK(exclusive.wait_exit(20s) == conflict);
    CHECK_THAT(exclusive.error_output(),
               Catch::Contains("job:doc is held by someone else, /bin/sh not run"));

    runs.finish();
    tool_process after(run_args(m, {}, "job:doc", sh("echo exclusive >> " + log)));
    CHECK(after.wait_exit(20s) == 0);
    CHECK(read_text(log) == "start\nstart\nend\nend\nexclusive\n");
    CHECK(no_key_left(m, "job:doc"));
    CHECK(no_key_left(m, "{job:doc}:readers"));
    CHECK(no_key_left(m, "{job:doc}:intent"));
}

// cli.md, "When the lock is lost": a take-over is noticed at the next extension (TTL/3), the
// whole group gets SIGTERM and SIGCONT at once, SIGKILL after --kill-after or at the validity
// left, whichever is sooner, a straggler of the group SIGKILL once COMMAND has exited; exit 79.
TEST_CASE("redlock-run: a lock taken over on a majority stops COMMAND before the TTL and exits 79",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto started = s.file("started"), got = s.file("got");

    // Starts redlock-run with --ttl 3s (extended every second) and `kill_after`; once COMMAND
    // has started (and `ready` exists), overwrites the key on 3 of the 5 masters. Returns
    // when the take-over happened.
    auto start_and_steal = [&](const std::string& kill_after, const std::string& script,
                               const std::string& ready) {
        auto run = std::make_unique<tool_process>(run_args(
            m, {"--ttl", "3s", "--kill-after", kill_after}, "job:stolen",
            sh("echo $$ > " + s.file("pid") + "\n" + script + "\ntouch " + started + "\nwait")));
        REQUIRE(eventually(
            [&] { return s.exists("started") && s.exists(ready) && pid_in(s.file("pid")) > 1; },
            20s));
        return run;
    };
    // COMMAND and its child both ignore SIGTERM (the child would run for 30 s).
    auto start_deaf = [&](const std::string& kill_after) {
        auto run = start_and_steal(kill_after,
                                   "trap '' TERM; sh -c 'echo $$ > " + s.file("child") +
                                       "; exec sleep 30' >/dev/null 2>&1 &",
                                   "child");
        REQUIRE(eventually([&] { return pid_in(s.file("child")) > 1; }, 20s));
        return std::pair(std::move(run), pid_in(s.file("child")));
    };
    auto steal = [&] {
        for (std::size_t i = 0; i < 3; ++i)
            m.command(i, {"SET", "job:stolen", "thief"});
        return std::chrono::steady_clock::now();
    };
    const std::string lost_line =
        "redlock-run: lost the lock on job:stolen \\(.+\\): stopping /bin/sh";
    const std::string kill_line = "redlock-run: /bin/sh did not stop in time: SIGKILL";
    // Once redlock-run has exited: `left` (a process COMMAND started) is gone within 500 ms, and
    // redlock-run said `kills` times that it sent SIGKILL (and `lost` times that it lost the
    // lock, when given); `left` is killed if it is still there.
    auto check_end = [&](const tool_process& run, pid_t left, std::optional<std::size_t> lost,
                         std::size_t kills) {
        CHECK(eventually([&] { return process_gone(left); }, 500ms));
        const auto err = run.error_output();
        if (lost)
            CHECK(count_lines(err, lost_line) == *lost);
        CHECK(count_lines(err, kill_line) == kills);
        if (!process_gone(left))
            ::kill(left, SIGKILL);
    };

    SECTION("COMMAND stops on SIGTERM, sent at once and followed by SIGCONT, to the whole group")
    {
        // The leader and a child record the SIGTERM (the leader exits once the child has: its
        // exit sets off the SIGKILL of what is left); a second child ignores it and would run
        // for 30 s. The group is stopped (SIGSTOP) before the take-over: only the SIGCONT after
        // the SIGTERM lets the traps run. --kill-after is longer than the test.
        auto run = start_and_steal("30s",
                                   "trap 'echo leader >> " + got +
                                       "; wait $child; exit 3' TERM\n"
                                       "sh -c 'trap \"echo child >> " +
                                       got + "; exit 0\" TERM; touch " + s.file("child") +
                                       "; while :; do sleep 0.05; done' >/dev/null 2>&1 &\n"
                                       "child=$!\n"
                                       "sh -c 'trap \"\" TERM; echo $$ > " +
                                       s.file("straggler") + "; exec sleep 30' >/dev/null 2>&1 &",
                                   "child");
        REQUIRE(eventually([&] { return pid_in(s.file("straggler")) > 1; }, 20s));
        const pid_t leader = pid_in(s.file("pid")), straggler = pid_in(s.file("straggler"));
        ::kill(-leader, SIGSTOP);
        REQUIRE(eventually([&] { return process_state(leader) == 'T'; }, 5s));
        const auto stolen_at = steal();
        // Noticed at the next extension, TTL/3 after the previous one: within 1 s, + 1 s of
        // margin. A runner that never extended would see the loss ~3 s after acquiring.
        REQUIRE(eventually(
            [&] {
                return read_text(got) == "child\nleader\n" || read_text(got) == "leader\nchild\n";
            },
            20s));
        CHECK(seconds_since(stolen_at) < 2.0);
        CHECK(run->wait_exit(20s) == lock_lost);  // COMMAND exited 3
        // The straggler got SIGKILL once COMMAND had exited, before the release: gone by the
        // time redlock-run is, not at the validity end (~2 s later) nor after --kill-after.
        check_end(*run, straggler, 1, 0);
    }
    SECTION("COMMAND and its child ignore SIGTERM: SIGKILL to the group at the validity left, "
            "before the TTL")
    {
        auto [run, child] = start_deaf("30s");
        const auto stolen_at = steal();
        const auto lost_at = when_printed(*run, "lost the lock", 20s);
        REQUIRE(lost_at);
        CHECK(run->wait_exit(20s) == lock_lost);
        const auto exited_at = std::chrono::steady_clock::now();
        // The validity ends at most a TTL after the steal (the last extension came before it):
        // 3 s + 0.5 s of margin, against --kill-after's 30 s. And not at once: the validity
        // left at the loss was about 2 s (one extension period spent of 3 s).
        CHECK(std::chrono::duration<double>(exited_at - stolen_at).count() < 3.5);
        CHECK(std::chrono::duration<double>(exited_at - *lost_at).count() > 1.0);
        check_end(*run, child, 1, 1);
    }
    SECTION("a --kill-after shorter than the validity left sets the SIGKILL")
    {
        auto [run, child] = start_deaf("300ms");
        steal();
        const auto lost_at = when_printed(*run, "lost the lock", 20s);
        REQUIRE(lost_at);
        CHECK(run->wait_exit(20s) == lock_lost);
        // 300 ms after the SIGTERM (the line is read up to ~20 ms late), well before the ~2 s
        // of validity left.
        const auto grace = seconds_since(*lost_at);
        CHECK(grace > 0.25);
        CHECK(grace < 1.2);
        check_end(*run, child, std::nullopt, 1);
    }
    // The thief's keys are left alone; ours are gone from the other masters.
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(m.command(i, {"GET", "job:stolen"}) == "$5\r\nthief\r\n");
    CHECK(m.command(3, {"EXISTS", "job:stolen"}) == ":0\r\n");
    CHECK(m.command(4, {"EXISTS", "job:stolen"}) == ":0\r\n");
}

TEST_CASE("redlock-run: --max-hold stops COMMAND with SIGTERM while the lock is still held, then "
          "releases it and exits 79",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto started = s.file("started"), got_term = s.file("got-term"), may_exit = s.file("may-exit");
    // A 10 s TTL and a 1 s --max-hold: COMMAND must get SIGTERM while the keys are still on the
    // masters (not when they expire), and it may take its time to stop: it waits for the test.
    tool_process run(run_args(m, {"--ttl", "10s", "--max-hold", "1s", "--kill-after", "30s"},
                              "job:bounded",
                              sh("trap 'touch " + got_term + "; while [ ! -e " + may_exit +
                                 " ]; do sleep 0.05; done; exit 3' TERM; "
                                 "touch " +
                                 started + "; sleep 30 & wait")));
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

// cli.md: on a loss or at --max-hold, COMMAND's whole process group is stopped before the lock
// goes to others; a child that ignores SIGTERM does not outlive COMMAND's own exit.
// cli.md, "Options" (--max-hold): at D the extensions stop and COMMAND gets SIGTERM; one that
// does not stop gets SIGKILL before the validity left runs out (--kill-after is longer).
TEST_CASE("redlock-run: at --max-hold the extensions stop, SIGTERM comes then, and SIGKILL before "
          "the validity ends",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    // --ttl 2s (extended every ~0.67 s), --max-hold 1s. The trap only records the SIGTERM: the
    // loop goes on, as a COMMAND that does not stop would.
    tool_process run(run_args(m, {"--ttl", "2s", "--max-hold", "1s", "--kill-after", "30s"},
                              "job:maxhold",
                              sh("trap 'touch " + s.file("got-term") + "' TERM; touch " +
                                 s.file("started") + "; while :; do sleep 0.05; done")));
    REQUIRE(eventually([&] { return s.exists("started"); }, 20s));
    const auto started_at = std::chrono::steady_clock::now();
    REQUIRE(eventually([&] { return s.exists("got-term"); }, 20s));
    const auto term_at = std::chrono::steady_clock::now();
    // At --max-hold, counted from the holder's start (just before COMMAND's): 1 s, + 0.5 s of
    // margin. (The trap runs when the loop's sleep ends, within 50 ms.)
    CHECK(std::chrono::duration<double>(term_at - started_at).count() > 0.9);
    CHECK(std::chrono::duration<double>(term_at - started_at).count() < 1.5);
    std::vector<long> left;
    for (std::size_t i = 0; i < m.size(); ++i)
        left.push_back(pttl(m, i, "job:maxhold"));
    // No extension after the SIGTERM: 0.8 s later (more than an extension period) every PTTL
    // has gone down by about that much; an extension would have put it back near 2000 ms.
    std::this_thread::sleep_until(term_at + 800ms);
    for (std::size_t i = 0; i < m.size(); ++i)
    {
        INFO("master " << i << ": " << left[i] << " ms left at the SIGTERM");
        REQUIRE(left[i] > 900);  // the keys were still there, with time to spare
        CHECK(pttl(m, i, "job:maxhold") <= left[i] - 700);
    }
    // SIGKILL by the validity end, which comes before the keys' expiry (term_at + left).
    const auto expiry =
        term_at + std::chrono::milliseconds(*std::min_element(left.begin(), left.end()));
    CHECK(run.wait_exit(20s) == lock_lost);
    CHECK(std::chrono::steady_clock::now() < expiry + 200ms);
    const auto err = run.error_output();
    CHECK(count_lines(
              err,
              R"(redlock-run: held job:maxhold for --max-hold \(1\.000 s\): stopping /bin/sh)") ==
          1);
    CHECK(count_lines(err, "redlock-run: /bin/sh did not stop in time: SIGKILL") == 1);
    CHECK(no_key_left(m, "job:maxhold"));
}

TEST_CASE("redlock-run: --max-hold leaves no process of COMMAND's group behind, even one that "
          "ignores SIGTERM",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto child = s.file("child");
    // COMMAND (the group's leader) exits at SIGTERM; its child ignores SIGTERM (as does the
    // sleep it runs) and would run for 30 s.
    tool_process run(
        run_args(m, {"--ttl", "10s", "--max-hold", "1s", "--kill-after", "30s"}, "job:stragglers",
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

namespace {

// While it lives, this process adopts the orphans of its descendants (PR_SET_CHILD_SUBREAPER):
// COMMAND's group, once redlock-run is killed, keeps a parent in this session and is not an
// orphaned process group, to which the kernel itself would send SIGHUP and SIGCONT when it has a
// stopped member (and hide a guard that sends no SIGCONT). The adopted zombies are reaped at the end.
struct adopt_orphans
{
    adopt_orphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
    ~adopt_orphans()
    {
        ::prctl(PR_SET_CHILD_SUBREAPER, 0);
        reap();
    }
    // Reaps the adopted processes that have exited, as init would: a zombie still counts as a
    // member of its process group, which the guard waits to see gone.
    static void reap()
    {
        for (pid_t pid : children_of(::getpid()))
            if (process_state(pid) == 'Z')
                ::waitpid(pid, nullptr, WNOHANG);
    }
    adopt_orphans(const adopt_orphans&) = delete;
    adopt_orphans& operator=(const adopt_orphans&) = delete;
};

}  // namespace

// cli.md, "When redlock-run itself dies": the guard, in a process group of its own and deaf to
// SIGINT, SIGTERM and SIGHUP, sends COMMAND's group SIGTERM and SIGCONT at once, then SIGKILL
// at the validity end that the last extension set, or after --kill-after if that comes first.
TEST_CASE("redlock-run: killed itself (SIGKILL), it leaves no COMMAND running: SIGTERM at once, "
          "SIGKILL by the validity end",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    adopt_orphans adopt;
    auto got = s.file("got");
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
    auto start = [&](std::vector<std::string> options, const std::string& script) {
        run = std::make_unique<tool_process>(
            run_args(m, std::move(options), "job:orphan",
                     sh("echo $$ > " + s.file("pid") + "\n" + script + "\ntouch " +
                        s.file("started") + "\nwait")));
        REQUIRE(
            eventually([&] { return s.exists("started") && pid_in(s.file("child")) > 1; }, 20s));
        command = pid_in(s.file("pid"));
        REQUIRE(command > 1);
        return std::pair(command, pid_in(s.file("child")));
    };

    SECTION(
        "COMMAND's whole group gets SIGTERM and SIGCONT at once from a guard in a group of its own")
    {
        // --kill-after and the TTL are longer than the test: only the guard's SIGTERM at once
        // can stop COMMAND in time, and only its SIGCONT lets the stopped group's traps run.
        auto [leader, child] = start({"--ttl", "30s", "--kill-after", "30s"},
                                     "trap 'echo leader >> " + got +
                                         "; exit 3' TERM\n"
                                         "sh -c 'trap \"echo child >> " +
                                         got + "; exit 0\" TERM; echo $$ > " + s.file("child") +
                                         "; while :; do sleep 0.05; done' >/dev/null 2>&1 &");
        // The guard: redlock-run's other child, leading its own process group, ignoring the
        // signals that a Ctrl-C or a kill of redlock-run's group would send.
        std::vector<pid_t> guards;
        for (pid_t p : children_of(run->pid()))
            if (p != leader)
                guards.push_back(p);
        REQUIRE(guards.size() == 1);
        const pid_t guard = guards.front();
        const auto f = stat_fields(guard);
        REQUIRE(f.size() > 2);
        CHECK(f[2] == std::to_string(guard));
        CHECK(f[2] != std::to_string(run->pid()));
        for (int signo : {SIGINT, SIGTERM, SIGHUP})
            CHECK(ignores(guard, signo));

        ::kill(-leader, SIGSTOP);
        REQUIRE(eventually([&, leader = leader] { return process_state(leader) == 'T'; }, 5s));
        const auto killed_at = std::chrono::steady_clock::now();
        run->signal(SIGKILL);
        CHECK(run->wait_exit(20s) == 128 + SIGKILL);
        CHECK(eventually(
            [&] {
                return read_text(got) == "leader\nchild\n" || read_text(got) == "child\nleader\n";
            },
            5s));
        CHECK(seconds_since(killed_at) < 1.5);  // at once: 30 s was the next deadline
        CHECK(eventually(
            [&, leader = leader, child = child] {
                adopt_orphans::reap();
                return process_gone(leader) && process_gone(child);
            },
            1s));
        CHECK(eventually(
            [&] {
                adopt_orphans::reap();
                return process_gone(guard);
            },
            1s));
    }
    SECTION("COMMAND ignores SIGTERM: SIGKILL at the validity end the last extension set, although "
            "--kill-after is longer")
    {
        // --ttl 2s: extended every ~0.67 s. redlock-run is killed after its second extension,
        // so the validity end the guard knows is ~1.3 s later than the first one.
        auto [leader, child] = start({"-v", "--ttl", "2s", "--kill-after", "60s"},
                                     "trap '' TERM\nsh -c 'echo $$ > " + s.file("child") +
                                         "; exec sleep 30' >/dev/null 2>&1 &");
        const auto started_at = std::chrono::steady_clock::now();
        REQUIRE(eventually(
            [&] { return count_lines(run->error_output(), "redlock-run: extended: .*") >= 2; },
            20s));
        const auto left = std::chrono::milliseconds(pttl(m, 0, "job:orphan"));
        const auto killed_at = std::chrono::steady_clock::now();
        run->signal(SIGKILL);
        CHECK(run->wait_exit(20s) == 128 + SIGKILL);
        // The first validity ended before started_at + 2 s; the extended one ends at the
        // keys' expiry (killed_at + left) at the latest.
        REQUIRE(killed_at + left > started_at + 2500ms);
        std::this_thread::sleep_until(started_at + 2300ms);
        CHECK_FALSE(process_gone(leader));
        CHECK_FALSE(process_gone(child));
        // Gone by the validity end (+ 300 ms: the guard looks every 20 ms), not after the 60 s.
        const auto bound = std::chrono::duration_cast<std::chrono::milliseconds>(
            killed_at + left + 300ms - std::chrono::steady_clock::now());
        CHECK(eventually(
            [&, leader = leader, child = child] {
                adopt_orphans::reap();
                return process_gone(leader) && process_gone(child);
            },
            bound));
    }
}

// cli.md, "What it leaves alone": a normal exit dismisses the guard, which then signals nothing.
TEST_CASE(
    "redlock-run: a normal exit dismisses the guard: what COMMAND left in the background runs on",
    "[tool][live]")
{
    local_masters m;
    scratch s;
    tool_process run(
        run_args(m, {}, "job:background",
                 sh("sleep 5 >/dev/null 2>&1 & echo $! > " + s.file("bg") + "; exit 0")));
    CHECK(run.wait_exit(20s) == 0);
    const pid_t bg = pid_in(s.file("bg"));
    REQUIRE(bg > 1);
    // A guard left behind would have sent the group SIGTERM as soon as redlock-run was gone.
    std::this_thread::sleep_for(500ms);
    CHECK_FALSE(process_gone(bg));
    CHECK(no_key_left(m, "job:background"));
    ::kill(bg, SIGKILL);
}

// cli.md, "Signals": SIGINT, SIGTERM and SIGHUP go to COMMAND's whole process group. The
// child runs in the foreground (a background one would start with SIGINT ignored), and the
// leader's trap runs only once the child has exited: if the signal reached the leader alone,
// the run would not end.
TEST_CASE("redlock-run: SIGTERM, SIGINT and SIGHUP reach COMMAND, and the lock is released after "
          "it exits",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto got = s.file("got");
    int signo = GENERATE(SIGTERM, SIGINT, SIGHUP);

    tool_process run(run_args(m, {}, "job:signal",
                              sh("trap 'echo leader >> " + got +
                                 "; exit 3' TERM INT HUP\n"
                                 "sh -c 'trap \"echo child >> " +
                                 got + "; exit 0\" TERM INT HUP; touch " + s.file("started") +
                                 "; while :; do sleep 0.05; done'")));
    REQUIRE(eventually([&] { return s.exists("started"); }, 20s));
    run.signal(signo);
    CHECK(run.wait_exit(20s) == 3);
    CHECK(read_text(got) == "child\nleader\n");  // each once
    CHECK(no_key_left(m, "job:signal"));
}

TEST_CASE("redlock-run: a signal while waiting for a held lock ends the wait and takes nothing",
          "[tool][live]")
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

// cli.md, "Signals": a signal while acquiring ends the acquisition and takes nothing, even when
// an attempt in flight has set our key on some masters and a paused master has our SET queued.
TEST_CASE("redlock-run: a signal in the middle of an attempt takes nothing, on any master",
          "[tool][live]")
{
    local_masters m;
    const std::string key = "job:midway";
    // Another owner on masters 0 to 2 (on 2 for 0.8 s only): redlock-run waits, woken by the
    // key's changes. Master 2 is paused while the waiter waits, and its key expires meanwhile:
    // the next attempt (woken by the expiry, or by the other owner's SET again on 0 and 1) has
    // 0 and 1 refuse, 3 and 4 grant, and our SET queued on master 2, which grants it when it
    // resumes.
    hold_elsewhere(m, key, 0, 2);
    m.command(2, {"SET", key, "someone-else", "PX", "800"});
    const auto set_at = std::chrono::steady_clock::now();
    tool_process run(run_args(m, {"-v", "--wait", "60s"}, key, {"true"}));
    auto tracking = [&](std::size_t i) {
        return count_lines(m.command(i, {"CLIENT", "LIST", "TYPE", "normal"}),
                           ".*name=redlock-run.*flags=t .*") > 0;
    };
    REQUIRE(eventually([&] { return tracking(0) || tracking(1); }, 20s));
    m.pause(2);
    std::this_thread::sleep_until(set_at + 900ms);
    hold_elsewhere(m, key, 0, 2);
    auto ours_somewhere = [&] {
        for (std::size_t i : {3, 4})
        {
            const auto v = m.command(i, {"GET", key});
            if (v != "$-1\r\n" && v != "_\r\n")
                return true;
        }
        return false;
    };
    const bool midway = eventually(ours_somewhere, 5s);
    run.signal(SIGINT);
    // Master 2 stays paused until redlock-run has gone: what it sent there (our SET, and a
    // release if it sent one) runs only then.
    const auto status = run.wait_exit(20s);
    m.resume(2);
    INFO(run.error_output());
    CHECK(status == 128 + SIGINT);
    CHECK(midway);  // the signal came while our key was set on a master
    // Master 2 has run what was queued: a PING on a new connection is answered after it.
    m.command(2, {"PING"});
    CHECK(still_elsewhere(m, key, 0, 2));
    for (std::size_t i = 2; i < m.size(); ++i)
    {
        INFO("master " << i);
        CHECK(m.command(i, {"EXISTS", key}) == ":0\r\n");
    }
}

TEST_CASE("redlock-run: --fencing gives COMMAND a token that grows with each holder",
          "[tool][live]")
{
    local_masters m;
    scratch s;
    auto out = s.file("tokens");
    for (int i = 0; i < 2; ++i)
    {
        tool_process run(
            run_args(m, {"--fencing"}, "job:fenced", sh("echo $REDLOCK_FENCING_TOKEN >> " + out)));
        CHECK(run.wait_exit(20s) == 0);
    }
    unsigned long first = 0, second = 0;
    REQUIRE(std::sscanf(read_text(out).c_str(), "%lu\n%lu", &first, &second) == 2);
    CHECK(first >= 1);
    CHECK(second > first);

    // COMMAND gets redlock-run's environment; the token replaces an inherited one, and
    // without --fencing there is none.
    const auto env = s.file("env");
    const std::string show =
        "echo \"${REDLOCK_FENCING_TOKEN-none} ${PASSED_THROUGH-none}\" >> " + env;
    tool_process inherited(run_args(m, {"--fencing"}, "job:fenced", sh(show)),
                           {"REDLOCK_FENCING_TOKEN=stale", "PASSED_THROUGH=yes"});
    CHECK(inherited.wait_exit(20s) == 0);
    tool_process unfenced(run_args(m, {}, "job:fenced", sh(show)), {"PASSED_THROUGH=yes"});
    CHECK(unfenced.wait_exit(20s) == 0);
    unsigned long third = 0;
    char rest[64] = {};
    const auto text = read_text(env);
    REQUIRE(std::sscanf(text.c_str(), "%lu yes\n%63[^\n]", &third, rest) == 2);
    CHECK(third > second);
    CHECK(std::string(rest) == "none yes");
}

TEST_CASE("redlock-run: a password from a file or the environment, never from the command line",
          "[tool][live]")
{
    local_masters m(
        {.count = 3, .extra_config = {"requirepass s3cret-pw"}, .admin_password = "s3cret-pw"});
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

    std::vector<std::string> in_argv{
        REDLOCK_RUN_PATH, "--master", "redis://:s3cret-pw@127.0.0.1:" + std::to_string(m.port(0)),
        "job:auth",       "--",       "true"};
    tool_process refused(in_argv);
    CHECK(refused.wait_exit(20s) == 64);
    CHECK_THAT(refused.error_output(),
               Catch::Contains("--password-file") && !Catch::Contains("s3cret"));
    CHECK(no_key_left(m, "job:auth"));
}

TEST_CASE(
    "redlock-run: a master that can lose lock keys is named on stderr once, without --verbose",
    "[tool][live]")
{
    local_masters m({.count = 3,
                     .extra_config = {"requirepass s3cret-pw", "maxmemory 100mb",
                                      "maxmemory-policy allkeys-lru", "appendonly yes"},
                     .admin_password = "s3cret-pw"});
    scratch s;
    auto pw = s.file("password");
    std::ofstream(pw) << "s3cret-pw\n";

    tool_process run(run_args(m, {"--password-file", pw}, "job:evicting", {"true"}));
    CHECK(run.wait_exit(20s) == 0);
    const auto err = run.error_output();
    CHECK_THAT(err, Catch::Contains("warning: master 0 (redis://") &&
                        Catch::Contains("eviction can drop lock keys") &&
                        !Catch::Contains("s3cret") && !Catch::Contains("persistence"));
    std::size_t lines = 0;
    for (auto at = err.find("eviction can drop"); at != std::string::npos;
         at = err.find("eviction can drop", at + 1))
        ++lines;
    CHECK(lines == 3);
    CHECK(no_key_left(m, "job:evicting"));

    // --quiet (for cron, which mails what a job prints) leaves them out.
    tool_process quiet(run_args(m, {"--password-file", pw, "--quiet"}, "job:evicting", {"true"}));
    CHECK(quiet.wait_exit(20s) == 0);
    CHECK_THAT(quiet.error_output(), !Catch::Contains("warning"));
    CHECK(no_key_left(m, "job:evicting"));
}

namespace {

// The values of `key` on the masters: GET's, or a sorted set's members (ZRANGE) for `zset`.
std::vector<std::string> values_of(const local_masters& m, const std::string& key, bool zset)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m.size(); ++i)
    {
        const auto raw =
            zset ? m.command(i, {"ZRANGE", key, "0", "-1"}) : m.command(i, {"GET", key});
        // "$N\r\nvalue\r\n", or "*1\r\n$N\r\nvalue\r\n" for one member.
        const auto dollar = raw.find('$');
        if (dollar == std::string::npos || raw.compare(dollar, 3, "$-1") == 0)
            continue;
        const auto eol = raw.find("\r\n", dollar);
        const auto len = std::stoul(raw.substr(dollar + 1, eol - dollar - 1));
        out.push_back(raw.substr(eol + 2, len));
    }
    return out;
}

}  // namespace

TEST_CASE("redlock-run: --identity publishes the holder in the keys, in every mode, and COMMAND "
          "gets REDLOCK_IDENTITY",
          "[tool][live][identity]")
{
    struct mode
    {
        std::vector<std::string> flags;
        std::vector<std::string> keys;  // where the value may be
        bool zset = false;
    };
    const auto md = GENERATE(values<mode>({
        {{}, {"job:ident"}},
        {{"--fencing"}, {"job:ident"}},
        {{"--wait", "5s"}, {"job:ident"}},
        {{"--permits", "2"}, {"{job:ident}:permit:0", "{job:ident}:permit:1"}},
        {{"--shared"}, {"{job:ident}:readers"}, true},
    }));
    std::string shown;
    for (const auto& f : md.flags)
        shown += f + " ";
    INFO("flags: " << shown);
    local_masters m;
    scratch s;
    const auto out = s.file("identity");
    const auto go = s.file("go");
    auto flags = md.flags;
    flags.insert(flags.end(), {"--identity", "web-3:8080"});
    tool_process run(
        run_args(m, flags, "job:ident",
                 sh("echo \"$REDLOCK_IDENTITY\" > " + out + ".tmp && mv " + out + ".tmp " + out +
                    "; while [ ! -e " + go + " ]; do sleep 0.02; done")));
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!std::ifstream(out).good() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    CHECK(read_text(out) == "web-3:8080\n");
    // While COMMAND runs, a majority of the masters hold `<40 hex> web-3:8080`.
    std::size_t holding = 0;
    const std::regex value("[0-9a-f]{40} web-3:8080");
    for (const auto& k : md.keys)
        for (const auto& v : values_of(m, k, md.zset))
        {
            INFO(k << " = " << v);
            CHECK(std::regex_match(v, value));
            ++holding;
        }
    CHECK(holding >= 3);  // of 5
    std::ofstream(go).put('\n');
    CHECK(run.wait_exit(20s) == 0);
    for (const auto& k : md.keys)
        CHECK(no_key_left(m, k));
    CHECK(no_key_left(m, "job:ident"));

    // Without --identity: no REDLOCK_IDENTITY.
    const auto env = s.file("env");
    tool_process plain(
        run_args(m, md.flags, "job:ident", sh("echo \"${REDLOCK_IDENTITY-none}\" > " + env)));
    CHECK(plain.wait_exit(20s) == 0);
    CHECK(read_text(env) == "none\n");
}
