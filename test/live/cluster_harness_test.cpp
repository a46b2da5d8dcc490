// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The local_cluster fixture: what the cluster tests of issue 15 will rely on.
#include "local_cluster.hpp"
#include "process_status.hpp"

#include "protocol/resp_parser.hpp"
#include "routing/key_slot.hpp"
#include "routing/redirect.hpp"
#include "routing/slot_map.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace resp = redlock::resp;
using Catch::Matchers::Contains;
using redlock::detail::key_slot, redlock::detail::parse_redirect, redlock::detail::redirect_kind,
    redlock::detail::slot_map;
using redlock::test::has_children, redlock::test::local_cluster, redlock::test::process_gone;

namespace {

/// One reply's bytes and its nodes, which view the bytes.
struct reply
{
    std::string bytes;
    resp::parser parser;

    explicit reply(std::string b) : bytes(std::move(b))
    {
        INFO(bytes);
        REQUIRE(parser.parse(bytes) == resp::parse_status::done);
    }
    const resp::node_view& top() const { return parser.nodes().front(); }
};

}  // namespace

TEST_CASE("harness: a local cluster of 3 shards starts, covers every slot, answers MOVED for a "
          "foreign key, "
          "and stops everything it started",
          "[harness][cluster]")
{
    std::vector<pid_t> pids;
    {
        local_cluster cluster;
        REQUIRE(cluster.node_count() == 3);
        REQUIRE(cluster.shard_count() == 3);
        for (std::size_t i = 0; i < cluster.node_count(); ++i)
            pids.push_back(cluster.pid(i));

        const auto seeds = cluster.seeds();
        REQUIRE(seeds.size() == 3);
        CHECK(seeds[0] == "127.0.0.1:" + std::to_string(cluster.port(0)));
        CHECK(cluster.uri() == "redis-cluster://" + seeds[0] + "," + seeds[1] + "," + seeds[2]);

        // The slot map of a real CLUSTER SLOTS, through the parser the client will use.
        const reply slots(cluster.command(1, {"CLUSTER", "SLOTS"}));
        const auto parsed = slot_map::parse(slots.parser.nodes(), "127.0.0.1");
        INFO(parsed.error);
        REQUIRE(parsed);
        const slot_map& map = *parsed.map;
        CHECK(map.covers_all());
        REQUIRE(map.shards() == 3);
        std::set<std::size_t> owners;
        for (std::size_t s = 0; s < map.shards(); ++s)
        {
            const auto node = cluster.node_at(map.shard(s).port);
            REQUIRE(node);
            CHECK(map.shard(s).host == "127.0.0.1");
            owners.insert(*node);
            // The id in CLUSTER SLOTS is the node's own.
            const reply myid(cluster.command(*node, {"CLUSTER", "MYID"}));
            CHECK(myid.top().value == map.shard(s).id);
            CHECK(cluster.primaries().at(s) == *node);
        }
        CHECK(owners.size() == 3);

        // Our slot computation agrees with the server's.
        for (const std::string key :
             {"foo", "{user1000}.following", "lock:orders", "{lock:orders}:fence"})
        {
            const reply slot(cluster.command(0, {"CLUSTER", "KEYSLOT", key}));
            CHECK(slot.top().value == std::to_string(key_slot(key)));
        }

        // A SET to a node that does not serve the key's slot is redirected to the one that does.
        const std::string key = "foo";
        const auto slot = key_slot(key);
        const auto owner_shard = map.shard_of(slot);
        REQUIRE(owner_shard);
        const auto owner = cluster.node_at(map.shard(*owner_shard).port);
        REQUIRE(owner);
        const std::size_t wrong = (*owner + 1) % cluster.node_count();
        const reply moved(cluster.command(wrong, {"SET", key, "v"}));
        REQUIRE(moved.top().data_type == resp::type::simple_error);
        const auto redirect = parse_redirect(moved.top().value, "127.0.0.1");
        INFO(moved.bytes);
        REQUIRE(redirect);
        CHECK(redirect->kind == redirect_kind::moved);
        CHECK(redirect->slot == slot);
        CHECK(redirect->to.host == "127.0.0.1");
        CHECK(redirect->to.port == cluster.port(*owner));
        CHECK(map.find(redirect->to) == owner_shard);

        CHECK(cluster.command(*owner, {"SET", key, "v"}) == "+OK\r\n");
        CHECK(cluster.command(*owner, {"GET", key}) == "$1\r\nv\r\n");
    }
    for (const pid_t pid : pids)
    {
        INFO("pid " << pid);
        CHECK(process_gone(pid));
    }
    CHECK_FALSE(has_children());
}

TEST_CASE("harness: a local cluster that cannot form stops the nodes it started",
          "[harness][cluster]")
{
    SECTION("too few shards for redis-cli is refused before anything starts")
    {
        CHECK_THROWS_AS(local_cluster({.shards = 2}), std::invalid_argument);
    }
    SECTION("a failing redis-cli: its status in the message, no process left")
    {
        try
        {
            local_cluster cluster({.redis_cli = "false"});
            FAIL("the cluster formed without redis-cli");
        }
        catch (const std::runtime_error& e)
        {
            CHECK_THAT(e.what(), Contains("failed (exit status 1)"));
            CHECK_THAT(e.what(), Contains("--cluster create 127.0.0.1:"));
        }
    }
    SECTION("a redis-cli that cannot be found")
    {
        CHECK_THROWS_WITH(local_cluster({.redis_cli = "/nonexistent/redis-cli"}),
                          Contains("starting `/nonexistent/redis-cli --cluster create"));
    }
    CHECK_FALSE(has_children());
}
