// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's decisions on the slot map (routing/cluster_router.hpp): the first map and
// the commands that wait for it, a stale map mended, reads rate-limited, failed reads, every seed
// down and the doubling retry, a slot no node serves; stepped by hand, the times made up.
#include "routing/cluster_router.hpp"

#include "cluster_router_words.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

// In a namespace of its own: the unit tests are compiled as one unity source.
namespace redlock_test::router {

TEST_CASE("cluster router: commands wait for the first map, then go to their slot's primary",
          "[cluster][unit]")
{
    auto r = make_router();
    const auto fetch = r.start(t0);
    CHECK(fetch.what == map_kind::fetch);
    CHECK(fetch.ask == std::vector<std::size_t>{0});  // the first seed
    CHECK(r.nodes()[0].port == 7000);

    const auto a = r.take(100, request_mode::plain);
    const auto b = r.take(16000, request_mode::plain);
    CHECK(r.route(a, t0).command.what == kind::queued);
    CHECK(r.route(b, t0).command.what == kind::queued);
    CHECK(r.state() == map_state::connecting);

    const wire map(three_shards());
    const auto up = r.on_map_reply(0, {}, "", map.nodes(), t0 + 1ms);
    CHECK(up.news == change::up);
    CHECK(r.state() == map_state::ready);
    REQUIRE(up.commands.size() == 2);
    CHECK(up.commands[0] == send(a, 1));
    CHECK(up.commands[1] == send(b, 3));
    CHECK(up.next.what == map_kind::none);
    CHECK(r.primaries() == std::vector<std::size_t>{1, 2, 3});

    // Once the map is known, straight to the node.
    const auto c = r.take(6000, request_mode::plain);
    check_decision(r.route(c, t0 + 2ms), send(c, 2), map_kind::none);
}

TEST_CASE("cluster router: a stale map is answered by MOVED, followed at once, then the refresh "
          "mends the map",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = r.take(100, request_mode::plain);
    REQUIRE(r.route(a, t0 + 200ms).command == send(a, 1));
    CHECK_FALSE(r.sent(a, 1, false, false));

    // Slots 0-999 moved to 7002: the command goes there, and the map is read again (at once:
    // the last read was long enough ago), from a primary, a ready one first.
    const auto d = reply(r, a, "-MOVED 100 h:7002\r\n", t0 + 200ms);
    check_decision(d, send(a, 2), map_kind::fetch);
    CHECK(d.map.ask.size() == 3);
    CHECK(r.at(a).hops == 1);
    r.sent(a, 2, false, false);
    CHECK(r.on_reply(a, {}, ok().head(), t0 + 201ms).command == deliver(a, 2));
    r.release(a);

    // The MOVED repaired the slot it named already; not yet its neighbours.
    const auto b = r.take(100, request_mode::plain);
    CHECK(r.route(b, t0 + 202ms).command == send(b, 2));
    r.release(b);
    const auto c = r.take(999, request_mode::plain);
    CHECK(r.route(c, t0 + 202ms).command == send(c, 1));
    r.release(c);

    // The fresh map covers the whole moved range; nothing else changes (no news).
    const wire fresh(
        slots({{0, 999, 7002}, {1000, 5460, 7001}, {5461, 10922, 7002}, {10923, 16383, 7003}}));
    const auto m = r.on_map_reply(d.map.ask.front(), {}, "", fresh.nodes(), t0 + 203ms);
    CHECK(m.news == change::none);
    CHECK(m.commands.empty());
    CHECK(m.next.what == map_kind::none);
    const auto e = r.take(999, request_mode::plain);
    CHECK(r.route(e, t0 + 204ms).command == send(e, 2));
}

TEST_CASE("cluster router: map reads are rate-limited by refresh_interval, one at a time",
          "[cluster][unit]")
{
    auto r = ready_router();  // the map was read at t0
    const wire moved("-MOVED 100 h:7002\r\n");
    const auto moved_once = [&](time_point now) {
        const auto a = r.take(100, request_mode::plain);
        const auto d0 = r.route(a, now);
        r.sent(a, *d0.command.node, false, false);
        const auto d = r.on_reply(a, {}, moved.head(), now);
        r.release(a);
        return d.map;
    };
    // 10 ms after the last read: not before t0 + 100 ms.
    const auto first = moved_once(t0 + 10ms);
    CHECK(first.what == map_kind::arm);
    CHECK(first.at == t0 + 100ms);
    CHECK(r.timer_armed());
    // Armed already: nothing more.
    CHECK(moved_once(t0 + 50ms).what == map_kind::none);
    // The timer: the read.
    const auto fired = r.on_timer(t0 + 100ms);
    CHECK(fired.what == map_kind::fetch);
    CHECK_FALSE(r.timer_armed());
    // While that read is out, no other.
    CHECK(moved_once(t0 + 300ms).what == map_kind::none);
    const wire map(three_shards());
    CHECK(r.on_map_reply(fired.ask.front(), {}, "", map.nodes(), t0 + 301ms).news == change::none);
    // It started at t0 + 100 ms: the next may go at t0 + 200 ms, so at once at t0 + 302 ms.
    CHECK(moved_once(t0 + 302ms).what == map_kind::fetch);
    // The primaries are asked in turn: each read starts one further.
    CHECK(fired.ask == std::vector<std::size_t>{1, 2, 3});
}

TEST_CASE("cluster router: a failed read of the map keeps the map known", "[cluster][unit]")
{
    auto r = ready_router();
    const auto fetch = r.on_timer(t0 + 1s);  // no timer: nothing
    CHECK(fetch.what == map_kind::none);
    const auto a = r.take(100, request_mode::plain);
    r.sent(a, 1, false, false);
    const auto d = reply(r, a, "-CLUSTERDOWN The cluster is down\r\n", t0 + 1s);
    REQUIRE(d.map.what == map_kind::fetch);
    const auto m =
        r.on_map_reply(d.map.ask.front(), error::connection_lost, "dropped", {}, t0 + 1s + 1ms);
    CHECK(m.news == change::none);
    CHECK(m.next.what == map_kind::none);  // the next redirection asks again
    CHECK(r.state() == map_state::ready);
    CHECK(r.has_map());
}

TEST_CASE("cluster router: every seed failing is down, with the waiting commands failed, then the "
          "seeds again after a doubling delay",
          "[cluster][unit]")
{
    auto r = make_router();
    const auto f0 = r.start(t0);
    const auto a = r.take(100, request_mode::plain);
    REQUIRE(r.route(a, t0).command.what == kind::queued);

    // The first seed refuses the connection: the second is asked.
    const auto m0 = r.on_map_reply(f0.ask.front(), error::connect_failed, "", {}, t0 + 1ms);
    CHECK(m0.news == change::none);
    REQUIRE(m0.next.what == map_kind::fetch);
    CHECK(m0.next.ask == std::vector<std::size_t>{1});
    // The second answers an error: down, with why.
    const wire refused("-ERR unknown command 'CLUSTER'\r\n");
    const auto m1 = r.on_map_reply(1, {}, "", refused.nodes(), t0 + 2ms);
    CHECK(m1.news == change::down);
    CHECK(m1.ec == error::server_error);
    CHECK(m1.detail == "cluster h:7000: node h:7001 refused CLUSTER SLOTS: ERR unknown command "
                       "'CLUSTER'");
    REQUIRE(m1.commands.size() == 1);
    CHECK(m1.commands[0].what == kind::fail);
    CHECK(m1.commands[0].index == a);
    CHECK(m1.commands[0].ec == error::server_error);
    CHECK(m1.commands[0].detail == m1.detail);
    CHECK(m1.next.what == map_kind::arm);
    CHECK(m1.next.at == t0 + 2ms + 100ms);
    CHECK(r.state() == map_state::down);
    CHECK(r.last_error() == error::server_error);
    r.release(a);

    // Meanwhile a command is refused, the detail left saying why.
    const auto b = r.take(100, request_mode::plain);
    const auto refusal = r.route(b, t0 + 3ms).command;
    CHECK(refusal.what == kind::refuse);
    CHECK(refusal.ec == error::not_connected);
    CHECK(refusal.source == detail_from::keep);
    r.release(b);

    // The seeds again, from the next one; every round that fails doubles the delay, up to the
    // longest (400 ms here).
    time_point now = m1.next.at;
    std::chrono::milliseconds expected{200};
    for (int round = 0; round < 4; ++round)
    {
        INFO("round " << round);
        const auto f = r.on_timer(now);
        REQUIRE(f.what == map_kind::fetch);
        CHECK(r.state() == map_state::connecting);
        const auto n0 = r.on_map_reply(f.ask.front(), error::connect_failed, "", {}, now);
        REQUIRE(n0.next.what == map_kind::fetch);
        const wire garbage(":1\r\n");
        const auto n1 = r.on_map_reply(n0.next.ask.front(), {}, "", garbage.nodes(), now);
        CHECK(n1.news == change::down);
        CHECK(n1.ec == error::unexpected_reply);
        REQUIRE(n1.next.what == map_kind::arm);
        CHECK(n1.next.at == now + expected);
        now = n1.next.at;
        expected = std::min(expected * 2, std::chrono::milliseconds(400));
    }

    // Then a seed answers: up, and the delay starts over.
    const auto f = r.on_timer(now);
    const wire map(three_shards());
    const auto up = r.on_map_reply(f.ask.front(), {}, "", map.nodes(), now);
    CHECK(up.news == change::up);
    CHECK(r.state() == map_state::ready);
    CHECK_FALSE(r.last_error());
}

TEST_CASE("cluster router: a slot no node serves is refused, and the map read again",
          "[cluster][unit]")
{
    auto r = make_router();
    const auto f = r.start(t0);
    const auto queued = r.take(12000, request_mode::plain);
    r.route(queued, t0);
    const wire part(slots({{0, 5460, 7001}}));
    const auto up = r.on_map_reply(f.ask.front(), {}, "", part.nodes(), t0);
    REQUIRE(up.commands.size() == 1);
    CHECK(up.commands[0].what == kind::fail);
    CHECK(up.commands[0].ec == error::not_connected);
    CHECK(up.commands[0].detail == "cluster h:7000: slot 12000 is served by no node");
    r.release(queued);

    const auto a = r.take(12000, request_mode::plain);
    const auto d = r.route(a, t0 + 200ms);
    CHECK(d.command.what == kind::refuse);
    CHECK(d.command.detail == "cluster h:7000: slot 12000 is served by no node");
    CHECK(d.map.what == map_kind::fetch);
}

}  // namespace redlock_test::router
