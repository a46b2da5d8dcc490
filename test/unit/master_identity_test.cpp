// The same server given twice as a master is found, whatever way it is written.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <redlock/client.hpp>

#include "client_refusal.hpp"
#include "config/master_identity.hpp"

namespace {

using redlock::detail::first_duplicate;

std::vector<redlock::master_config> parsed(std::initializer_list<const char*> uris)
{
    std::vector<redlock::master_config> out;
    for (const auto* u : uris)
        out.push_back(redlock::parse_master_uri(u));
    return out;
}

using pair = std::pair<std::size_t, std::size_t>;

}  // namespace

TEST_CASE("master identity: the same server written differently is a duplicate", "[unit][masters]")
{
    CHECK(first_duplicate(parsed({"redis://127.0.0.1:7601", "redis://127.0.0.1:7601"})) ==
          pair{0, 1});
    CHECK(first_duplicate(parsed({"redis://127.0.0.1:7601", "redis://localhost:7601",
                                  "redis://127.0.0.1:7602"})) == pair{0, 1});
    CHECK(first_duplicate(parsed({"redis://LocalHost.:7601", "redis://[::1]:7601"})) == pair{0, 1});
    CHECK(first_duplicate(parsed({"redis://Redis-A.example.:6379", "redis://redis-a.EXAMPLE"})) ==
          pair{0, 1});
    CHECK(first_duplicate(parsed({"redis://[::ffff:10.0.0.1]:6379", "redis://10.0.0.1"})) ==
          pair{0, 1});
    CHECK(first_duplicate(parsed({"redis://[2001:db8::1]", "redis://[2001:0db8:0:0:0:0:0:1]"})) ==
          pair{0, 1});
    // The db index, the user and the scheme do not make another server.
    CHECK(first_duplicate(parsed({"redis://10.0.0.1/0", "rediss://u:p@10.0.0.1/3"})) == pair{0, 1});
    CHECK(first_duplicate(parsed({"unix:///tmp/a/../r.sock", "unix:///tmp/r.sock?db=2"})) ==
          pair{0, 1});
    // The first pair is named, in order.
    CHECK(first_duplicate(parsed({"redis://h1", "redis://h2", "redis://h3", "redis://h2",
                                  "redis://h1"})) == pair{1, 3});
}

TEST_CASE("master identity: cluster masters that share a node, or a standalone master that is one "
          "of a cluster's "
          "seeds, are duplicates",
          "[unit][masters]")
{
    CHECK(first_duplicate(parsed(
              {"redis-cluster://a:7000,b:7001", "redis-cluster://c:7000,B:7001"})) == pair{0, 1});
    CHECK(first_duplicate(parsed({"redis://x", "redis://127.0.0.1:7001",
                                  "redis-cluster://a:7000,localhost:7001"})) == pair{1, 2});
    CHECK_FALSE(first_duplicate(
        parsed({"redis-cluster://a:7000,a:7001", "redis-cluster://a:7002", "redis://a:7003"})));
}

TEST_CASE("master identity: distinct servers are accepted", "[unit][masters]")
{
    CHECK_FALSE(first_duplicate(
        parsed({"redis://127.0.0.1:7601", "redis://127.0.0.1:7602", "redis://127.0.0.1:7603"})));
    CHECK_FALSE(
        first_duplicate(parsed({"redis://10.0.0.1", "redis://10.0.0.2", "redis://10.0.0.3"})));
    CHECK_FALSE(first_duplicate(
        parsed({"redis://127.0.0.2:7601", "redis://127.0.0.1:7601"})));  // not knowable
    CHECK_FALSE(
        first_duplicate(parsed({"unix:///tmp/a.sock", "unix:///tmp/b.sock", "redis://localhost"})));
    CHECK_FALSE(first_duplicate(parsed({"redis://a.example", "redis://b.example"})));
}

TEST_CASE("client: the same master twice is rejected, naming both entries but no password",
          "[unit][masters]")
{
    auto message_of = [&](std::vector<std::string> masters) {
        redlock::client_config cfg;
        cfg.masters = std::move(masters);
        return redlock::test::client_refusal(cfg);
    };
    const auto msg = message_of(
        {"redis://:secret@127.0.0.1:7601", "redis://h:7602", "redis://:secret@localhost:7601"});
    CHECK_THAT(msg,
               Catch::Contains(
                   "masters 0 (redis://:***@127.0.0.1:7601) and 2 (redis://:***@localhost:7601)"));
    CHECK_THAT(msg, !Catch::Contains("secret"));
    CHECK_THAT(
        message_of({"redis://127.0.0.1:7601", "redis://127.0.0.1:7601", "redis://127.0.0.1:7601"}),
        Catch::Contains("masters 0"));
    CHECK(message_of({"redis://127.0.0.1:7601", "redis://127.0.0.1:7602"}) == "(accepted)");
}
