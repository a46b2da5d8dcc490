// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The census machine of async_check (src/fsm/check_fsm.hpp), stepped by hand: it waits
// for every master whatever the majority says, counts the silent ones at the deadline, and a
// failure, a cancellation or a close injected at every step.
#include "fsm/check_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstdint>

#include "fsm_test_words.hpp"

using namespace redlock_test::fsm;
using redlock::detail::check_fsm;

TEST_CASE("check_fsm: the census waits for every master, then completes with the count",
          "[check_fsm]")
{
    check_fsm m(50ms, 3);
    const auto a = m.resume(fsm_event::start(t_start));
    REQUIRE(a.type == ak::send_attempt);
    CHECK(a.deadline == t_start + 50ms);
    CHECK(m.resume(fsm_event::reply(a.round_id, 0, master_outcome::granted, t_start)).type ==
          ak::none);
    // A majority is not the end of a census.
    CHECK(m.resume(fsm_event::reply(a.round_id, 1, master_outcome::granted, t_start)).type ==
          ak::none);
    CHECK(m.resume(fsm_event::reply(a.round_id, 1, master_outcome::failed, t_start)).type ==
          ak::none);  // again
    const auto c =
        m.resume(fsm_event::reply(a.round_id, 2, master_outcome::held_by_other, t_start + 1ms));
    REQUIRE(c.type == ak::complete);
    CHECK_FALSE(c.ec);
    CHECK(m.outcomes().granted() == 2);
    CHECK(m.outcomes().held_by_other() == 1);
    CHECK(m.done());
    CHECK(m.resume(fsm_event::cancel(t_start + 2ms)).type == ak::none);
}

TEST_CASE("check_fsm: at the deadline the silent masters count as not holding", "[check_fsm]")
{
    check_fsm m(50ms, 5);
    const auto id = m.resume(fsm_event::start(t_start)).round_id;
    m.resume(fsm_event::reply(id, 4, master_outcome::granted, t_start));
    CHECK(m.resume(fsm_event::deadline(id + 1, t_start + 50ms)).type ==
          ak::none);  // another round's
    const auto c = m.resume(fsm_event::deadline(id, t_start + 50ms));
    REQUIRE(c.type == ak::complete);
    CHECK_FALSE(c.ec);
    CHECK(m.outcomes().granted() == 1);
    CHECK(m.outcomes().outcome(0) == master_outcome::timed_out);
    CHECK(m.outcomes().pending() == 0);
}

TEST_CASE("check_fsm: a failure, a cancellation or a close injected at every step", "[check_fsm]")
{
    const std::size_t n = 3;
    for (std::size_t k = 0; k < n; ++k)
    {
        INFO("master " << k << " failed: counted, not fatal");
        check_fsm m(50ms, n);
        const auto id = m.resume(fsm_event::start(t_start)).round_id;
        fsm_action last;
        for (std::size_t i = 0; i < n; ++i)
            last = m.resume(fsm_event::reply(
                id, i, i == k ? master_outcome::failed : master_outcome::granted, t_start));
        REQUIRE(last.type == ak::complete);
        CHECK_FALSE(last.ec);
        CHECK(m.outcomes().granted() == n - 1);
    }
    for (std::size_t k = 0; k < n; ++k)
    {
        INFO("cancelled after " << k << " replies: operation_aborted at once");
        check_fsm m(50ms, n);
        const auto id = m.resume(fsm_event::start(t_start)).round_id;
        for (std::size_t i = 0; i < k; ++i)
            REQUIRE(m.resume(fsm_event::reply(id, i, master_outcome::granted, t_start)).type ==
                    ak::none);
        const auto c = m.resume(fsm_event::cancel(t_start + 1ms));
        REQUIRE(c.type == ak::complete);
        CHECK(c.ec == aborted);
        CHECK(m.done());
    }
    for (std::size_t k = 0; k <= n; ++k)
    {
        INFO("closed after "
             << k << " replies: connection_closed when the census ends (none if after it)");
        check_fsm m(50ms, n);
        const auto id = m.resume(fsm_event::start(t_start)).round_id;
        fsm_action last;
        for (std::size_t i = 0; i < n; ++i)
        {
            if (i == k)
                CHECK(m.resume(fsm_event::closed(t_start)).type == ak::none);
            last = m.resume(fsm_event::reply(
                id, i, i >= k ? master_outcome::failed : master_outcome::granted, t_start));
        }
        REQUIRE(last.type == ak::complete);
        CHECK(last.ec == (k < n ? error_code(error::connection_closed) : error_code()));
    }
}

TEST_CASE("check_fsm: before start", "[check_fsm]")
{
    CHECK_THROWS_AS(check_fsm(50ms, 0), std::invalid_argument);
    check_fsm m(50ms, 3);
    CHECK(m.resume(fsm_event::reply(1, 0, master_outcome::granted, t_start)).type == ak::none);
    CHECK(m.resume(fsm_event::deadline(1, t_start)).type == ak::none);
    const auto c = m.resume(fsm_event::closed(t_start));
    REQUIRE(c.type == ak::complete);
    CHECK(c.ec == error::connection_closed);
    CHECK(m.resume(fsm_event::start(t_start)).type == ak::none);
}
