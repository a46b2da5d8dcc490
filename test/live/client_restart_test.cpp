// Acceptance: the delayed restart enforced by the client (client_config::restart_quarantine),
// against real masters killed and restarted without persistence.
#include "client_fixture.hpp"

#include <algorithm>
#include <string>

using namespace redlock;
using namespace redlock::test;

namespace {

client_config config_with_quarantine(const local_masters& m, std::chrono::milliseconds quarantine)
{
    auto cfg = config_for(m);
    cfg.defaults.ttl = 3000ms;
    cfg.defaults.max_attempts = 1;
    cfg.restart_quarantine = quarantine;
    return cfg;
}

}  // namespace

TEST_CASE("client: a master that restarted without persistence stays out of quorums for the TTL",
          "[live][client][restart]")
{
    // A holds "q" on a bare majority {0, 1} (2 is down). Master 1 then restarts empty, and 2
    // comes back empty: {1, 2} would make a quorum for anyone else while A still holds.
    local_masters m({.count = 3});
    asio::io_context io;
    client a(io.get_executor(), config_with_quarantine(m, 0ms));
    client unguarded(io.get_executor(), config_with_quarantine(m, 0ms));
    client guarded(io.get_executor(),
                   config_with_quarantine(m, -1ms));  // the default: the longest TTL
    lock held;
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            for (client* c : {&a, &unguarded, &guarded})
                co_await require_connected(*c);
            m.kill(2);
            held = co_await a.async_lock("q");
            REQUIRE(held.held());
            CHECK(count_status(held, master_status::granted) == 2);
        }(),
        20s);

    m.kill(1);
    m.restart(1);
    m.restart(2);
    io.restart();
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            // Both clients reconnect to the restarted masters (the reconnection backoff).
            CHECK(co_await eventually(
                [&] {
                    const auto u = unguarded.master_states(), g = guarded.master_states();
                    return u[1].connects == 2 && u[2].connects == 2 && g[1].connects == 2 &&
                           g[2].connects == 2 && g[1].state == master_state::ready &&
                           g[2].state == master_state::ready && u[1].state == master_state::ready &&
                           u[2].state == master_state::ready;
                },
                10s));
            REQUIRE(held.held());

            // Without the quarantine: the lock is taken twice (what the spec's delayed restart is for).
            auto [ec, twice] = co_await unguarded.async_try_lock("q", tuple_awaitable);
            CHECK_FALSE(ec);
            REQUIRE(twice.has_value());
            CHECK(held.held());  // A's validity had not ended: two holders at once
            co_await unguarded.async_unlock(*twice, tuple_awaitable);

            // With it: refused, saying why, until the quarantine (3 s from the restarts) is over,
            // which is after the end of A's validity.
            std::size_t refused = 0;
            for (;;)
            {
                auto [gec, l] = co_await guarded.async_lock("q", tuple_awaitable);
                if (!gec)
                {
                    CHECK(steady::now() >= held.valid_until());
                    co_await guarded.async_unlock(l, tuple_awaitable);
                    break;
                }
                INFO(l.describe());
                CHECK((gec == error::no_quorum ||
                       gec == error::contended));  // A still holds on master 0
                // Decided as soon as a quorum is impossible: master 0 (A's key) and one restarted
                // master are enough; the other may not have answered yet.
                const auto restarted =
                    std::count_if(l.masters().begin(), l.masters().end(),
                                  [](const auto& d) { return d.ec == error::master_restarted; });
                CHECK(restarted >= 1);
                CHECK(count_status(l, master_status::error) == static_cast<std::size_t>(restarted));
                ++refused;
                co_await sleep_for(200ms);
            }
            CHECK(refused > 0);
        }(),
        30s);
    a.close();
    unguarded.close();
    guarded.close();
    io.run_for(2s);
}

TEST_CASE("client: a quarantined master still takes extensions, checks and releases",
          "[live][client][restart]")
{
    // Master 2 restarts while a lock is held; its key is put back by hand (as persistence would).
    // During its quarantine a new acquisition does not count it, but the extension, the check
    // and the release of the lock already held do: they keep or end a lock, never make one.
    local_masters m({.count = 3});
    asio::io_context io;
    client c(io.get_executor(), config_with_quarantine(m, 60000ms));
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            auto o = lasting(30000ms);
            lock l = co_await c.async_lock("quarantined", o);
            REQUIRE(
                co_await eventually([&] { return on_every_master(m, "quarantined", l.token()); }));

            m.kill(2);
            m.restart(2);
            REQUIRE(m.command(2, {"SET", "quarantined", std::string(l.token()), "PX", "5000"}) ==
                    "+OK\r\n");
            CHECK(co_await eventually(
                [&] {
                    const auto s = c.master_states();
                    return s[2].connects == 2 && s[2].state == master_state::ready;
                },
                10s));

            // An acquisition does not count it: with master 1 paused, master 0's grant and master
            // 2's are not a majority, master 2's being master_restarted.
            m.pause(1);
            auto [aec, other] = co_await c.async_lock("quarantined-new", tuple_awaitable);
            m.resume(1);
            INFO(other.describe());
            CHECK(aec == error::no_quorum);
            REQUIRE(other.masters().size() == 3);
            CHECK(other.masters()[2].ec == error::master_restarted);

            // The extension, the check and the release do.
            auto [eec, extended] = co_await c.async_extend(l, 30000ms, tuple_awaitable);
            INFO(extended.describe());
            REQUIRE_FALSE(eec);
            // Master 2's key was set for 5 s: extended there, its PTTL is far longer.
            CHECK(co_await eventually(
                [&] {
                    const auto r = m.command(2, {"PTTL", "quarantined"});
                    return r.size() > 1 && r[0] == ':' && std::stoll(r.substr(1)) > 10000;
                },
                2s));
            auto [cec, checked] = co_await c.async_check(extended, tuple_awaitable);
            CHECK_FALSE(cec);
            CHECK(checked.holding == 3);
            auto [uec] = co_await c.async_unlock(extended, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(co_await eventually(
                [&] {
                    return m.command(2, {"EXISTS", "quarantined"}) == ":0\r\n";
                },
                2s));
        },
        30s);
    c.close();
    io.run_for(1s);
}

TEST_CASE("client: the default quarantine grows with a longer per-operation TTL and covers fenced "
          "acquisitions",
          "[live][client][restart]")
{
    // Default TTL 1 s; one acquisition with a 5 s TTL: the default quarantine (the longest TTL
    // used) is then 5 s. Master 2 restarts; with master 1 paused, master 2's grants alone
    // decide: they must still be refused 2 s after the restart (past the 1 s default TTL), to
    // a plain acquisition and to a fenced one.
    local_masters m({.count = 3});
    asio::io_context io;
    auto cfg = config_with_quarantine(m, -1ms);
    cfg.defaults.ttl = 1000ms;
    client c(io.get_executor(), cfg);
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            auto longer = lasting(5000ms);
            lock l = co_await c.async_lock("quarantine-ttl", longer);
            co_await c.async_unlock(l);

            m.kill(2);
            m.restart(2);
            const auto restarted = steady::now();
            CHECK(co_await eventually(
                [&] {
                    const auto s = c.master_states();
                    return s[2].connects == 2 && s[2].state == master_state::ready;
                },
                10s));
            co_await sleep_for(2000ms - (steady::now() - restarted));

            m.pause(1);
            auto [pec, plain] = co_await c.async_lock("quarantine-plain", tuple_awaitable);
            lock_options fenced;
            fenced.fencing = true;
            auto [fec, fenced_lock] =
                co_await c.async_lock("quarantine-fenced", fenced, tuple_awaitable);
            m.resume(1);
            INFO(plain.describe());
            INFO(fenced_lock.describe());
            CHECK(steady::now() - restarted < 5000ms);  // still inside the 5 s quarantine
            CHECK(pec == error::no_quorum);
            CHECK(plain.masters()[2].ec == error::master_restarted);
            CHECK(fec == error::no_quorum);
            CHECK(fenced_lock.masters()[2].ec == error::master_restarted);
        },
        30s);
    c.close();
    io.run_for(1s);
}
