// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The deployment checks decided without I/O: what INFO and CONFIG GET save say, and which
// warnings that makes.
#include "algorithm/deployment_check.hpp"
#include "protocol/server_info.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using redlock::error, redlock::error_code;
using redlock::detail::check_deployment, redlock::detail::deployment_warnings,
    redlock::detail::parse_save_points, redlock::detail::parse_server_facts,
    redlock::detail::parse_server_identity, redlock::detail::server_facts;
namespace resp = redlock::resp;

namespace {

// A plain INFO of redis-server 7.0 (default sections), cut to a few lines of each, with the
// values of the fields the checks read given by the test.
std::string info(const std::string& maxmemory, const std::string& policy, const std::string& aof,
                 const std::string& replication)
{
    return "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:" +
           std::string(40, 'c') +
           "\r\ntcp_port:6379\r\nuptime_in_seconds:120\r\n\r\n"
           "# Clients\r\nconnected_clients:2\r\n\r\n"
           "# Memory\r\nused_memory:1065432\r\nused_memory_human:1.02M\r\nmaxmemory:" +
           maxmemory + "\r\nmaxmemory_human:0B\r\nmaxmemory_policy:" + policy +
           "\r\n\r\n"
           "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\naof_enabled:" +
           aof +
           "\r\naof_rewrite_in_progress:0\r\n\r\n"
           "# Stats\r\ntotal_connections_received:3\r\nevicted_keys:0\r\n\r\n"
           "# Replication\r\n" +
           replication +
           "master_failover_state:no-failover\r\nmaster_repl_offset:0\r\n\r\n"
           "# Keyspace\r\ndb0:keys=1,expires=1,avg_ttl=29000\r\n";
}

const std::string lone_master = "role:master\r\nconnected_slaves:0\r\n";

server_facts facts_of(const std::string& text, std::optional<bool> save_points)
{
    auto f = parse_server_facts(text);
    f.rdb_save_points = save_points;
    return f;
}

std::vector<error_code> warnings_of(const std::string& text, std::optional<bool> save_points = true)
{
    return check_deployment(facts_of(text, save_points)).codes();
}

using codes = std::vector<error_code>;

}  // namespace

TEST_CASE("server_info: the deployment facts of a plain INFO", "[deployment]")
{
    const auto text =
        info("104857600", "allkeys-lru", "1",
             "role:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=7001,state=online,"
             "offset=42,lag=0\r\n");
    const auto f = parse_server_facts(text);
    CHECK(f.maxmemory == 104857600);
    CHECK(f.maxmemory_policy == "allkeys-lru");
    CHECK(f.aof_enabled == true);
    CHECK(f.role == "master");
    CHECK(f.connected_replicas == 1);
    CHECK_FALSE(f.rdb_save_points.has_value());  // not in INFO
    // The identity is read from the same text (the server section of a plain INFO).
    const auto id = parse_server_identity(text);
    REQUIRE(id.has_value());
    CHECK(id->uptime_seconds == 120);

    // A replica, LF line ends.
    const auto r =
        parse_server_facts("maxmemory:0\nmaxmemory_policy:noeviction\naof_enabled:0\nrole:slave\n"
                           "master_host:10.0.0.1\nmaster_link_status:up\nconnected_slaves:0\n");
    CHECK(r.maxmemory == 0);
    CHECK(r.aof_enabled == false);
    CHECK(r.role == "slave");

    // Missing or malformed: unknown, not a guess.
    const auto odd = parse_server_facts(
        "# Memory\r\nmaxmemory:lots\r\naof_enabled:yes\r\nconnected_slaves:-1\r\n");
    CHECK_FALSE(odd.maxmemory.has_value());
    CHECK_FALSE(odd.aof_enabled.has_value());
    CHECK_FALSE(odd.connected_replicas.has_value());
    CHECK(odd.maxmemory_policy.empty());
    CHECK(odd.role.empty());
    const auto none = parse_server_facts("");
    CHECK_FALSE(none.maxmemory.has_value());
    CHECK_FALSE(none.aof_enabled.has_value());
}

TEST_CASE("server_info: RDB save points from CONFIG GET save", "[deployment]")
{
    using resp::type;
    const resp::node_view saves[] = {{type::array, 0, 2, {}},
                                     {type::bulk_string, 1, 0, "save"},
                                     {type::bulk_string, 1, 0, "3600 1 300 100 60 10000"}};
    CHECK(parse_save_points(saves) == true);
    const resp::node_view off[] = {
        {type::array, 0, 2, {}}, {type::bulk_string, 1, 0, "save"}, {type::bulk_string, 1, 0, ""}};
    CHECK(parse_save_points(off) == false);
    const resp::node_view map_off[] = {
        {type::map, 0, 1, {}}, {type::bulk_string, 1, 0, "save"}, {type::bulk_string, 1, 0, ""}};
    CHECK(parse_save_points(map_off) == false);

    // CONFIG refused (ACL, renamed away) or an answer of another shape: unknown.
    const resp::node_view refused[] = {{type::simple_error, 0, 0, "ERR unknown command 'CONFIG'"}};
    CHECK_FALSE(parse_save_points(refused).has_value());
    const resp::node_view noperm[] = {
        {type::simple_error, 0, 0, "NOPERM this user has no permissions"}};
    CHECK_FALSE(parse_save_points(noperm).has_value());
    const resp::node_view empty[] = {{type::array, 0, 0, {}}};
    CHECK_FALSE(parse_save_points(empty).has_value());
    const resp::node_view other[] = {{type::array, 0, 2, {}},
                                     {type::bulk_string, 1, 0, "appendonly"},
                                     {type::bulk_string, 1, 0, "no"}};
    CHECK_FALSE(parse_save_points(other).has_value());
}

TEST_CASE("deployment check: eviction that can drop lock keys", "[deployment]")
{
    const codes eviction{error::eviction_can_drop_locks};
    CHECK(warnings_of(info("104857600", "allkeys-lru", "1", lone_master)) == eviction);
    CHECK(warnings_of(info("104857600", "allkeys-random", "1", lone_master)) == eviction);
    CHECK(warnings_of(info("104857600", "allkeys-lfu", "1", lone_master)) == eviction);
    // Lock keys carry a TTL: the volatile policies pick them too.
    CHECK(warnings_of(info("104857600", "volatile-lru", "1", lone_master)) == eviction);
    CHECK(warnings_of(info("104857600", "volatile-ttl", "1", lone_master)) == eviction);
    CHECK(warnings_of(info("1", "volatile-random", "1", lone_master)) == eviction);
    // noeviction refuses writes instead (error::oom); maxmemory 0 is no limit.
    CHECK(warnings_of(info("104857600", "noeviction", "1", lone_master)).empty());
    CHECK(warnings_of(info("0", "allkeys-lru", "1", lone_master)).empty());
    // Unknown: no warning.
    CHECK(warnings_of(info("lots", "allkeys-lru", "1", lone_master)).empty());
    CHECK(warnings_of("maxmemory:104857600\r\n").empty());
}

TEST_CASE("deployment check: persistence off needs no AOF and no save points", "[deployment]")
{
    const codes off{error::persistence_off};
    CHECK(warnings_of(info("0", "noeviction", "0", lone_master), false) == off);
    CHECK(warnings_of(info("0", "noeviction", "1", lone_master), false).empty());  // AOF
    CHECK(warnings_of(info("0", "noeviction", "0", lone_master), true).empty());   // RDB
    CHECK(warnings_of(info("0", "noeviction", "1", lone_master), true).empty());
    // CONFIG refused: the save points are unknown, and so is the persistence.
    CHECK(warnings_of(info("0", "noeviction", "0", lone_master), std::nullopt).empty());
    // INFO refused (nothing read from it), CONFIG answered.
    CHECK(warnings_of("", false).empty());
}

TEST_CASE("deployment check: replicas of a master and a master that is a replica", "[deployment]")
{
    CHECK(warnings_of(info(
              "0", "noeviction", "1",
              "role:master\r\nconnected_slaves:2\r\nslave0:ip=10.0.0.2,port=6379,state=online\r\n"
              "slave1:ip=10.0.0.3,port=6379,state=online\r\n")) ==
          codes{error::master_has_replicas});
    CHECK(warnings_of(info(
              "0", "noeviction", "1",
              "role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:up\r\n"
              "connected_slaves:0\r\n")) == codes{error::master_is_replica});
    // A replica with replicas of its own (a chain) is a replica first.
    CHECK(warnings_of(info("0", "noeviction", "1", "role:slave\r\nconnected_slaves:1\r\n")) ==
          codes{error::master_is_replica});
    CHECK(warnings_of(info("0", "noeviction", "1", lone_master)).empty());
    CHECK(warnings_of(info("0", "noeviction", "1", "connected_slaves:3\r\n"))
              .empty());  // no role: unknown
}

TEST_CASE("deployment check: every warning at once, in the order of the enum", "[deployment]")
{
    CHECK(warnings_of(info("100", "volatile-lfu", "0", "role:master\r\nconnected_slaves:1\r\n"),
                      false) == codes{error::eviction_can_drop_locks, error::persistence_off,
                                      error::master_has_replicas});
}

TEST_CASE("deployment warnings: a set, and what a handshake adds to the previous one",
          "[deployment]")
{
    deployment_warnings before;
    CHECK(before.empty());
    before.add(error::persistence_off);
    before.add(error::contended);  // not a warning: ignored
    CHECK(before.contains(error::persistence_off));
    CHECK_FALSE(before.contains(error::contended));
    CHECK(before.codes() == codes{error::persistence_off});

    deployment_warnings now;
    now.add(error::master_is_replica);
    now.add(error::persistence_off);
    const auto added = now.new_since(before);
    CHECK(added.codes() == codes{error::master_is_replica});
    // The same warnings again: nothing new. Fewer: nothing new either.
    CHECK(now.new_since(now).empty());
    CHECK(before.new_since(now).empty());
    // First handshake: everything is new.
    CHECK(now.new_since({}) == now);
}
