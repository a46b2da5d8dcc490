// redlock's error category (error.hpp): its name, values from 1 (0 is success), and a message
// for every value.
#include <catch2/catch.hpp>

#include <redlock/error.hpp>

#include <set>
#include <string>
#include <utility>

TEST_CASE("error: the category is named \"redlock\", its values start at 1, every value has a "
          "message of its own",
          "[error]")
{
    CHECK(std::string(redlock::category().name()) == "redlock");
    CHECK(static_cast<int>(redlock::error::invalid_uri) == 1);
    const redlock::error_code first = redlock::error::invalid_uri;
    CHECK(first.category() == redlock::category());
    CHECK(first);  // not success
    std::set<std::string> messages;
    const int last = static_cast<int>(redlock::error::kind_mismatch);
    for (int v = 1; v <= last; ++v)
    {
        if (v == 29)
            continue;  // was not_owner: no value
        const auto message = redlock::category().message(v);
        CAPTURE(v, message);
        CHECK_FALSE(message.empty());
        CHECK(messages.insert(message).second);
    }
}

TEST_CASE("error: the values stay as they were published", "[error]")
{
    // A program may store or compare the numbers: each value is pinned. A new value goes last;
    // a removed one leaves its number unused (29 was not_owner).
    using redlock::error;
    const std::pair<error, int> pinned[] = {
        {error::invalid_uri, 1},
        {error::invalid_option, 2},
        {error::invalid_argument, 3},
        {error::protocol_error, 4},
        {error::unexpected_reply, 5},
        {error::resolve_failed, 6},
        {error::connect_failed, 7},
        {error::tls_handshake_failed, 8},
        {error::handshake_failed, 9},
        {error::not_connected, 10},
        {error::connection_lost, 11},
        {error::request_timeout, 12},
        {error::connection_closed, 13},
        {error::server_error, 14},
        {error::noscript, 15},
        {error::noauth, 16},
        {error::wrongpass, 17},
        {error::noperm, 18},
        {error::readonly, 19},
        {error::oom, 20},
        {error::busy, 21},
        {error::loading, 22},
        {error::masterdown, 23},
        {error::wrongtype, 24},
        {error::contended, 25},
        {error::no_quorum, 26},
        {error::validity_expired, 27},
        {error::lock_lost, 28},
        {error::lock_expired, 30},
        {error::extension_limit, 31},
        {error::released, 32},
        {error::master_restarted, 33},
        {error::eviction_can_drop_locks, 34},
        {error::persistence_off, 35},
        {error::master_has_replicas, 36},
        {error::master_is_replica, 37},
        {error::not_replicated, 38},
        {error::kind_mismatch, 39},
    };
    for (const auto& [e, v] : pinned)
    {
        CAPTURE(v);
        CHECK(static_cast<int>(e) == v);
    }
}
