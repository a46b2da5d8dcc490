// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The delayed restart enforced by the client, decided without a clock: what INFO server says,
// and when a master is quarantined.
#include "algorithm/restart_watch.hpp"
#include "protocol/server_info.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
using redlock::detail::parse_server_identity;
using redlock::detail::restart_watch;

namespace {

using time_point = std::chrono::steady_clock::time_point;
const time_point t_base{std::chrono::hours(100)};
const std::string run_id_a(40, 'a');
const std::string run_id_b(40, 'b');

}  // namespace

TEST_CASE("server_info: run_id and uptime from INFO server", "[restart]")
{
    const auto id =
        parse_server_identity("# Server\r\nredis_version:7.0.15\r\nrun_id:" + run_id_a +
                              "\r\ntcp_port:6379\r\nuptime_in_seconds:42\r\nuptime_in_days:0\r\n");
    REQUIRE(id.has_value());
    CHECK(id->run_id == run_id_a);
    CHECK(id->uptime_seconds == 42);
    // LF alone, and fields in any order.
    const auto lf = parse_server_identity("uptime_in_seconds:7\nrun_id:" + run_id_b + "\n");
    REQUIRE(lf.has_value());
    CHECK(lf->run_id == run_id_b);
    CHECK(lf->uptime_seconds == 7);

    // Missing or malformed: unknown, not a guess.
    CHECK_FALSE(parse_server_identity("# Server\r\nrun_id:" + run_id_a + "\r\n").has_value());
    CHECK_FALSE(parse_server_identity("uptime_in_seconds:5\r\n").has_value());
    CHECK_FALSE(
        parse_server_identity("run_id:" + run_id_a + "\r\nuptime_in_seconds:-1\r\n").has_value());
    CHECK_FALSE(
        parse_server_identity("run_id:" + run_id_a + "\r\nuptime_in_seconds:12x\r\n").has_value());
    CHECK_FALSE(parse_server_identity("run_id:\r\nuptime_in_seconds:5\r\n").has_value());
    CHECK_FALSE(parse_server_identity("").has_value());
}

TEST_CASE(
    "restart_watch: a run_id that changes is a restart, out for the quarantine from its start",
    "[restart]")
{
    restart_watch w;
    // First sight, long up: nothing to say.
    CHECK_FALSE(w.observe(run_id_a, 3600s, t_base, 10s, false));
    CHECK_FALSE(w.quarantined(t_base));
    // A reconnection to the same process: no restart.
    CHECK_FALSE(w.observe(run_id_a, 3700s, t_base + 100s, 10s, false));
    CHECK_FALSE(w.quarantined(t_base + 100s));
    // Another process, up for 3 s as the server counts (2 to 4 s): out until its latest
    // possible start (2 s ago) + 10 s.
    CHECK(w.observe(run_id_b, 3s, t_base + 200s, 10s, false));
    CHECK(w.started() == t_base + 198s);
    CHECK(w.until() == t_base + 208s);
    CHECK(w.quarantined(t_base + 200s));
    CHECK(w.quarantined(t_base + 208s - 1ms));
    CHECK_FALSE(w.quarantined(t_base + 208s));
    CHECK(w.restarts() == 1);
    // Seen again after the quarantine: the same process, nothing new.
    CHECK_FALSE(w.observe(run_id_b, 20s, t_base + 214s, 10s, false));
    CHECK_FALSE(w.quarantined(t_base + 214s));
}

TEST_CASE("restart_watch: whole-second uptimes never end the quarantine before the true start + "
          "quarantine",
          "[restart]")
{
    // The server reports floor(its time at the INFO) - floor(its time at start). A start at
    // x.9 s seen at (x+1).1 s is reported as up 1 s while it has been up 0.2 s.
    using std::chrono::milliseconds;
    for (int start_ms = 0; start_ms < 1000; start_ms += 100)
        for (int seen_after_ms = 0; seen_after_ms < 3000; seen_after_ms += 70)
        {
            const auto start = t_base + milliseconds(start_ms);
            const auto now = start + milliseconds(seen_after_ms);
            const auto reported =
                std::chrono::seconds((start_ms + seen_after_ms) / 1000 - start_ms / 1000);
            restart_watch w;
            w.observe(run_id_a, 3600s, t_base - 10s, 10s, false);
            INFO("start +" << start_ms << " ms, seen " << seen_after_ms << " ms later, reported "
                           << reported.count() << " s");
            CHECK(w.observe(run_id_b, reported, now, 10s, false));
            CHECK(w.started() >= start);
            CHECK(w.quarantined(start + 10s - 1ms));
            // At most two resolutions late: up to one from the rounding, plus the one added.
            CHECK(w.started() < start + 2s);
            CHECK(w.started() <= now);
        }
}

TEST_CASE("restart_watch: a restart seen later than the quarantine is over at once", "[restart]")
{
    restart_watch w;
    w.observe(run_id_a, 100s, t_base, 10s, false);
    // The client was cut off for a minute; the master restarted 30 s ago.
    CHECK_FALSE(w.observe(run_id_b, 30s, t_base + 60s, 10s, false));
    CHECK(w.restarts() == 1);
    CHECK_FALSE(w.quarantined(t_base + 60s));
}

TEST_CASE("restart_watch: young masters at first sight, only when asked", "[restart]")
{
    SECTION("off: a fresh deployment is usable at once")
    {
        restart_watch w;
        CHECK_FALSE(w.observe(run_id_a, 2s, t_base, 10s, false));
        CHECK_FALSE(w.quarantined(t_base));
    }
    SECTION("on: up for less than the quarantine is out for the rest of it")
    {
        restart_watch w;
        CHECK(w.observe(run_id_a, 2s, t_base, 10s, true));
        CHECK(w.until() == t_base + 9s);
        CHECK(w.quarantined(t_base + 9s - 1ms));
        CHECK_FALSE(w.quarantined(t_base + 9s));
    }
    SECTION("on: up for the quarantine as the server counts may be up for a second less")
    {
        restart_watch w;
        CHECK(w.observe(run_id_a, 10s, t_base, 10s, true));
        CHECK(w.until() == t_base + 1s);
        CHECK(w.quarantined(t_base + 1s - 1ms));
    }
    SECTION("on: up for longer than the quarantine and a second is not")
    {
        restart_watch w;
        CHECK_FALSE(w.observe(run_id_a, 11s, t_base, 10s, true));
        CHECK_FALSE(w.quarantined(t_base));
    }
}

TEST_CASE("restart_watch: a quarantine of zero is off", "[restart]")
{
    restart_watch w;
    w.observe(run_id_a, 100s, t_base, 0s, true);
    CHECK_FALSE(w.observe(run_id_b, 1s, t_base + 5s, 0s, true));
    CHECK_FALSE(w.quarantined(t_base + 5s));
}
