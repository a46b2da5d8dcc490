// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The holder's machine (src/operation/hold_fsm.hpp), stepped by hand: extension times, retries,
// loss for each reason, the limits, degradation, a release asked in every phase, a close in
// every phase, and a failed master at every step of an extension.
#include "operation/hold_fsm.hpp"

#include <catch2/catch.hpp>

#include <vector>

#include "fsm_test_words.hpp"

using namespace redlock_test::fsm;
using redlock::detail::hold_fsm;
using redlock::detail::hold_notice;
using redlock::detail::hold_settings;

namespace {

using nk = hold_notice::kind;

// ttl 1 s, drift 0 (the machine's validity is ttl - 2 ms), attempt timeout 50 ms, extend 300 ms
// before the end, release timeout 100 ms, 3 masters; acquired at t_start, valid for 990 ms.
hold_settings settings(std::size_t masters = 3)
{
    hold_settings s;
    s.ttl = 1000ms;
    s.drift_factor = 0.0;
    s.attempt_timeout = 50ms;
    s.extend_before = 300ms;
    s.release_timeout = 100ms;
    s.max_hold = 0ms;
    s.masters = masters;
    return s;
}

const time_point first_valid_until = t_start + 990ms;

struct holder
{
    hold_fsm m;
    std::uint64_t id = 0;  // the last round sent

    explicit holder(const hold_settings& s = settings()) : m(s, t_start, first_valid_until)
    {
        const auto a = m.resume(fsm_event::start(t_start));
        REQUIRE(a.type == ak::wait_until);
        CHECK(a.until == first_valid_until - 300ms);
    }

    fsm_action step(const fsm_event& ev)
    {
        const auto a = m.resume(ev);
        if (a.type == ak::send_attempt || a.type == ak::send_release)
            id = a.round_id;
        return a;
    }

    // The wait is over at `at`: the extension goes out.
    void extend_at(time_point at)
    {
        const auto a = step(fsm_event::backoff_elapsed(at));
        REQUIRE(a.type == ak::send_attempt);
        CHECK(a.until == m.valid_until());  // the loss time while it runs
    }

    std::vector<hold_notice> notices()
    {
        auto n = m.take_notices();
        return {n.begin(), n.end()};
    }
};

bool has(const std::vector<hold_notice>& ns, nk k, error_code ec = {})
{
    for (const auto& n : ns)
        if (n.type == k && n.ec == ec)
            return true;
    return false;
}

}  // namespace

TEST_CASE("hold_fsm: extends before the end of validity, then waits for the next time", "[hold_fsm]")
{
    holder h;
    const auto sent = first_valid_until - 300ms;
    const auto a = h.m.resume(fsm_event::backoff_elapsed(sent));
    REQUIRE(a.type == ak::send_attempt);
    CHECK(a.deadline == sent + 50ms);
    CHECK(a.until == first_valid_until);
    CHECK(h.m.resume(fsm_event::reply(a.round_id, 0, master_outcome::granted, sent + 1ms)).type == ak::none);
    const auto w = h.m.resume(fsm_event::reply(a.round_id, 1, master_outcome::granted, sent + 2ms));
    REQUIRE(w.type == ak::wait_until);
    const auto valid = sent + 1000ms - 2ms;  // measured from the step that sent it
    CHECK(h.m.valid_until() == valid);
    CHECK(w.until == valid - 300ms);
    auto ns = h.notices();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].type == nk::extended);
    CHECK(ns[0].valid_until == valid);
    CHECK(ns[0].extensions == 1);
    // The round goes on: the third master's answer and its end say how many hold the lock.
    h.m.resume(fsm_event::reply(a.round_id, 2, master_outcome::failed, sent + 3ms));
    CHECK(h.m.resume(fsm_event::deadline(a.round_id, sent + 3ms)).type == ak::none);
    ns = h.notices();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].type == nk::degraded);
    CHECK(ns[0].holding == 2);
    // Back to every master at the next extension: reported again.
    h.extend_at(w.until);
    for (std::size_t i = 0; i < 3; ++i)
        h.step(fsm_event::reply(h.id, i, master_outcome::granted, w.until + 1ms));
    h.step(fsm_event::deadline(h.id, w.until + 1ms));
    ns = h.notices();
    REQUIRE(ns.size() == 2);
    CHECK(ns[0].type == nk::extended);
    CHECK(ns[1].type == nk::degraded);
    CHECK(ns[1].holding == 3);
}

TEST_CASE("hold_fsm: a failed extension is retried through a wait while one fits, then the lock is lost",
          "[hold_fsm]")
{
    holder h;
    auto at = first_valid_until - 300ms;
    h.extend_at(at);
    int retries = 0;
    for (;;)
    {
        // Two masters fail: no quorum. The retry is a wait, never a round sent from this step.
        h.step(fsm_event::reply(h.id, 0, master_outcome::failed, at + 1ms));
        const auto a = h.step(fsm_event::reply(h.id, 1, master_outcome::failed, at + 1ms));
        const auto ns = h.notices();
        CHECK(has(ns, nk::extend_failed, error::no_quorum));
        if (a.type == ak::send_release)
        {
            CHECK(has(ns, nk::lost, error::no_quorum));
            break;
        }
        REQUIRE(a.type == ak::wait_until);
        CHECK(a.until == at + 50ms);  // one round per attempt timeout
        CHECK(a.until + 50ms < first_valid_until);
        ++retries;
        at = a.until;
        h.extend_at(at);
    }
    CHECK(retries == 4);  // at +0, +50, ..., +200: the one at +250 would end after 990 - 50
    // The release of what may still be ours ends the holder with lock_lost, and no released notice.
    const auto c = h.step(fsm_event::deadline(h.id, at + 100ms));
    REQUIRE(c.type == ak::complete);
    CHECK(c.ec == error::lock_lost);
    CHECK(h.notices().empty());
    CHECK(h.m.done());
}

TEST_CASE("hold_fsm: the loss reasons", "[hold_fsm]")
{
    SECTION("taken over on a majority: contended at once, no retry")
    {
        holder h;
        h.extend_at(first_valid_until - 300ms);
        h.step(fsm_event::reply(h.id, 0, master_outcome::held_by_other, first_valid_until - 299ms));
        const auto a = h.step(fsm_event::reply(h.id, 1, master_outcome::held_by_other, first_valid_until - 299ms));
        CHECK(a.type == ak::send_release);
        CHECK(has(h.notices(), nk::lost, error::contended));
    }
    SECTION("the validity ends while the extension is undecided: lock_expired")
    {
        holder h;
        h.extend_at(first_valid_until - 300ms);
        h.step(fsm_event::reply(h.id, 0, master_outcome::granted, first_valid_until - 299ms));
        const auto a = h.step(fsm_event::backoff_elapsed(first_valid_until));
        CHECK(a.type == ak::send_release);
        CHECK(has(h.notices(), nk::lost, error::lock_expired));
    }
    SECTION("a quorum too late: validity_expired, and too late to retry")
    {
        holder h;
        const auto sent = first_valid_until - 300ms;
        h.extend_at(sent);
        h.step(fsm_event::reply(h.id, 0, master_outcome::granted, sent + 999ms));
        const auto a = h.step(fsm_event::reply(h.id, 1, master_outcome::granted, sent + 999ms));
        CHECK(a.type == ak::send_release);
        const auto ns = h.notices();
        CHECK(has(ns, nk::extend_failed, error::validity_expired));
        CHECK(has(ns, nk::lost, error::validity_expired));
    }
    SECTION("the wait ends after the validity: lock_expired without a round")
    {
        holder h;
        const auto a = h.step(fsm_event::backoff_elapsed(first_valid_until + 1ms));
        CHECK(a.type == ak::send_release);
        CHECK(has(h.notices(), nk::lost, error::lock_expired));
    }
}

TEST_CASE("hold_fsm: the limits: the lock runs out at its validity, then extension_limit", "[hold_fsm]")
{
    SECTION("max_extensions")
    {
        auto s = settings();
        s.max_extensions = 1;
        holder h(s);
        const auto sent = first_valid_until - 300ms;
        h.extend_at(sent);
        h.step(fsm_event::reply(h.id, 0, master_outcome::granted, sent));
        const auto w = h.step(fsm_event::reply(h.id, 1, master_outcome::granted, sent));
        REQUIRE(w.type == ak::wait_until);
        CHECK(w.until == h.m.valid_until());  // no more extensions: wait for the end
        h.notices();
        const auto a = h.step(fsm_event::backoff_elapsed(w.until));
        CHECK(a.type == ak::send_release);
        CHECK(has(h.notices(), nk::lost, error::extension_limit));
    }
    SECTION("max_hold passed while waiting: no extension is sent after it")
    {
        auto s = settings();
        s.max_hold = 500ms;
        holder h(s);
        const auto w = h.step(fsm_event::backoff_elapsed(first_valid_until - 300ms));  // 690 ms after acquisition
        REQUIRE(w.type == ak::wait_until);
        CHECK(w.until == first_valid_until);
        CHECK(h.step(fsm_event::backoff_elapsed(first_valid_until)).type == ak::send_release);
        CHECK(has(h.notices(), nk::lost, error::extension_limit));
    }
}

TEST_CASE("hold_fsm: a release asked in every phase, and its verdict", "[hold_fsm]")
{
    for (int phase = 0; phase < 3; ++phase)
    {
        INFO("phase " << phase << " (waiting, extending, expiring)");
        auto s = settings();
        s.max_extensions = phase == 2 ? 1 : 0;
        holder h(s);
        const auto sent = first_valid_until - 300ms;
        if (phase >= 1)
            h.extend_at(sent);
        if (phase == 2)
        {
            h.step(fsm_event::reply(h.id, 0, master_outcome::granted, sent));
            REQUIRE(h.step(fsm_event::reply(h.id, 1, master_outcome::granted, sent)).type == ak::wait_until);
        }
        h.notices();
        const auto r = h.step(fsm_event::release(sent + 10ms));
        REQUIRE(r.type == ak::send_release);
        CHECK(r.awaited.count() == 3);
        CHECK(r.deadline == sent + 10ms + 100ms);
        CHECK(h.step(fsm_event::release(sent + 11ms)).type == ak::none);  // one release at a time
        // Late answers of the extension round are not the release's.
        CHECK(h.step(fsm_event::backoff_elapsed(first_valid_until + 1s)).type == ak::none);
        h.step(fsm_event::reply(h.id, 0, master_outcome::granted, sent + 12ms));
        h.step(fsm_event::reply(h.id, 1, master_outcome::granted, sent + 12ms));
        const auto c = h.step(fsm_event::reply(h.id, 2, master_outcome::held_by_other, sent + 12ms));
        CHECK(c.type == ak::none);  // the driver ends the release round with its deadline
        const auto d = h.step(fsm_event::deadline(h.id, sent + 13ms));
        REQUIRE(d.type == ak::complete);
        CHECK_FALSE(d.ec);
        const auto ns = h.notices();
        REQUIRE(ns.size() == 1);
        CHECK(ns[0].type == nk::released);
        CHECK_FALSE(ns[0].ec);
        CHECK(h.m.done());
    }
}

TEST_CASE("hold_fsm: the client closed in every phase", "[hold_fsm]")
{
    for (int phase = 0; phase < 3; ++phase)
    {
        INFO("phase " << phase << " (waiting, extending, releasing)");
        holder h;
        const auto sent = first_valid_until - 300ms;
        if (phase == 1)
            h.extend_at(sent);
        if (phase == 2)
            REQUIRE(h.step(fsm_event::release(sent)).type == ak::send_release);
        const auto a = h.step(fsm_event::closed(sent + 1ms));
        if (phase < 2)
        {
            // Lost, and over at once: nothing can be sent any more.
            REQUIRE(a.type == ak::complete);
            CHECK(a.ec == error::connection_closed);
            CHECK(has(h.notices(), nk::lost, error::connection_closed));
        }
        else
        {
            CHECK(a.type == ak::none);
            h.step(fsm_event::reply(h.id, 0, master_outcome::failed, sent + 2ms));
            const auto c = h.step(fsm_event::deadline(h.id, sent + 2ms));
            REQUIRE(c.type == ak::complete);
            CHECK(c.ec == error::connection_closed);  // the close failed the requests, not the masters
        }
        CHECK(h.m.done());
    }
}

TEST_CASE("hold_fsm: a failed master at every step of an extension", "[hold_fsm]")
{
    // Five masters answer in order; the one at step k fails. The extension succeeds at the
    // third grant, and the end of the round reports 4 holders.
    for (std::size_t k = 0; k < 5; ++k)
    {
        INFO("failure at step " << k);
        holder h(settings(5));
        const auto sent = first_valid_until - 300ms;
        h.extend_at(sent);
        std::size_t grants = 0, extended_at = 99;
        for (std::size_t i = 0; i < 5; ++i)
        {
            const auto o = i == k ? master_outcome::failed : master_outcome::granted;
            grants += o == master_outcome::granted ? 1 : 0;
            const auto a = h.step(fsm_event::reply(h.id, i, o, sent + 1ms));
            if (a.type == ak::wait_until)
            {
                CHECK(extended_at == 99);
                extended_at = i;
                CHECK(grants == 3);
            }
        }
        CHECK(extended_at == (k < 3 ? 3u : 2u));
        h.step(fsm_event::deadline(h.id, sent + 2ms));
        const auto ns = h.notices();
        REQUIRE(ns.size() == 2);
        CHECK(ns[0].type == nk::extended);
        CHECK(ns[1].type == nk::degraded);
        CHECK(ns[1].holding == 4);
    }
}

TEST_CASE("hold_fsm: what it ignores", "[hold_fsm]")
{
    CHECK_THROWS_AS(hold_fsm(settings(0), t_start, first_valid_until), std::invalid_argument);
    holder h;
    h.extend_at(first_valid_until - 300ms);
    const auto id = h.id;
    CHECK(h.step(fsm_event::reply(id + 1, 0, master_outcome::granted, t_start)).type == ak::none);  // stale
    CHECK(h.step(fsm_event::deadline(id + 1, t_start)).type == ak::none);
    CHECK(h.step(fsm_event::reply(id, 0, master_outcome::granted, t_start)).type == ak::none);
    CHECK(h.step(fsm_event::reply(id, 0, master_outcome::granted, t_start)).type == ak::none);  // twice
    CHECK(h.step(fsm_event::cancel(t_start)).type == ak::none);  // a holder is released, not cancelled
    CHECK(h.step(fsm_event::start(t_start)).type == ak::none);
    CHECK(h.notices().empty());
}
