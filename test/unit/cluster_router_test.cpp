// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's routing decisions on commands (routing/cluster_router.hpp): redirections,
// WAIT, NOSCRIPT, close, tickets, stepped by hand through scripted event sequences: no
// connection, no clock (the times are made up). The slot map's: cluster_router_map_test.cpp.
#include "routing/cluster_router.hpp"
#include "routing/reply_route.hpp"

#include "cluster_router_words.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

// In a namespace of its own: the unit tests are compiled as one unity source.
namespace redlock_test::router {

using redlock::detail::max_redirects;

TEST_CASE("cluster router: ASK goes once to the importing node behind ASKING, the map unchanged",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = sent_command(r, 1, t0 + 200ms);
    const auto d = reply(r, a, "-ASK 100 h:7009\r\n", t0 + 200ms);
    CHECK(d.map.what == map_kind::none);  // an ASK says nothing of the map
    REQUIRE(r.nodes().size() == 5);       // a node not in the map: reached for this command
    CHECK(r.nodes()[4].port == 7009);
    CHECK(d.command == send(a, 4, true));
    r.sent(a, 4, true, false);
    CHECK(r.at(a).asking);
    CHECK(r.on_reply(a, {}, ok().head(), t0 + 201ms).command == deliver(a, 4));
    r.release(a);

    // The next command for the slot still goes to its owner in the map.
    const auto b = r.take(100, request_mode::plain);
    CHECK(r.route(b, t0 + 202ms).command == send(b, 1));
}

TEST_CASE("cluster router: an ASK of a tracked read is not followed, and its reader sees it",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = sent_command(r, 1, t0 + 200ms, 100, request_mode::tracked_read);
    const auto d = reply(r, a, "-ASK 100 h:7009\r\n", t0 + 200ms);
    CHECK(d.command == deliver(a, 1));
    CHECK(r.nodes().size() == 4);  // the importing node is not reached

    // A MOVED one is followed (CLIENT CACHING goes again with it).
    const auto b = sent_command(r, 1, t0 + 200ms, 100, request_mode::tracked_read);
    CHECK(reply(r, b, "-MOVED 100 h:7003\r\n", t0 + 200ms).command == send(b, 3));
}

TEST_CASE("cluster router: TRYAGAIN is the answer, CLUSTERDOWN is too, and the map is read again",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = sent_command(r, 1, t0 + 200ms);
    check_decision(
        reply(r, a, "-TRYAGAIN Multiple keys request during rehashing of slot\r\n", t0 + 200ms),
        deliver(a, 1), map_kind::none);
    r.release(a);

    const auto b = sent_command(r, 1, t0 + 200ms);
    check_decision(reply(r, b, "-CLUSTERDOWN Hash slot not served\r\n", t0 + 200ms), deliver(b, 1),
                   map_kind::fetch);
}

TEST_CASE("cluster router: redirections that loop stop after max_redirects, and the map is read "
          "again",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = sent_command(r, 1, t0 + 200ms);
    // Two nodes that each say the other owns the slot.
    const wire to2("-MOVED 100 h:7002\r\n");
    const wire to1("-MOVED 100 h:7001\r\n");
    std::size_t at = 1;
    for (unsigned hop = 0; hop < max_redirects; ++hop)
    {
        INFO("hop " << hop);
        const auto d = r.on_reply(a, {}, at == 1 ? to2.head() : to1.head(), t0 + 200ms);
        const std::size_t next = at == 1 ? 2 : 1;
        REQUIRE(d.command == send(a, next));
        r.sent(a, next, false, false);
        at = next;
    }
    const auto last = r.on_reply(a, {}, at == 1 ? to2.head() : to1.head(), t0 + 200ms);
    CHECK(last.command == deliver(a, at));  // the vote fails with the redirection
    CHECK(r.at(a).hops == max_redirects);
}

TEST_CASE("cluster router: a connection failure fails the command with the node's detail and "
          "reads the map again, as does a refused sending",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = sent_command(r, 1, t0 + 200ms);
    const auto d = r.on_reply(a, error::connection_lost, nullptr, t0 + 200ms);
    CHECK(d.command.what == kind::fail);
    CHECK(d.command.ec == error::connection_lost);
    CHECK(d.command.source == detail_from::node);
    CHECK(d.command.node == 1u);
    CHECK(d.map.what == map_kind::fetch);
    r.release(a);

    auto s = ready_router();
    const auto b = s.take(100, request_mode::plain);
    REQUIRE(s.route(b, t0 + 200ms).command == send(b, 1));
    CHECK(s.route_refused(t0 + 200ms).what == map_kind::fetch);
}

TEST_CASE("cluster router: WAIT batches and what their answers decide", "[cluster][unit]")
{
    auto r = ready_router(1);
    const auto write = [&](std::uint16_t slot) {
        const auto i = r.take(slot, request_mode::replicated);
        REQUIRE(r.route(i, t0 + 200ms).command.what == kind::send);
        return i;
    };
    // Two writes in one turn to node 1: one WAIT; a third after it was queued: the next one.
    const auto a = write(100);
    const auto b = write(200);
    CHECK(r.sent(a, 1, false, false));
    CHECK_FALSE(r.sent(b, 1, false, false));
    r.wait_queued(1);
    const auto c = write(300);
    CHECK(r.sent(c, 1, false, false));
    r.wait_queued(1);
    // Their answers are held; an error reply is not (nothing was written).
    CHECK(r.on_reply(a, {}, ok().head(), t0 + 201ms).command.what == kind::hold);
    CHECK(reply(r, b, "-OOM command not allowed\r\n", t0 + 201ms).command == deliver(b, 1));
    r.release(b);
    CHECK(r.on_reply(c, {}, ok().head(), t0 + 201ms).command.what == kind::hold);

    // The first WAIT: one replica, enough. It settles a only (b was delivered).
    const wire one(":1\r\n");
    const auto first = r.on_wait_reply(1, {}, one.head());
    REQUIRE(first.size() == 1);
    CHECK(first[0].what == kind::deliver);
    CHECK(first[0].index == a);
    CHECK(first[0].held);
    r.release(a);
    // The second: none in time.
    const wire none(":0\r\n");
    const auto second = r.on_wait_reply(1, {}, none.head());
    REQUIRE(second.size() == 1);
    CHECK(second[0].what == kind::fail);
    CHECK(second[0].ec == error::not_replicated);
    CHECK(second[0].detail == "cluster h:7000: node h:7001: WAIT saw 0 of the 1 replica "
                              "acknowledgement(s) required in time");
    r.release(c);
    // No WAIT left: nothing.
    CHECK(r.on_wait_reply(1, {}, one.head()).empty());

    // A WAIT that fails with the connection fails what it covers; one refused too.
    const auto d = write_awaiting_wait(r);
    r.on_reply(d, {}, ok().head(), t0 + 202ms);
    const auto lost = r.on_wait_reply(1, error::connection_lost, nullptr);
    REQUIRE(lost.size() == 1);
    CHECK(lost[0].ec == error::connection_lost);
    r.release(d);
    const auto e = write_awaiting_wait(r);
    r.on_reply(e, {}, ok().head(), t0 + 203ms);
    const wire noreplicas("-NOREPLICAS\r\n");
    const auto refused = r.on_wait_reply(1, {}, noreplicas.head());
    REQUIRE(refused.size() == 1);
    CHECK(refused[0].ec == error::not_replicated);
    r.release(e);
}

TEST_CASE("cluster router: a write redirected after its sending is not settled by the old node's "
          "WAIT",
          "[cluster][unit]")
{
    auto r = ready_router(1);
    const auto a = write_awaiting_wait(r);
    REQUIRE(reply(r, a, "-MOVED 100 h:7002\r\n", t0 + 200ms).command == send(a, 2));
    CHECK(r.sent(a, 2, false, false));  // a WAIT on its new node
    const wire one(":1\r\n");
    CHECK(r.on_wait_reply(1, {}, one.head()).empty());
    r.wait_queued(2);
    CHECK(r.on_reply(a, {}, ok().head(), t0 + 201ms).command.what == kind::hold);
    const auto settled = r.on_wait_reply(2, {}, one.head());
    REQUIRE(settled.size() == 1);
    CHECK(settled[0].index == a);
    CHECK(settled[0].what == kind::deliver);
}

TEST_CASE("cluster router: a WAIT refused before its write answered settles the write when it "
          "answers (found by the injected failures: it was held forever)",
          "[cluster][unit]")
{
    auto r = ready_router(1);
    const auto a = write_awaiting_wait(r);
    // The connection refuses the WAIT: nothing is held yet.
    CHECK(r.on_wait_reply(1, error::not_connected, nullptr).empty());
    // The write's answer comes: failed, as the WAIT that would have counted it.
    const auto d = r.on_reply(a, {}, ok().head(), t0 + 201ms);
    CHECK(d.command.what == kind::fail);
    CHECK(d.command.ec == error::not_connected);
    CHECK(d.command.detail == "cluster h:7000: node h:7001: " +
                                  redlock::make_error_code(error::not_connected).message());
    r.release(a);

    // The next write on that index starts clean.
    const auto b = r.take(100, request_mode::replicated);
    CHECK(b == a);
    r.route(b, t0 + 202ms);
    CHECK(r.sent(b, 1, false, false));
    r.wait_queued(1);
    CHECK(r.on_reply(b, {}, ok().head(), t0 + 203ms).command.what == kind::hold);
}

TEST_CASE("cluster router: without acknowledgements asked for, a replicated write is plain",
          "[cluster][unit]")
{
    auto r = ready_router(0);
    const auto a = r.take(100, request_mode::replicated);
    CHECK(r.at(a).mode == request_mode::plain);
    r.route(a, t0 + 200ms);
    CHECK_FALSE(r.sent(a, 1, false, false));
    CHECK(r.on_reply(a, {}, ok().head(), t0 + 201ms).command == deliver(a, 1));
}

TEST_CASE("cluster router: NOSCRIPT to an EVALSHA sends the EVAL to the same node, ASKING kept",
          "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = r.take(100, request_mode::plain, 3);
    REQUIRE(r.route(a, t0 + 200ms).command == send(a, 1));
    r.sent(a, 1, false, false);
    REQUIRE(reply(r, a, "-ASK 100 h:7009\r\n", t0 + 200ms).command == send(a, 4, true));
    r.sent(a, 4, true, true);  // the importing node had run it: EVALSHA
    const wire noscript("-NOSCRIPT No matching script. Please use EVAL.\r\n");
    const auto d = r.on_reply(a, {}, noscript.head(), t0 + 201ms);
    CHECK(d.script == news::lost);
    CHECK(d.command == send(a, 4, true));
    CHECK(r.at(a).eval_only);
    r.sent(a, 4, true, false);
    const auto e = r.on_reply(a, {}, ok().head(), t0 + 202ms);
    CHECK(e.script == news::ran);
    CHECK(e.command == deliver(a, 4));
    r.release(a);

    // A NOSCRIPT to an EVAL is the answer (the owner sees it).
    const auto b = r.take(100, request_mode::plain, 3);
    r.route(b, t0 + 203ms);
    r.sent(b, 1, false, false);
    const auto f = r.on_reply(b, {}, noscript.head(), t0 + 204ms);
    CHECK(f.script == news::none);
    CHECK(f.command == deliver(b, 1));
}

TEST_CASE("cluster router: close fails the waiting commands, and a command after it still goes "
          "to its node",
          "[cluster][unit]")
{
    auto r = make_router();
    r.start(t0);
    const auto a = r.take(100, request_mode::plain);
    r.route(a, t0);
    const auto failed = r.close();
    REQUIRE(failed.size() == 1);
    CHECK(failed[0].index == a);
    CHECK(failed[0].ec == error::connection_closed);
    CHECK(failed[0].detail == "cluster h:7000: closed");
    CHECK(r.state() == map_state::closed);
    CHECK(r.close().empty());
    r.release(a);
    // No map: refused, sent nowhere.
    const auto b = r.take(100, request_mode::plain);
    const auto refused = r.route(b, t0).command;
    CHECK(refused.what == kind::refuse);
    CHECK(refused.ec == error::connection_closed);
    CHECK_FALSE(refused.node);
    // A map reply after close changes nothing.
    const wire map(three_shards());
    CHECK(r.on_map_reply(0, {}, "", map.nodes(), t0).news == change::none);

    // With a map: refused, and sent to its node anyway (a release close() caused).
    auto s = ready_router();
    s.close();
    CHECK(s.on_timer(t0 + 1s).what == map_kind::none);
    const auto c = s.take(100, request_mode::plain);
    const auto sent_anyway = s.route(c, t0 + 1s).command;
    CHECK(sent_anyway.what == kind::refuse);
    CHECK(sent_anyway.node == 1u);
    s.sent(c, 1, false, false);
    s.release(c);
    // Its reply, when the draining connection brings it, has no one to go to.
    check_decision(reply(s, c, "+OK\r\n", t0 + 2s), step{}, map_kind::none);
    const auto again = s.take(100, request_mode::plain);
    CHECK(again == c);
    CHECK(s.take(100, request_mode::plain) != c);  // the index was freed once
}

TEST_CASE("cluster router: a ticket names one use of a command", "[cluster][unit]")
{
    auto r = ready_router();
    const auto a = r.take(100, request_mode::plain);
    const auto t = r.ticket(a);
    CHECK(r.abandon(t) == a);
    CHECK_FALSE(r.abandon(t));  // spent
    CHECK(r.at(a).live);        // the command still runs
    r.release(a);
    const auto b = r.take(100, request_mode::plain);
    CHECK(b == a);  // the index is taken again
    CHECK_FALSE(r.abandon(t));
    CHECK(r.abandon(r.ticket(b)) == b);
    CHECK_FALSE(r.abandon(std::uint64_t{12345}));
}

}  // namespace redlock_test::router
