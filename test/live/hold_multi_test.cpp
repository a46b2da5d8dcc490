// Acceptance: multi-resource locks (async_lock_all: all keys or none on each master) and
// async_check (how many masters hold the token, the smallest PTTL).
#include "hold_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>

#include "protocol/scripts.hpp"

#include <algorithm>
#include <limits>

// GCC 12's false -Wmismatched-new-delete on inlined Asio coroutine frames (see hold_test.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace redlock::test {

namespace {

// Built outside the coroutines (GCC 12 and braced string lists in coroutine bodies).
std::vector<std::string> abc() { return {"multi:a", "multi:b", "multi:c"}; }

/// SCRIPT LOAD of the multi-key acquisition script on every master, as after a first use.
void cache_acquire_script(const local_masters& m)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        REQUIRE(
            m.command(i, {"SCRIPT", "LOAD", redlock::detail::acquire_multi_script().body}).size() >
            40);
}

/// Every key of `l` holds its token on every master.
bool all_keys_everywhere(const local_masters& m, const lock& l)
{
    for (const auto& k : l.keys())
        if (!on_every_master(m, k, l.token()))
            return false;
    return true;
}

/// The smallest PTTL of `keys` over every master.
std::int64_t min_pttl_of(const local_masters& m, const std::vector<std::string>& keys)
{
    std::int64_t least = std::numeric_limits<std::int64_t>::max();
    for (std::size_t i = 0; i < m.size(); ++i)
        for (const auto& k : keys)
            least = std::min(least, pttl_on(m, i, k));
    return least;
}

}  // namespace

TEST_CASE_METHOD(rivals_rig<5>, "multi: a conflict on one resource acquires none and leaves no key",
                 "[live][hold]")
{
    // The rival holds multi:b on every master (a Redlock lock), or only on 3 of 5 (a majority
    // of masters refuse the set; the two others grant it and must be released).
    const bool everywhere = GENERATE(true, false);
    CAPTURE(everywhere);

    run(
        [&]() -> asio::awaitable<void> {
            std::string rival_token = "rival-token";
            if (everywhere)
            {
                auto [hec, held] =
                    co_await theirs.async_lock("multi:b", short_lock(10000ms), tuple_awaitable);
                REQUIRE_FALSE(hec);
                rival_token = std::string(held.token());
                REQUIRE(co_await eventually(
                    [&] { return on_every_master(m, "multi:b", held.token()); }));
            }
            else
            {
                for (std::size_t i = 0; i < 3; ++i)
                    set_on(m, i, "multi:b", rival_token);
            }

            lock_options o = short_lock();
            o.max_attempts = 2;
            o.retry_delay = 20ms;
            auto [ec, l] = co_await ours.async_lock_all(abc(), o, tuple_awaitable);
            INFO(l.describe() << " -- " << describe_keys(m));
            CHECK(ec == error::contended);
            CHECK_FALSE(l.held());
            co_await sleep_for(50ms);  // any late reply or release has landed
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                CHECK_FALSE(get_on(m, i, "multi:a"));
                CHECK_FALSE(get_on(m, i, "multi:c"));
                if (everywhere || i < 3)
                    CHECK(get_on(m, i, "multi:b") == rival_token);
                else
                    CHECK_FALSE(get_on(m, i, "multi:b"));
            }
        },
        20s);
}

TEST_CASE_METHOD(
    masters_rig<5>,
    "multi: success sets every key with one token, check, extend, hold and unlock cover them all",
    "[live][hold]")
{
    // With the script cached, every master runs the acquisition (see the next test for masters
    // that do not have it).
    cache_acquire_script(m);

    run(
        [&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock_all(abc(), short_lock(), tuple_awaitable);
            REQUIRE_FALSE(ec);
            CHECK(l.held());
            CHECK(l.keys().size() == 3);
            CHECK(l.resources().size() == 3);
            CHECK(l.resource() == "multi:a");
            CHECK(co_await eventually([&] { return all_keys_everywhere(m, l); }));

            auto [cec, cr] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(cec);
            CHECK(cr.holding == m.size());
            CHECK(cr.min_pttl > 0ms);
            CHECK(cr.min_pttl <= 1000ms);

            // A single extension applies to every key.
            co_await sleep_for(300ms);
            auto [xec, extended] = co_await c.async_extend(l, 5000ms, tuple_awaitable);
            CHECK_FALSE(xec);
            CHECK(extended.keys().size() == 3);
            CHECK(co_await eventually([&] { return min_pttl_of(m, abc()) > 4000; }));

            // Automatic extension keeps all three past the TTL (back to a 1 s TTL first).
            auto [ec2, short_l] = co_await c.async_extend(extended, 1000ms, tuple_awaitable);
            REQUIRE_FALSE(ec2);
            lock_holder h2(c, short_l, co_await asio::this_coro::executor);
            co_await sleep_for(2000ms);
            CHECK(h2.held());
            CHECK(h2.extensions() >= 2);
            CHECK(min_pttl_of(m, abc()) > 0);
            auto [c2, cr2] = co_await c.async_check(h2.current(), tuple_awaitable);
            CHECK(cr2.holding == m.size());

            auto [uec] = co_await h2.async_release(tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(dbsize_all(m) == 0);

            // A multi lock released with async_unlock.
            auto [ec3, l3] = co_await c.async_lock_all(abc(), short_lock(), tuple_awaitable);
            REQUIRE_FALSE(ec3);
            auto [uec3] = co_await c.async_unlock(l3, tuple_awaitable);
            CHECK_FALSE(uec3);
            CHECK(dbsize_all(m) == 0);
        },
        20s);
}

// A multi-key acquisition goes as EVAL (it went as EVALSHA: a master that answered NOSCRIPT
// after the quorum was no longer listened to, and the lock stayed on a bare majority).
TEST_CASE_METHOD(masters_rig<5>,
                 "multi: masters answering after the quorum also get every key, script not cached",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            flush_scripts(m);
            // Masters 3 and 4 answer only after the quorum (0, 1, 2) has decided.
            m.pause(3);
            m.pause(4);
            auto [ec, l] = co_await c.async_lock_all(abc(), short_lock(), tuple_awaitable);
            m.resume(3);
            m.resume(4);
            REQUIRE_FALSE(ec);
            INFO(l.describe() << " -- " << describe_keys(m));
            // A single-key SET queued on a paused master runs when it resumes; so must this.
            CHECK(co_await eventually([&] { return all_keys_everywhere(m, l); }, 500ms));
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>, "multi: a key of a held multi lock stolen on a majority loses it",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock_all(abc(), short_lock(), tuple_awaitable);
            REQUIRE_FALSE(ec);
            lock_holder h(c, l, co_await asio::this_coro::executor);
            for (std::size_t i = 0; i < 3; ++i)
                del_on(m, i, "multi:c");
            asio::steady_timer work(co_await asio::this_coro::executor, 5s);
            auto [wec] = co_await work.async_wait(
                asio::bind_cancellation_slot(h.loss_slot(), tuple_awaitable));
            CHECK(wec == asio::error::operation_aborted);
            CHECK(h.status() == error::lock_lost);
            // The keys still holding the token are released; none is re-created.
            CHECK(co_await no_keys_within(m, 1s));
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<3>, "multi: invalid resource lists are rejected", "[live][hold]")
{
    const auto lists = GENERATE(std::vector<std::string>{}, std::vector<std::string>{"x", ""},
                                std::vector<std::string>{"x", "y", "x"});
    CAPTURE(lists);

    run(
        [&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock_all(lists, short_lock(), tuple_awaitable);
            CHECK(ec == error::invalid_argument);
            CHECK_FALSE(l.held());
            CHECK(dbsize_all(m) == 0);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<5>, "check: holding and the smallest PTTL, as the masters see them",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired_everywhere(c, m, "check:r", short_lock());

            auto [c1, fresh] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(c1);
            CHECK(fresh.holding == m.size());
            CHECK(fresh.min_pttl > 900ms);
            CHECK(fresh.min_pttl <= 1000ms);
            CHECK(fresh.masters.size() == m.size());

            // One master's key made shorter by hand: the smallest PTTL is that one, not another's.
            m.command(2, {"PEXPIRE", "check:r", "400"});
            auto [c1b, shorter] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(c1b);
            CHECK(shorter.holding == m.size());
            CHECK(shorter.min_pttl > 0ms);
            CHECK(shorter.min_pttl <= 400ms);

            del_on(m, 0, "check:r");
            set_on(m, 1, "check:r", "someone-else");
            auto [c2, after] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(c2);
            CHECK(after.holding == m.size() - 2);
            CHECK(after.masters[0].status == master_status::held_by_other);
            CHECK(after.masters[1].status == master_status::held_by_other);
            CHECK(after.masters[2].status == master_status::granted);

            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            auto [c3, gone] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(c3);
            CHECK(gone.holding == 0);
            CHECK(gone.min_pttl == -1ms);

            auto [c4, empty] = co_await c.async_check(lock(), tuple_awaitable);
            CHECK(c4 == error::invalid_argument);
        },
        10s);
}

// usage.md, "async_check": a check reads only. It neither extends the keys nor changes them,
// and a released lock's keys are not re-created by checking it.
TEST_CASE_METHOD(masters_rig<3>,
                 "check: reads only: the keys' values and TTLs stay as they were, a released "
                 "lock's keys are not re-created",
                 "[live][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired_everywhere(c, m, "check:read-only", short_lock(60s));
            const auto pexpires = calls_all(m, "pexpire");
            const auto sets = calls_all(m, "set");
            std::vector<std::int64_t> pttl_before;
            for (std::size_t i = 0; i < m.size(); ++i)
                pttl_before.push_back(pttl_on(m, i, "check:read-only"));
            for (int k = 0; k < 3; ++k)
            {
                auto [cec, r] = co_await c.async_check(l, tuple_awaitable);
                CHECK_FALSE(cec);
                CHECK(r.holding == m.size());
            }
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                CHECK(pttl_on(m, i, "check:read-only") <= pttl_before[i]);  // never lengthened
                CHECK(get_on(m, i, "check:read-only") ==
                      std::optional<std::string>(std::string(l.token())));
            }
            CHECK(calls_all(m, "pexpire") == pexpires);
            CHECK(calls_all(m, "set") == sets);

            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            auto [gec, gone] = co_await c.async_check(l, tuple_awaitable);
            CHECK_FALSE(gec);
            CHECK(gone.holding == 0);
            CHECK(dbsize_all(m) == 0);
        },
        10s);
}

}  // namespace redlock::test
