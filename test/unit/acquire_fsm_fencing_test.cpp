// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The fenced acquisition's decisions stepped by hand (lock_options::fencing): one round when the
// quorum read the same counters, else the commit round that follows, the token it commits, and
// every way it can fail. The naming of the fence counter's key, last.
#include "fsm/acquire_fsm.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <initializer_list>
#include <iterator>
#include <string>

#include "acquire_test_words.hpp"
#include "algorithm/fencing.hpp"
#include "fsm_test_words.hpp"

using namespace redlock_test::acquire;
using redlock::detail::fence_key, redlock::detail::hashed_part;
using redlock_test::fsm::aborted, redlock_test::fsm::error, redlock_test::fsm::fsm_action,
    redlock_test::fsm::fsm_event;

namespace {

// The defaults (ttl 10 s: attempt timeout 200 ms, drift 102 ms, retry delay 50 ms, release
// timeout 200 ms), two attempts with no jitter, fencing on.
lock_options fenced()
{
    lock_options o;
    o.max_attempts = 2;
    o.retry_jitter = 0ms;
    o.fencing = true;
    return o;
}

// ttl 100 ms (validity ends at t0 + 97 ms), a long attempt timeout, one attempt.
lock_options short_ttl()
{
    auto o = fenced();
    o.ttl = 100ms;
    o.attempt_timeout = 1s;
    o.max_attempts = 1;
    return o;
}

// The first (single-resource: the only) fencing token of an action; 0 when none.
std::uint64_t fence_of(const fsm_action& a) { return a.fences.empty() ? 0 : a.fences[0]; }

// A reply of round 1, carrying the master's fence counter.
fsm_action grant(acquire_fsm& f, std::uint64_t round, std::size_t master, std::int64_t counter,
                 time_point now)
{
    const std::int64_t counters[] = {counter};
    return f.resume(fsm_event::reply(round, master, granted, now, counters));
}

// Grants of round `round` by `masters`, with `counters`, at `now`: every grant but the last
// decides nothing; the last one's action.
fsm_action grants(acquire_fsm& f, std::uint64_t round, std::initializer_list<std::size_t> masters,
                  std::initializer_list<std::int64_t> counters, time_point now)
{
    REQUIRE(masters.size() == counters.size());
    fsm_action last;
    auto counter = counters.begin();
    for (auto m = masters.begin(); m != masters.end(); ++m, ++counter)
    {
        last = grant(f, round, *m, *counter, now);
        if (std::next(m) != masters.end())
            REQUIRE(last.type == kind::none);
    }
    return last;
}

// Starts a fenced acquisition on 5 masters and has masters 0, 1, 2 grant with counters 4, 7
// and 2: the commit round it asks for (token 8).
fsm_action to_commit(acquire_fsm& f, fsm_action& attempt)
{
    attempt = f.resume(fsm_event::start(at(0ms)));
    REQUIRE(attempt.type == kind::send_attempt);
    const auto c = grants(f, attempt.round_id, {0, 1, 2}, {4, 7, 2}, at(3ms));
    REQUIRE(c.type == kind::send_commit);
    return c;
}

}  // namespace

TEST_CASE("acquire_fsm fencing: the quorum's largest counter + 1, committed by a majority",
          "[acquire_fsm][fencing]")
{
    acquire_fsm f(fenced(), 5, 1, false);
    fsm_action attempt;
    const auto c = to_commit(f, attempt);
    CHECK(fence_of(c) == 8);
    CHECK(c.round_id != attempt.round_id);
    CHECK(c.deadline == at(3ms) + 200ms);
    CHECK_FALSE(f.done());

    // A counter that arrives after the quorum was counted is not in the token: the quorum
    // already meets every earlier commit majority.
    CHECK(grant(f, attempt.round_id, 3, 99, at(4ms)).type == kind::none);

    CHECK(answer(f, c.round_id, 0, granted, at(5ms)).type == kind::none);
    CHECK(answer(f, c.round_id, 4, held, at(6ms)).type == kind::none);
    CHECK(answer(f, c.round_id, 1, granted, at(7ms)).type == kind::none);
    const auto done = answer(f, c.round_id, 2, granted, at(8ms));
    REQUIRE(done.type == kind::complete);
    CHECK(!done.ec);
    CHECK(fence_of(done) == 8);
    // Validity counts from the attempt's t0, before round 1, not from the commit.
    CHECK(done.valid_until == at(0ms) + 10s - 102ms);
    CHECK(f.done());
    CHECK(f.last_commit().granted() == 3);
}

TEST_CASE("acquire_fsm fencing: only the granting quorum's counters count",
          "[acquire_fsm][fencing]")
{
    struct example
    {
        std::int64_t counters[3];  // of masters 2, 3, 4, which grant
        std::uint64_t token;
        bool committed;  // in round 1 already: the three read the same counter
    };
    const example examples[] = {
        {{0, 0, 0}, 1, true}, {{0, 4, 1}, 5, false}, {{9, 9, 9}, 10, true}, {{9, 9, 8}, 10, false}};
    for (const auto& e : examples)
    {
        acquire_fsm f(fenced(), 5, 1, false);
        const auto a = f.resume(fsm_event::start(at(0ms)));
        // A refusal's number means nothing (a driver gives 0, but the machine must not look),
        // nor does a second answer of a master.
        const std::int64_t noise[] = {50};
        CHECK(f.resume(fsm_event::reply(a.round_id, 0, held, at(1ms), noise)).type == kind::none);
        CHECK(f.resume(fsm_event::reply(a.round_id, 1, failed, at(1ms), noise)).type == kind::none);
        CHECK(grant(f, a.round_id, 1, 90, at(2ms)).type == kind::none);
        CHECK(grant(f, a.round_id, 2, e.counters[0], at(2ms)).type == kind::none);
        CHECK(grant(f, a.round_id, 3, e.counters[1], at(2ms)).type == kind::none);
        const auto c = grant(f, a.round_id, 4, e.counters[2], at(3ms));
        // Had master 1's second answer (90) counted, the counters would differ, and the token
        // be 91.
        REQUIRE(c.type == (e.committed ? kind::complete : kind::send_commit));
        CHECK(!c.ec);
        CHECK(fence_of(c) == e.token);
    }
}

TEST_CASE("acquire_fsm fencing: a quorum that read the same counters has its token in one round",
          "[acquire_fsm][fencing]")
{
    // Round 1 moved each granting master's counter from the value it read to that value + 1,
    // for us: when the quorum read one value, the token stands on all of it already.
    acquire_fsm f(fenced(), 5, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    CHECK(answer(f, a.round_id, 3, held, at(1ms)).type == kind::none);
    const auto done = grants(f, a.round_id, {0, 4, 1}, {7, 7, 7}, at(3ms));
    REQUIRE(done.type == kind::complete);
    CHECK(!done.ec);
    CHECK(fence_of(done) == 8);
    CHECK(done.valid_until == at(0ms) + 10s - 102ms);
    CHECK(f.done());
    CHECK(f.last_commit().granted() == 0);  // no commit round
    // A late grant with another counter changes nothing: the quorum decided the token.
    CHECK(grant(f, a.round_id, 2, 3, at(4ms)).type == kind::none);

    SECTION("not once the validity is over: released, as an unfenced lock would be")
    {
        acquire_fsm g(short_ttl(), 3, 1, false);
        const auto b = g.resume(fsm_event::start(at(0ms)));
        CHECK(grant(g, b.round_id, 0, 2, at(97ms)).type == kind::none);
        CHECK(grant(g, b.round_id, 2, 2, at(97ms)).type == kind::send_release);
    }
    SECTION("a multi-resource lock: every resource's counters must agree")
    {
        acquire_fsm g(fenced(), 3, 1, false, 2);
        const auto b = g.resume(fsm_event::start(at(0ms)));
        const std::int64_t first[] = {3, 10}, second[] = {3, 9};
        CHECK(g.resume(fsm_event::reply(b.round_id, 0, granted, at(1ms), first)).type ==
              kind::none);
        const auto c = g.resume(fsm_event::reply(b.round_id, 1, granted, at(1ms), second));
        REQUIRE(c.type == kind::send_commit);
        REQUIRE(c.fences.size() == 2);
        CHECK(c.fences[0] == 4);
        CHECK(c.fences[1] == 11);
    }
    SECTION("a grant that lacks a resource's counter disagrees")
    {
        acquire_fsm g(fenced(), 3, 1, false, 2);
        const auto b = g.resume(fsm_event::start(at(0ms)));
        const std::int64_t both[] = {3, 10}, one[] = {3};
        CHECK(g.resume(fsm_event::reply(b.round_id, 0, granted, at(1ms), both)).type == kind::none);
        const auto c = g.resume(fsm_event::reply(b.round_id, 1, granted, at(1ms), one));
        REQUIRE(c.type == kind::send_commit);
        CHECK(c.fences[1] == 11);
    }
}

TEST_CASE("acquire_fsm fencing: a commit round without a majority fails the attempt",
          "[acquire_fsm][fencing]")
{
    acquire_fsm f(fenced(), 5, 1, false);
    fsm_action attempt;
    const auto c = to_commit(f, attempt);

    SECTION("refused: our keys went, or a newer token is there")
    {
        CHECK(answer(f, c.round_id, 0, held, at(5ms)).type == kind::none);
        CHECK(answer(f, c.round_id, 1, held, at(5ms)).type == kind::none);
        const auto rel = answer(f, c.round_id, 2, held, at(6ms));
        REQUIRE(rel.type == kind::send_release);
        // The release waits for the masters of round 1 that did not time out: all of them.
        CHECK(rel.awaited->count() == 5);
        CHECK(rel.deadline == at(6ms) + 200ms);
        // The release over, a retry with a new token, its counters read afresh.
        const auto w = f.resume(fsm_event::deadline(rel.round_id, at(10ms)));
        REQUIRE(w.type == kind::wait_until);
        const auto again = f.resume(fsm_event::backoff_elapsed(w.until));
        REQUIRE(again.type == kind::send_attempt);
        CHECK(again.new_token);
        CHECK(grant(f, again.round_id, 3, 1, w.until + 1ms).type == kind::none);
        CHECK(grant(f, again.round_id, 4, 3, w.until + 1ms).type == kind::none);
        const auto c2 = grant(f, again.round_id, 0, 2, w.until + 1ms);
        REQUIRE(c2.type == kind::send_commit);
        CHECK(fence_of(c2) == 4);
    }
    SECTION("failed masters")
    {
        CHECK(answer(f, c.round_id, 0, failed, at(5ms)).type == kind::none);
        CHECK(answer(f, c.round_id, 1, failed, at(5ms)).type == kind::none);
        const auto rel = answer(f, c.round_id, 2, failed, at(5ms));
        REQUIRE(rel.type == kind::send_release);
        // The commit round's deadline is stale once the release has begun.
        CHECK(f.resume(fsm_event::deadline(c.round_id, c.deadline)).type == kind::none);
        CHECK(f.resume(fsm_event::deadline(rel.round_id, rel.deadline)).type == kind::wait_until);
    }
    SECTION("silent masters: the commit's deadline")
    {
        CHECK(answer(f, c.round_id, 0, granted, at(5ms)).type == kind::none);
        // A stale deadline (round 1's) changes nothing.
        CHECK(f.resume(fsm_event::deadline(attempt.round_id, attempt.deadline)).type == kind::none);
        const auto rel = f.resume(fsm_event::deadline(c.round_id, c.deadline));
        REQUIRE(rel.type == kind::send_release);
        const auto end = f.resume(fsm_event::deadline(rel.round_id, rel.deadline));
        REQUIRE(end.type == kind::wait_until);
    }
}

TEST_CASE("acquire_fsm fencing: a commit majority after the validity's end is no lock",
          "[acquire_fsm][fencing]")
{
    acquire_fsm f(short_ttl(), 3, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    CHECK(grant(f, a.round_id, 0, 5, at(10ms)).type == kind::none);
    const auto c = grant(f, a.round_id, 1, 4, at(10ms));
    REQUIRE(c.type == kind::send_commit);
    // The commit's deadline is the validity's end, not 1 s away.
    CHECK(c.deadline == at(97ms));
    CHECK(answer(f, c.round_id, 0, granted, at(96ms)).type == kind::none);
    const auto rel = answer(f, c.round_id, 1, granted, at(97ms));
    REQUIRE(rel.type == kind::send_release);
    const auto end = f.resume(fsm_event::deadline(rel.round_id, rel.deadline));
    REQUIRE(end.type == kind::complete);
    CHECK(end.ec == error::validity_expired);
    CHECK(fence_of(end) == 0);
}

TEST_CASE("acquire_fsm fencing: no commit when round 1 decided too late", "[acquire_fsm][fencing]")
{
    acquire_fsm f(short_ttl(), 3, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    CHECK(grant(f, a.round_id, 0, 5, at(97ms)).type == kind::none);
    CHECK(grant(f, a.round_id, 1, 5, at(97ms)).type == kind::send_release);
}

TEST_CASE("acquire_fsm fencing: cancelled or closed during the commit round",
          "[acquire_fsm][fencing]")
{
    const bool cancel = GENERATE(true, false);
    CAPTURE(cancel);
    acquire_fsm f(fenced(), 5, 1, false);
    fsm_action attempt;
    const auto c = to_commit(f, attempt);
    CHECK(answer(f, c.round_id, 0, granted, at(4ms)).type == kind::none);
    const auto rel = f.resume(cancel ? fsm_event::cancel(at(5ms)) : fsm_event::closed(at(5ms)));
    REQUIRE(rel.type == kind::send_release);
    // The commit's late answers are stale now.
    CHECK(answer(f, c.round_id, 1, granted, at(6ms)).type == kind::none);
    CHECK(answer(f, c.round_id, 2, granted, at(6ms)).type == kind::none);
    const auto end = f.resume(fsm_event::deadline(rel.round_id, rel.deadline));
    REQUIRE(end.type == kind::complete);
    if (cancel)
        CHECK(end.ec == aborted);
    else
        CHECK(end.ec == error::connection_closed);
}

TEST_CASE("acquire_fsm fencing: without fencing, no commit and token 0", "[acquire_fsm][fencing]")
{
    auto o = fenced();
    o.fencing = false;
    acquire_fsm f(o, 3, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    CHECK(grant(f, a.round_id, 0, 7, at(1ms)).type == kind::none);
    const auto c = grant(f, a.round_id, 1, 7, at(1ms));
    REQUIRE(c.type == kind::complete);
    CHECK(!c.ec);
    CHECK(fence_of(c) == 0);
}

TEST_CASE("acquire_fsm fencing: a multi-resource lock commits one token per resource",
          "[acquire_fsm][fencing]")
{
    acquire_fsm f(fenced(), 3, 1, false, 2);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    // Each granting master sends both resources' counters; the tokens are per resource.
    const std::int64_t first[] = {3, 10}, second[] = {5, 1};
    CHECK(f.resume(fsm_event::reply(a.round_id, 0, granted, at(1ms), first)).type == kind::none);
    const auto c = f.resume(fsm_event::reply(a.round_id, 2, granted, at(2ms), second));
    REQUIRE(c.type == kind::send_commit);
    REQUIRE(c.fences.size() == 2);
    CHECK(c.fences[0] == 6);
    CHECK(c.fences[1] == 11);
    CHECK(answer(f, c.round_id, 0, granted, at(3ms)).type == kind::none);
    const auto done = answer(f, c.round_id, 1, granted, at(3ms));
    REQUIRE(done.type == kind::complete);
    CHECK(!done.ec);
    REQUIRE(done.fences.size() == 2);
    CHECK(done.fences[0] == 6);
    CHECK(done.fences[1] == 11);
}

TEST_CASE("fence_key: the counter shares the lock key's hash slot", "[fencing]")
{
    struct example
    {
        std::string key, expected;
    };
    const example examples[] = {
        {"orders", "{orders}:fence"},
        {"app:orders:42", "{app:orders:42}:fence"},
        {"{user1}:cart", "{user1}:cart:fence"},  // its own tag stays the first
        {"a{b}c{d}", "a{b}c{d}:fence"},
        {"a{b", "{a{b}:fence"},  // no tag: the whole key, wrapped
        {"{}x", "{}x:fence"},    // "{}" is no tag, and its '}' forbids wrapping
        {"x}y", "x}y:fence"},    // cannot be wrapped: another slot (documented)
    };
    for (const auto& e : examples)
    {
        CAPTURE(e.key);
        const auto k = fence_key(e.key);
        CHECK(k == e.expected);
        CHECK(k != e.key);
        const bool same_slot_possible =
            e.key.find('}') == std::string::npos || hashed_part(e.key) != e.key;
        if (same_slot_possible)
            CHECK(hashed_part(k) == hashed_part(e.key));
    }
    CHECK(hashed_part("plain") == "plain");
    CHECK(hashed_part("x{tag}y") == "tag");
    CHECK(hashed_part("x{}y{z}") == "x{}y{z}");
}

TEST_CASE("acquire_fsm fencing: a fenced writer is decided as a fenced mutex of its one "
          "resource: refused by a majority (readers there), no commit, then the token",
          "[acquire_fsm][fencing][rwlock]")
{
    // The machine knows no role: the driver gives a writer's attempt one resource (its key)
    // and each grant's one counter, and commits over the writer's key and its counter.
    auto o = fenced();
    o.role = redlock::lock_role::writer;
    acquire_fsm f(o, 5, 1, false, 1);
    auto a = f.resume(fsm_event::start(at(0ms)));
    REQUIRE(a.type == kind::send_attempt);
    CHECK(grant(f, a.round_id, 0, 3, at(1ms)).type == kind::none);
    CHECK(answer(f, a.round_id, 1, held, at(1ms)).type == kind::none);
    CHECK(answer(f, a.round_id, 2, held, at(1ms)).type == kind::none);
    const auto released = answer(f, a.round_id, 3, held, at(2ms));
    REQUIRE(released.type == kind::send_release);  // refused: no commit, nothing counted
    CHECK(f.last_commit().granted() == 0);
    // The release goes where the key may stand (0 granted, 4 silent); then the retry delay.
    CHECK(answer(f, released.round_id, 0, granted, at(3ms)).type == kind::none);
    CHECK(answer(f, released.round_id, 4, granted, at(3ms)).type == kind::wait_until);
    a = f.resume(fsm_event::backoff_elapsed(at(60ms)));
    REQUIRE(a.type == kind::send_attempt);
    // The next attempt's quorum: the largest counter of this attempt's grants, plus one.
    const auto c = grants(f, a.round_id, {2, 3, 4}, {3, 5, 0}, at(62ms));
    REQUIRE(c.type == kind::send_commit);
    CHECK(c.fences.size() == 1);
    CHECK(fence_of(c) == 6);
}
