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

// Whether each of `clients` reconnected once to masters 1 and 2 (restarted) and has them ready,
// within 10 s (the reconnection backoff).
asio::awaitable<bool> reconnected_to_restarted(const std::vector<const client*>& cs)
{
    co_return co_await eventually(
        [&] {
            for (const client* c : cs)
            {
                const auto s = c->master_states();
                if (s[1].connects != 2 || s[2].connects != 2 || s[1].state != master_state::ready ||
                    s[2].state != master_state::ready)
                    return false;
            }
            return true;
        },
        10s);
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
    const std::vector<const client*> both{&unguarded, &guarded};
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            // Both clients reconnect to the restarted masters (the reconnection backoff).
            CHECK(co_await reconnected_to_restarted(both));
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

namespace {

/// One kind of lock for the restart rule: what the first holders take (`holders` of them) and
/// what the newcomer asks for, which must be refused while they hold.
struct restart_case
{
    const char* kind;
    lock_options held;
    lock_options asked;
    std::size_t holders = 1;
    bool multi = false;  // async_lock_all over two resources
};

lock_options kind_options(std::uint32_t permits, lock_role role, bool fencing)
{
    lock_options o;
    o.ttl = 3000ms;
    // Not ttl / 20 (150 ms): a master just restarted answers its first script (EVAL, its cache
    // empty) later than that on a loaded machine, and the control's grant below then misses
    // it (seen once with a CPU hog beside the suite). The decision is not the clock's.
    o.attempt_timeout = 1000ms;
    o.max_attempts = 1;
    o.permits = permits;
    o.role = role;
    o.fencing = fencing;
    return o;
}

std::vector<restart_case> restart_cases()
{
    const auto mutex = kind_options(1, lock_role::mutex, false);
    const auto fenced = kind_options(1, lock_role::mutex, true);
    const auto permit = kind_options(2, lock_role::mutex, false);
    const auto reader = kind_options(1, lock_role::reader, false);
    const auto writer = kind_options(1, lock_role::writer, false);
    const auto fenced_writer = kind_options(1, lock_role::writer, true);
    return {
        {"mutex", mutex, mutex},
        {"multi-resource", mutex, mutex, 1, true},
        {"fenced", fenced, fenced},
        {"permit (2 of 2 held)", permit, permit, 2},
        {"reader (a writer asks)", reader, writer},
        {"writer (a reader asks)", writer, reader},
        {"fenced writer", fenced_writer, fenced_writer},
    };
}

}  // namespace

TEST_CASE("client: for every kind of lock, masters restarted empty give no second holder while "
          "the quarantine lasts, and do without it",
          "[live][client][restart][kinds]")
{
    // As above, for each kind: the holders take their locks on a bare majority {0, 1} (2 is
    // down); master 1 restarts empty and 2 comes back empty. Without the quarantine the
    // newcomer gets {1, 2} beside them (the test's own control: N + 1 holders of N permits, a
    // writer beside a reader...); with it, refused, saying why.
    for (const auto& k : restart_cases())
    {
        INFO("kind: " << k.kind);
        local_masters m({.count = 3});
        asio::io_context io;
        client a(io.get_executor(), config_with_quarantine(m, 0ms));
        client unguarded(io.get_executor(), config_with_quarantine(m, 0ms));
        client guarded(io.get_executor(), config_with_quarantine(m, -1ms));
        const std::vector<std::string> resources{"q", "r"};
        // One attempt (max_attempts 1); a refusal's lock keeps each master's answer.
        const auto take = [&](client& c, const lock_options& o) -> asio::awaitable<lock> {
            if (k.multi)
            {
                auto [ec, l] = co_await c.async_lock_all(resources, o, tuple_awaitable);
                co_return std::move(l);
            }
            auto [ec, l] = co_await c.async_lock("q", o, tuple_awaitable);
            co_return std::move(l);
        };
        std::vector<lock> held;
        run_bounded(
            io,
            [&]() -> asio::awaitable<void> {
                for (client* c : {&a, &unguarded, &guarded})
                    co_await require_connected(*c);
                m.kill(2);
                for (std::size_t h = 0; h < k.holders; ++h)
                {
                    held.push_back(co_await take(a, k.held));
                    REQUIRE(held.back().held());
                    CHECK(count_status(held.back(), master_status::granted) == 2);
                }
            }(),
            20s);
        m.kill(1);
        m.restart(1);
        m.restart(2);
        io.restart();
        const std::vector<const client*> both{&unguarded, &guarded};
        run_bounded(
            io,
            [&]() -> asio::awaitable<void> {
                CHECK(co_await reconnected_to_restarted(both));
                // The control: without the quarantine, granted beside the holders.
                auto beside = co_await take(unguarded, k.asked);
                INFO("the control: " << beside.describe());
                CHECK(beside.held());
                for (const auto& h : held)
                    CHECK(h.held());  // their validity had not ended: an overlap
                if (beside.held())
                    co_await unguarded.async_unlock(beside, tuple_awaitable);
                // With it (the default): refused while they hold, a restarted master saying so.
                auto refused = co_await take(guarded, k.asked);
                INFO(refused.describe());
                CHECK_FALSE(refused.held());
                CHECK(std::count_if(
                          refused.masters().begin(), refused.masters().end(),
                          [](const auto& d) { return d.ec == error::master_restarted; }) >= 1);
                for (const auto& h : held)
                    CHECK(steady::now() < h.valid_until());  // asked while they held
                if (refused.held())
                    co_await guarded.async_unlock(refused, tuple_awaitable);
            }(),
            30s);
        a.close();
        unguarded.close();
        guarded.close();
        io.run_for(2s);
    }
}
