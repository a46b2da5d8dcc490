// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The waiting room's hand-off notices, stepped by hand: a release of this client tells its
// waiters at once, except every yield_every-th local hand-off of a resource in a row, which
// yields to other processes' waiters (told only once the release is decided).
#include "driver/waiting_room.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

using redlock::detail::master_set;
using redlock::detail::release_listener;
using redlock::detail::waiting_room;

namespace {

constexpr std::size_t masters = 3;

// Counts what it hears, per master.
class counting_listener final : public release_listener
{
public:
    void on_invalidated(std::size_t master) override { ++heard.at(master); }
    void on_turn(bool) override { ++turns; }
    bool take_over(const redlock::detail::lock_state&, std::chrono::steady_clock::time_point,
                   std::span<char, redlock::detail::token_source::token_chars>) override
    {
        return false;
    }
    std::shared_ptr<void> hold() override { return {}; }

    std::size_t total() const
    {
        std::size_t n = 0;
        for (const auto h : heard)
            n += h;
        return n;
    }

    std::vector<std::size_t> heard = std::vector<std::size_t>(masters, 0);
    int turns = 0;
};

master_set all_masters()
{
    master_set s(masters);
    for (std::size_t i = 0; i < masters; ++i)
        s.insert(i);
    return s;
}

struct rig
{
    boost::asio::io_context io;
    waiting_room room{masters, io.get_executor()};
    counting_listener waiter;
    std::vector<std::string> keys{"k"};

    // One release of "k" queued here: whether it yielded, and how many notices (one per master)
    // reached the waiter.
    std::pair<bool, std::size_t> release()
    {
        const auto before = waiter.total();
        const bool yielded = room.released_here(all_masters(), keys);
        io.poll();
        io.restart();
        return {yielded, waiter.total() - before};
    }

    // The releases of a row of hand-offs before the one that yields: none yields.
    void releases_before_yield()
    {
        for (unsigned i = 1; i < waiting_room::yield_every; ++i)
            CHECK_FALSE(release().first);
    }
};

}  // namespace

TEST_CASE("waiting_room: every yield_every-th local hand-off of a resource yields, the others are "
          "told at once")
{
    // The number the docs give (README.md, algorithm.md: "every 8th hand-off in a row").
    STATIC_REQUIRE(waiting_room::yield_every == 8);
    rig r;
    r.room.watch(r.keys, &r.waiter);
    for (int round = 0; round < 3; ++round)
    {
        for (unsigned i = 1; i < waiting_room::yield_every; ++i)
        {
            const auto [yielded, told] = r.release();
            CHECK_FALSE(yielded);
            CHECK(told == masters);
        }
        const auto [yielded, told] = r.release();
        CHECK(yielded);
        CHECK(told == 0);  // nothing until the caller says the release is decided
        r.room.notify_released(all_masters(), r.keys);
        r.io.poll();
        r.io.restart();
        CHECK(r.waiter.total() == (round + 1) * waiting_room::yield_every * masters);
    }
    CHECK(r.waiter.turns == 0);
}

TEST_CASE("waiting_room: a waiter that completes and the next that watches again keep one row of "
          "hand-offs")
{
    // Two workers of one process taking turns: each hand-off's waiter completes (unwatches)
    // before the other one, after its own release, watches again. The row goes on.
    rig r;
    counting_listener second;
    for (unsigned i = 1; i < waiting_room::yield_every; ++i)
    {
        auto& waiter = i % 2 ? r.waiter : second;
        r.room.watch(r.keys, &waiter);
        CHECK_FALSE(r.release().first);
        r.room.unwatch(r.keys, &waiter);
    }
    r.room.watch(r.keys, &r.waiter);
    CHECK(r.release().first);
}

TEST_CASE("waiting_room: a row of hand-offs ends with a release that finds no local waiter")
{
    rig r;
    r.room.watch(r.keys, &r.waiter);
    r.releases_before_yield();
    r.room.unwatch(r.keys, &r.waiter);
    CHECK(r.room.wants_releases());  // the release that ends the row must be heard
    CHECK_FALSE(r.release().first);  // nobody here waits: the row ends
    CHECK_FALSE(r.room.wants_releases());
    r.room.watch(r.keys, &r.waiter);
    r.releases_before_yield();
    CHECK(r.release().first);
}

TEST_CASE("waiting_room: a row of hand-offs ends when a waiter here is refused by another holder")
{
    rig r;
    r.room.watch(r.keys, &r.waiter);
    r.releases_before_yield();
    r.room.refused_elsewhere(r.keys);
    r.releases_before_yield();
    CHECK(r.release().first);
}

TEST_CASE("waiting_room: a first attempt refused while a row is live does not end it (the holder "
          "is ours)")
{
    // A holder of this client that asks for the next lock while it holds: the newcomer's first
    // attempt is refused by our own keys. The row goes on and yields at its 8th release.
    rig r;
    r.room.watch(r.keys, &r.waiter);
    CHECK_FALSE(r.release().first);  // the row starts
    for (unsigned i = 2; i < waiting_room::yield_every; ++i)
    {
        r.room.refused_elsewhere(r.keys, true);
        CHECK_FALSE(r.release().first);
    }
    r.room.refused_elsewhere(r.keys, true);
    CHECK(r.release().first);
    // With no row, a first attempt's refusal changes nothing; a later attempt's ends a row.
    r.room.refused_elsewhere(r.keys, true);
    CHECK_FALSE(r.release().first);
    r.room.refused_elsewhere(r.keys, false);
    r.releases_before_yield();
    CHECK(r.release().first);
}

TEST_CASE("waiting_room: a release of a resource nobody here waits for neither yields nor tells")
{
    rig r;
    counting_listener other;
    const std::vector<std::string> other_keys{"other"};
    r.room.watch(other_keys, &other);
    for (unsigned i = 0; i < 2 * waiting_room::yield_every; ++i)
    {
        const auto [yielded, told] = r.release();
        CHECK_FALSE(yielded);
        CHECK(told == 0);
    }
    CHECK(other.total() == 0);
}

TEST_CASE("waiting_room: a yielded notice names only the masters the release went to")
{
    rig r;
    r.room.watch(r.keys, &r.waiter);
    master_set some(masters);
    some.insert(0);
    some.insert(2);
    for (unsigned i = 1; i < waiting_room::yield_every; ++i)
        (void)r.room.released_here(some, r.keys);
    REQUIRE(r.room.released_here(some, r.keys));
    r.room.notify_released(some, r.keys);
    r.io.poll();
    CHECK(r.waiter.heard ==
          std::vector<std::size_t>{waiting_room::yield_every, 0, waiting_room::yield_every});
}

TEST_CASE(
    "waiting_room: the successor is the first in the resource's queue, except at a row's yield")
{
    rig r;
    counting_listener second;
    CHECK(r.room.successor("k") == nullptr);  // nobody waits
    CHECK(r.room.enqueue("k", &r.waiter));
    CHECK_FALSE(r.room.enqueue("k", &second));
    r.room.watch(r.keys, &r.waiter);
    r.room.watch(r.keys, &second);
    CHECK(r.room.successor("other") == nullptr);
    // Hand-offs count in the row of local hand-offs as the released_here ones do: the
    // yield_every-th of the row finds no successor, and its release yields.
    for (unsigned i = 1; i < waiting_room::yield_every; ++i)
    {
        REQUIRE(r.room.successor("k") == &r.waiter);
        r.room.handed_over("k");
    }
    CHECK(r.room.successor("k") == nullptr);
    const auto [yielded, told] = r.release();
    CHECK(yielded);
    CHECK(told == 0);
    // A new row: the first in line is offered the lock again; then the second, once the first
    // left the queue (it took the lock), and it is told its turn.
    CHECK(r.room.successor("k") == &r.waiter);
    CHECK(r.room.leave("k", &r.waiter) == &second);
    CHECK(r.room.successor("k") == &second);
}

namespace {

// Counts the changes it is told of.
class counting_observer final : public redlock::detail::key_observer
{
public:
    void on_key_changed() override { ++changes; }
    std::shared_ptr<void> hold() override { return {}; }
    int changes = 0;
};

}  // namespace

TEST_CASE("waiting_room: an observer of a resource hears its masters' invalidations, this "
          "client's acquisitions and releases of it, a dropped connection, and nothing once "
          "it stops observing",
          "[waiting_room]")
{
    boost::asio::io_context io;
    waiting_room room{masters, io.get_executor()};
    counting_observer obs;
    const std::vector<std::string> keys{"lead", "{lead}:fence"};
    const std::vector<std::string> other{"other"};
    auto told = [&] {
        const auto before = obs.changes;
        io.poll();
        io.restart();
        return obs.changes - before;
    };
    CHECK_FALSE(room.observed());
    CHECK_FALSE(room.wants_releases());
    room.observe(keys, &obs);
    CHECK(room.observed());
    // An observer makes a holder's release tell the room, though no acquisition waits.
    CHECK(room.wants_releases());

    redlock::detail::invalidation inv;
    inv.keys = {"{lead}:fence"};
    room.invalidate(1, inv);
    CHECK(obs.changes == 0);  // posted, not called inside the push's parsing
    CHECK(told() == 1);
    inv.keys = {"other"};
    room.invalidate(1, inv);
    CHECK(told() == 0);  // not its keys
    inv.keys = {};
    inv.all = true;  // the master flushed its tracking table
    room.invalidate(0, inv);
    CHECK(told() == 1);

    room.changed_here(keys);  // an acquisition of this client took the lead
    CHECK(told() == 1);
    room.changed_here(other);
    CHECK(told() == 0);
    CHECK_FALSE(room.released_here(all_masters(), keys));  // a release: no waiter, no yield
    CHECK(told() == 1);
    room.notify_released(all_masters(), keys);  // a failed attempt's release
    CHECK(told() == 1);
    room.invalidate_all(2);  // a connection dropped, and its tracking with it
    CHECK(told() == 1);

    room.unobserve(keys, &obs);
    CHECK_FALSE(room.observed());
    room.changed_here(keys);
    room.invalidate_all(0);
    CHECK(told() == 0);
}
