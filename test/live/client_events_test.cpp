// Acceptance: what a service owner observes (issue 11, item 5) — client_config::on_event
// (masters up and down, acquisitions, releases, extensions, degraded and lost locks),
// client::master_states(), and a holder told when its lock is degraded, not only lost.
#include "client_fixture.hpp"
#include "hold_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace redlock;
using namespace redlock::test;

namespace {

/// An event as recorded (the event's string_view copied).
struct seen
{
    event_kind kind;
    std::size_t master;
    std::string resource;
    error_code ec;
    std::size_t granted;
    std::size_t masters;
    std::uint32_t attempts;
    std::chrono::microseconds elapsed;
    bool handed_over;
    std::string detail;
};

struct recorder
{
    std::vector<seen> events;

    event_handler handler()
    {
        return [this](const event& e) {
            events.push_back({e.kind, e.master, std::string(e.resource), e.ec, e.granted, e.masters,
                              e.attempts, e.elapsed, e.handed_over, std::string(e.detail)});
        };
    }

    std::size_t count(event_kind k, std::string_view resource = {}) const
    {
        return static_cast<std::size_t>(
            std::count_if(events.begin(), events.end(), [&](const seen& s) {
                return s.kind == k && (resource.empty() || s.resource == resource);
            }));
    }

    bool has_master(event_kind k, std::size_t master) const
    {
        return std::any_of(events.begin(), events.end(),
                           [&](const seen& s) { return s.kind == k && s.master == master; });
    }

    const seen* last(event_kind k) const
    {
        for (auto it = events.rbegin(); it != events.rend(); ++it)
            if (it->kind == k)
                return &*it;
        return nullptr;
    }
};

/// Three masters and a client of them with `defaults`, whose events `rec` records.
struct recorded_client
{
    recorder rec;
    local_masters m{{.count = 3}};
    asio::io_context io;
    client c;

    explicit recorded_client(lock_options defaults)
        : c(io.get_executor(), [&] {
              auto cfg = config_for(m, defaults);
              cfg.on_event = rec.handler();
              return cfg;
          }())
    {}

    /// Runs the coroutine `body()` once every master is connected (run_connected).
    template <class Body>
    void run(Body body, steady::duration limit)
    {
        run_connected(io, c, std::move(body), limit);
    }
};

}  // namespace

TEST_CASE("client: events: masters up and down, acquisitions and releases, the master states",
          "[live][client][events]")
{
    recorded_client rig(short_lock());
    auto& [rec, m, io, c] = rig;

    rig.run(
        [&]() -> asio::awaitable<void> {
            CHECK(co_await eventually([&] { return rec.count(event_kind::master_up) == 3; }));
            for (const auto& s : rec.events)
                CHECK(s.masters == 3);

            lock l = co_await acquired(c, "ev");
            const seen* acquired = rec.last(event_kind::acquired);
            REQUIRE(acquired != nullptr);
            CHECK(acquired->resource == "ev");
            CHECK(acquired->attempts == 1);
            CHECK(acquired->elapsed.count() > 0);

            // A contended try_lock is an acquire_failed event with error::contended.
            auto [tec, tl] = co_await c.async_try_lock("ev", tuple_awaitable);
            CHECK_FALSE(tec);
            CHECK_FALSE(tl.has_value());
            REQUIRE(rec.last(event_kind::acquire_failed) != nullptr);
            CHECK(rec.last(event_kind::acquire_failed)->ec == error::contended);

            auto [eec, el] = co_await c.async_extend(l, 2000ms, tuple_awaitable);
            CHECK_FALSE(eec);
            CHECK(rec.count(event_kind::extended, "ev") == 1);
            auto [uec] = co_await c.async_unlock(el, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(rec.count(event_kind::released, "ev") == 1);
            auto [u2] = co_await c.async_unlock(el, tuple_awaitable);
            CHECK(u2 == error::lock_lost);
            CHECK(rec.count(event_kind::release_failed, "ev") == 1);

            // master_states: all ready, counting what was sent.
            auto states = c.master_states();
            REQUIRE(states.size() == 3);
            for (std::size_t i = 0; i < 3; ++i)
            {
                CHECK(states[i].index == i);
                CHECK(states[i].state == master_state::ready);
                CHECK(states[i].connects == 1);
                CHECK(states[i].requests >= 3);
                CHECK(states[i].endpoint == m.uri(i));
            }

            // A master killed: master_down with a cause, and its state says so.
            m.kill(2);
            CHECK(co_await eventually([&] { return rec.has_master(event_kind::master_down, 2); },
                                      5s));
            CHECK(co_await eventually(
                [&] { return c.master_states()[2].state != master_state::ready; }, 5s));
            CHECK(c.master_states()[2].drops == 1);
            CHECK(c.master_states()[2].last_error);
            CHECK(c.master_states()[0].state == master_state::ready);
            const seen* down = rec.last(event_kind::master_down);
            REQUIRE(down != nullptr);
            CHECK(down->ec);
            // Killed between requests: the detail says that the drop cost no reply.
            INFO(down->detail);
            CHECK(down->detail.starts_with(m.uri(2) + ": "));
            CHECK(down->detail.ends_with(" (idle: no request in flight)"));
            // Reconnection attempts that keep failing are not reported again.
            co_await sleep_for(300ms);
            CHECK(rec.count(event_kind::master_down) == 1);

            // ... and back.
            m.restart(2);
            CHECK(co_await eventually([&] { return rec.count(event_kind::master_up) == 4; }, 10s));
            CHECK(c.master_states()[2].state == master_state::ready);
            CHECK(c.master_states()[2].connects == 2);
            CHECK_FALSE(c.master_states()[2].last_error);

            // Killed with an acquisition's SET unanswered (masters 0 and 1 paused, so that the
            // attempt waits for them): the detail counts it.
            m.pause(0);
            m.pause(1);
            lock_options slow;
            slow.attempt_timeout = 2000ms;
            slow.ttl = 10000ms;
            std::optional<error_code> tried;
            c.async_try_lock("ev-in-flight", slow,
                             [&](error_code ec, std::optional<lock>) { tried = ec; });
            co_await sleep_for(100ms);  // the SETs are written
            CHECK_FALSE(tried.has_value());
            m.kill(1);
            CHECK(co_await eventually([&] { return rec.count(event_kind::master_down) == 2; }, 5s));
            const seen* busy = rec.last(event_kind::master_down);
            REQUIRE(busy != nullptr);
            CHECK(busy->master == 1);
            INFO(busy->detail);
            CHECK(busy->detail.ends_with(" (1 request in flight)"));
            m.resume(0);
            CHECK(co_await eventually([&] { return tried.has_value(); }, 5s));
            m.restart(1);
        },
        30s);
    c.close();
    io.run_for(2s);
    CHECK(c.master_states()[0].state == master_state::closed);
}

TEST_CASE(
    "client: events: a lock handed to the next waiter is an acquired event that says so, and the "
    "holder's hand-over a released event",
    "[live][client][events][handoff]")
{
    auto defaults = lasting(20s);
    recorded_client rig(defaults);
    auto& [rec, m, io, c] = rig;

    run_and_drain(
        io, c,
        [&]() -> asio::awaitable<void> {
            lock first = co_await acquired(c, "ho");
            REQUIRE(rec.last(event_kind::acquired) != nullptr);
            CHECK(rec.last(event_kind::acquired)->attempts == 1);
            CHECK_FALSE(rec.last(event_kind::acquired)->handed_over);

            auto o = defaults;
            o.wait = 10s;
            std::optional<error_code> ec;
            lock next;
            co_await start_waiter(c, m, "ho", o, true, ec, next);
            auto [uec] = co_await c.async_unlock(first, tuple_awaitable);
            CHECK_FALSE(uec);
            REQUIRE(co_await eventually([&] { return ec.has_value(); }, 5s));
            REQUIRE_FALSE(*ec);
            CHECK(next.valid_until() == first.valid_until());  // handed over
            CHECK(rec.count(event_kind::acquired, "ho") == 2);
            CHECK(rec.last(event_kind::acquired)->handed_over);
            CHECK(rec.last(event_kind::acquired)->attempts == 1);  // refused, before its wait
            CHECK(rec.count(event_kind::released, "ho") == 1);
            CHECK(rec.count(event_kind::acquire_failed, "ho") == 0);

            auto [nec] = co_await c.async_unlock(next, tuple_awaitable);
            CHECK_FALSE(nec);
            CHECK(rec.count(event_kind::released, "ho") == 2);
        },
        20s);
}

TEST_CASE("client: events: a holder is told when its lock is degraded, recovered and lost",
          "[live][client][events][hold]")
{
    recorded_client rig(short_lock(600ms));
    auto& [rec, m, io, c] = rig;

    std::vector<std::pair<std::size_t, std::size_t>> told;  // (holding, masters)
    hold_options ho;
    ho.on_degraded = [&](std::size_t holding, std::size_t n) { told.emplace_back(holding, n); };

    run_and_drain(
        io, c,
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "deg");
            lock_holder h(c, l, ho);
            CHECK(h.masters_holding() == 3);

            // The key deleted behind our back on one master: the next extension finds 2 of 3.
            del_on(m, 2, "deg");
            CHECK(co_await eventually([&] { return told.size() == 1; }, 3s));
            REQUIRE(told.size() == 1);
            CHECK(told[0] == std::pair<std::size_t, std::size_t>{2, 3});
            CHECK(h.masters_holding() == 2);
            CHECK(h.held());
            const seen* deg = rec.last(event_kind::degraded);
            REQUIRE(deg != nullptr);
            CHECK(deg->resource == "deg");
            CHECK(deg->granted == 2);
            CHECK(deg->masters == 3);

            // Put back: the next extension finds every master again.
            REQUIRE(m.command(2, {"SET", "deg", l.token(), "PX", "600"}) == "+OK\r\n");
            CHECK(co_await eventually([&] { return told.size() == 2; }, 3s));
            REQUIRE(told.size() == 2);
            CHECK(told[1] == std::pair<std::size_t, std::size_t>{3, 3});
            CHECK(h.masters_holding() == 3);

            // Taken over on a majority: lost, with the holder's status as the cause.
            set_on(m, 0, "deg", "rival");
            set_on(m, 1, "deg", "rival");
            CHECK(co_await eventually([&] { return !h.held(); }, 3s));
            const seen* lost = rec.last(event_kind::lost);
            REQUIRE(lost != nullptr);
            CHECK(lost->resource == "deg");
            CHECK(lost->ec == h.status());
            CHECK(rec.count(event_kind::extended, "deg") >= 2);
            del_on(m, 0, "deg");
            del_on(m, 1, "deg");
        },
        30s);
    CHECK(total_keys(m) == 0);
}

TEST_CASE("client: events: extend_failed with its cause, from async_extend and from a holder, and "
          "an acquisition "
          "after retries counts them",
          "[live][client][events]")
{
    recorded_client rig(short_lock());
    auto& [rec, m, io, c] = rig;

    rig.run(
        [&]() -> asio::awaitable<void> {
            // async_extend of a lock taken over on a majority: extend_failed with lock_lost.
            auto long_lock = lasting(60000ms);
            lock l = co_await acquired(c, "ev-extend", long_lock);
            for (std::size_t i = 0; i < 2; ++i)
                m.command(i, {"SET", "ev-extend", "someone-else", "PX", "60000"});
            auto [eec, el] = co_await c.async_extend(l, 60000ms, tuple_awaitable);
            CHECK(eec == error::lock_lost);
            const seen* failed = rec.last(event_kind::extend_failed);
            REQUIRE(failed != nullptr);
            CHECK(failed->resource == "ev-extend");
            CHECK(failed->ec == error::lock_lost);

            // A holder's extension that finds the keys taken: extend_failed, then lost, both lock_lost.
            lock h = co_await acquired(c, "ev-hold");
            auto ex = co_await asio::this_coro::executor;
            lock_holder holder(c, h, ex);
            for (std::size_t i = 0; i < 2; ++i)
                m.command(i, {"SET", "ev-hold", "someone-else", "PX", "60000"});
            CHECK(co_await eventually([&] { return rec.count(event_kind::lost, "ev-hold") == 1; },
                                      5s));
            CHECK(rec.count(event_kind::extend_failed, "ev-hold") == 1);
            CHECK(rec.last(event_kind::lost)->ec == error::lock_lost);
            CHECK(holder.status() == error::lock_lost);

            // Held by another for 150 ms, taken by an acquisition that retries every 20-40 ms: the
            // acquired event counts every attempt, and its wait includes the backoff.
            for (std::size_t i = 0; i < 3; ++i)
                m.command(i, {"SET", "ev-retry", "someone-else", "PX", "150"});
            auto [aec, al] =
                co_await c.async_lock("ev-retry", retrying(100, 20ms, 20ms), tuple_awaitable);
            REQUIRE_FALSE(aec);
            const seen* got = rec.last(event_kind::acquired);
            REQUIRE(got != nullptr);
            CHECK(got->resource == "ev-retry");
            CHECK(got->attempts >= 2);
            CHECK(got->elapsed >= std::chrono::microseconds(20'000 * (got->attempts - 1)));
        },
        20s);
    c.close();
    io.run_for(500ms);
}
