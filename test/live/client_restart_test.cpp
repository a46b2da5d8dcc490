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
    client guarded(io.get_executor(), config_with_quarantine(m, -1ms));  // the default: the longest TTL
    lock held;
    run_bounded(io, [&]() -> asio::awaitable<void> {
        for (client* c : {&a, &unguarded, &guarded})
            co_await require_connected(*c);
        m.kill(2);
        held = co_await a.async_lock("q");
        REQUIRE(held.held());
        CHECK(count_status(held, master_status::granted) == 2);
    }(), 20s);

    m.kill(1);
    m.restart(1);
    m.restart(2);
    io.restart();
    run_bounded(io, [&]() -> asio::awaitable<void> {
        // Both clients reconnect to the restarted masters (the reconnection backoff).
        CHECK(co_await eventually([&] {
            const auto u = unguarded.master_states(), g = guarded.master_states();
            return u[1].connects == 2 && u[2].connects == 2 && g[1].connects == 2 && g[2].connects == 2 &&
                   g[1].state == master_state::ready && g[2].state == master_state::ready &&
                   u[1].state == master_state::ready && u[2].state == master_state::ready;
        }, 10s));
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
            CHECK((gec == error::no_quorum || gec == error::contended));  // A still holds on master 0
            // Decided as soon as a quorum is impossible: master 0 (A's key) and one restarted
            // master are enough; the other may not have answered yet.
            const auto restarted = std::count_if(l.masters().begin(), l.masters().end(), [](const auto& d) {
                return d.ec == error::master_restarted;
            });
            CHECK(restarted >= 1);
            CHECK(count_status(l, master_status::error) == static_cast<std::size_t>(restarted));
            ++refused;
            co_await sleep_for(200ms);
        }
        CHECK(refused > 0);
    }(), 30s);
    a.close();
    unguarded.close();
    guarded.close();
    io.run_for(2s);
}
