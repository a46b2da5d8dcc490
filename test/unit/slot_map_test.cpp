// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/slot_map.hpp"

#include "protocol/resp_parser.hpp"
#include "routing/key_slot.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

using namespace std::string_literals;
using namespace std::string_view_literals;
namespace resp = redlock::resp;
using Catch::Matchers::Contains;
using redlock::detail::cluster_endpoint, redlock::detail::key_slot,
    redlock::detail::parsed_slot_map, redlock::detail::slot_count, redlock::detail::slot_map;

namespace {

// CLUSTER SLOTS of a real cluster: three redis-server 7.0.15 primaries on 127.0.0.1, ports
// 23701-23703, started with `--cluster-enabled yes --cluster-node-timeout 2000` and joined
// with `redis-cli --cluster create 127.0.0.1:23701 127.0.0.1:23702 127.0.0.1:23703
// --cluster-replicas 0 --cluster-yes`. The bytes were read off a socket to 127.0.0.1:23702
// after sending CLUSTER SLOTS, in RESP2 and (after HELLO 3) in RESP3.
constexpr std::string_view captured_resp2 =
    "*3\r\n"
    "*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:23701\r\n$"
    "40\r\n3d1902b459cee0e252f4f38a41626716890ac5cb\r\n*0\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n127.0.0.1\r\n:23702\r\n$"
    "40\r\n1eb99abcb3761989813d74a4c7829b2e76002606\r\n*0\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:23703\r\n$"
    "40\r\nd7291ed3d327f83cc8d8633f482e6d07a898e26f\r\n*0\r\n";
constexpr std::string_view captured_resp3 =
    "*3\r\n"
    "*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:23701\r\n$"
    "40\r\n3d1902b459cee0e252f4f38a41626716890ac5cb\r\n%0\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n127.0.0.1\r\n:23702\r\n$"
    "40\r\n1eb99abcb3761989813d74a4c7829b2e76002606\r\n%0\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:23703\r\n$"
    "40\r\nd7291ed3d327f83cc8d8633f482e6d07a898e26f\r\n%0\r\n";
// The same cluster after `CONFIG SET cluster-announce-hostname shard-a.example` on 23701, read
// from 23702 in RESP3: the metadata carries the host name, the endpoint stays the IP address.
constexpr std::string_view captured_hostname_metadata_resp3 =
    "*3\r\n"
    "*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:23701\r\n$"
    "40\r\n3d1902b459cee0e252f4f38a41626716890ac5cb\r\n"
    "%1\r\n$8\r\nhostname\r\n$15\r\nshard-a.example\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n127.0.0.1\r\n:23702\r\n$"
    "40\r\n1eb99abcb3761989813d74a4c7829b2e76002606\r\n%0\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:23703\r\n$"
    "40\r\nd7291ed3d327f83cc8d8633f482e6d07a898e26f\r\n%0\r\n";
// Then, on 23702, `CONFIG SET cluster-preferred-endpoint-type hostname` (RESP2): the endpoint
// is the host name where there is one and "?" where there is none, with the IP address in
// the metadata.
constexpr std::string_view captured_prefer_hostname_resp2 =
    "*3\r\n"
    "*3\r\n:0\r\n:5460\r\n*4\r\n$15\r\nshard-a.example\r\n:23701\r\n$"
    "40\r\n3d1902b459cee0e252f4f38a41626716890ac5cb\r\n"
    "*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$1\r\n?\r\n:23702\r\n$"
    "40\r\n1eb99abcb3761989813d74a4c7829b2e76002606\r\n"
    "*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$1\r\n?\r\n:23703\r\n$"
    "40\r\nd7291ed3d327f83cc8d8633f482e6d07a898e26f\r\n"
    "*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n";
// Then `CONFIG SET cluster-preferred-endpoint-type unknown-endpoint` (RESP2): null endpoints.
// (A MOVED from that node read "-MOVED 12182 :23703".)
constexpr std::string_view captured_unknown_endpoint_resp2 =
    "*3\r\n"
    "*3\r\n:0\r\n:5460\r\n*4\r\n$-1\r\n:23701\r\n$"
    "40\r\n3d1902b459cee0e252f4f38a41626716890ac5cb\r\n"
    "*4\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$15\r\nshard-a.example\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$-1\r\n:23702\r\n$"
    "40\r\n1eb99abcb3761989813d74a4c7829b2e76002606\r\n"
    "*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$-1\r\n:23703\r\n$"
    "40\r\nd7291ed3d327f83cc8d8633f482e6d07a898e26f\r\n"
    "*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n";

// CLUSTER SLOTS (RESP2) read from a replica of a cluster of three shards with one replica each,
// redis-server 7.0.15, started by test/support/local_cluster with `{.replicas = 1}` (nodes
// 0-2 the primaries; redis-cli made node 4 the replica of node 0, 5 of 1 and 3 of 2).
constexpr std::string_view captured_with_replicas_resp2 =
    "*3\r\n"
    "*4\r\n:0\r\n:5460\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:15335\r\n$40\r\n15f2c733fa544c6ba30272bdf54534980541a9bf\r\n*0\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:30638\r\n$40\r\n13a15de14d014aa5bc794687a8ac2d33fb60c592\r\n*0\r\n"
    "*4\r\n:5461\r\n:10922\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:13446\r\n$40\r\n32955558a6f1c37751cdc32f645e5a1f619068ea\r\n*0\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:13550\r\n$40\r\n684e63dee425c55f08a721192defcb06a67d72d7\r\n*0\r\n"
    "*4\r\n:10923\r\n:16383\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:20347\r\n$40\r\n123a9328c1e80be1c13b47c0a6579e6a982a00ee\r\n*0\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:18761\r\n$40\r\ne58757434c2298eaa31b46b26e0e394a4b5167fa\r\n*0\r\n";

constexpr std::string_view id1 = "3d1902b459cee0e252f4f38a41626716890ac5cb";
constexpr std::string_view id2 = "1eb99abcb3761989813d74a4c7829b2e76002606";
constexpr std::string_view id3 = "d7291ed3d327f83cc8d8633f482e6d07a898e26f";

parsed_slot_map parse_bytes(std::string_view bytes, std::string_view answering_host)
{
    resp::parser p;
    const auto status = p.parse(bytes);
    INFO("RESP parser: " << p.error_message());
    REQUIRE(status == resp::parse_status::done);
    REQUIRE(p.consumed() == bytes.size());
    return slot_map::parse(p.nodes(), answering_host);
}

slot_map parse_map_ok(std::string_view bytes, std::string_view answering_host = "answering.host")
{
    auto parsed = parse_bytes(bytes, answering_host);
    INFO("error: " << parsed.error);
    REQUIRE(parsed);
    CHECK(parsed.error.empty());
    return std::move(*parsed.map);
}

std::string parse_error(std::string_view bytes, std::string_view answering_host = "answering.host")
{
    const auto parsed = parse_bytes(bytes, answering_host);
    CHECK_FALSE(parsed);
    CHECK_FALSE(parsed.error.empty());
    return parsed.error;
}

cluster_endpoint ep(std::string_view host, std::uint16_t port, std::string_view id = {})
{
    return {std::string(host), port, std::string(id)};
}

/// The shard of `slot`'s primary; fails the test for an uncovered slot.
cluster_endpoint owner(const slot_map& m, std::uint16_t slot)
{
    const auto shard = m.shard_of(slot);
    INFO("slot " << slot);
    REQUIRE(shard);
    return m.shard(*shard);
}

// Hand-written replies: a one-entry reply with `node` as the primary of slots 0-16383.
std::string one_entry(std::string_view node)
{
    return "*1\r\n*3\r\n:0\r\n:16383\r\n"s + std::string(node);
}

void check_three_shards(const slot_map& m)
{
    REQUIRE(m.shards() == 3);
    CHECK(m.covers_all());
    CHECK(m.covered_slots() == slot_count);
    CHECK(m.shard(0) == ep("127.0.0.1", 23701, id1));
    CHECK(m.shard(1) == ep("127.0.0.1", 23702, id2));
    CHECK(m.shard(2) == ep("127.0.0.1", 23703, id3));
    CHECK(m.shard_of(0) == 0u);
    CHECK(m.shard_of(5460) == 0u);
    CHECK(m.shard_of(5461) == 1u);
    CHECK(m.shard_of(10922) == 1u);
    CHECK(m.shard_of(10923) == 2u);
    CHECK(m.shard_of(16383) == 2u);
    CHECK_FALSE(m.shard_of(16384));
    CHECK_FALSE(m.shard_of(65535));
    // The cluster answered "-MOVED 12182 127.0.0.1:23703" to SET foo on 23701.
    CHECK(key_slot("foo") == 12182);
    CHECK(owner(m, key_slot("foo")) == ep("127.0.0.1", 23703, id3));
}

}  // namespace

TEST_CASE("slot_map: a real CLUSTER SLOTS of three shards, RESP2 and RESP3", "[slot_map]")
{
    const slot_map resp2 = parse_map_ok(captured_resp2);
    check_three_shards(resp2);
    const slot_map resp3 = parse_map_ok(captured_resp3);
    check_three_shards(resp3);
    CHECK(resp2 == resp3);
    CHECK(parse_map_ok(captured_hostname_metadata_resp3) == resp2);
}

TEST_CASE("slot_map: a real CLUSTER SLOTS with replicas keeps the primaries", "[slot_map]")
{
    const slot_map m = parse_map_ok(captured_with_replicas_resp2);
    REQUIRE(m.shards() == 3);
    CHECK(m.covers_all());
    CHECK(m.shard(0) == ep("127.0.0.1", 15335, "15f2c733fa544c6ba30272bdf54534980541a9bf"));
    CHECK(m.shard(1) == ep("127.0.0.1", 13446, "32955558a6f1c37751cdc32f645e5a1f619068ea"));
    CHECK(m.shard(2) == ep("127.0.0.1", 20347, "123a9328c1e80be1c13b47c0a6579e6a982a00ee"));
    CHECK_FALSE(m.find(ep("127.0.0.1", 30638)));
    CHECK(m.shard_of(5461) == 1u);
}

TEST_CASE("slot_map: unknown endpoints of a real cluster are resolved", "[slot_map]")
{
    SECTION("'?' is the ip of the metadata, a host name stays")
    {
        const slot_map m = parse_map_ok(captured_prefer_hostname_resp2);
        REQUIRE(m.shards() == 3);
        CHECK(m.shard(0) == ep("shard-a.example", 23701, id1));
        CHECK(m.shard(1) == ep("127.0.0.1", 23702, id2));
        CHECK(m.shard(2) == ep("127.0.0.1", 23703, id3));
    }
    SECTION("null is the node that answered")
    {
        const slot_map m = parse_map_ok(captured_unknown_endpoint_resp2, "10.9.8.7");
        REQUIRE(m.shards() == 3);
        CHECK(m.shard(0) == ep("10.9.8.7", 23701, id1));
        CHECK(m.shard(1) == ep("10.9.8.7", 23702, id2));
        CHECK(m.shard(2) == ep("10.9.8.7", 23703, id3));
        CHECK(m.covers_all());
        CHECK_THAT(parse_error(captured_unknown_endpoint_resp2, ""),
                   Contains("answering host is not known"));
    }
    SECTION("an empty host is the node that answered")
    {
        const slot_map m = parse_map_ok(one_entry("*3\r\n$0\r\n\r\n:7000\r\n$2\r\nid\r\n"), "::1");
        CHECK(m.shard(0) == ep("::1", 7000, "id"));
    }
    SECTION("'?' without an ip in the metadata is refused")
    {
        CHECK_THAT(parse_error(one_entry("*4\r\n+?\r\n:7000\r\n$2\r\nid\r\n*0\r\n")),
                   Contains("unknown endpoint"));
        CHECK_THAT(parse_error(one_entry("*3\r\n+?\r\n:7000\r\n$2\r\nid\r\n")),
                   Contains("unknown endpoint"));
        CHECK_THAT(parse_error(one_entry("*4\r\n+?\r\n:7000\r\n$2\r\nid\r\n%1\r\n+ip\r\n+\r\n")),
                   Contains("unknown endpoint"));
    }
}

TEST_CASE("slot_map: shards, gaps, replicas and older reply shapes", "[slot_map]")
{
    SECTION("one primary in several ranges is one shard; gaps stay uncovered")
    {
        const slot_map m = parse_map_ok("*3\r\n"
                                        "*3\r\n:0\r\n:99\r\n*3\r\n+10.0.0.1\r\n:7000\r\n+a\r\n"
                                        "*3\r\n:200\r\n:299\r\n*3\r\n+10.0.0.2\r\n:7000\r\n+b\r\n"
                                        "*3\r\n:300\r\n:300\r\n*3\r\n+10.0.0.1\r\n:7000\r\n+a\r\n");
        REQUIRE(m.shards() == 2);
        CHECK(m.covered_slots() == 201);
        CHECK_FALSE(m.covers_all());
        CHECK(m.shard_of(99) == 0u);
        CHECK_FALSE(m.shard_of(100));
        CHECK_FALSE(m.shard_of(199));
        CHECK(m.shard_of(200) == 1u);
        CHECK(m.shard_of(300) == 0u);
        CHECK_FALSE(m.shard_of(301));
        CHECK(m.find(ep("10.0.0.2", 7000)) == 1u);
        CHECK_FALSE(m.find(ep("10.0.0.2", 7001)));
    }
    SECTION("ranges may come in any order")
    {
        const slot_map m = parse_map_ok("*2\r\n"
                                        "*3\r\n:8192\r\n:16383\r\n*2\r\n+h\r\n:2\r\n"
                                        "*3\r\n:0\r\n:8191\r\n*2\r\n+h\r\n:1\r\n");
        CHECK(m.covers_all());
        CHECK(owner(m, 0) == ep("h", 1));
        CHECK(owner(m, 16383) == ep("h", 2));
    }
    SECTION("replicas are checked, then dropped")
    {
        const slot_map m =
            parse_map_ok("*1\r\n*5\r\n:0\r\n:16383\r\n"
                         "*4\r\n+p\r\n:1\r\n+pid\r\n%0\r\n"
                         "*4\r\n+r1\r\n:2\r\n+r1id\r\n%0\r\n"
                         "*4\r\n+r2\r\n:3\r\n+r2id\r\n%1\r\n+hostname\r\n+r2.example\r\n");
        REQUIRE(m.shards() == 1);
        CHECK(m.shard(0) == ep("p", 1, "pid"));
        CHECK_THAT(parse_error("*1\r\n*4\r\n:0\r\n:1\r\n*2\r\n+p\r\n:1\r\n*2\r\n+r\r\n:0\r\n"),
                   Contains("replica 0: the port"));
    }
    SECTION("before Redis 7 (no metadata) and 4 (no id); later additions are ignored")
    {
        CHECK(parse_map_ok(one_entry("*3\r\n+h\r\n:1\r\n+id\r\n")).shard(0) == ep("h", 1, "id"));
        CHECK(parse_map_ok(one_entry("*2\r\n+h\r\n:1\r\n")).shard(0) == ep("h", 1));
        CHECK(parse_map_ok(one_entry("*6\r\n+h\r\n:1\r\n+id\r\n*0\r\n:5\r\n*1\r\n*1\r\n*0\r\n"))
                  .shard(0) == ep("h", 1, "id"));
    }
    SECTION("metadata values of any type are skipped")
    {
        CHECK(
            parse_map_ok(
                one_entry("*4\r\n+h\r\n:1\r\n+id\r\n%2\r\n+tls-port\r\n:6380\r\n+x\r\n*1\r\n_\r\n"))
                .shard(0) == ep("h", 1, "id"));
    }
    SECTION("attributes are skipped wherever they are")
    {
        const slot_map m =
            parse_map_ok("|1\r\n+a\r\n+b\r\n*1\r\n|1\r\n+a\r\n*1\r\n:1\r\n"
                         "*3\r\n:0\r\n|1\r\n+a\r\n+b\r\n:16383\r\n*2\r\n+h\r\n:1\r\n");
        CHECK(m.covers_all());
        CHECK(m.shard(0) == ep("h", 1));
    }
    SECTION("an empty reply covers nothing")
    {
        const slot_map m = parse_map_ok("*0\r\n");
        CHECK(m.shards() == 0);
        CHECK(m.covered_slots() == 0);
        CHECK_FALSE(m.covers_all());
        CHECK_FALSE(m.shard_of(0));
        CHECK(m == slot_map{});
    }
    SECTION("one shard per slot")
    {
        std::string reply = "*16384\r\n";
        for (int s = 0; s < slot_count; ++s)
        {
            const auto n = std::to_string(s);
            reply +=
                "*3\r\n:" + n + "\r\n:" + n + "\r\n*2\r\n+h\r\n:" + std::to_string(s + 1) + "\r\n";
        }
        const slot_map m = parse_map_ok(reply);
        CHECK(m.shards() == slot_count);
        CHECK(m.covers_all());
        CHECK(owner(m, 16383) == ep("h", 16384));
    }
}

TEST_CASE("slot_map: malformed replies are refused with a reason", "[slot_map]")
{
    struct bad
    {
        std::string_view name;
        std::string bytes;
        std::string_view reason;
    };
    // A reply of one range, slots 0 to 1: its primary's entry follows.
    const std::string range_0_1 = "*1\r\n*3\r\n:0\r\n:1\r\n";
    const bad cases[] = {
        {"an error reply", "-ERR This instance has cluster support disabled\r\n",
         "the node answered an error: ERR This instance has cluster support disabled"},
        {"a bulk error", "!5\r\nERR x\r\n", "answered an error"},
        {"not an array", "+OK\r\n", "is a simple_string, not an array"},
        {"a null", "*-1\r\n", "is a null, not an array"},
        {"a map", "%0\r\n", "not an array"},
        {"an entry that is no array", "*1\r\n:1\r\n", "entry 0 is an integer, not an array"},
        {"an entry without a primary", "*1\r\n*2\r\n:0\r\n:1\r\n", "entry 0 has 2 elements"},
        {"a start that is a string", "*1\r\n*3\r\n+0\r\n:1\r\n*2\r\n+h\r\n:1\r\n",
         "the start slot is a simple_string"},
        {"an end that is a double", "*1\r\n*3\r\n:0\r\n,1\r\n*2\r\n+h\r\n:1\r\n",
         "the end slot is a double"},
        {"start > end", "*1\r\n*3\r\n:5\r\n:3\r\n*2\r\n+h\r\n:1\r\n", "slot range 5-3 is reversed"},
        {"end 16384", "*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n+h\r\n:1\r\n",
         "the end slot is 16384, outside 0 to 16383"},
        {"start -1", "*1\r\n*3\r\n:-1\r\n:5\r\n*2\r\n+h\r\n:1\r\n", "the start slot is -1"},
        {"port 0", range_0_1 + "*2\r\n+h\r\n:0\r\n", "the port is 0, outside 1 to 65535"},
        {"port 65536", range_0_1 + "*2\r\n+h\r\n:65536\r\n", "the port is 65536"},
        {"port -1", range_0_1 + "*2\r\n+h\r\n:-1\r\n", "the port is -1"},
        {"port as a string", range_0_1 + "*2\r\n+h\r\n$4\r\n6379\r\n", "the port is a bulk_string"},
        {"a host that is an integer", range_0_1 + "*2\r\n:1\r\n:1\r\n", "the host is an integer"},
        {"a verbatim host", range_0_1 + "*2\r\n=5\r\ntxt:h\r\n:1\r\n",
         "the host is a verbatim_string"},
        {"a node id that is an integer", range_0_1 + "*3\r\n+h\r\n:1\r\n:7\r\n",
         "the node id is an integer"},
        {"a node that is a string", range_0_1 + "+h:1\r\n", "the primary is a simple_string"},
        {"a node with one element", range_0_1 + "*1\r\n+h\r\n", "the primary has 1 elements"},
        {"nesting too deep: the node inside an array", range_0_1 + "*1\r\n*2\r\n+h\r\n:1\r\n",
         "the primary has 1 elements"},
        {"nesting too deep: the host an array", range_0_1 + "*2\r\n*1\r\n+h\r\n:1\r\n",
         "the host is an array"},
        {"nesting too deep: the entries inside an array",
         "*1\r\n*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n+h\r\n:1\r\n", "entry 0 has 1 elements"},
        {"metadata that is a string", range_0_1 + "*4\r\n+h\r\n:1\r\n+id\r\n+x\r\n",
         "the metadata is a simple_string"},
        {"metadata with an odd element count", range_0_1 + "*4\r\n+h\r\n:1\r\n+id\r\n*1\r\n+ip\r\n",
         "odd number"},
        {"overlapping ranges",
         "*2\r\n*3\r\n:0\r\n:10\r\n*2\r\n+a\r\n:1\r\n*3\r\n:10\r\n:20\r\n*2\r\n+b\r\n:1\r\n",
         "entry 1: slot 10 is also in an earlier range"},
        {"a range given twice",
         "*2\r\n*3\r\n:0\r\n:10\r\n*2\r\n+a\r\n:1\r\n*3\r\n:0\r\n:10\r\n*2\r\n+a\r\n:1\r\n",
         "slot 0 is also in an earlier range"},
        {"one address, two ids",
         "*2\r\n*3\r\n:0\r\n:1\r\n*3\r\n+a\r\n:1\r\n+x\r\n*3\r\n:2\r\n:3\r\n*3\r\n+a\r\n:1\r\n+"
         "y\r\n",
         "a:1 appears with two node ids"},
        {"one id, two addresses",
         "*2\r\n*3\r\n:0\r\n:1\r\n*3\r\n+a\r\n:1\r\n+x\r\n*3\r\n:2\r\n:3\r\n*3\r\n+b\r\n:1\r\n+"
         "x\r\n",
         "node x appears at a:1 and at b:1"},
    };
    for (const auto& c : cases)
    {
        INFO(c.name);
        const auto error = parse_error(c.bytes);
        CHECK_THAT(error, Contains("CLUSTER SLOTS reply: "));
        CHECK_THAT(error, Contains(std::string(c.reason)));
    }
}

namespace {

// The nodes of a CLUSTER SLOTS reply of one range, slots 0 to `end_slot`, served by one node
// whose entry of `node_size` elements starts with host "h" and port 1 and goes on with
// `entry_rest`; the reply's depths start at `depth`.
std::vector<resp::node_view> one_range_nodes(std::string_view end_slot, std::uint64_t node_size = 2,
                                             const std::vector<resp::node_view>& entry_rest = {},
                                             std::uint32_t depth = 0)
{
    using resp::type;
    std::vector<resp::node_view> nodes = {{type::array, depth, 1, {}},
                                          {type::array, depth + 1, 3, {}},
                                          {type::integer, depth + 2, 0, "0"},
                                          {type::integer, depth + 2, 0, end_slot},
                                          {type::array, depth + 2, node_size, {}},
                                          {type::simple_string, depth + 3, 0, "h"},
                                          {type::integer, depth + 3, 0, "1"}};
    nodes.insert(nodes.end(), entry_rest.begin(), entry_rest.end());
    return nodes;
}

}  // namespace

TEST_CASE("slot_map: node spans that no parser makes are refused, not trusted", "[slot_map]")
{
    using resp::node_view;
    using resp::type;
    const auto error_of = [](std::vector<node_view> nodes) {
        const auto parsed = slot_map::parse(nodes, "h");
        CHECK_FALSE(parsed);
        return parsed.error;
    };
    CHECK_THAT(error_of({}), Contains("the reply is empty"));
    CHECK_THAT(error_of({{type::attribute, 0, 1, {}},
                         {type::simple_string, 1, 0, "a"},
                         {type::simple_string, 1, 0, "b"}}),
               Contains("an attribute without a value"));
    // An array that declares more elements than its nodes hold.
    CHECK_THAT(error_of({{type::array, 0, 2, {}}, {type::array, 1, 0, {}}}),
               Contains("element count"));
    // A node two levels below its parent.
    CHECK_THAT(error_of({{type::array, 0, 1, {}}, {type::integer, 2, 0, "1"}}),
               Contains("skip a nesting level"));
    // A map whose pairs are counted as elements.
    CHECK_THAT(error_of(one_range_nodes("0", 4,
                                        {{type::simple_string, 3, 0, "id"},
                                         {type::map, 3, 2, {}},
                                         {type::simple_string, 4, 0, "ip"},
                                         {type::simple_string, 4, 0, "x"}})),
               Contains("element count"));
    // An integer beyond 64 bits (the RESP parser refuses it before).
    CHECK_THAT(error_of(one_range_nodes("99999999999999999999")),
               Contains("the end slot is not a 64-bit integer"));
    // A span that starts deeper than 0: depths are relative to its first node.
    const std::vector<node_view> nested = one_range_nodes("16383", 2, {}, 3);
    const auto parsed = slot_map::parse(nested, "h");
    INFO(parsed.error);
    REQUIRE(parsed);
    CHECK(parsed.map->covers_all());
}

TEST_CASE("slot_map: MOVED re-points one slot", "[slot_map]")
{
    slot_map m = parse_map_ok(captured_resp2);
    const auto before = m;

    SECTION("to a known shard, matched by address")
    {
        CHECK(m.moved(12182, ep("127.0.0.1", 23701)) == 0u);
        CHECK(m.shards() == 3);
        CHECK(owner(m, 12182) == ep("127.0.0.1", 23701, id1));  // the shard keeps its id
        CHECK(m.shard_of(12181) == 2u);
        CHECK(m.shard_of(12183) == 2u);
        CHECK(m.covers_all());
        CHECK(m != before);
        CHECK(m.moved(12182, ep("127.0.0.1", 23703)) == 2u);
        CHECK(m == before);
    }
    SECTION("to a new address, which becomes a new shard")
    {
        CHECK(m.moved(3999, ep("127.0.0.1", 23704)) == 3u);
        REQUIRE(m.shards() == 4);
        CHECK(m.shard(3) == ep("127.0.0.1", 23704));
        CHECK(m.shard_of(3999) == 3u);
        CHECK(m.shard_of(3998) == 0u);
        CHECK(m.moved(4000, ep("127.0.0.1", 23704)) == 3u);
        CHECK(m.shards() == 4);
    }
    SECTION("an uncovered slot becomes covered")
    {
        slot_map empty;
        CHECK(empty.moved(5, ep("h", 1)) == 0u);
        CHECK(empty.covered_slots() == 1);
        CHECK(empty.moved(5, ep("h", 2)) == 1u);
        CHECK(empty.covered_slots() == 1);
        CHECK(empty.shard_of(5) == 1u);
    }
    SECTION("nonsense changes nothing")
    {
        CHECK_FALSE(m.moved(16384, ep("h", 1)));
        CHECK_FALSE(m.moved(1, ep("?", 6379)));
        CHECK_FALSE(m.moved(65535, ep("h", 1)));
        CHECK_FALSE(m.moved(1, ep("", 1)));
        CHECK_FALSE(m.moved(1, ep("h", 0)));
        CHECK(m == before);
    }
    SECTION("no more shards than slots")
    {
        slot_map full;
        for (std::uint16_t s = 0; s < slot_count; ++s)
            REQUIRE(full.moved(s, ep("h", static_cast<std::uint16_t>(s + 1))) == s);
        CHECK(full.shards() == slot_count);
        CHECK_FALSE(full.moved(0, ep("h", 20000)));
        CHECK(full.moved(0, ep("h", 2)) == 1u);
    }
    CHECK_THROWS_AS(m.shard(m.shards()), std::out_of_range);
}

TEST_CASE("slot_map: mutated real replies are parsed or refused, never trusted blindly",
          "[slot_map]")
{
    // Every byte of a captured reply replaced by bytes that keep it RESP more often than not
    // (digits, type bytes, signs): what comes out is a consistent map or an error.
    std::mt19937 rng(15);
    const std::string_view replacements = "0123456789:*%$+-_?|,#\r\n";
    std::uniform_int_distribution<std::size_t> pick(0, replacements.size() - 1);
    std::size_t accepted = 0;
    std::size_t refused = 0;
    for (const auto original : {captured_resp2, captured_resp3, captured_prefer_hostname_resp2,
                                captured_unknown_endpoint_resp2, captured_with_replicas_resp2})
    {
        for (std::size_t at = 0; at < original.size(); ++at)
        {
            std::string bytes(original);
            bytes[at] = replacements[pick(rng)];
            resp::parser p;
            if (p.parse(bytes) != resp::parse_status::done)
                continue;
            const auto parsed = slot_map::parse(p.nodes(), "h");
            if (!parsed)
            {
                REQUIRE_FALSE(parsed.error.empty());
                ++refused;
                continue;
            }
            ++accepted;
            const slot_map& m = *parsed.map;
            bool shards_valid = true;
            for (std::size_t shard = 0; shard < m.shards(); ++shard)
                shards_valid =
                    shards_valid && !m.shard(shard).host.empty() && m.shard(shard).port != 0;
            std::size_t covered = 0;
            bool slots_valid = true;
            for (std::uint16_t slot = 0; slot < slot_count; ++slot)
                if (const auto shard = m.shard_of(slot))
                {
                    slots_valid = slots_valid && *shard < m.shards();
                    ++covered;
                }
            INFO("mutated at byte " << at);
            REQUIRE(shards_valid);
            REQUIRE(slots_valid);
            REQUIRE(covered == m.covered_slots());
        }
    }
    CHECK(accepted > 0);
    CHECK(refused > 0);
}
