// redlock-run's command line without starting a process: durations, where masters and the
// password come from, and what is refused (tools/run/run_options.hpp).
#include "run_options.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

using namespace redlock::run;
using namespace std::chrono_literals;

namespace {

// An environment of the test's own: variables and files from maps.
struct fake_environment
{
    std::map<std::string, std::string> vars;
    std::map<std::string, std::string> files;
    std::set<std::string> unreadable;  // exist, but reading them fails with EACCES

    run_environment get() const
    {
        run_environment e;
        e.getenv = [this](const std::string& n) -> std::optional<std::string> {
            auto it = vars.find(n);
            return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
        e.read_file = [this](const std::string& p) -> std::optional<std::string> {
            if (unreadable.contains(p))
            {
                errno = EACCES;
                return std::nullopt;
            }
            auto it = files.find(p);
            if (it == files.end())
            {
                errno = ENOENT;
                return std::nullopt;
            }
            return it->second;
        };
        e.default_masters_file = "/etc/redlock/masters";
        return e;
    }
};

parse_result parse(std::vector<std::string> args, const fake_environment& env = {})
{
    return parse_run_options(args, env.get());
}

}  // namespace

TEST_CASE("redlock-run: durations take a unit, a bare number is seconds", "[tool]")
{
    CHECK(parse_duration("30s") == 30000ms);
    CHECK(parse_duration("500ms") == 500ms);
    CHECK(parse_duration("1.5m") == 90000ms);
    CHECK(parse_duration("2h") == 7200000ms);
    CHECK(parse_duration("2") == 2000ms);
    CHECK(parse_duration("0.25") == 250ms);
    CHECK(parse_duration("0") == 0ms);
    for (const char* bad : {"", "s", "-1", "1x", "1.2.3", "1 s", "ms", "1e3", "9999h"})
    {
        INFO(bad);
        CHECK_FALSE(parse_duration(bad));
    }
}

TEST_CASE("redlock-run: the defaults and the command after --", "[tool]")
{
    auto r = parse(
        {"--master", "redis://127.0.0.1:7000", "job", "--", "make", "--jobs", "2", "--", "x"});
    REQUIRE(r.options);
    CHECK(r.options->resource == "job");
    CHECK(r.options->command == std::vector<std::string>{"make", "--jobs", "2", "--", "x"});
    CHECK(r.options->ttl == 30s);
    CHECK(r.options->wait == 0ms);  // like flock -n: a held lock is a conflict at once
    CHECK(r.options->kill_after == 5s);
    CHECK(r.options->conflict_exit_code == exit_status::conflict);
    CHECK_FALSE(r.options->fencing);
    CHECK_FALSE(r.options->quiet);
    CHECK(r.options->tls.verify_peer);
    CHECK(r.options->max_hold == 0ms);  // no limit: held as long as COMMAND runs
    CHECK(r.options->connect_timeout == 2s);
    // What the client is given: the connect timeout, and the TTL as its default.
    const auto cfg = make_client_config(*r.options);
    CHECK(cfg.connection.connect_timeout == 2s);
    CHECK(cfg.defaults.ttl == 30s);
    // What the holder is given: no --max-hold is hold_options' "no limit" (0), not its 10 min
    // default; extended when two thirds of the TTL are left, every third of it.
    const auto hold = make_hold_options(*r.options);
    CHECK(hold.max_hold == 0ms);
    CHECK(hold.extend_before == 20s);
    CHECK(hold.max_extensions == 0U);
    auto bounded = parse({"--master", "redis://127.0.0.1:7000", "--max-hold", "5m", "--ttl", "3s",
                          "job", "--", "true"});
    REQUIRE(bounded.options);
    CHECK(make_hold_options(*bounded.options).max_hold == 300s);
    CHECK(make_hold_options(*bounded.options).extend_before == 2s);
    auto q = parse({"--master", "redis://127.0.0.1:7000", "-q", "job", "--", "true"});
    REQUIRE(q.options);
    CHECK(q.options->quiet);
}

TEST_CASE("redlock-run: bad arguments exit 64 with a message", "[tool]")
{
    struct bad_case
    {
        std::vector<std::string> args;
        std::string says;
    };
    std::vector<bad_case> cases{
        {{"--master", "redis://h", "job"}, "no COMMAND"},
        {{"--master", "redis://h", "job", "--"}, "no COMMAND"},
        {{"--master", "redis://h", "--", "true"}, "RESOURCE"},
        {{"--master", "redis://h", "a", "b", "--", "true"}, "one RESOURCE"},
        {{"--master", "redis://h", "--ttl", "0", "job", "--", "true"}, "--ttl must be more than 0"},
        {{"--master", "redis://h", "--wait", "soon", "job", "--", "true"},
         "--wait: \"soon\" is not a duration"},
        {{"--master", "redis://h", "--conflict-exit-code", "256", "job", "--", "true"},
         "conflict-exit-code"},
        {{"--master", "redis://h", "--no-such", "job", "--", "true"}, "--no-such"},
        {{"--master", "http://h", "job", "--", "true"}, "scheme"},
        {{"--master", "redis-cluster://h:7000", "--cluster-replica-acks", "17", "job", "--",
          "true"},
         "--cluster-replica-acks"},
        {{"--master", "redis://h", "--permits", "0", "job", "--", "true"}, "--permits"},
        {{"--master", "redis://h", "--permits", "1025", "job", "--", "true"}, "--permits"},
        {{"--master", "redis://h", "--permits", "2", "--fencing", "job", "--", "true"},
         "--fencing is for a mutex"},
        {{"--master", "redis://h", "--shared", "--permits", "2", "job", "--", "true"},
         "--shared takes a read-write lock's reader: not with --permits"},
        {{"--master", "redis://h", "--shared", "--fencing", "job", "--", "true"},
         "--shared takes a read-write lock's reader: not with --fencing"},
        {{"--master", "redis://h", "--identity", std::string(129, 'x'), "job", "--", "true"},
         "lock_options::identity is 129 bytes long: at most 128"},
        {{"--master", "redis://h", "--identity", "web\t3", "job", "--", "true"},
         "lock_options::identity has byte 0x09 at offset 3"},
        {{"--master", "redis://h", "--cluster-replica-acks", "1", "job", "--", "true"},
         "--cluster-replica-acks applies to Redis Cluster masters (redis-cluster://, "
         "rediss-cluster://), and "
         "--master names none"},
    };
    for (const auto& c : cases)
    {
        auto r = parse(c.args);
        INFO(c.says);
        CHECK_FALSE(r.options);
        CHECK(r.exit_code == exit_status::usage);
        CHECK_THAT(r.message, Catch::Contains(c.says));
    }
}

TEST_CASE("redlock-run: --help and --version print to stdout and exit 0", "[tool]")
{
    auto h = parse({"--help"});
    CHECK_FALSE(h.options);
    CHECK(h.exit_code == 0);
    CHECK(h.to_stdout);
    CHECK_THAT(h.message,
               Catch::StartsWith("Usage: redlock-run [OPTIONS] RESOURCE -- COMMAND [ARG...]\n") &&
                   Catch::Contains("--conflict-exit-code") &&
                   !Catch::Contains("Usage: redlock-run [OPTIONS] RESOURCE\n"));
    auto v = parse({"--version"});
    CHECK(v.exit_code == 0);
    CHECK_THAT(v.message, Catch::StartsWith("redlock-run "));
}

TEST_CASE("redlock-run: REDLOCK_MASTERS keeps the comma-separated seeds of a cluster URI together",
          "[tool]")
{
    fake_environment env;
    env.vars["REDLOCK_MASTERS"] =
        "redis-cluster://a:7000,b:7001, redis://s1,REDISS-CLUSTER://:pw@c:7000,[::1]:7001,d:7002 "
        "redis://s2";
    auto r = parse({"job", "--", "true"}, env);
    INFO(r.message);
    REQUIRE(r.options);
    CHECK(r.options->masters ==
          std::vector<std::string>{"redis-cluster://a:7000,b:7001", "redis://s1",
                                   "REDISS-CLUSTER://:pw@c:7000,[::1]:7001,d:7002", "redis://s2"});
    // A schemeless item after a plain URI is an item of its own, and not a URI.
    env.vars["REDLOCK_MASTERS"] = "redis://s1,e:1";
    auto bad = parse({"job", "--", "true"}, env);
    CHECK_FALSE(bad.options);
    CHECK_THAT(bad.message, Catch::Contains("master 1: missing or malformed scheme"));
}

TEST_CASE("redlock-run: masters from --master, else --masters-file, else REDLOCK_MASTERS, else the "
          "default file",
          "[tool]")
{
    fake_environment env;
    env.files["/etc/redlock/masters"] =
        "# the cluster's masters\nredis://d1:6379\n\n  redis://d2:6379  \nredis://d3\n";
    env.files["/srv/masters"] = "redis://f1\nredis://f2\nredis://f3\n";
    env.vars["REDLOCK_MASTERS"] = "redis://e1, redis://e2\tredis://e3";

    auto from_flags = parse({"--master", "redis://m1", "--master", "redis://m2", "--masters-file",
                             "/srv/masters", "job", "--", "true"},
                            env);
    REQUIRE(from_flags.options);
    CHECK(from_flags.options->masters == std::vector<std::string>{"redis://m1", "redis://m2"});

    auto from_file = parse({"--masters-file", "/srv/masters", "job", "--", "true"}, env);
    REQUIRE(from_file.options);
    CHECK(from_file.options->masters ==
          std::vector<std::string>{"redis://f1", "redis://f2", "redis://f3"});

    auto from_env = parse({"job", "--", "true"}, env);
    REQUIRE(from_env.options);
    CHECK(from_env.options->masters ==
          std::vector<std::string>{"redis://e1", "redis://e2", "redis://e3"});

    env.vars.erase("REDLOCK_MASTERS");
    auto from_default = parse({"job", "--", "true"}, env);
    REQUIRE(from_default.options);
    CHECK(from_default.options->masters ==
          std::vector<std::string>{"redis://d1:6379", "redis://d2:6379", "redis://d3"});

    env.files.clear();
    auto none = parse({"job", "--", "true"}, env);
    CHECK(none.exit_code == exit_status::usage);
    CHECK_THAT(none.message, Catch::Contains("no masters"));

    // A default file that exists but cannot be read (root's 0600 file, a user's run) is a
    // configuration error that says why, not "no masters".
    env.unreadable.insert("/etc/redlock/masters");
    auto denied = parse({"job", "--", "true"}, env);
    CHECK(denied.exit_code == exit_status::config);
    CHECK_THAT(denied.message,
               Catch::Contains("/etc/redlock/masters: ") && Catch::Contains(std::strerror(EACCES)));
    env.unreadable.clear();

    auto missing = parse({"--masters-file", "/nope", "job", "--", "true"}, env);
    CHECK(missing.exit_code == exit_status::config);
    CHECK_THAT(missing.message, Catch::Contains("/nope"));

    env.files["/empty"] = "# nobody\n";
    auto empty = parse({"--masters-file", "/empty", "job", "--", "true"}, env);
    CHECK(empty.exit_code == exit_status::config);
    CHECK_THAT(empty.message, Catch::Contains("names no master"));
}

TEST_CASE("redlock-run: a password is refused on the command line and never appears in a message",
          "[tool]")
{
    auto r = parse({"--master", "redis://:hunter2@h:6379", "job", "--", "true"});
    CHECK_FALSE(r.options);
    CHECK(r.exit_code == exit_status::usage);
    CHECK_THAT(r.message, Catch::Contains("--password-file") && !Catch::Contains("hunter2"));

    // The same URI from the environment or a file is fine: neither is visible in ps.
    fake_environment env;
    env.vars["REDLOCK_MASTERS"] = "redis://:hunter2@h:6379";
    auto ok = parse({"job", "--", "true"}, env);
    REQUIRE(ok.options);
    CHECK(make_client_config(*ok.options).master_configs.at(0).password == "hunter2");

    // A malformed URI holding a password: the message leaves it out.
    env.vars["REDLOCK_MASTERS"] = "redis://user:hunter2@h:notaport";
    auto bad = parse({"job", "--", "true"}, env);
    CHECK(bad.exit_code == exit_status::config);
    CHECK_THAT(bad.message, Catch::Contains("REDLOCK_MASTERS") && !Catch::Contains("hunter2"));

    // Extra arguments are not echoed (they may be anything).
    auto extra = parse({"--master", "redis://h", "job", "redis://:hunter2@h", "--", "true"});
    CHECK(extra.exit_code == exit_status::usage);
    CHECK_THAT(extra.message, !Catch::Contains("hunter2"));
}

TEST_CASE(
    "redlock-run: the password from --password-file, else REDLOCK_PASSWORD, for URIs without one",
    "[tool]")
{
    fake_environment env;
    env.files["/run/secrets/redis"] = "from-file\nsecond line ignored\n";
    env.vars["REDLOCK_PASSWORD"] = "from-env";

    auto file = parse({"--master", "redis://a", "--master", "rediss://b", "--password-file",
                       "/run/secrets/redis", "--tls-ca-file", "/ca.pem", "job", "--", "true"},
                      env);
    REQUIRE(file.options);
    auto cfg = make_client_config(*file.options);
    REQUIRE(cfg.master_configs.size() == 2);
    CHECK(cfg.master_configs[0].password == "from-file");
    CHECK(cfg.master_configs[1].password == "from-file");
    CHECK(cfg.master_configs[1].tls.ca_file == "/ca.pem");
    CHECK(cfg.master_configs[0].tls.ca_file.empty());
    CHECK(cfg.masters.empty());

    auto from_env = parse({"--master", "redis://a", "job", "--", "true"}, env);
    REQUIRE(from_env.options);
    CHECK(make_client_config(*from_env.options).master_configs[0].password == "from-env");

    // A URI's own password wins.
    env.vars["REDLOCK_MASTERS"] = "redis://:own@a,redis://b";
    auto own = parse({"job", "--", "true"}, env);
    REQUIRE(own.options);
    auto own_cfg = make_client_config(*own.options);
    CHECK(own_cfg.master_configs[0].password == "own");
    CHECK(own_cfg.master_configs[1].password == "from-env");

    env.files["/empty"] = "\nsecret on line 2\n";
    auto empty =
        parse({"--master", "redis://a", "--password-file", "/empty", "job", "--", "true"}, env);
    CHECK(empty.exit_code == exit_status::config);
    CHECK_THAT(empty.message, Catch::Contains("first line is empty") && !Catch::Contains("secret"));

    auto missing =
        parse({"--master", "redis://a", "--password-file", "/nope", "job", "--", "true"}, env);
    CHECK(missing.exit_code == exit_status::config);
}

TEST_CASE("redlock-run: the options reach the client's configuration", "[tool]")
{
    auto r = parse({"--master", "redis://a", "--ttl", "5s", "--wait", "1m", "--fencing",
                    "--connect-timeout", "300ms", "--tls-insecure", "job", "--", "true"});
    REQUIRE(r.options);
    auto cfg = make_client_config(*r.options);
    CHECK(cfg.defaults.ttl == 5s);
    CHECK(cfg.defaults.wait == 60s);
    CHECK(cfg.defaults.fencing);
    CHECK(cfg.connection.connect_timeout == 300ms);
    CHECK_FALSE(r.options->tls.verify_peer);
    CHECK(cfg.cluster_replica_acks == 0);
    CHECK(cfg.defaults.permits == 1);
    auto semaphore = parse({"--master", "redis://a", "--permits", "3", "job", "--", "true"});
    REQUIRE(semaphore.options);
    CHECK(make_client_config(*semaphore.options).defaults.permits == 3);
    CHECK(cfg.defaults.role == redlock::lock_role::mutex);
    auto reader = parse({"--master", "redis://a", "--shared", "job", "--", "true"});
    REQUIRE(reader.options);
    CHECK(make_client_config(*reader.options).defaults.role == redlock::lock_role::reader);
    // A semaphore and a reader may wait, as a mutex does.
    auto waiting = parse({"--master", "redis://a", "--shared", "--permits", "1", "--wait", "5s",
                          "job", "--", "true"});
    REQUIRE(waiting.options);
    CHECK(make_client_config(*waiting.options).defaults.wait == 5s);
    auto waiting_permit =
        parse({"--master", "redis://a", "--permits", "2", "--wait", "5s", "job", "--", "true"});
    REQUIRE(waiting_permit.options);
    CHECK(make_client_config(*waiting_permit.options).defaults.wait == 5s);

    CHECK(cfg.defaults.identity.empty());
    auto identified = parse(
        {"--master", "redis://a", "--identity", "web-3:8080", "--shared", "job", "--", "true"});
    REQUIRE(identified.options);
    CHECK(make_client_config(*identified.options).defaults.identity == "web-3:8080");

    auto acks = parse({"--master", "redis://a", "--master", "redis-cluster://b:7000,c:7000",
                       "--cluster-replica-acks", "2", "job", "--", "true"});
    REQUIRE(acks.options);
    CHECK(make_client_config(*acks.options).cluster_replica_acks == 2);
}
