// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-status: its options, its report (from a read's result, without a master), and the
// binary end to end against masters the test starts (docs/cli.md).
#include "report.hpp"
#include "run_helpers.hpp"
#include "status_options.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace redlock;
using namespace redlock::test;
using namespace std::chrono_literals;
namespace st = redlock::status;

namespace {

// No environment, no default masters file: what the arguments say, only.
cli::environment no_environment()
{
    cli::environment e;
    e.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    e.read_file = [](const std::string&) -> std::optional<std::string> {
        errno = ENOENT;
        return std::nullopt;
    };
    return e;
}

st::parse_result parse_status(std::vector<std::string> args)
{
    return st::parse_status_options(args, no_environment());
}

std::vector<std::string> status_tool_args(const local_masters& m, std::vector<std::string> options,
                                          const std::string& resource)
{
    std::vector<std::string> args{REDLOCK_STATUS_PATH};
    for (const auto& uri : m.uris())
    {
        args.push_back("--master");
        args.push_back(uri);
    }
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(resource);
    return args;
}

// A token of the library's layout (40 hex characters), with an identity.
const std::string published_value = "00112233445566778899aabbccddeeff00112233 web-3:8080";

}  // namespace

TEST_CASE("redlock-status: options: RESOURCE, --permits, durations, and the masters as "
          "redlock-run takes them",
          "[tool]")
{
    auto ok = parse_status({"--master", "redis://127.0.0.1:1", "--permits", "3", "--timeout", "2s",
                            "--watch", "--interval", "50ms", "job"});
    REQUIRE(ok.options);
    CHECK(ok.options->resource == "job");
    CHECK(ok.options->permits == 3);
    CHECK(ok.options->timeout == 2000ms);
    CHECK(ok.options->watch);
    CHECK(ok.options->interval == 50ms);
    const auto lo = st::read_options(*ok.options);
    CHECK(lo.permits == 3);
    CHECK(lo.attempt_timeout == 2000ms);

    const auto usage = [](const st::parse_result& r, const char* says) {
        CHECK_FALSE(r.options);
        CHECK(r.exit_code == st::exit_status::usage);
        CHECK_THAT(r.message, Catch::Contains(says));
    };
    usage(parse_status({"--master", "redis://127.0.0.1:1"}), "RESOURCE");
    usage(parse_status({"--master", "redis://127.0.0.1:1", ""}), "RESOURCE is empty");
    usage(parse_status({"--master", "redis://127.0.0.1:1", "a", "b"}), "one RESOURCE");
    usage(parse_status({"--master", "redis://127.0.0.1:1", "--timeout", "soon", "job"}),
          "--timeout: \"soon\" is not a duration");
    usage(parse_status({"--master", "redis://127.0.0.1:1", "--interval", "0", "job"}),
          "--interval must be more than 0");
    usage(parse_status({"--master", "redis://127.0.0.1:1", "--permits", "0", "job"}), "--permits");
    usage(parse_status({"job"}), "no masters");
    // A password on the command line is refused, and never echoed.
    const auto secret = parse_status({"--master", "redis://:hunter2@127.0.0.1:1", "job"});
    usage(secret, "a password on the command line");
    CHECK(secret.message.find("hunter2") == std::string::npos);

    const auto help = parse_status({"--help"});
    CHECK(help.to_stdout);
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.message, Catch::Contains("Exit status: 0 held; 1 free"));
}

TEST_CASE("redlock-status: the report names holders by identity, each master's entries, never "
          "a token, and the exit status says held, free or unknown",
          "[tool]")
{
    holders_result r;
    r.holders.push_back({"web-3:8080", "1a2b3c4d5e6f7081", false, 17, 8123ms, 3});
    r.masters.resize(3);
    r.masters[0].diagnostic.status = master_status::granted;
    r.masters[0].fence_counter = 17;
    r.masters[0].entries.push_back({"web-3:8080", false, false, 8200ms});
    r.masters[1].diagnostic.status = master_status::timed_out;
    r.masters[2].diagnostic.status = master_status::granted;
    r.masters[2].entries.push_back({"", false, true, -1ms});
    const std::vector<std::string> endpoints{"redis://a:1", "redis://b:2", "redis://c:3"};
    const auto text = st::report("job", {}, r, endpoints);
    CHECK(text == "job: held by web-3:8080 (holder 1a2b3c4d5e6f7081, fencing token 17, valid for "
                  "8123 ms, on 3 masters)\n"
                  "  master 0 (redis://a:1): web-3:8080, 8200 ms left; fence counter 17\n"
                  "  master 1 (redis://b:2): no answer in time\n"
                  "  master 2 (redis://c:3): a key that is no lock value\n");
    CHECK(st::exit_code_of({}, r) == st::exit_status::held);

    holders_result readers;
    readers.holders.push_back({"r1", "0000000000000001", true, 0, 100ms, 2});
    readers.holders.push_back({"", "0000000000000002", true, 0, 90ms, 2});
    CHECK(st::summary("doc", {}, readers) ==
          "doc: held by 2 holders: reader r1 (holder 0000000000000001, valid for 100 ms, on 2 "
          "masters), reader (no identity) (holder 0000000000000002, valid for 90 ms, on 2 "
          "masters)");

    const holders_result none;
    CHECK(st::summary("job", {}, none) == "job: free");
    CHECK(st::exit_code_of({}, none) == st::exit_status::free);
    CHECK(st::summary("job", error::no_quorum, none) ==
          "job: unknown: fewer than a majority of the masters answered");
    CHECK(st::exit_code_of(error::no_quorum, none) == st::exit_status::unavailable);

    // --watch prints a line when the holders change, not when only their time left does.
    auto later = r;
    later.holders[0].valid_for = 10ms;
    CHECK(st::fingerprint({}, r) == st::fingerprint({}, later));
    later.holders[0].fencing_token = 18;
    CHECK(st::fingerprint({}, r) != st::fingerprint({}, later));
    // Two holders without an identity, one after the other: told apart by their ids.
    auto next = r;
    next.holders[0].id = "9f8e7d6c5b4a3928";
    CHECK(st::fingerprint({}, r) != st::fingerprint({}, next));

    // A refused read says why, and exits 64: nothing later would be accepted either.
    holders_result refused;
    refused.message = "the resource's key (key_prefix + resource) is longer than max_key_size";
    CHECK(st::summary("x", error::invalid_argument, refused) ==
          "x: unknown: the resource's key (key_prefix + resource) is longer than max_key_size");
    CHECK(st::exit_code_of(error::invalid_argument, refused) == st::exit_status::usage);
    CHECK(st::fingerprint({}, none) != st::fingerprint(error::no_quorum, none));
}

TEST_CASE("redlock-status: end to end: free (exit 1), held with the identity and the fencing "
          "token (exit 0), no quorum (exit 69), and --watch prints each change",
          "[tool][live]")
{
    local_masters m({.count = 3});
    tool_process free_read(status_tool_args(m, {}, "job"), {});
    CHECK(free_read.wait_exit(20s) == 1);

    for (std::size_t i = 0; i < 2; ++i)  // 2 of 3: a majority
    {
        m.command(i, {"SET", "job", published_value, "PX", "30000"});
        m.command(i, {"SET", "{job}:fence", "17"});
    }
    // A counter of an earlier holder's (no record of this one beside it): no term printed for
    // the holder, only each master's counter.
    program_process between(status_tool_args(m, {}, "job"), {.capture_stdout = true});
    CHECK(between.wait_exit(20s) == 0);
    const auto before_commit = between.output();
    CHECK_THAT(before_commit, Catch::StartsWith("job: held by web-3:8080 (holder "));
    CHECK(before_commit.find("fencing token") == std::string::npos);
    CHECK_THAT(before_commit, Catch::Contains("; fence counter 17\n"));
    // The commit's record, as the fence commit writes it: its holder id (the first line's).
    const auto id_at = before_commit.find("(holder ") + 8;
    const auto id = before_commit.substr(id_at, 16);
    for (std::size_t i = 0; i < 2; ++i)
        m.command(i, {"SET", "{job}:fence:holder", id});
    program_process held(status_tool_args(m, {}, "job"), {.capture_stdout = true});
    CHECK(held.wait_exit(20s) == 0);
    const auto out = held.output();
    CHECK_THAT(out, Catch::StartsWith("job: held by web-3:8080 (holder "));
    CHECK_THAT(out, Catch::Contains(", fencing token 17, valid for "));
    CHECK_THAT(out, Catch::Contains("master 2 (redis://127.0.0.1:"));
    CHECK(out.find("0011223344") == std::string::npos);  // never the token

    // A re-read interval longer than the test: each change below is printed because the
    // masters pushed it (client tracking), not by a poll, nor by the holder's expiry (30 s).
    program_process watch(status_tool_args(m, {"--watch", "--interval", "10m"}, "job"),
                          {.capture_stdout = true, .own_process_group = true});
    CHECK(eventually([&] { return watch.output().find("held by web-3:8080") != std::string::npos; },
                     10000ms));
    m.command(0, {"DEL", "job"});  // the majority is gone
    CHECK(
        eventually([&] { return watch.output().find("job: free") != std::string::npos; }, 10000ms));
    const std::string next_value = "99112233445566778899aabbccddeeff00112233 web-4:9090";
    for (std::size_t i = 1; i < 3; ++i)  // another holder on a majority
        m.command(i, {"SET", "job", next_value, "PX", "30000"});
    CHECK(eventually([&] { return watch.output().find("held by web-4:9090") != std::string::npos; },
                     10000ms));
    watch.signal(SIGINT);
    CHECK(watch.wait_exit(10s) == 0);

    m.pause(0);
    m.pause(1);
    tool_process unknown(status_tool_args(m, {"--timeout", "100ms"}, "job"), {});
    const auto status = unknown.wait_exit(20s);
    m.resume(0);
    m.resume(1);
    CHECK(status == 69);
}

TEST_CASE("redlock-status and redlock-run: three redlock-run --wait --fencing --identity are an "
          "election, each leader runs COMMAND with a greater term, and redlock-status names it",
          "[tool][live][election]")
{
    local_masters m({.count = 3});
    scratch s;
    // Each candidate's COMMAND: writes its identity and term, then leads until told to stop.
    auto candidate = [&](const std::string& name) {
        const auto led = s.file("led-" + name);
        const auto stop = s.file("stop-" + name);
        return std::make_unique<tool_process>(run_args(
            m, {"--wait", "60s", "--fencing", "--ttl", "5s", "--identity", name}, "leader",
            sh("echo \"$REDLOCK_IDENTITY $REDLOCK_FENCING_TOKEN\" > " + led + ".tmp && mv " + led +
               ".tmp " + led + "; while [ ! -e " + stop + " ]; do sleep 0.02; done")));
    };
    std::map<std::string, std::unique_ptr<tool_process>> runs;
    for (const auto* name : {"cand-a", "cand-b", "cand-c"})
        runs[name] = candidate(name);
    auto leader_now = [&]() -> std::string {
        for (const auto& [name, run] : runs)
            if (std::ifstream(s.file("led-" + name)).good() &&
                !std::ifstream(s.file("stop-" + name)).good())
                return name;
        return {};
    };
    std::uint64_t last_term = 0;
    for (int turn = 0; turn < 3; ++turn)
    {
        std::string leader;
        REQUIRE(eventually(
            [&] {
                leader = leader_now();
                return !leader.empty();
            },
            20000ms));
        const auto line = read_text(s.file("led-" + leader));
        INFO("turn " << turn << ": " << line);
        REQUIRE(line.rfind(leader + " ", 0) == 0);
        const auto term = std::stoull(line.substr(leader.size() + 1));
        CHECK(term > last_term);  // every new leader has a greater term
        last_term = term;
        // Exactly one leads: the others wait.
        for (const auto& [name, run] : runs)
            if (name != leader)
                CHECK_FALSE(std::ifstream(s.file("led-" + name)).good());
        program_process status(status_tool_args(m, {"--ttl", "5s"}, "leader"),
                               {.capture_stdout = true});
        CHECK(status.wait_exit(20s) == 0);
        const auto out = status.output();
        CHECK_THAT(out, Catch::StartsWith("leader: held by " + leader + " (holder "));
        CHECK_THAT(out, Catch::Contains(" " + std::to_string(term) + ","));
        // The leader steps down (COMMAND ends: redlock-run releases); the next one leads.
        std::ofstream(s.file("stop-" + leader)).put('\n');
        CHECK(runs[leader]->wait_exit(20s) == 0);
        runs.erase(leader);
        std::filesystem::remove(s.file("led-" + leader));
    }
    CHECK(runs.empty());
    CHECK(no_key_left(m, "leader"));
}
