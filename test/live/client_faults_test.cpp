// Acceptance: acquisition with paused, killed and slow masters; the validity rule.
#include "client_fixture.hpp"

using namespace redlock;
using namespace redlock::test;

namespace {

/// `elapsed` (ms) is at least `min_ms` and less than `max_ms`.
void check_took(double elapsed, double min_ms, double max_ms)
{
    CHECK(elapsed >= min_ms);
    CHECK(elapsed < max_ms);
}

/// With a majority of the masters out of reach: a try_lock and then a lock of `resource` (one
/// attempt each) both fail with no_quorum, each after at least `min_ms` and less than
/// `max_ms`. Returns the failed lock, with its diagnostics. (No REQUIRE in here: GCC 12 gives a
/// false -Wmismatched-new-delete on this coroutine with one.)
asio::awaitable<lock> no_quorum_in(client& c, std::string resource, lock_options opts,
                                   double min_ms, double max_ms)
{
    {
        const auto [ec, l, elapsed] = co_await timed_try_lock(c, resource, opts);
        INFO("try_lock took " << elapsed << " ms");
        CHECK(ec == error::no_quorum);
        CHECK_FALSE(l.has_value());
        check_took(elapsed, min_ms, max_ms);
    }
    const auto t0 = steady::now();
    auto [ec, l] = co_await c.async_lock(resource, opts, tuple_awaitable);
    const auto elapsed = ms(steady::now() - t0);
    INFO("lock took " << elapsed << " ms: " << l.describe());
    CHECK(ec == error::no_quorum);
    check_took(elapsed, min_ms, max_ms);
    co_return l;
}

}  // namespace

TEST_CASE_METHOD(
    masters_rig<5>,
    "client: 2 of 5 masters paused, the acquisition takes one round trip of the majority",
    "[live][client]")
{
    lock_options opts;
    opts.attempt_timeout = 500ms;
    opts.max_attempts = 1;

    run(
        [&]() -> asio::awaitable<void> {
            m.pause(1);
            m.pause(3);

            const auto t0 = steady::now();
            auto [ec, l] = co_await c.async_lock("paused-minority", opts, tuple_awaitable);
            const auto elapsed = steady::now() - t0;
            INFO(l.describe());
            REQUIRE_FALSE(ec);
            CHECK(l.held());
            CHECK(ms(elapsed) < 100.0);
            CHECK(count_status(l, master_status::granted) == 3);
            for (std::size_t i : {1u, 3u})
            {
                const auto s = l.masters()[i].status;
                CHECK((s == master_status::not_needed || s == master_status::timed_out));
            }
            for (std::size_t i : {0u, 2u, 4u})
                CHECK(get_on(m, i, "paused-minority") == std::string(l.token()));

            // The release succeeds on the majority; the paused masters run out its deadline.
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            for (std::size_t i : {0u, 2u, 4u})
                CHECK_FALSE(get_on(m, i, "paused-minority"));

            m.resume(1);
            m.resume(3);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "client: 3 of 5 masters paused, the attempt fails with no_quorum at its deadline",
                 "[live][client]")
{
    const auto opts = one_attempt(500ms, 100ms);
    constexpr double slack_ms = 150.0;

    run(
        [&]() -> asio::awaitable<void> {
            for (std::size_t i : {0u, 2u, 4u})
                m.pause(i);

            {
                // async_lock (one attempt) returns the diagnostics with the error.
                const lock l = co_await no_quorum_in(c, "paused-majority", opts, 500.0,
                                                     500.0 + 100.0 + slack_ms);
                INFO(l.describe());
                REQUIRE(l.masters().size() == 5);
                CHECK_FALSE(l.held());
                for (std::size_t i : {0u, 2u, 4u})
                {
                    CHECK(l.masters()[i].status == master_status::timed_out);
                    CHECK(l.masters()[i].ec == error::request_timeout);
                }
                for (std::size_t i : {1u, 3u})
                    CHECK(l.masters()[i].status == master_status::granted);
                // The release after the failed attempt deleted the keys on the reachable masters.
                check_no_keys_on(m, 1, 3);
            }
            for (std::size_t i : {0u, 2u, 4u})
                m.resume(i);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "client: 3 of 5 masters killed, the attempt fails fast with no_quorum",
                 "[live][client]")
{
    const auto opts = one_attempt(500ms, 100ms);

    run(
        [&]() -> asio::awaitable<void> {
            for (std::size_t i : {0u, 1u, 2u})
                m.kill(i);

            {
                const lock l = co_await no_quorum_in(c, "killed-majority", opts, 0.0, 100.0);
                INFO(l.describe());
                REQUIRE(l.masters().size() == 5);
                for (std::size_t i : {0u, 1u, 2u})
                {
                    CHECK(l.masters()[i].status == master_status::error);
                    const auto e = l.masters()[i].ec;
                    CHECK((e == error::not_connected || e == error::connection_lost ||
                           e == error::connect_failed));
                }
                // Decided at once (3 failures): the live masters' answers were not needed.
                for (std::size_t i : {3u, 4u})
                    CHECK((l.masters()[i].status == master_status::granted ||
                           l.masters()[i].status == master_status::not_needed));
                check_no_keys_on(m, 3, 4);
            }
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "client: the validity of a lock ends before any of its keys expires",
                 "[live][client]")
{
    run(
        [&]() -> asio::awaitable<void> {
            for (const auto ttl : {10000ms, 1000ms, 100ms})
            {
                INFO("ttl " << ttl.count() << " ms");
                auto opts = lasting(ttl);
                const auto drift = std::chrono::duration_cast<steady::duration>(
                    std::chrono::duration<double, std::milli>(
                        static_cast<double>(ttl.count()) * 0.01 + 2.0));

                const auto before = steady::now();
                auto [ec, l] = co_await c.async_lock("validity", opts, tuple_awaitable);
                const auto after = steady::now();
                REQUIRE_FALSE(ec);
                CHECK(l.held());
                CHECK(l.remaining() > steady::duration::zero());
                // t0 is taken inside the call: valid_until = t0 + ttl - drift, before <= t0 <= after.
                CHECK(l.valid_until() - before >= ttl - drift);
                CHECK(l.valid_until() - before <= (ttl - drift) + (after - before));
                CHECK(l.valid_until() - after <= ttl - drift);

                // The safety property itself: the validity ends no later than the expiry of each
                // key as the master sees it. PTTL, asked at `asked` and answered at `answered`,
                // puts the expiry in [asked + pttl, answered + pttl + 2 ms] (ms truncation twice).
                for (std::size_t i = 0; i < m.size(); ++i)
                {
                    if (l.masters()[i].status != master_status::granted)
                        continue;  // its SET may still be on its way
                    const auto asked = steady::now();
                    const std::string raw = m.command(i, {"PTTL", "validity"});
                    const auto answered = steady::now();
                    REQUIRE(raw.size() > 1);
                    REQUIRE(raw[0] == ':');
                    const long pttl = std::stol(raw.substr(1));
                    REQUIRE(pttl > 0);
                    const auto latest_expiry = answered + std::chrono::milliseconds(pttl + 2);
                    const auto earliest_expiry = asked + std::chrono::milliseconds(pttl);
                    INFO("master " << i << " pttl " << pttl << " ms, validity ends "
                                   << ms(earliest_expiry - l.valid_until()) << " to "
                                   << ms(latest_expiry - l.valid_until()) << " ms before the key");
                    CHECK(l.valid_until() <= latest_expiry);
                    // With a drift allowance of 12 ms and more, the strict bound holds as well.
                    if (ttl >= 1000ms)
                        CHECK(l.valid_until() <= earliest_expiry);
                }
                auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                CHECK_FALSE(uec);
            }
            CHECK(co_await settled_keys(m) == 0);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>, "client: an attempt slower than the TTL never reports success",
                 "[live][client]")
{
    // Validity at best: 200 - (100 + 2) = 98 ms; the attempt may wait 190 ms (an attempt
    // timeout longer than the TTL is rejected as an option).
    auto opts = lasting(200ms);
    opts.drift_factor = 0.5;
    opts.attempt_timeout = 190ms;
    opts.max_attempts = 1;

    run(
        [&]() -> asio::awaitable<void> {
            for (int round = 0; round < 3; ++round)
            {
                INFO("round " << round);
                for (std::size_t i = 0; i < m.size(); ++i)
                    m.pause(i);
                // The masters come back after the validity is gone: every grant arrives too late.
                asio::steady_timer resume_timer(co_await asio::this_coro::executor, 120ms);
                resume_timer.async_wait([&](error_code) {
                    for (std::size_t i = 0; i < m.size(); ++i)
                        m.resume(i);
                });

                const auto t0 = steady::now();
                auto [ec, l] = co_await c.async_lock("slow", opts, tuple_awaitable);
                const auto elapsed = ms(steady::now() - t0);
                INFO("took " << elapsed << " ms: " << l.describe());
                CHECK((ec == error::validity_expired || ec == error::no_quorum));
                CHECK_FALSE(l.held());
                CHECK(elapsed >= 115.0);
                if (ec == error::validity_expired)
                    CHECK(count_status(l, master_status::granted) >= 3);

                CHECK(co_await settled_keys(m) == 0);
            }
        },
        10s);
}
