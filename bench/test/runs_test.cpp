// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench run as a program, against real masters (its own --spawn, or local_masters
// here): what --help, unreachable masters, signals, --fencing, --plot and passwords do to its
// exit status and output (guarantees.md B4, B5, B6, B9, B10, B12). Runs are short: a second or
// two, few workers.
#include <catch2/catch.hpp>

#include "bench_process.hpp"

#include "fake_server.hpp"
#include "local_masters.hpp"
#include "temp_dir.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using redlock::bench::test::bench_process;
using redlock::bench::test::read_file;
using redlock::test::temp_dir;

bool has(const std::string& s, std::string_view text) { return s.find(text) != std::string::npos; }

// Checks that `s` has each of `texts`, naming each one missing.
void check_has_each(const std::string& s, std::initializer_list<std::string_view> texts)
{
    for (const auto text : texts)
    {
        INFO("expected: " << text);
        CHECK(has(s, text));
    }
}

// A loopback port nobody listens on: bound, then closed (connections to it are refused).
std::string closed_port_uri()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    ::close(fd);
    return "redis://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

std::vector<std::string> with_masters(std::vector<std::string> args,
                                      const std::vector<std::string>& uris)
{
    for (const auto& u : uris)
    {
        args.push_back("--master");
        args.push_back(u);
    }
    return args;
}

// The directory of `exe` in PATH ("" when it is not there).
std::string where(const std::string& exe)
{
    std::istringstream dirs(std::getenv("PATH") ? std::getenv("PATH") : "");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (!dir.empty() && ::access((dir + "/" + exe).c_str(), X_OK) == 0)
            return dir;
    return "";
}

}  // namespace

TEST_CASE("runs: --help prints the usage on stdout and exits 0")
{
    bench_process p({"--help"});
    REQUIRE(p.wait_exit(10s) == 0);
    const auto out = p.output();
    INFO(out);
    check_has_each(out, {"redlock-bench [OPTIONS]", "--spawn", "--fencing", "Exit status: 0 ok",
                         "130 interrupted"});
}

TEST_CASE("runs: masters not reachable by a majority exit 2 before any run")
{
    SECTION("none of three: connections refused")
    {
        bench_process p(with_masters({"--workers", "2", "--duration", "0.2", "--warmup", "0"},
                                     {closed_port_uri(), closed_port_uri(), closed_port_uri()}));
        REQUIRE(p.wait_exit(10s) == 2);
        INFO(p.output());
        CHECK(has(p.output(), "only 0 of 3 masters reachable"));
        CHECK_FALSE(has(p.output(), "latency (us)"));  // no run, no summary
    }
    SECTION("one of three: a real master and two refused")
    {
        redlock::test::local_masters m({.count = 1});
        bench_process p(with_masters({"--workers", "2", "--duration", "0.2", "--warmup", "0"},
                                     {m.uri(0), closed_port_uri(), closed_port_uri()}));
        REQUIRE(p.wait_exit(10s) == 2);
        INFO(p.output());
        CHECK(has(p.output(), "only 1 of 3 masters reachable"));
        CHECK_FALSE(has(p.output(), "latency (us)"));
    }
    SECTION("a master that accepts and never answers: unreachable at the client's connect_timeout "
            "(2 s)")
    {
        // Not the 30 s readiness bound: the handshake's connect_timeout settles the first
        // connection attempt long before it.
        redlock::test::fake_server silent;
        silent.set_default(
            redlock::test::fake_script{}.when_done(redlock::test::fake_script::disposition::stall));
        const auto start = std::chrono::steady_clock::now();
        bench_process p(
            with_masters({"--workers", "2", "--duration", "0.2", "--warmup", "0"}, {silent.uri()}));
        REQUIRE(p.wait_exit(15s) == 2);
        INFO(p.output());
        CHECK(has(p.output(), "only 0 of 1 masters reachable"));
        CHECK(std::chrono::steady_clock::now() - start < 10s);
    }
}

TEST_CASE("runs: SIGINT or SIGTERM ends the run with exit 130 and the summary")
{
    const int signo = GENERATE(SIGINT, SIGTERM);
    INFO("signal " << signo);
    temp_dir dir;
    const auto json = dir.file("out.json");
    bench_process p({"--spawn", "2", "--workers", "4", "--resources", "2", "--duration", "60",
                     "--warmup", "0", "--json", json});
    // The first progress line (after 1 s): the run is measuring, the handlers are in place.
    REQUIRE(p.wait_output("cycles/s", 20s));
    p.signal(signo);
    const auto status = p.wait_exit(20s);
    const auto out = p.output();
    INFO(out);
    REQUIRE(status == 130);
    CHECK(has(out, "(interrupted)"));
    CHECK(has(out, "latency (us)"));
    CHECK_FALSE(has(out, "COUNTS DO NOT ADD UP"));
    const auto j = read_file(json);
    CHECK(has(j, "\"interrupted\": true"));
    CHECK(has(j, "\"counts_add_up\": true"));
}

TEST_CASE("runs: --fencing checks every holder's token, and a fence counter reset on the masters "
          "is a violation")
{
    redlock::test::local_masters m({.count = 3});
    temp_dir dir;
    const std::vector<std::string> args{"--fencing",   "--workers", "4",
                                        "--resources", "1",         "--warmup",
                                        "0",           "--json",    dir.file("out.json")};
    SECTION("tokens that grow: exit 0, every acquisition checked")
    {
        auto a = args;
        a.insert(a.end(), {"--duration", "0.5"});
        bench_process p(with_masters(a, m.uris()));
        REQUIRE(p.wait_exit(20s) == 0);
        const auto out = p.output();
        INFO(out);
        CHECK(has(out, "fencing tokens"));
        CHECK(has(out, "tokens not above the previous holder's: 0"));
        CHECK_FALSE(has(out, "VIOLATION"));
        const auto j = read_file(dir.file("out.json"));
        CHECK(has(j, "\"fencing\": {\"checked\":"));
        CHECK_FALSE(has(j, "\"checked\":0,"));
        CHECK(has(j, "\"violations\":0}"));
    }
    SECTION(
        "the counter deleted on every master mid-run: the next token is lower, reported, exit 1")
    {
        auto a = args;
        a.insert(a.end(), {"--duration", "2"});
        bench_process p(with_masters(a, m.uris()));
        REQUIRE(
            p.wait_output("cycles/s", 20s));  // a second of fenced locks: tokens in the thousands
        // Deleted one master after the other while the bench runs, the counter would be healed:
        // each commit sets it on every master again. So the bench is stopped, the commands it
        // sent are left to run, and the counter is deleted with the lock key: a commit still to
        // come finds no key of its own and sets nothing. Deleted again until it stays deleted
        // (on a busy machine a command sent before the stop may run late).
        p.signal(SIGSTOP);
        for (int round = 0;; ++round)
        {
            REQUIRE(round < 20);
            std::this_thread::sleep_for(100ms);
            bool existed = false;
            for (std::size_t i = 0; i < 3; ++i)
            {
                existed = m.command(i, {"DEL", "{bench:0}:fence"}) == ":1\r\n" || existed;
                m.command(i, {"DEL", "bench:0"});
            }
            REQUIRE((existed || round > 0));  // the counter was there to delete
            if (!existed)
                break;  // nothing came back in the last 100 ms
        }
        p.signal(SIGCONT);
        const auto status = p.wait_exit(20s);
        const auto out = p.output();
        INFO(out);
        REQUIRE(status.value_or(-1) == 1);
        CHECK(has(out, "VIOLATION"));
        CHECK_FALSE(has(out, "COUNTS DO NOT ADD UP"));  // the fencing check, not the counts
        const auto j = read_file(dir.file("out.json"));
        CHECK(has(j, "\"counts_add_up\": true"));
        CHECK_FALSE(has(j, "\"violations\":0}"));
    }
}

TEST_CASE(
    "runs: --plot without gnuplot in PATH stops at once with exit 2, before starting a master")
{
    // PATH with redis-server (and redis-cli) but no gnuplot: a missing check would start the
    // master and run.
    temp_dir bin;
    std::filesystem::create_directory(bin.file("bin"));
    for (const char* exe : {"redis-server", "redis-cli"})
        if (const auto d = where(exe); !d.empty())
            std::filesystem::create_symlink(d + "/" + exe, bin.file("bin") + "/" + exe);
    bench_process p({"--spawn", "1", "--workers", "1", "--duration", "0.2", "--warmup", "0",
                     "--plot", bin.file("plot.png")},
                    bin.file("bin"));
    REQUIRE(p.wait_exit(10s) == 2);
    const auto out = p.output();
    INFO(out);
    CHECK(has(out, "--plot needs gnuplot"));
    CHECK_FALSE(has(out, "starting"));
    CHECK_FALSE(std::filesystem::exists(bin.file("plot.png")));
}

TEST_CASE(
    "runs: against a password-protected master, the output and the JSON never show the password")
{
    redlock::test::local_masters m(
        {.count = 1, .extra_config = {"requirepass s3cret"}, .admin_password = "s3cret"});
    temp_dir dir;
    const auto json = dir.file("out.json");
    const auto uri = "redis://:s3cret@127.0.0.1:" + std::to_string(m.port(0));
    bench_process p(
        {"--master", uri, "--workers", "2", "--duration", "0.3", "--warmup", "0", "--json", json});
    REQUIRE(p.wait_exit(20s) ==
            0);  // the password was used: the master refuses commands without it
    const auto out = p.output();
    const auto j = read_file(json);
    INFO(out << j);
    CHECK_FALSE(has(out, "s3cret"));
    CHECK_FALSE(has(j, "s3cret"));
    CHECK(has(j, "\"masters\":[\"redis://:***@127.0.0.1:" + std::to_string(m.port(0))));
    CHECK_FALSE(has(j, "\"acquired\": 0,"));
}

TEST_CASE("runs: the holders' witness: --permits 2 never sees more than 2 holders of a resource, "
          "--unsafe-majority-semaphore does, --read-share never a writer beside anyone")
{
    redlock::test::local_masters m({.count = 5});
    temp_dir dir;
    // 8 workers on one resource, each holding 2 ms: holders overlap.
    const auto run = [&](std::vector<std::string> extra, const std::string& json) {
        std::vector<std::string> a{"--workers", "8", "--resources", "1",           "--hold", "2",
                                   "--warmup",  "0", "--json",      dir.file(json)};
        a.insert(a.end(), extra.begin(), extra.end());
        bench_process p(with_masters(a, m.uris()));
        const auto status = p.wait_exit(60s);
        INFO(p.output());
        REQUIRE(status.value_or(-1) == 0);
        return read_file(dir.file(json));
    };
    SECTION("the library's semaphore: 2 holders at once, never 3")
    {
        const auto j = run({"--permits", "2", "--duration", "1.5"}, "sound.json");
        INFO(j);
        CHECK(has(j, "\"semaphore\": {\"checked\":"));
        CHECK(has(j, "\"violations\":0,\"most_holders\":2}"));
    }
    SECTION("the majority-counting semaphore: more holders than its 2 permits, within 8 runs")
    {
        // A race between holders seen on different majorities: most runs of 2 s show one, not
        // every run on a loaded machine (3 runs in a row showed none once, in CI beside the
        // package test), so up to 8, each ending the loop when it shows one.
        bool over = false;
        for (int k = 0; k < 8 && !over; ++k)
        {
            const auto j = run({"--permits", "2", "--unsafe-majority-semaphore", "--duration", "2"},
                               "unsafe.json");
            INFO(j);
            CHECK(has(j, "\"unsafe_majority_semaphore\":true"));
            const auto at = j.find("\"most_holders\":");
            const int most = at == std::string::npos
                                 ? 0
                                 : std::atoi(j.c_str() + at + std::strlen("\"most_holders\":"));
            over = !has(j, "\"violations\":0,") && most >= 3;
        }
        CHECK(over);
    }
    SECTION("a read-write lock: readers together, no writer beside anyone")
    {
        const auto j =
            run({"--read-share", "0.5", "--retries", "20", "--duration", "1.5"}, "rw.json");
        INFO(j);
        CHECK(has(j, "\"rwlock\": {\"checked\":"));
        CHECK(has(j, "\"violations\":0,"));
        const auto readers = run({"--read-share", "1", "--duration", "1"}, "readers.json");
        INFO(readers);
        CHECK_FALSE(has(readers, "\"most_readers\":1,"));  // 8 readers of one resource overlap
        CHECK_FALSE(has(readers, "\"most_readers\":0,"));
    }
}
