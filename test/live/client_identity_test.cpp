// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The holder's identity (lock_options::identity) against real masters: every key of the lock
// holds `<token> <identity>` on a majority, and releases, extensions and checks work on that
// value as on a bare token; a semaphore's permit, a reader's member and a writer's key carry
// it; a bad identity is refused; lock::identity() and the events give it, never the token
// (docs/algorithm.md, "The value of a key: token and identity").
#include "client_fixture.hpp"

#include <vector>

using namespace redlock;
using namespace redlock::test;

namespace {

constexpr std::string_view web3 = "web-3:8080";

// No defaulted lock_options parameter, and the options named before a co_await: a lock_options
// owns a string (its identity), which GCC 12 frees wrongly as a temporary in a co_awaited call's
// arguments (usage.md, "Coroutines on GCC 12").
lock_options with_identity(std::string_view identity, lock_options o)
{
    o.identity = std::string(identity);
    return o;
}

lock_options with_identity(std::string_view identity)
{
    lock_options o;
    o.identity = std::string(identity);
    return o;
}

// How many masters hold `key` with exactly `value` (GET, raw RESP).
std::size_t masters_holding_value(const local_masters& m, std::string_view key,
                                  std::string_view value)
{
    const auto bulk = "$" + std::to_string(value.size()) + "\r\n" + std::string(value) + "\r\n";
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += m.command(i, {"GET", key}) == bulk ? 1 : 0;
    return n;
}

// How many masters have `member` in the sorted set `key` (ZSCORE answers a bulk string).
std::size_t masters_with_member(const local_masters& m, std::string_view key,
                                std::string_view member)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += m.command(i, {"ZSCORE", key, member}).rfind("$-1", 0) == 0 ? 0 : 1;
    return n;
}

// Checks that `l` publishes `identity`: its value is its 40 hex token, a space, the identity.
void check_value_of(const lock& l, std::string_view identity)
{
    INFO(l.describe());
    CHECK(l.identity() == identity);
    REQUIRE(l.token().size() == 40 + 1 + identity.size());
    CHECK(l.token()[40] == ' ');
    CHECK(l.token().substr(41) == identity);
    CHECK(l.token().substr(0, 40).find_first_not_of("0123456789abcdef") == std::string::npos);
}

constexpr std::size_t majority_of_5 = 3;

// Takes `resource` with `o` (which names an identity), checks that the lock publishes the
// identity (check_value_of) and that `key` (by default the lock's own: a permit's is known once
// taken) holds the lock's value on a majority, then unlock_and_expect_no_keys().
asio::awaitable<void> expect_identity_published(client& c, const local_masters& m,
                                                std::string resource, lock_options o,
                                                std::string_view key = {})
{
    lock l = co_await acquired(c, resource, o);
    check_value_of(l, o.identity);
    CHECK(masters_holding_value(m, key.empty() ? l.key() : key, l.token()) >= majority_of_5);
    co_await unlock_and_expect_no_keys(c, l, m);
}

}  // namespace

TEST_CASE_METHOD(masters_rig<5>,
                 "identity: a mutex's key holds the token, a space and the identity on a "
                 "majority, is extended and released by that value, and no key is left",
                 "[live][identity]")
{
    run(
        [&]() -> asio::awaitable<void> {
            const auto o = with_identity(web3, lasting(5000ms));
            lock l = co_await acquired(c, "invoice:42", o);
            check_value_of(l, web3);
            CHECK(masters_holding_value(m, "invoice:42", l.token()) >= majority_of_5);
            // describe() names the holder, never the token.
            CHECK(contains(l.describe(), "'web-3:8080'"));
            CHECK_FALSE(contains(l.describe(), l.token().substr(0, 40)));

            // A check and an extension compare the whole value: granted, the PTTL renewed.
            auto [cec, seen] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(cec);
            CHECK(seen.holding >= majority_of_5);
            auto [xec, extended] = co_await c.async_extend(l, 30000ms, tuple_awaitable);
            REQUIRE_FALSE(xec);
            CHECK(extended.identity() == web3);
            CHECK(extended.token() == l.token());
            std::size_t renewed = 0;
            for (std::size_t i = 0; i < m.size(); ++i)
                if (get_on(m, i, "invoice:42") == std::string(l.token()))
                    renewed += std::stoll(m.command(i, {"PTTL", "invoice:42"}).substr(1)) > 5000;
            CHECK(renewed >= majority_of_5);

            // Another client cannot take it; the bare token does not release it.
            const auto bare = std::string(l.token().substr(0, 40));
            const lock impostor = c.lock_from_parts("invoice:42", bare, 5000ms);
            auto [iec] = co_await c.async_unlock(impostor, tuple_awaitable);
            CHECK(iec);
            CHECK(masters_holding_value(m, "invoice:42", l.token()) >= majority_of_5);

            co_await unlock_and_expect_no_keys(c, extended, m);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "identity: a lock rebuilt by lock_from_parts from the whole value keeps the "
                 "identity and releases the keys",
                 "[live][identity]")
{
    run(
        [&]() -> asio::awaitable<void> {
            const auto o = with_identity("cron@host-1");
            lock l = co_await acquired(c, "parts:id", o);
            const lock rebuilt = c.lock_from_parts("parts:id", l.token(), l.ttl());
            CHECK(rebuilt.identity() == "cron@host-1");
            CHECK(rebuilt.token() == l.token());
            co_await unlock_and_expect_no_keys(c, rebuilt, m);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "identity: a semaphore's permit key, a reader's member and a writer's key "
                 "carry the identity",
                 "[live][identity][semaphore][rwlock]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // A permit.
            lock_options po;
            po.permits = 3;
            po = with_identity("exporter-1", po);
            co_await expect_identity_published(c, m, "exports", po);

            // Two readers, each its own identity, members of the readers' set.
            lock_options ro;
            ro.role = lock_role::reader;
            const auto ro1 = with_identity("reader-1", ro);
            const auto ro2 = with_identity("reader 2", ro);
            lock r1 = co_await acquired(c, "prices", ro1);
            lock r2 = co_await acquired(c, "prices", ro2);
            check_value_of(r1, "reader-1");
            check_value_of(r2, "reader 2");
            CHECK(r1.key() == "{prices}:readers");
            CHECK(masters_with_member(m, "{prices}:readers", r1.token()) >= majority_of_5);
            CHECK(masters_with_member(m, "{prices}:readers", r2.token()) >= majority_of_5);
            auto [xec, r1x] = co_await c.async_extend(r1, 20000ms, tuple_awaitable);
            CHECK_FALSE(xec);
            co_await c.async_unlock(r1x, asio::use_awaitable);
            co_await unlock_and_expect_no_keys(c, r2, m);

            // A writer's key.
            lock_options wo;
            wo.role = lock_role::writer;
            wo = with_identity("rewriter", wo);
            co_await expect_identity_published(c, m, "prices", wo, "prices");
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "identity: one too long, or with a control character, is invalid_option "
                 "naming the field, and nothing is set",
                 "[live][identity]")
{
    run(
        [&]() -> asio::awaitable<void> {
            const auto long_one = with_identity(std::string(129, 'x'));
            const auto too_long = co_await refused_option(c, long_one);
            CHECK(contains(too_long, "lock_options::identity is 129 bytes long"));
            const auto control_one = with_identity("web-3\n");
            const auto control = co_await refused_option(c, control_one);
            CHECK(contains(control, "lock_options::identity has byte 0x0A"));
            CHECK(total_keys(m) == 0);
            // Without an identity: the bare token, as before.
            lock l = co_await acquired(c, "plain");
            CHECK(l.identity().empty());
            CHECK(l.token().size() == 40);
            co_await unlock_and_expect_no_keys(c, l, m);
        },
        20s);
}

TEST_CASE("identity: the lock events carry the identity, never the token", "[live][identity]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    struct seen
    {
        event_kind kind;
        std::string resource, identity;
    };
    std::vector<seen> events;
    auto cfg = config_for(m);
    cfg.on_event = [&](const event& e) {
        if (!e.resource.empty())
            events.push_back({e.kind, std::string(e.resource), std::string(e.identity)});
    };
    client c(io.get_executor(), cfg);
    std::string token;
    run_and_drain(
        io, c,
        [&]() -> asio::awaitable<void> {
            const auto o = with_identity(web3);
            lock l = co_await acquired(c, "evented", o);
            token = std::string(l.token());
            lock x = co_await c.async_extend(l, 10000ms, asio::use_awaitable);
            co_await c.async_unlock(x, asio::use_awaitable);
        },
        20s);
    std::vector<event_kind> kinds;
    for (const auto& e : events)
    {
        INFO(to_string(e.kind));
        kinds.push_back(e.kind);
        CHECK(e.resource == "evented");
        CHECK(e.identity == web3);
        CHECK(e.identity.find(token.substr(0, 40)) == std::string::npos);
    }
    CHECK(kinds == std::vector<event_kind>{event_kind::acquired, event_kind::extended,
                                           event_kind::released});
}
