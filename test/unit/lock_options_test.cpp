// validate(lock_options): what cannot work is rejected, with a reason naming the field.
#include <catch2/catch.hpp>

#include <redlock/client.hpp>

#include "client_refusal.hpp"

namespace {

using namespace std::chrono_literals;

std::string rejection(const redlock::lock_options& o)
{
    redlock::error_code ec;
    std::string why;
    redlock::validate(o, ec, why);
    if (!ec)
        return {};
    CHECK(ec == redlock::error::invalid_option);
    return why;
}

}  // namespace

TEST_CASE("lock_options: the defaults are valid", "[unit][options]")
{
    CHECK(rejection({}).empty());
}

TEST_CASE("lock_options: an attempt timeout longer than the TTL is rejected", "[unit][options]")
{
    redlock::lock_options o;
    o.ttl = 30ms;
    o.attempt_timeout = 500ms;
    CHECK_THAT(rejection(o), Catch::Contains("attempt_timeout (500 ms) must not be longer than "
                                             "lock_options::ttl (30 ms)"));
    o.attempt_timeout = 30ms;
    CHECK(rejection(o).empty());

    // A 3 ms TTL: the derived attempt timeout (10 ms at least) is longer; an explicit shorter
    // one is accepted.
    o.ttl = 3ms;
    o.attempt_timeout = 0ms;
    CHECK_THAT(rejection(o), Catch::Contains("attempt_timeout (10 ms, derived from the TTL)"));
    o.attempt_timeout = 1ms;
    CHECK(rejection(o).empty());
}

TEST_CASE("lock_options: a TTL within the drift allowance is rejected", "[unit][options]")
{
    redlock::lock_options o;
    o.ttl = 2ms;  // drift is 2 ms + 1%
    o.attempt_timeout = 1ms;
    CHECK_THAT(rejection(o), Catch::Contains("not longer than the clock drift allowance"));
}

TEST_CASE("lock_options: each field's bounds", "[unit][options]")
{
    auto with = [](auto change) {
        redlock::lock_options o;
        change(o);
        return rejection(o);
    };
    CHECK_THAT(with([](auto& o) { o.ttl = 0ms; }), Catch::Contains("ttl must be positive"));
    CHECK_THAT(with([](auto& o) { o.attempt_timeout = -1ms; }),
               Catch::Contains("attempt_timeout must not be negative"));
    CHECK_THAT(with([](auto& o) { o.drift_factor = 1.0; }), Catch::Contains("drift_factor"));
    CHECK_THAT(with([](auto& o) { o.max_attempts = 0; }), Catch::Contains("max_attempts"));
    CHECK_THAT(with([](auto& o) { o.release_timeout = 0ms; }), Catch::Contains("release_timeout"));
    CHECK_THAT(with([](auto& o) { o.drift_factor = -0.01; }), Catch::Contains("drift_factor"));
    // "Neither may be negative" (options.hpp), and the waits.
    CHECK_THAT(with([](auto& o) { o.retry_delay = -1ms; }),
               Catch::Contains("retry_delay and retry_jitter must not be negative"));
    CHECK_THAT(with([](auto& o) { o.retry_jitter = -1ms; }),
               Catch::Contains("retry_delay and retry_jitter must not be negative"));
    CHECK_THAT(with([](auto& o) { o.max_wait = -1ms; }),
               Catch::Contains("max_wait must not be negative"));
    CHECK_THAT(with([](auto& o) { o.wait = -1ms; }), Catch::Contains("wait must not be negative"));
    // Zero is allowed for each of them.
    CHECK(with([](auto& o) {
              o.retry_delay = 0ms;
              o.retry_jitter = 0ms;
              o.max_wait = 0ms;
              o.wait = 0ms;
          }).empty());
}

TEST_CASE("lock_options: an identity is empty or 1 to 128 printable ASCII bytes",
          "[unit][options][identity]")
{
    redlock::lock_options o;
    o.identity = "web-3:8080";
    CHECK(rejection(o).empty());
    o.identity = std::string(128, 'h');
    CHECK(rejection(o).empty());
    o.identity = std::string(129, 'h');
    CHECK_THAT(rejection(o), Catch::Contains("lock_options::identity is 129 bytes long"));
    o.identity = "web-3\r";
    CHECK_THAT(rejection(o), Catch::Contains("lock_options::identity has byte 0x0D at offset 5"));

    // A client's defaults are validated as well.
    redlock::client_config cfg;
    cfg.masters = {"redis://127.0.0.1:6379"};
    cfg.defaults.identity = "bell\a";
    CHECK_THAT(redlock::test::client_refusal(cfg), Catch::Contains("lock_options::identity"));
}

TEST_CASE(
    "client_config: cluster replica acknowledgements out of range are refused, naming the field",
    "[unit][options]")
{
    const auto refusal = [&](unsigned acks, std::chrono::milliseconds timeout) {
        redlock::client_config cfg;
        cfg.masters = {"redis-cluster://127.0.0.1:7601"};
        cfg.cluster_replica_acks = acks;
        cfg.cluster_replica_ack_timeout = timeout;
        return redlock::test::client_refusal(cfg);
    };
    CHECK(refusal(16, std::chrono::milliseconds(50)) == "(accepted)");
    CHECK(refusal(0, std::chrono::milliseconds(1)) == "(accepted)");
    CHECK_THAT(refusal(17, std::chrono::milliseconds(50)),
               Catch::Contains("client_config::cluster_replica_acks (17) is above 16"));
    CHECK_THAT(refusal(1, std::chrono::milliseconds(0)),
               Catch::Contains(
                   "client_config::cluster_replica_ack_timeout (0 ms) is outside 1 ms .. 10 s"));
    CHECK_THAT(refusal(1, std::chrono::milliseconds(10001)),
               Catch::Contains("cluster_replica_ack_timeout (10001 ms)"));

    // A WAIT holds up its connection: it must end (with the server's tick) before the health
    // check's timeout, 3 s by default, would drop the connection.
    CHECK(refusal(1, std::chrono::milliseconds(2899)) == "(accepted)");
    CHECK_THAT(
        refusal(1, std::chrono::milliseconds(2900)),
        Catch::Contains(
            "cluster_replica_ack_timeout (2900 ms) must end, with the server's tick of 100 ms, "
            "before connection.health_check_timeout (3000 ms)"));
    CHECK(refusal(0, std::chrono::milliseconds(5000)) == "(accepted)");  // no WAIT is sent
}

TEST_CASE("client_config: a handover_write_delay outside 0 .. 10 ms is refused, naming the field",
          "[unit][options]")
{
    const auto refusal = [&](std::chrono::microseconds delay) {
        redlock::client_config cfg;
        cfg.masters = {"redis://127.0.0.1:7601"};
        cfg.handover_write_delay = delay;
        return redlock::test::client_refusal(cfg);
    };
    CHECK(refusal(std::chrono::microseconds(0)) == "(accepted)");
    CHECK(refusal(std::chrono::milliseconds(10)) == "(accepted)");
    CHECK_THAT(
        refusal(std::chrono::microseconds(-1)),
        Catch::Contains("client_config::handover_write_delay (-1 us) is outside 0 .. 10 ms"));
    CHECK_THAT(refusal(std::chrono::microseconds(10001)),
               Catch::Contains("handover_write_delay (10001 us)"));
}
