// redlock-run's exit statuses and what it prints, end to end against docs/cli.md: the binary
// run against masters the tests start, its status and its stderr checked line by line.
#include "run_helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace redlock::test;
using namespace std::chrono_literals;

namespace {

// How a run ended: its status (nullopt: still running after 20 s) and its stderr.
struct run_end
{
    std::optional<int> status;
    std::string err;
};

run_end run_to_end(const std::vector<std::string>& args, const std::vector<std::string>& env = {})
{
    tool_process p(args, env);
    const auto status = p.wait_exit(20s);
    return {status, p.error_output()};
}

// Without the variables that would name masters or a password (from the test's environment).
std::vector<std::string> clean(std::vector<std::string> args)
{
    args.insert(args.begin(), {"/usr/bin/env", "-u", "REDLOCK_MASTERS", "-u", "REDLOCK_PASSWORD"});
    return args;
}

// Masters with persistence on and no eviction: redlock-run prints no deployment warning.
local_masters::options quiet_masters(std::size_t count, std::vector<std::string> extra = {})
{
    extra.insert(extra.begin(), "appendonly yes");
    return {.count = count, .extra_config = std::move(extra)};
}

// REDLOCK_MASTERS with the password in each URI.
std::string masters_with_password(const local_masters& m, const std::string& password)
{
    std::string list;
    for (std::size_t i = 0; i < m.size(); ++i)
        list +=
            (i ? "," : "") + ("redis://:" + password + "@127.0.0.1:" + std::to_string(m.port(i)));
    return "REDLOCK_MASTERS=" + list;
}

constexpr const char* scheme_list =
    "(accepted: redis://, rediss://, unix://, redis-cluster://, rediss-cluster://)";

}  // namespace

// cli.md, "Exit statuses" 64 and 78, and the usage errors: each refused before any master is
// contacted, with one exact message (two lines when it points to --help).
TEST_CASE("redlock-run: usage and configuration errors exit 64 and 78 with their exact message",
          "[tool]")
{
    scratch s;
    const std::string bin = REDLOCK_RUN_PATH;
    const std::string one = "redis://127.0.0.1:1";
    std::ofstream(s.file("bad")) << one << "\n# a comment\n\nnot-a-uri\n";
    std::ofstream(s.file("none")) << "# only comments\n\n";
    std::ofstream(s.file("empty-password")) << "\nsecond line\n";

    struct expected_end
    {
        std::vector<std::string> args;
        std::vector<std::string> env;
        int status;
        std::string err;
    };
    const std::string usage = "usage: redlock-run [OPTIONS] RESOURCE -- COMMAND [ARG...]";
    std::vector<expected_end> cases = {
        // 64: bad arguments.
        {{bin, "--ttl", "0", "--master", one, "job", "--", "true"},
         {},
         64,
         "redlock-run: --ttl must be more than 0\n"},
        {{bin, "--ttl", "1x", "--master", one, "job", "--", "true"},
         {},
         64,
         "redlock-run: --ttl: \"1x\" is not a duration (30s, 500ms, 1.5m, 2h, or seconds)\n"},
        {{bin, "--bogus=s3cret", "--master", one, "job", "--", "true"},
         {},
         64,
         "redlock-run: unknown option --bogus\n(see redlock-run --help)\n"},
        {{bin, "--master", one, "job", "other", "--", "true"},
         {},
         64,
         "redlock-run: one RESOURCE, then -- and COMMAND: " + usage + "\n"},
        {{bin, "--master", one, "job"}, {}, 64, "redlock-run: no COMMAND: " + usage + "\n"},
        {{bin, "--master", one, "", "--", "true"}, {}, 64, "redlock-run: RESOURCE is empty\n"},
        {{bin, "--conflict-exit-code", "300", "--master", one, "job", "--", "true"},
         {},
         64,
         "redlock-run: --conflict-exit-code: Value 300 not in range 0 to 255\n(see redlock-run "
         "--help)\n"},
        {{bin, "--cluster-replica-acks", "1", "--master", one, "job", "--", "true"},
         {},
         64,
         "redlock-run: --cluster-replica-acks applies to Redis Cluster masters (redis-cluster://, "
         "rediss-cluster://), and --master names none\n"},
        // 64: a --master URI that is malformed or carries a password (shown masked).
        {{bin, "--master", "nope", "job", "--", "true"},
         {},
         64,
         std::string("redlock-run: --master: master 0: missing or malformed scheme ") +
             scheme_list + "\n"},
        {{bin, "--master", "redis://:s3cret@127.0.0.1:1", "job", "--", "true"},
         {},
         64,
         "redlock-run: --master redis://:***@127.0.0.1:1: a password on the command line is "
         "visible to every "
         "user of the machine (ps); give it with --password-file or REDLOCK_PASSWORD, or put the "
         "URIs in "
         "REDLOCK_MASTERS or a masters file\n"},
        // 78: bad masters in a file or REDLOCK_MASTERS (numbered from 0), a file that names none,
        // files that cannot be read, an empty password line.
        {{bin, "--masters-file", s.file("bad"), "job", "--", "true"},
         {},
         78,
         "redlock-run: --masters-file " + s.file("bad") +
             ": master 1: missing or malformed scheme " + scheme_list + "\n"},
        {{bin, "job", "--", "true"},
         {"REDLOCK_MASTERS=" + one + ",bogus://x"},
         78,
         std::string("redlock-run: REDLOCK_MASTERS: master 1: unknown scheme 'bogus' ") +
             scheme_list + "\n"},
        {{bin, "--masters-file", s.file("none"), "job", "--", "true"},
         {},
         78,
         "redlock-run: --masters-file " + s.file("none") + " names no master\n"},
        {{bin, "--masters-file", s.file("missing"), "job", "--", "true"},
         {},
         78,
         "redlock-run: --masters-file " + s.file("missing") + ": No such file or directory\n"},
        {{bin, "--password-file", s.file("missing"), "--master", one, "job", "--", "true"},
         {},
         78,
         "redlock-run: --password-file " + s.file("missing") + ": No such file or directory\n"},
        {{bin, "--password-file", s.file("empty-password"), "--master", one, "job", "--", "true"},
         {},
         78,
         "redlock-run: --password-file " + s.file("empty-password") +
             ": the first line is empty\n"},
    };
    // 64: no masters anywhere (when this machine has no /etc/redlock/masters).
    if (!std::filesystem::exists("/etc/redlock/masters"))
        cases.push_back(
            {{bin, "job", "--", "true"},
             {},
             64,
             "redlock-run: no masters: give --master URI (one per master), --masters-file, "
             "REDLOCK_MASTERS, or /etc/redlock/masters\n"});
    for (const auto& c : cases)
    {
        auto args = clean(c.args);
        // env -u first, then the case's own variables.
        args.insert(args.begin() + 5, c.env.begin(), c.env.end());
        INFO(args[5 + c.env.size() + 1] << " ... (" << c.err << ")");
        const auto end = run_to_end(args);
        CHECK(end.status == c.status);
        CHECK(end.err == c.err);
    }
}

// cli.md, "Exit statuses": 126, 127, 69 (unreachable masters, and no quorum at lock time), 70
// (redlock-run's own failure), with their exact lines; COMMAND never runs and no key is left.
TEST_CASE("redlock-run: COMMAND not executable or not found, masters unreachable or refusing, its "
          "own failure: 126, 127, 69, 70",
          "[tool][live]")
{
    local_masters m(quiet_masters(3));
    scratch s;
    const std::string key = "job:statuses";

    std::ofstream(s.file("not-executable")) << "#!/bin/sh\ntouch " << s.file("ran") << "\n";
    ::chmod(s.file("not-executable").c_str(), 0644);
    auto end = run_to_end(run_args(m, {}, key, {s.file("not-executable")}));
    CHECK(end.status == 126);
    CHECK(end.err == "redlock-run: " + s.file("not-executable") + ": Permission denied\n");
    end = run_to_end(run_args(m, {}, key, {"/nonexistent/command"}));
    CHECK(end.status == 127);
    CHECK(end.err == "redlock-run: /nonexistent/command: No such file or directory\n");
    CHECK(no_key_left(m, key));

    // 69 at connection: nothing listens on these ports.
    end = run_to_end(run_args(std::vector<std::string>{"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                                       "redis://127.0.0.1:3"},
                              {"--connect-timeout", "200ms"}, key, {"true"}));
    CHECK(end.status == 69);
    CHECK(end.err ==
          "redlock-run: " + key +
              ": fewer than a majority of the 3 masters are reachable (no quorum: too many masters "
              "failed or timed out)\n");

    // 70: redlock-run cannot start its guard. It waits for a held lock; meanwhile its limit of
    // open files is lowered to what it has open; woken by the release, it acquires, cannot
    // create the guard's socket pair, releases and exits 70 without running COMMAND.
    hold_elsewhere(m, key);
    tool_process waiting(run_args(m, {"--wait", "30s"}, key, sh("touch " + s.file("ran"))));
    REQUIRE(eventually(
        [&] {
            return count_lines(m.command(0, {"CLIENT", "LIST", "TYPE", "normal"}),
                               ".*name=redlock-run.*flags=t .*") +
                       count_lines(m.command(1, {"CLIENT", "LIST", "TYPE", "normal"}),
                                   ".*name=redlock-run.*flags=t .*") >
                   0;
        },
        20s));
    int lowest_free = 0;
    while (std::filesystem::exists("/proc/" + std::to_string(waiting.pid()) + "/fd/" +
                                   std::to_string(lowest_free)))
        ++lowest_free;
    const rlimit limit{static_cast<rlim_t>(lowest_free), static_cast<rlim_t>(lowest_free)};
    REQUIRE(::prlimit(waiting.pid(), RLIMIT_NOFILE, &limit, nullptr) == 0);
    for (std::size_t i = 0; i < m.size(); ++i)
        m.command(i, {"DEL", key});
    CHECK(waiting.wait_exit(20s) == 70);
    CHECK(waiting.error_output() == "redlock-run: cannot start the process that stops COMMAND if "
                                    "redlock-run dies: Too many open files\n");
    CHECK_FALSE(s.exists("ran"));
    CHECK(no_key_left(m, key));

    // 70 from main's catch: with descriptors 0-2 only and 4 allowed, the event loop cannot be
    // set up. (bash: it closes descriptors above 9, which ctest and others may have left open.)
    end = run_to_end(
        {"/bin/bash", "-c",
         "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; "
         "ulimit -n 4; exec " REDLOCK_RUN_PATH " --master " +
             m.uri(0) + " " + key + " -- touch " + s.file("ran")});
    INFO(end.err);
    CHECK(end.status == 70);
    CHECK(count_lines(end.err, "redlock-run: .+: Too many open files.*") == 1);
    CHECK(lines_of(end.err).size() == 1);
    CHECK_FALSE(s.exists("ran"));

    // 69 at lock time: connected, but two of the three masters refuse the SET (an ACL).
    for (std::size_t i = 0; i < 2; ++i)
        m.command(i, {"ACL", "SETUSER", "default", "-set"});
    end = run_to_end(run_args(m, {}, key, sh("touch " + s.file("ran"))));
    CHECK(end.status == 69);
    const std::string refused = R"(\[[01]\] error \(NOPERM: [^)]*\) [0-9]+us)";
    CHECK(count_lines(end.err, "redlock-run: could not lock " + key + ": lock '" + key +
                                   "': not held; masters: " + refused + " " + refused +
                                   R"( \[2\] (granted|not_needed) [0-9]+us)") == 1);
    CHECK(lines_of(end.err).size() == 1);
    CHECK_FALSE(s.exists("ran"));
    CHECK(no_key_left(m, key));
}

// cli.md, "What it does" 1: --wait 0 still makes the library's quick attempts; --wait D ends
// with the conflict status after D.
TEST_CASE("redlock-run: --wait 0 retries a split before giving up, --wait D gives up after D",
          "[tool][live]")
{
    local_masters m(quiet_masters(3));
    scratch s;
    auto set_calls = [&](std::size_t i) {
        const auto info = m.command(i, {"INFO", "commandstats"});
        const auto at = info.find("cmdstat_set:calls=");
        return at == std::string::npos ? 0L : std::stol(info.substr(at + 18));
    };

    // Two of the three masters held by another owner, who lets go just after our first
    // attempt reached master 0: the retry takes the lock.
    hold_elsewhere(m, "job:split", 0, 2);
    const auto before0 = set_calls(0), before1 = set_calls(1);
    tool_process split(run_args(m, {"-v"}, "job:split", sh("touch " + s.file("ran"))));
    REQUIRE(eventually([&] { return set_calls(0) > before0 && set_calls(1) > before1; }, 20s));
    m.command(0, {"DEL", "job:split"});
    m.command(1, {"DEL", "job:split"});
    CHECK(split.wait_exit(20s) == 0);
    CHECK(s.exists("ran"));
    CHECK(count_lines(split.error_output(),
                      R"(redlock-run: job:split acquired after [23] attempt\(s\) in [0-9.]+ s)") ==
          1);
    CHECK(no_key_left(m, "job:split"));

    // --wait 1s against a lock nobody releases: the conflict after 1 s (+ 1.5 s of margin),
    // not at once (--wait 0 takes ~0.3 s).
    hold_elsewhere(m, "job:held");
    const auto t0 = std::chrono::steady_clock::now();
    const auto end =
        run_to_end(run_args(m, {"--wait", "1s"}, "job:held", sh("touch " + s.file("held-ran"))));
    const auto took = seconds_since(t0);
    CHECK(end.status == 75);
    CHECK(end.err == "redlock-run: job:held is held by someone else, /bin/sh not run\n");
    CHECK(took >= 1.0);
    CHECK(took < 2.5);
    CHECK_FALSE(s.exists("held-ran"));
    CHECK(still_elsewhere(m, "job:held"));
}

// cli.md, "Options" (-v): the masters going up and down, the acquisition with each master's
// answer, each extension (every TTL/3, on every master), the degradation, the loss, the
// release; a conflict's answers; masters numbered from 0; no password anywhere, with the
// masters' password in their URIs, nor in the errors of a run that is refused.
TEST_CASE("redlock-run: --verbose tells the lock's life, masters numbered from 0, and no message "
          "has a password",
          "[tool][live]")
{
    local_masters m({.count = 5,
                     .extra_config = {"requirepass s3cret-pw", "appendonly yes"},
                     .admin_password = "s3cret-pw"});
    scratch s;
    const auto env = masters_with_password(m, "s3cret-pw");
    const std::vector<std::string> bare{REDLOCK_RUN_PATH};
    auto args = [&](std::vector<std::string> rest) {
        auto a = bare;
        a.insert(a.end(), rest.begin(), rest.end());
        return a;
    };
    const std::string answers = R"(masters: (\[[0-4]\] [a-z_]+ [0-9]+us ?){5})";

    tool_process run(args({"-v", "--ttl", "1s", "job:verbose", "--", "/bin/sh", "-c",
                           "exec 2>/dev/null; trap 'exit 3' TERM; touch " + s.file("started") +
                               "; while :; do sleep 0.05; done"}),
                     {env});
    REQUIRE(eventually([&] { return s.exists("started"); }, 20s));
    const auto started_at = std::chrono::steady_clock::now();
    // Kept alive past its TTL on every master (cli.md "What it does" 3): for 2 s the key is on
    // all five, extended every third of the TTL (~6 times; a schedule at half the TTL would
    // make 4).
    bool everywhere = true;
    while (std::chrono::steady_clock::now() < started_at + 2s)
    {
        for (std::size_t i = 0; i < m.size(); ++i)
            everywhere = everywhere && pttl(m, i, "job:verbose") > 0;
        std::this_thread::sleep_for(100ms);
    }
    CHECK(everywhere);
    CHECK(count_lines(run.error_output(), "redlock-run: extended: .*") >= 5);
    // One master fewer: it goes down, and the next extension is held by 4 of 5.
    m.kill(4);
    CHECK(when_printed(run, "redlock-run: 4 of 5 masters hold the lock\n", 20s));
    // Taken over on a majority: lost, COMMAND stopped, released.
    for (std::size_t i = 0; i < 3; ++i)
        m.command(i, {"SET", "job:verbose", "thief"});
    CHECK(run.wait_exit(20s) == lock_lost_status);
    const auto err = run.error_output();
    CHECK(unexpected_lines(
              err,
              {
                  "redlock-run: master [0-4] up",
                  R"(redlock-run: job:verbose acquired after 1 attempt\(s\) in [0-9.]+ s)",
                  R"(redlock-run: acquired lock 'job:verbose': held, [0-9]+ ms left; )" + answers,
                  R"(redlock-run: started /bin/sh \(pid [0-9]+\))",
                  R"(redlock-run: extended: lock 'job:verbose': held, [0-9]+ ms left; )" + answers,
                  "redlock-run: master 4 down: .+",
                  "redlock-run: [34] of 5 masters hold the lock",
                  "redlock-run: an extension failed: .+",
                  R"(redlock-run: lost the lock on job:verbose \(.+\): stopping /bin/sh)",
                  "redlock-run: released job:verbose(: .+)?",
              }) == std::vector<std::string>{});
    for (int i = 0; i < 5; ++i)
        CHECK(count_lines(err, "redlock-run: master " + std::to_string(i) + " up") == 1);
    CHECK(
        count_lines(
            err,
            R"(redlock-run: acquired lock 'job:verbose': held, [0-9]+ ms left; masters: \[0\] [a-z_]+ [0-9]+us \[1\] [a-z_]+ [0-9]+us \[2\] [a-z_]+ [0-9]+us \[3\] [a-z_]+ [0-9]+us \[4\] [a-z_]+ [0-9]+us)") ==
        1);
    CHECK(count_lines(err, ".* granted .*") >= 1);
    CHECK(count_lines(err, "redlock-run: master 4 down: .+") >= 1);
    CHECK(count_lines(err, "redlock-run: lost the lock on job:verbose.*") == 1);
    CHECK(count_lines(err, "redlock-run: released job:verbose(: .+)?") == 1);
    CHECK_THAT(err, !Catch::Contains("s3cret"));

    // A conflict, with each master's answer.
    hold_elsewhere(m, "job:held", 0, 4);
    auto end = run_to_end(args({"-v", "job:held", "--", "true"}), {env});
    INFO(end.err);
    CHECK(end.status == conflict_status);
    // Master 4, killed above, answers with the error that it is not connected.
    CHECK(count_lines(
              end.err,
              "redlock-run: job:held is held by someone else, true not run: lock 'job:held': not "
              R"(held; masters: \[0\] .+ \[1\] .+ \[2\] .+ \[3\] .+ \[4\] .+)") == 1);
    CHECK(count_lines(end.err, ".* held_by_other .*") == 1);
    CHECK_THAT(end.err, !Catch::Contains("s3cret"));

    // Refused at connection (a wrong password), with and without -v: 69, no password.
    std::string plain;
    for (std::size_t i = 0; i < 4; ++i)
        plain += (i ? "," : "") + m.uri(i);
    for (bool verbose : {false, true})
    {
        INFO("verbose " << verbose);
        auto a = verbose ? args({"-v", "job:refused", "--", "true"})
                         : args({"job:refused", "--", "true"});
        end = run_to_end(a, {"REDLOCK_MASTERS=" + plain, "REDLOCK_PASSWORD=wrong-s3cret"});
        CHECK(end.status == 69);
        CHECK(
            count_lines(
                end.err,
                R"(redlock-run: job:refused: fewer than a majority of the 4 masters are reachable \(.+\))") ==
            1);
        if (verbose)
            CHECK(count_lines(end.err, "redlock-run: master [0-3] down: .+") >= 3);
        CHECK_THAT(end.err, !Catch::Contains("s3cret"));
    }
    // Refused at lock time (a majority refuses the SET): the per-master diagnostics, no password.
    for (std::size_t i = 0; i < 3; ++i)
        m.command(i, {"ACL", "SETUSER", "default", "-set"});
    end = run_to_end(args({"-v", "job:refused", "--", "true"}), {env});
    CHECK(end.status == 69);
    CHECK(
        count_lines(
            end.err,
            "redlock-run: could not lock job:refused: lock 'job:refused': not held; masters: .+") ==
        1);
    CHECK_THAT(end.err, !Catch::Contains("s3cret"));
}

// cli.md, "Masters, passwords and TLS": a warning is printed once per master and warning, again
// only when a reconnection finds something new; --quiet leaves them out, --quiet --verbose not.
TEST_CASE("redlock-run: a warning is printed again only when a reconnection finds something new, "
          "and -q -v still shows them",
          "[tool][live]")
{
    local_masters m(
        {.count = 3,
         .extra_config = {"maxmemory 100mb", "maxmemory-policy allkeys-lru", "appendonly yes"}});
    scratch s;
    auto eviction = [&](std::size_t i) {
        return "redlock-run: warning: master " + std::to_string(i) + R"( \(redis://127\.0\.0\.1:)" +
               std::to_string(m.port(i)) +
               R"(\): eviction can drop lock keys: the master has a maxmemory and an eviction policy other than noeviction)";
    };
    const std::string persistence =
        R"(redlock-run: warning: master 1 \(redis://127\.0\.0\.1:)" + std::to_string(m.port(1)) +
        R"(\): persistence is off \(no AOF, no RDB save points\): a restart of the master forgets its lock keys)";

    tool_process run(run_args(m, {}, "job:warned",
                              sh("touch " + s.file("started") + "; while [ ! -e " + s.file("go") +
                                 " ]; do sleep 0.05; done")));
    REQUIRE(eventually([&] { return s.exists("started"); }, 20s));
    REQUIRE(eventually([&] { return lines_of(run.error_output()).size() == 3; }, 5s));
    // Master 1 loses its persistence and redlock-run's connection: the reconnection's check
    // finds the new warning, and not the eviction again.
    m.command(1, {"CONFIG", "SET", "appendonly", "no"});
    m.command(1, {"CLIENT", "KILL", "TYPE", "normal"});
    CHECK(when_printed(run, "persistence is off", 20s));
    std::ofstream(s.file("go")).put('\n');
    CHECK(run.wait_exit(20s) == 0);
    const auto err = run.error_output();
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(count_lines(err, eviction(i)) == 1);
    CHECK(count_lines(err, persistence) == 1);
    CHECK(lines_of(err).size() == 4);
    CHECK(no_key_left(m, "job:warned"));

    const auto end = run_to_end(run_args(m, {"-q", "-v"}, "job:warned", {"true"}));
    CHECK(end.status == 0);
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(count_lines(end.err, eviction(i)) == 1);
    CHECK(count_lines(end.err, "redlock-run: master [0-2] up") == 3);
}

// cli.md, "Masters, passwords and TLS": rediss:// verifies the masters' certificates against the
// system's trust store by default (OpenSSL's default paths, which SSL_CERT_FILE names); the
// --tls-* options reach the connections. The masters require a client certificate.
TEST_CASE("redlock-run: rediss:// masters: the system trust store by default, --tls-ca-file, "
          "--tls-ca-dir, a client certificate, --tls-server-name",
          "[tool][live]")
{
    local_masters m(
        {.count = 3, .tls = true, .extra_config = {"appendonly yes", "tls-auth-clients yes"}});
    scratch s;
    std::vector<std::string> masters;
    for (std::size_t i = 0; i < m.size(); ++i)
        masters.push_back(m.tls_uri(i));
    // A directory of hashed CA certificates, for --tls-ca-dir.
    for (const auto& [dir, ca] : {std::pair{s.file("ca-dir"), m.ca_file()},
                                  std::pair{s.file("other-dir"), m.other_ca_file()}})
    {
        std::filesystem::create_directory(dir);
        std::filesystem::copy_file(ca, dir + "/ca.pem");
        REQUIRE(std::system(("openssl rehash '" + dir + "' >/dev/null 2>&1").c_str()) == 0);
    }
    const std::vector<std::string> client{"--tls-cert-file", m.cert_file(), "--tls-key-file",
                                          m.key_file()};
    auto with = [&](std::vector<std::string> more) {
        auto o = client;
        o.insert(o.end(), more.begin(), more.end());
        return o;
    };
    const std::string unreachable =
        R"(redlock-run: job:tls: fewer than a majority of the 3 masters are reachable \(.+\))";
    struct expected_end
    {
        const char* what;
        std::vector<std::string> options;
        std::vector<std::string> env;
        int status;
    };
    const std::vector<expected_end> cases = {
        {"no CA option: the system store, which lacks the test CA",
         client,
         {"SSL_CERT_FILE=/nonexistent"},
         69},
        {"no CA option: the system store, named by SSL_CERT_FILE",
         client,
         {"SSL_CERT_FILE=" + m.ca_file()},
         0},
        {"--tls-ca-file, no client certificate", {"--tls-ca-file", m.ca_file()}, {}, 69},
        {"--tls-ca-file and a client certificate", with({"--tls-ca-file", m.ca_file()}), {}, 0},
        {"--tls-ca-file of another CA", with({"--tls-ca-file", m.other_ca_file()}), {}, 69},
        {"--tls-ca-dir", with({"--tls-ca-dir", s.file("ca-dir")}), {}, 0},
        {"--tls-ca-dir of another CA", with({"--tls-ca-dir", s.file("other-dir")}), {}, 69},
        {"--tls-server-name of the certificate",
         with({"--tls-ca-file", m.ca_file(), "--tls-server-name", "localhost"}),
         {},
         0},
        {"--tls-server-name of another",
         with({"--tls-ca-file", m.ca_file(), "--tls-server-name", "wrong.invalid"}),
         {},
         69},
        {"--tls-insecure", with({"--tls-insecure"}), {"SSL_CERT_FILE=/nonexistent"}, 0},
    };
    for (const auto& c : cases)
    {
        INFO(c.what);
        auto options = c.options;
        options.insert(options.end(), {"--connect-timeout", "1s"});
        const auto end = run_to_end(run_args(masters, options, "job:tls", {"true"}), c.env);
        CHECK(end.status == c.status);
        if (c.status == 69)
            CHECK(count_lines(end.err, unreachable) == 1);
        CHECK(lines_of(end.err).size() == (c.status == 69 ? 1U : 0U));
    }
    CHECK(no_key_left(m, "job:tls"));
}
