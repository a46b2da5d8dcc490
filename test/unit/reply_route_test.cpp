// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's decision on a node's reply (cluster/reply_route.hpp), stepped by hand.
#include "routing/reply_route.hpp"

#include <catch2/catch.hpp>

#include <string_view>

using redlock::detail::max_redirects, redlock::detail::redirect_kind, redlock::detail::reply_route,
    redlock::detail::route_reply;
namespace resp = redlock::resp;

namespace {

resp::node_view error_reply(std::string_view text)
{
    return {resp::type::simple_error, 0, 0, text};
}

}  // namespace

TEST_CASE(
    "reply route: an answer, and any error that is not a redirection, goes to the command's owner",
    "[cluster][unit]")
{
    for (const auto& head :
         {resp::node_view{resp::type::simple_string, 0, 0, "OK"},
          resp::node_view{resp::type::null, 0, 0, {}},
          resp::node_view{resp::type::integer, 0, 0, "1"},
          resp::node_view{resp::type::array, 0, 2, {}}, error_reply("NOSCRIPT No matching script"),
          error_reply("TRYAGAIN Multiple keys request during rehashing of slot"),
          resp::node_view{resp::type::bulk_error, 0, 0, "ERR x"}, error_reply("MOVEDX 1 h:1"),
          error_reply("ASKING")})
    {
        INFO(head.value);
        CHECK(route_reply(head, "h", 0) == reply_route{});
    }
    // CLUSTERDOWN: the vote fails, and the map is read again (the slot may have no node).
    const auto down = route_reply(error_reply("CLUSTERDOWN Hash slot not served"), "h", 0);
    CHECK_FALSE(down.follow);
    CHECK(down.refresh);
}

TEST_CASE("reply route: MOVED is followed and asks for a fresh map, ASK is followed alone",
          "[cluster][unit]")
{
    const auto moved = route_reply(error_reply("MOVED 3999 127.0.0.1:7001"), "127.0.0.1", 0);
    REQUIRE(moved.follow);
    CHECK(moved.follow->kind == redirect_kind::moved);
    CHECK(moved.follow->slot == 3999);
    CHECK(moved.follow->to.port == 7001);
    CHECK(moved.refresh);

    const auto ask = route_reply(error_reply("ASK 3999 127.0.0.1:7002"), "127.0.0.1", 0);
    REQUIRE(ask.follow);
    CHECK(ask.follow->kind == redirect_kind::ask);
    CHECK(ask.follow->to.port == 7002);
    CHECK_FALSE(ask.refresh);

    // An empty host is the node that answered.
    const auto here = route_reply(error_reply("MOVED 1 :7003"), "10.1.2.3", 2);
    REQUIRE(here.follow);
    CHECK(here.follow->to.host == "10.1.2.3");
}

TEST_CASE("reply route: a redirection past the limit, or one that cannot be followed, is the "
          "answer and asks for a "
          "fresh map",
          "[cluster][unit]")
{
    for (unsigned hops = 0; hops <= max_redirects + 1; ++hops)
    {
        INFO("hops " << hops);
        const auto r = route_reply(error_reply("ASK 10 h:7000"), "h", hops);
        CHECK(r.follow.has_value() == (hops < max_redirects));
        CHECK(r.refresh == (hops >= max_redirects));
    }
    for (const auto text : {"MOVED 1 ?:7000", "MOVED 16384 h:7000", "ASK 1 h:0", "MOVED 1", "ASK"})
    {
        INFO(text);
        const auto r = route_reply(error_reply(text), "h", 0);
        CHECK_FALSE(r.follow);
        CHECK(r.refresh);
    }
}
