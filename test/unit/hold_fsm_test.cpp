// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The holder's machine (src/fsm/hold_fsm.hpp), stepped by hand: extension times, retries,
// loss for each reason, the limits, degradation, a release asked in every phase, a close in
// every phase, and a failed master at every step of an extension; then random event sequences
// against an oracle (REDLOCK_PROPERTY_* as in property_check.hpp).
#include "fsm/hold_fsm.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fsm_test_words.hpp"
#include "property_check.hpp"

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

    // Masters 0 and 1, a majority of 3, answer the round with `outcome` at `at`: the action
    // after the second answer.
    fsm_action majority_answers(master_outcome outcome, time_point at)
    {
        step(fsm_event::reply(id, 0, outcome, at));
        return step(fsm_event::reply(id, 1, outcome, at));
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

// `a`, the action after an extension round, releases the lock, and the notices say that the
// extension failed and the lock was lost, both with `ec`.
void check_extension_lost(holder& h, const fsm_action& a, error_code ec)
{
    CHECK(a.type == ak::send_release);
    const auto ns = h.notices();
    CHECK(has(ns, nk::extend_failed, ec));
    CHECK(has(ns, nk::lost, ec));
}

}  // namespace

TEST_CASE("hold_fsm: extends before the end of validity, then waits for the next time",
          "[hold_fsm]")
{
    holder h;
    const auto sent = first_valid_until - 300ms;
    const auto a = h.m.resume(fsm_event::backoff_elapsed(sent));
    REQUIRE(a.type == ak::send_attempt);
    CHECK(a.deadline == sent + 50ms);
    CHECK(a.until == first_valid_until);
    CHECK(h.m.resume(fsm_event::reply(a.round_id, 0, master_outcome::granted, sent + 1ms)).type ==
          ak::none);
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

TEST_CASE(
    "hold_fsm: a failed extension is retried through a wait while one fits, then the lock is lost",
    "[hold_fsm]")
{
    holder h;
    auto at = first_valid_until - 300ms;
    h.extend_at(at);
    int retries = 0;
    for (;;)
    {
        // Two masters fail: no quorum. The retry is a wait, never a round sent from this step.
        const auto a = h.majority_answers(master_outcome::failed, at + 1ms);
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

TEST_CASE(
    "hold_fsm: extend_before 0 is max(ttl / 3, 3 x attempt timeout), a set value is taken as it is",
    "[hold_fsm]")
{
    redlock::lock_options d;  // the client's defaults: attempt_timeout 0 derives it from the TTL
    // ttl / 3 wins: 3000 / 3 = 1000 ms against 3 x 150 ms (ttl / 20).
    auto s = hold_settings::resolve(d, 3000ms, 0ms, 0, 0ms, 5);
    CHECK(s.attempt_timeout == 150ms);
    CHECK(s.extend_before == 1000ms);
    // 3 x attempt_timeout wins: 300 / 3 = 100 ms against 3 x 50 ms.
    d.attempt_timeout = 50ms;
    s = hold_settings::resolve(d, 300ms, 0ms, 0, 0ms, 5);
    CHECK(s.extend_before == 150ms);
    // A derived attempt timeout at its floor: 90 / 20 -> 10 ms, 3 x 10 = 30 ms against 90 / 3.
    d.attempt_timeout = 0ms;
    s = hold_settings::resolve(d, 90ms, 0ms, 0, 0ms, 5);
    CHECK(s.attempt_timeout == 10ms);
    CHECK(s.extend_before == 30ms);
    // A set value is used as it is, shorter or longer than the rule's.
    s = hold_settings::resolve(d, 3000ms, 700ms, 4, 9000ms, 3);
    CHECK(s.extend_before == 700ms);
    CHECK(s.max_extensions == 4);
    CHECK(s.max_hold == 9000ms);
    CHECK(s.masters == 3);
    CHECK(s.ttl == 3000ms);
    CHECK(s.release_timeout == d.release_timeout);
    CHECK(s.drift_factor == d.drift_factor);

    // The machine waits until valid_until - extend_before: the 3 x attempt_timeout branch.
    d.attempt_timeout = 50ms;
    d.drift_factor = 0.0;
    hold_fsm m(hold_settings::resolve(d, 300ms, 0ms, 0, 0ms, 3), t_start, t_start + 298ms);
    const auto a = m.resume(fsm_event::start(t_start));
    REQUIRE(a.type == ak::wait_until);
    CHECK(a.until == t_start + 298ms - 150ms);
}

TEST_CASE("hold_fsm: the loss reasons", "[hold_fsm]")
{
    SECTION("taken over on a majority: lock_lost at once, no retry")
    {
        holder h;
        h.extend_at(first_valid_until - 300ms);
        check_extension_lost(
            h, h.majority_answers(master_outcome::held_by_other, first_valid_until - 299ms),
            error::lock_lost);
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
        check_extension_lost(h, h.majority_answers(master_outcome::granted, sent + 999ms),
                             error::validity_expired);
    }
    SECTION("the wait ends after the validity: lock_expired without a round")
    {
        holder h;
        const auto a = h.step(fsm_event::backoff_elapsed(first_valid_until + 1ms));
        CHECK(a.type == ak::send_release);
        CHECK(has(h.notices(), nk::lost, error::lock_expired));
    }
}

TEST_CASE("hold_fsm: the limits: the lock runs out at its validity, then extension_limit",
          "[hold_fsm]")
{
    SECTION("max_extensions")
    {
        auto s = settings();
        s.max_extensions = 1;
        holder h(s);
        const auto sent = first_valid_until - 300ms;
        h.extend_at(sent);
        const auto w = h.majority_answers(master_outcome::granted, sent);
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
        const auto w = h.step(
            fsm_event::backoff_elapsed(first_valid_until - 300ms));  // 690 ms after acquisition
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
            REQUIRE(h.majority_answers(master_outcome::granted, sent).type == ak::wait_until);
        }
        h.notices();
        const auto r = h.step(fsm_event::release(sent + 10ms));
        REQUIRE(r.type == ak::send_release);
        CHECK(r.awaited->count() == 3);
        CHECK(r.deadline == sent + 10ms + 100ms);
        CHECK(h.step(fsm_event::release(sent + 11ms)).type == ak::none);  // one release at a time
        // Late answers of the extension round are not the release's.
        CHECK(h.step(fsm_event::backoff_elapsed(first_valid_until + 1s)).type == ak::none);
        h.majority_answers(master_outcome::granted, sent + 12ms);
        const auto c =
            h.step(fsm_event::reply(h.id, 2, master_outcome::held_by_other, sent + 12ms));
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
            CHECK(c.ec ==
                  error::connection_closed);  // the close failed the requests, not the masters
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
    CHECK(h.step(fsm_event::reply(id + 1, 0, master_outcome::granted, t_start)).type ==
          ak::none);  // stale
    CHECK(h.step(fsm_event::deadline(id + 1, t_start)).type == ak::none);
    CHECK(h.step(fsm_event::reply(id, 0, master_outcome::granted, t_start)).type == ak::none);
    CHECK(h.step(fsm_event::reply(id, 0, master_outcome::granted, t_start)).type ==
          ak::none);  // twice
    CHECK(h.step(fsm_event::cancel(t_start)).type ==
          ak::none);  // a holder is released, not cancelled
    CHECK(h.step(fsm_event::start(t_start)).type == ak::none);
    CHECK(h.notices().empty());
}

// ---- Random event sequences ---------------------------------------------------------------------

namespace {

/// Runs one random sequence; returns an empty string, or what went wrong.
std::string run_hold_sequence(std::uint64_t seed)
{
    event_dice pick(seed);
    static constexpr std::size_t sizes[] = {1, 2, 3, 4, 5, 7};
    hold_settings s;
    s.masters = sizes[pick(0, 5)];
    s.ttl = std::chrono::milliseconds(pick(50, 2000));
    s.drift_factor = 0.0;  // the validity is ttl - 2 ms: exact for the oracle
    s.attempt_timeout = std::chrono::milliseconds(pick(5, 100));
    s.extend_before = std::chrono::milliseconds(pick(0, s.ttl.count()));
    s.release_timeout = std::chrono::milliseconds(pick(5, 100));
    s.max_extensions = static_cast<std::uint32_t>(pick(0, 3));
    s.max_hold = std::chrono::milliseconds(pick(0, 1) == 0 ? 0 : pick(100, 5000));
    const std::size_t quorum = s.masters / 2 + 1;
    const auto validity = s.ttl - 2ms;
    hold_fsm m(s, t_start, t_start + validity);

    time_point now = t_start, valid_until = t_start + validity, sent_at{};
    std::uint64_t ext_id = 0, rel_id = 0;
    first_answers answer;  // of the extension round in flight
    bool extending = false, releasing = false, lost = false, released = false, done = false,
         closed = false;
    std::uint32_t extensions = 0;

    auto check_step = [&](const fsm_action& a, const fsm_event& ev) -> std::string {
        if (done && a.type != ak::none)
            return "an action once done";
        for (const auto& n : m.take_notices())
        {
            switch (n.type)
            {
            case nk::extended:
            {
                if (!extending)
                    return "extended without an extension in flight";
                if (count_answers(answer, master_outcome::granted) < quorum)
                    return "extended without a quorum";
                if (ev.now - sent_at >= validity)
                    return "extended with no validity left";
                if (n.valid_until < valid_until)
                    return "the validity moved backwards";
                if (n.valid_until != std::max(valid_until, sent_at + validity))
                    return "valid_until is not the sending time + ttl - drift";
                valid_until = n.valid_until;
                if (n.extensions != ++extensions)
                    return "the extension count is off";
                extending = false;
                break;
            }
            case nk::extend_failed:
                if (!extending)
                    return "extend_failed without an extension in flight";
                extending = false;
                break;
            case nk::lost:
                if (lost || released)
                    return "lost twice, or after a release";
                lost = true;
                extending = false;
                if (closed != (n.ec == error::connection_closed))
                    return "closed and connection_closed disagree";
                break;
            case nk::degraded:
                if (n.holding > s.masters)
                    return "more holders than masters";
                break;
            case nk::released:
                if (lost)
                    return "a released notice after a loss";
                break;
            }
        }
        if (m.valid_until() != valid_until)
            return "valid_until() and the notices disagree";
        switch (a.type)
        {
        case ak::none: break;
        case ak::send_commit: return "a holder never commits a fencing token";
        case ak::send_watch: return "a holder never waits for a release";
        case ak::wait_until:
            if (a.until < ev.now)
                return "a wait in the past";
            break;
        case ak::send_attempt:
            if (ev.type != ek::backoff_elapsed)
                return "an extension sent from a step that was not a wait's end";
            if (releasing || lost || extending)
                return "an extension while releasing, lost or extending";
            if (s.max_extensions > 0 && extensions >= s.max_extensions)
                return "an extension past max_extensions";
            if (s.max_hold.count() > 0 && ev.now - t_start >= s.max_hold)
                return "an extension past max_hold";
            if (ev.now >= valid_until)
                return "an extension after the end of validity";
            if (a.deadline > valid_until || a.until != valid_until)
                return "the extension's deadline or loss time is past the validity";
            extending = true;
            ext_id = a.round_id;
            sent_at = ev.now;
            answer.assign(s.masters, -1);
            break;
        case ak::send_release:
            if (releasing)
                return "a second release";
            if (!lost && !released)
                return "a release neither asked nor after a loss";
            releasing = true;
            extending = false;
            rel_id = a.round_id;
            if (a.awaited->count() != s.masters)
                return "the release does not await every master";
            break;
        case ak::complete:
            if (!lost && !released)
                return "completed neither released nor lost";
            if (lost && a.ec != error::lock_lost && a.ec != error::connection_closed)
                return "a lost lock's release ended without lock_lost";
            // A requested release cut short by close() is the close's fault, unless a majority
            // had deleted already; a lost lock's release says lock_lost whatever happens.
            if (closed && !lost && a.ec && a.ec != error::connection_closed)
                return "closed but not connection_closed";
            if (!m.done())
                return "completed but not done";
            done = true;
            break;
        }
        return {};
    };

    if (auto why = feed(m, fsm_event::start(now), check_step); !why.empty())
        return why;
    const int steps = static_cast<int>(pick(1, 60));
    for (int k = 0; k < steps && !done; ++k)
    {
        now += std::chrono::microseconds(pick(0, 200'000));
        fsm_event ev;
        const auto r = pick(0, 99);
        if (r < 25)
            ev = fsm_event::backoff_elapsed(now);
        else if (r < 28)
            ev = fsm_event::release(now);
        else if (r < 30)
            ev = fsm_event::closed(now);
        else if (r < 32)
            ev = fsm_event::cancel(now);
        else if (r < 42)
            ev = fsm_event::deadline(
                pick(0, 4) == 0 ? ext_id + rel_id + 9 : (releasing ? rel_id : ext_id), now);
        else
            ev = pick.reply(releasing ? rel_id : ext_id, ext_id + 17, s.masters, now);
        // What the oracle learns, as the machine should.
        if (ev.type == ek::closed)
            closed = true;
        if (ev.type == ek::release && !lost && !releasing)
            released = true;
        if (extending)
            note_answer(answer, ext_id, ev);
        if (auto why = feed(m, ev, check_step); !why.empty())
            return why;
    }
    // Liveness: released, the release's end ends it.
    if (!done)
    {
        now += 1s;
        if (!releasing)
        {
            if (!lost)
                released = true;
            if (auto why = feed(m, fsm_event::release(now), check_step); !why.empty())
                return why;
        }
        if (auto why = done ? "" : feed(m, fsm_event::deadline(rel_id, now), check_step);
            !why.empty())
            return why;
    }
    return done ? "" : "not done after a release and its deadline";
}

}  // namespace

TEST_CASE("hold_fsm: random event sequences keep every invariant", "[hold_fsm][property]")
{
    redlock_test::check_property("hold_fsm", 20261127, run_hold_sequence);
}
