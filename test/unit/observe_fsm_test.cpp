// async_next_holders' decisions (src/fsm/observe_fsm.hpp), stepped on synthetic time: when it
// arms the watch, reads, waits and finishes, and what it drops.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>

#include <boost/asio/error.hpp>

#include "fsm/observe_fsm.hpp"

using namespace std::chrono_literals;
using redlock::detail::observe_action;
using redlock::detail::observe_fsm;
using observe_step = observe_action::kind;  // (names apart from other tests': one unity unit)
using redlock::error;

namespace {

constexpr auto no_expiry = observe_fsm::duration::max();
observe_fsm::time_point when(std::chrono::milliseconds d)
{
    return observe_fsm::time_point{} + 1h + d;
}

// 5 masters (quorum 3), the caller's read decided unless told, re-read every 1 s, the watch's
// answers awaited 200 ms.
observe_fsm five_masters(bool seen_decided = true, observe_fsm::duration reread = 1s)
{
    return observe_fsm(5, 3, seen_decided, reread, 200ms);
}

// Starts `f` and arms it to its read: returns the read's id.
std::uint64_t armed_to_read(observe_fsm& f, observe_fsm::time_point now)
{
    const auto a = f.start(now);
    REQUIRE(a.type == observe_step::arm);
    for (int i = 0; i < 2; ++i)
        REQUIRE(f.watched(true, now).type == observe_step::none);
    const auto r = f.watched(true, now);
    REQUIRE(r.type == observe_step::read);
    return r.read_id;
}

}  // namespace

TEST_CASE("observe_fsm: the start arms the watch until the attempt timeout, a re-read interval "
          "that is not positive, or a closed client, finishes at once",
          "[observe_fsm]")
{
    auto f = five_masters();
    const auto a = f.start(when(0ms));
    CHECK(a.type == observe_step::arm);
    CHECK(a.until == when(200ms));
    CHECK(f.start(when(1ms)).type == observe_step::none);  // once

    auto bad = five_masters(true, 0ms);
    const auto b = bad.start(when(0ms), true);  // the option is checked first
    CHECK(b.type == observe_step::finish);
    CHECK(b.ec == error::invalid_option);
    CHECK_FALSE(b.with_read);
    CHECK(bad.done());

    auto shut = five_masters();
    const auto c = shut.start(when(0ms), true);
    CHECK(c.type == observe_step::finish);
    CHECK(c.ec == error::connection_closed);
}

TEST_CASE("observe_fsm: the read comes once a majority tracks the keys, once every master "
          "answered, or at the arming deadline, whichever is first",
          "[observe_fsm]")
{
    SECTION("a majority armed")
    {
        auto f = five_masters();
        (void)f.start(when(0ms));
        CHECK(f.watched(false, when(1ms)).type == observe_step::none);  // answered, not tracking
        CHECK(f.watched(true, when(1ms)).type == observe_step::none);
        CHECK(f.watched(true, when(1ms)).type == observe_step::none);
        const auto r = f.watched(true, when(2ms));
        CHECK(r.type == observe_step::read);
        CHECK(f.watched(true, when(2ms)).type == observe_step::none);  // a late answer: ignored
    }
    SECTION("every master answered, fewer than a majority tracking")
    {
        auto f = five_masters();
        (void)f.start(when(0ms));
        for (int i = 0; i < 4; ++i)
            CHECK(f.watched(i < 2, when(1ms)).type == observe_step::none);
        CHECK(f.watched(false, when(1ms)).type == observe_step::read);
    }
    SECTION("the arming deadline, some masters silent")
    {
        auto f = five_masters();
        (void)f.start(when(0ms));
        CHECK(f.watched(true, when(1ms)).type == observe_step::none);
        CHECK(f.deadline(when(200ms)).type == observe_step::read);
    }
}

TEST_CASE("observe_fsm: a read that differs finishes with it, the same holders wait until the "
          "first validity ends or the interval passes, a change meanwhile arms again",
          "[observe_fsm]")
{
    auto f = five_masters();
    auto id = armed_to_read(f, when(0ms));

    SECTION("differs: finished with the read")
    {
        const auto a = f.read_answered(id, {}, true, false, no_expiry, when(5ms));
        CHECK(a.type == observe_step::finish);
        CHECK_FALSE(a.ec);
        CHECK(a.with_read);
        CHECK(f.done());
        CHECK(f.key_changed(when(6ms)).type == observe_step::none);
        CHECK(f.deadline(when(7ms)).type == observe_step::none);
        CHECK(f.cancel().type == observe_step::none);
    }
    SECTION("the same: waits to the earlier of the interval and the first holder's expiry")
    {
        const auto a = f.read_answered(id, {}, false, false, 300ms, when(5ms));
        CHECK(a.type == observe_step::wait_until);
        CHECK(a.until == when(305ms));
        // The wait's end, or a change, arms again; the next read is a new one.
        const auto again = f.deadline(when(305ms));
        CHECK(again.type == observe_step::arm);
        CHECK(again.until == when(505ms));
        CHECK(f.deadline(when(505ms)).type == observe_step::read);
        CHECK(f.read_answered(id, {}, true, false, no_expiry, when(506ms)).type ==
              observe_step::none);  // old
        const auto w = f.read_answered(id + 1, {}, false, false, no_expiry, when(506ms));
        CHECK(w.type == observe_step::wait_until);
        CHECK(w.until == when(1506ms));
        CHECK(f.key_changed(when(600ms)).type == observe_step::arm);
    }
    SECTION("a change heard while reading: the same holders arm again at once")
    {
        CHECK(f.key_changed(when(3ms)).type == observe_step::none);
        CHECK(f.read_answered(id, {}, false, false, no_expiry, when(5ms)).type ==
              observe_step::arm);
    }
    SECTION("a change heard while arming counts too, and the next arming forgets it")
    {
        auto g = five_masters();
        (void)g.start(when(0ms));
        CHECK(g.key_changed(when(1ms)).type == observe_step::none);
        const auto r = g.deadline(when(200ms));
        REQUIRE(r.type == observe_step::read);
        CHECK(g.read_answered(r.read_id, {}, false, false, no_expiry, when(201ms)).type ==
              observe_step::arm);
        const auto r2 = g.deadline(when(401ms));
        REQUIRE(r2.type == observe_step::read);
        CHECK(g.read_answered(r2.read_id, {}, false, false, no_expiry, when(402ms)).type ==
              observe_step::wait_until);
    }
    SECTION("the watch re-keyed (a semaphore of other permits): arm again")
    {
        CHECK(f.read_answered(id, {}, false, true, no_expiry, when(5ms)).type == observe_step::arm);
    }
}

TEST_CASE("observe_fsm: a read without a majority finishes with no_quorum when the caller's "
          "read had one, else waits, another error finishes, a caller's read without a "
          "majority is answered by the first decided read",
          "[observe_fsm]")
{
    SECTION("the caller's read was decided")
    {
        auto f = five_masters(true);
        const auto id = armed_to_read(f, when(0ms));
        const auto a = f.read_answered(id, error::no_quorum, false, false, no_expiry, when(5ms));
        CHECK(a.type == observe_step::finish);
        CHECK(a.ec == error::no_quorum);
        CHECK(a.with_read);
    }
    SECTION("it was not: nothing can be told yet")
    {
        auto f = five_masters(false);
        const auto id = armed_to_read(f, when(0ms));
        CHECK(f.read_answered(id, error::no_quorum, false, false, no_expiry, when(5ms)).type ==
              observe_step::wait_until);
        (void)f.deadline(when(1005ms));
        const auto r = f.deadline(when(1205ms));
        REQUIRE(r.type == observe_step::read);
        // Decided now, and the same holders: still an answer (the caller could not tell).
        const auto a = f.read_answered(r.read_id, {}, false, false, no_expiry, when(1206ms));
        CHECK(a.type == observe_step::finish);
        CHECK_FALSE(a.ec);
    }
    SECTION("another error")
    {
        auto f = five_masters();
        const auto id = armed_to_read(f, when(0ms));
        const auto a =
            f.read_answered(id, error::invalid_argument, false, false, no_expiry, when(5ms));
        CHECK(a.type == observe_step::finish);
        CHECK(a.ec == error::invalid_argument);
    }
}

TEST_CASE("observe_fsm: cancel and close finish once, in every phase, without the read",
          "[observe_fsm]")
{
    for (int phase = 0; phase < 4; ++phase)  // before the start, arming, reading, waiting
    {
        for (const bool close : {false, true})
        {
            CAPTURE(phase, close);
            auto f = five_masters();
            if (phase >= 1)
                (void)f.start(when(0ms));
            if (phase >= 2)
                REQUIRE(f.deadline(when(200ms)).type == observe_step::read);
            if (phase >= 3)
                REQUIRE(f.read_answered(1, {}, false, false, no_expiry, when(201ms)).type ==
                        observe_step::wait_until);
            const auto a = close ? f.closed() : f.cancel();
            CHECK(a.type == observe_step::finish);
            CHECK(a.ec == (close ? redlock::error_code(error::connection_closed)
                                 : redlock::error_code(boost::asio::error::operation_aborted)));
            CHECK_FALSE(a.with_read);
            CHECK(f.done());
            CHECK(f.cancel().type == observe_step::none);
            CHECK(f.closed().type == observe_step::none);
            CHECK(f.start(when(300ms)).type == observe_step::none);
            CHECK(f.watched(true, when(300ms)).type == observe_step::none);
            CHECK(f.read_answered(1, {}, true, false, no_expiry, when(300ms)).type ==
                  observe_step::none);
        }
    }
}
