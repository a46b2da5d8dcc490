// Acceptance: what failed attempts leave behind on the masters; script cache loss; extension.
#include "client_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

using namespace redlock;
using namespace redlock::test;

namespace {

// With the masters' script cache flushed or primed (flush_or_prime_scripts) and masters 0-2
// paused, `attempt()` (a coroutine) makes an acquisition that fails; then no key is left on
// masters 3 and 4, nor anywhere once the paused masters are resumed.
template <class Attempt>
asio::awaitable<void> fail_on_paused_majority(client& c, local_masters& m, bool flushed,
                                              Attempt attempt)
{
    co_await flush_or_prime_scripts(c, m, flushed);
    for (std::size_t i : {0u, 1u, 2u})
        m.pause(i);
    co_await attempt();
    check_no_keys_on(m, 3, 4);
    co_await expect_no_keys_after_resume(m);
}

/// masters_rig<5> whose test body runs with our lock on `resource`, on every master, with a
/// TTL of 60 s: no key expires during the test, only an unlock can delete them.
struct held_everywhere_rig : masters_rig<5>
{
    template <class Body>
    void run_holding(std::string resource, Body body)
    {
        run(
            [&]() -> asio::awaitable<void> {
                lock l = co_await acquired_everywhere(c, m, resource, lasting(60000ms));
                co_await body(std::move(l));
            },
            15s);
    }
};

}  // namespace

TEST_CASE_METHOD(rivals_rig<5>, "client: a contended attempt leaves only the holder's keys",
                 "[live][client]")
{
    auto opts = retrying(2, 10ms, 10ms);

    SECTION("held on every master by another client")
    {
        run_connected(
            io, ours,
            [&]() -> asio::awaitable<void> {
                co_await require_connected(theirs);
                lock held = co_await acquired_everywhere(theirs, m, "contended");

                const lock l = co_await refused_as_contended(ours, "contended", opts);
                INFO(l.describe());
                // Decided once 3 masters said "held"; the others may not have answered yet.
                CHECK(count_status(l, master_status::held_by_other) >= 3);
                CHECK(count_status(l, master_status::held_by_other) +
                          count_status(l, master_status::not_needed) ==
                      5);

                INFO(describe_keys(m));
                for (std::size_t i = 0; i < m.size(); ++i)
                {
                    CHECK(keys_on(m, i) == std::vector<std::string>{"contended"});
                    CHECK(get_on(m, i, "contended") == std::string(held.token()));
                }
                auto [uec] = co_await theirs.async_unlock(held, tuple_awaitable);
                CHECK_FALSE(uec);
            },
            10s);
    }
    SECTION("held on 3 of 5 masters: the 2 keys we set are released")
    {
        run_connected(
            io, ours,
            [&]() -> asio::awaitable<void> {
                for (std::size_t i : {0u, 1u, 2u})
                    REQUIRE(m.command(i, {"SET", "partly", "othervalue", "NX", "PX", "10000"}) ==
                            "+OK\r\n");

                const lock l = co_await refused_as_contended(ours, "partly", opts);
                INFO(l.describe());
                CHECK(count_status(l, master_status::held_by_other) == 3);
                // Decided as soon as 3 masters said "held": the 2 others may not have answered yet.
                CHECK(count_status(l, master_status::granted) +
                          count_status(l, master_status::not_needed) ==
                      2);

                INFO(describe_keys(m));
                for (std::size_t i : {0u, 1u, 2u})
                    CHECK(get_on(m, i, "partly") == std::string("othervalue"));
                check_no_keys_on(m, 3, 4);
            },
            10s);
    }
}

// The masters that time out get our SET later (it waits in their socket buffer) and the
// release queued behind it must undo it. The masters' script cache is flushed first, as after
// a restart, so the release cannot rely on a cached EVALSHA.
TEST_CASE_METHOD(masters_rig<5>,
                 "client: an attempt without quorum leaves no key once the masters come back",
                 "[live][client]")
{
    const bool flushed = GENERATE(false, true);

    const auto opts = one_attempt(200ms, 100ms);

    INFO("script cache flushed before the attempt: " << flushed);
    run(
        [&]() -> asio::awaitable<void> {
            co_await fail_on_paused_majority(c, m, flushed, [&]() -> asio::awaitable<void> {
                auto [ec, l] = co_await c.async_lock("no-quorum", opts, tuple_awaitable);
                INFO(l.describe());
                CHECK(ec == error::no_quorum);
            });
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "client: a cancelled attempt leaves no key once the masters come back",
                 "[live][client]")
{
    const bool flushed = GENERATE(false, true);

    lock_options opts;
    opts.attempt_timeout = 2000ms;
    opts.release_timeout = 100ms;

    INFO("script cache flushed before the attempt: " << flushed);
    run(
        [&]() -> asio::awaitable<void> {
            co_await fail_on_paused_majority(c, m, flushed, [&]() -> asio::awaitable<void> {
                asio::cancellation_signal sig;
                asio::steady_timer t(co_await asio::this_coro::executor, 30ms);
                t.async_wait([&](error_code) { sig.emit(asio::cancellation_type::terminal); });
                auto [ec, l] = co_await c.async_lock(
                    "cancelled", opts, asio::bind_cancellation_slot(sig.slot(), tuple_awaitable));
                CHECK(ec == asio::error::operation_aborted);
            });
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: unlock and extend survive SCRIPT FLUSH (NOSCRIPT -> EVAL)",
                 "[live][client]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // unlock: once with scripts never loaded, once after they were loaded and flushed.
            for (int k = 0; k < 2; ++k)
            {
                lock l = co_await acquired(c, "flushed");
                flush_scripts(m);
                co_await unlock_and_expect_no_keys(c, l, m);
            }

            // extend: from a 1 s TTL to 20 s, with the script cache flushed before each call.
            auto opts = lasting(1000ms);
            lock l = co_await acquired(c, "flushed", opts);
            for (int k = 0; k < 2; ++k)
            {
                flush_scripts(m);
                auto [eec, extended] = co_await c.async_extend(l, 20000ms, tuple_awaitable);
                INFO(extended.describe());
                REQUIRE_FALSE(eec);
                CHECK(extended.token() == l.token());
                CHECK(extended.valid_until() > l.valid_until());
                CHECK(extended.remaining() > 15s);
                CHECK(count_status(extended, master_status::granted) >= 2);
                CHECK(co_await eventually([&] {
                    for (std::size_t i = 0; i < m.size(); ++i)
                    {
                        const std::string raw = m.command(i, {"PTTL", "flushed"});
                        if (raw[0] != ':' || std::stol(raw.substr(1)) <= 15000)
                            return false;
                    }
                    return true;
                }));
                l = extended;
            }
            flush_scripts(m);
            co_await unlock_and_expect_no_keys(c, l, m);
        },
        10s);
}

// The extension reaches a quorum without the slowest master; the request to that master is
// abandoned, yet it must still extend the key there when the master gets to it, also with an
// empty script cache (no one is left to answer a NOSCRIPT).
TEST_CASE_METHOD(masters_rig<3>,
                 "client: an extension extends the slow minority too, with an empty script cache",
                 "[live][client]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto opts = lasting(2000ms);
            lock l = co_await acquired(c, "slow-extend", opts);

            flush_scripts(m);
            m.pause(2);
            auto [eec, extended] = co_await c.async_extend(l, 20000ms, tuple_awaitable);
            INFO(extended.describe());
            REQUIRE_FALSE(eec);
            CHECK(extended.masters()[2].status == master_status::not_needed);
            m.resume(2);
            co_await sleep_for(50ms);

            for (std::size_t i = 0; i < m.size(); ++i)
            {
                INFO("master " << i);
                const std::string raw = m.command(i, {"PTTL", "slow-extend"});
                REQUIRE(raw[0] == ':');
                CHECK(std::stol(raw.substr(1)) > 15000);
            }
            co_await unlock_and_expect_no_keys(c, extended, m);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "client: extending an expired lock fails with lock_expired and re-creates nothing",
                 "[live][client]")
{
    auto opts = lasting(50ms);

    run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "short-lived", opts);
            co_await sleep_for(100ms);
            CHECK_FALSE(l.held());

            auto [eec, extended] = co_await c.async_extend(l, 10000ms, tuple_awaitable);
            INFO(extended.describe());
            CHECK(eec == error::lock_expired);
            CHECK_FALSE(extended.held());
            CHECK(count_status(extended, master_status::held_by_other) >= 3);
            CHECK(count_status(extended, master_status::granted) == 0);
            for (std::size_t i = 0; i < m.size(); ++i)
                CHECK(m.command(i, {"EXISTS", "short-lived"}) == ":0\r\n");
        },
        10s);
}

TEST_CASE_METHOD(held_everywhere_rig,
                 "client: an unlock that finds the lock lost still deletes the keys that were ours",
                 "[live][client]")
{
    run_holding("lost-minority", [&](lock l) -> asio::awaitable<void> {
        // Taken over on masters 0-2: ours is left on 3 and 4, a minority.
        for (std::size_t i = 0; i < 3; ++i)
            REQUIRE(m.command(i, {"SET", "lost-minority", "someone-else", "PX", "60000"}) ==
                    "+OK\r\n");
        auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
        CHECK(uec == error::lock_lost);
        for (std::size_t i = 0; i < 3; ++i)
            CHECK(get_on(m, i, "lost-minority") == "someone-else");  // theirs, left alone
        for (std::size_t i = 3; i < 5; ++i)
            CHECK(m.command(i, {"EXISTS", "lost-minority"}) == ":0\r\n");  // ours, deleted
    });
}

TEST_CASE_METHOD(held_everywhere_rig,
                 "client: a cancelled unlock completes at once and the deletes it sent still run",
                 "[live][client][cancel]")
{
    run_holding("cancelled-unlock", [&](lock l) -> asio::awaitable<void> {
        // Every master paused: the deletes are written and wait there; nothing answers.
        for (std::size_t i = 0; i < m.size(); ++i)
            m.pause(i);
        asio::cancellation_signal cancel;
        std::optional<error_code> result;
        c.async_unlock(
            l, asio::bind_cancellation_slot(cancel.slot(), [&](error_code ec) { result = ec; }));
        co_await sleep_for(50ms);  // written to the sockets
        CHECK_FALSE(result.has_value());
        cancel.emit(asio::cancellation_type::terminal);
        CHECK(co_await eventually([&] { return result.has_value(); }, 1s));
        CHECK(result == error_code(asio::error::operation_aborted));
        for (std::size_t i = 0; i < m.size(); ++i)
            m.resume(i);
        // The deletes execute: every key is gone, with no second unlock.
        CHECK(co_await eventually([&] { return total_keys(m) == 0; }, 5s));
    });
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "client: a failed attempt sends its release only to the masters that may hold its key",
    "[live][client]")
{
    // Another owner's key on masters 0-2: the attempt is granted on 3 and 4, refused on 0-2,
    // and fails (contended). Its release (a script) goes to 3 and 4 only: the masters that
    // refused it run no script at all.
    run(
        [&]() -> asio::awaitable<void> {
            for (std::size_t i = 0; i < 3; ++i)
                REQUIRE(m.command(i, {"SET", "refusers", "someone-else", "PX", "60000"}) ==
                        "+OK\r\n");
            auto scripts_on = [&](std::size_t i) {
                return command_calls(m, i, "eval") + command_calls(m, i, "evalsha");
            };
            std::vector<long> before;
            for (std::size_t i = 0; i < m.size(); ++i)
                before.push_back(scripts_on(i));
            auto [ec, l] = co_await c.async_try_lock("refusers", tuple_awaitable);
            CHECK_FALSE(ec);
            CHECK_FALSE(l.has_value());
            // The release of 3 and 4 is over once their keys are gone.
            CHECK(co_await eventually([&] { return total_keys(m) == 3; }, 2s));
            for (std::size_t i = 0; i < 3; ++i)
                CHECK(scripts_on(i) == before[i]);
            for (std::size_t i = 3; i < 5; ++i)
                CHECK(scripts_on(i) >= before[i] + 1);  // EVALSHA, and EVAL after a NOSCRIPT
        },
        10s);
}
