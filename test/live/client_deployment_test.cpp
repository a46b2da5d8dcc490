// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Acceptance: the deployment checks at connect (client_config::deployment_checks) against real
// masters configured to lose lock keys — eviction, no persistence, replicas — and one that
// refuses CONFIG.
#include "client_fixture.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

using namespace redlock;
using namespace redlock::test;

namespace {

using codes = std::vector<error_code>;

using warned = std::vector<std::pair<std::size_t, error_code>>;

/// The master_warning events of a client, as (master, warning).
struct warning_log
{
    warned seen;

    /// seen[from..], sorted: the masters connect in no particular order.
    warned sorted(std::size_t from = 0) const
    {
        warned out(seen.begin() + static_cast<std::ptrdiff_t>(from), seen.end());
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first < b.first : a.second.value() < b.second.value();
        });
        return out;
    }

    event_handler handler()
    {
        return [this](const event& e) {
            if (e.kind == event_kind::master_warning)
                seen.emplace_back(e.master, e.ec);
        };
    }
};

/// A client of the given master URIs whose warnings `log` records.
client_config config_of(std::vector<std::string> uris, warning_log& log)
{
    client_config cfg;
    cfg.masters = std::move(uris);
    cfg.on_event = log.handler();
    return cfg;
}

/// A client of the given master URIs whose warnings `log` records, on an io_context of its own.
struct logged_client
{
    asio::io_context io;
    warning_log log;
    client c;

    explicit logged_client(std::vector<std::string> uris)
        : c(io.get_executor(), config_of(std::move(uris), log))
    {}

    /// Runs the coroutine `body()` once every master is connected (run_and_drain).
    template <class Body>
    void run(Body body, steady::duration limit)
    {
        run_and_drain(io, c, std::move(body), limit);
    }
};

/// Drops the client connections of master `i` of `m` (not the one sending the command).
void kill_clients(const local_masters& m, std::size_t i)
{
    REQUIRE(m.command(i, {"CLIENT", "KILL", "TYPE", "normal"}).starts_with(":"));
}

/// Until master `i` of `c` has connected `n` times and is ready; then lets what its handshake
/// posted (the master_warning events) run.
asio::awaitable<void> require_reconnected(client& c, std::size_t i, std::uint64_t n)
{
    REQUIRE(co_await eventually(
        [&] {
            const auto s = c.master_states()[i];
            return s.connects == n && s.state == master_state::ready;
        },
        10s));
    co_await sleep_for(20ms);
}

bool replication_shows(const local_masters& m, std::size_t i, std::string_view line)
{
    return m.command(i, {"INFO", "replication"}).find(line) != std::string::npos;
}

}  // namespace

TEST_CASE("client: deployment checks warn of eviction and of persistence off, once per new warning",
          "[live][client][deployment]")
{
    local_masters evicting(
        {.count = 1,
         .extra_config = {"maxmemory 100mb", "maxmemory-policy allkeys-lru", "appendonly yes"}});
    local_masters persistent({.count = 1, .extra_config = {"appendonly yes"}});
    local_masters plain({.count = 1});  // the fixture's: save "" and appendonly no
    asio::io_context io;
    warning_log log;
    client c(io.get_executor(), config_of({evicting.uri(0), persistent.uri(0), plain.uri(0)}, log));
    warning_log unchecked_log;
    auto unchecked_cfg =
        config_of({evicting.uri(0), persistent.uri(0), plain.uri(0)}, unchecked_log);
    unchecked_cfg.deployment_checks = false;
    client unchecked(io.get_executor(), std::move(unchecked_cfg));

    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            co_await require_connected(unchecked);
            REQUIRE(co_await eventually([&] { return log.seen.size() >= 2; }, 5s));
            auto states = c.master_states();
            CHECK(states[0].warnings == codes{error::eviction_can_drop_locks});
            CHECK(states[1].warnings.empty());
            CHECK(states[2].warnings == codes{error::persistence_off});
            const warned first{{0, error::eviction_can_drop_locks}, {2, error::persistence_off}};
            CHECK(log.sorted() == first);

            // A reconnection that finds the same warnings reports nothing new.
            kill_clients(plain, 0);
            co_await require_reconnected(c, 2, 2);
            CHECK(c.master_states()[2].warnings == codes{error::persistence_off});
            CHECK(log.sorted() == first);

            // AOF turned off behind the client's back: the next handshake finds it, once.
            REQUIRE(persistent.command(0, {"CONFIG", "SET", "appendonly", "no"}) == "+OK\r\n");
            kill_clients(persistent, 0);
            co_await require_reconnected(c, 1, 2);
            CHECK(c.master_states()[1].warnings == codes{error::persistence_off});
            REQUIRE(log.seen.size() == 3);
            CHECK(log.sorted(2) == warned{{1, error::persistence_off}});

            // Checks off: nothing asked, nothing reported.
            for (const auto& s : unchecked.master_states())
                CHECK(s.warnings.empty());
            CHECK(unchecked_log.seen.empty());

            // The warnings never stand in the way of a lock.
            auto [ec, l] = co_await c.async_lock("deployment-checked", tuple_awaitable);
            CHECK_FALSE(ec);
            co_await c.async_unlock(l, tuple_awaitable);
        },
        30s);
    drain(io, unchecked);
    drain(io, c);
}

TEST_CASE("client: a master with a replica and the replica itself are reported after a reconnect",
          "[live][client][deployment]")
{
    // No 5 s wait before the full sync: the replica is online at once.
    local_masters m({.count = 2, .extra_config = {"repl-diskless-sync-delay 0"}});
    logged_client lc(m.uris());
    auto& c = lc.c;
    auto& log = lc.log;

    lc.run(
        [&]() -> asio::awaitable<void> {
            REQUIRE(co_await eventually([&] { return log.seen.size() == 2; }, 5s));
            CHECK(log.sorted() == warned{{0, error::persistence_off}, {1, error::persistence_off}});
            for (const auto& s : c.master_states())
                CHECK(s.warnings == codes{error::persistence_off});

            REQUIRE(m.command(1, {"REPLICAOF", "127.0.0.1", std::to_string(m.port(0))}) ==
                    "+OK\r\n");
            REQUIRE(co_await eventually(
                [&] {
                    return replication_shows(m, 0, "connected_slaves:1") &&
                           replication_shows(m, 1, "master_link_status:up");
                },
                20s));
            kill_clients(m, 0);
            kill_clients(m, 1);
            co_await require_reconnected(c, 0, 2);
            co_await require_reconnected(c, 1, 2);

            const auto states = c.master_states();
            CHECK(states[0].warnings == codes{error::persistence_off, error::master_has_replicas});
            CHECK(states[1].warnings == codes{error::persistence_off, error::master_is_replica});
            // Only what is new: persistence_off was reported at the first connection.
            CHECK(log.sorted(2) ==
                  warned{{0, error::master_has_replicas}, {1, error::master_is_replica}});
        },
        60s);
}

TEST_CASE("client: a master that refuses CONFIG connects, its persistence unknown",
          "[live][client][deployment]")
{
    // INFO still answers: eviction is still seen.
    local_masters m({.count = 1,
                     .extra_config = {"rename-command CONFIG \"\"", "maxmemory 100mb",
                                      "maxmemory-policy volatile-lru"}});
    REQUIRE(m.command(0, {"CONFIG", "GET", "save"}).starts_with("-ERR"));
    logged_client lc(m.uris());
    auto& c = lc.c;
    auto& log = lc.log;

    lc.run(
        [&]() -> asio::awaitable<void> {
            REQUIRE(co_await eventually([&] { return !log.seen.empty(); }, 5s));
            const auto s = c.master_states()[0];
            CHECK(s.state == master_state::ready);
            CHECK(s.warnings == codes{error::eviction_can_drop_locks});
            auto [ec, l] = co_await c.async_lock("config-refused", tuple_awaitable);
            CHECK_FALSE(ec);
            co_await c.async_unlock(l, tuple_awaitable);
        },
        30s);
    CHECK(log.seen == warned{{0, error::eviction_can_drop_locks}});
}
