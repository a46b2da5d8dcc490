// The documented defaults, as the headers and docs state them (docs/guarantees.md, "Defaults"):
// a default changed in the code and not in the docs fails here.
#include <catch2/catch.hpp>

#include <redlock/client.hpp>
#include <redlock/hold.hpp>

namespace {

using namespace std::chrono_literals;

TEST_CASE("defaults: lock_options", "[defaults]")
{
    const redlock::lock_options o;
    CHECK(o.ttl == 10000ms);
    CHECK(o.attempt_timeout == 0ms);  // derived from the TTL
    CHECK(o.drift_factor == 0.01);
    CHECK(o.max_attempts == 3);
    CHECK(o.retry_delay == 50ms);
    CHECK(o.retry_jitter == 150ms);
    CHECK(o.max_wait == 0ms);  // no budget
    CHECK(o.wait == 0ms);      // no waiting
    CHECK(o.handoff);
    CHECK(o.release_timeout == 200ms);
    CHECK_FALSE(o.fencing);
    CHECK(redlock::max_key_size == 4096);
    CHECK(o.identity.empty());  // nothing published: the keys hold the bare token
    CHECK(redlock::max_identity_size == 128);
}

TEST_CASE("defaults: hold_options", "[defaults]")
{
    const redlock::hold_options h;
    CHECK(h.extend_before == 0ms);  // derived from the TTL
    CHECK(h.max_extensions == 0);   // no limit on the count
    CHECK(h.max_hold == std::chrono::minutes(10));
    CHECK_FALSE(h.on_degraded);
}

TEST_CASE("defaults: connection_options", "[defaults]")
{
    const redlock::connection_options c;
    CHECK(c.client_name == "redlock");
    CHECK(c.connect_timeout == 2000ms);
    CHECK(c.health_check_interval == 1000ms);
    CHECK(c.health_check_timeout == 3000ms);
    CHECK(c.close_timeout == 1000ms);
    CHECK(c.reconnect_min_delay == 50ms);
    CHECK(c.reconnect_max_delay == 2000ms);
    CHECK(c.max_nesting_depth == 32);
    CHECK(c.max_bulk_length == 64u * 1024 * 1024);
    CHECK(c.max_aggregate_size == (1u << 20));
}

TEST_CASE("defaults: client_config", "[defaults]")
{
    const redlock::client_config cfg;
    CHECK(cfg.key_prefix.empty());
    CHECK(cfg.restart_quarantine == -1ms);  // the longest TTL used
    CHECK_FALSE(cfg.quarantine_young_masters);
    CHECK(cfg.deployment_checks);
    CHECK(cfg.cluster_replica_acks == 0);
    CHECK(cfg.cluster_replica_ack_timeout == 50ms);
    CHECK(cfg.handover_write_delay == 500us);
    CHECK_FALSE(cfg.on_event);
    CHECK(cfg.tls.verify_peer);  // TLS verifies the peer unless told otherwise
}

TEST_CASE("defaults: a master URI without port or database", "[defaults]")
{
    const auto m = redlock::parse_master_uri("redis://example.internal");
    CHECK(m.port == 6379);
    CHECK(m.db == 0);  // no SELECT
}

}  // namespace
