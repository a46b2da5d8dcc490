// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

using redlock::detail::master_outcome;
using redlock::detail::quorum_state;
using redlock::detail::quorum_tracker;

namespace {

constexpr std::array<master_outcome, 4> answers = {
    master_outcome::granted, master_outcome::held_by_other, master_outcome::failed,
    master_outcome::timed_out};

// An answer, and the state the tracker must be in after it.
struct checked_answer
{
    std::size_t master;
    master_outcome outcome;
    quorum_state after;
};

// Records the answers in order, checking the state after each.
void record_checked(quorum_tracker& t, const std::vector<checked_answer>& answers_in_order)
{
    for (const auto& a : answers_in_order)
    {
        INFO("master " << a.master);
        CHECK(t.record(a.master, a.outcome) == a.after);
    }
}

// The decision after the first k answers of `seq`, by brute force over every way the
// remaining N - k masters could still answer (grant or not): decided only if all ways agree.
quorum_state brute_force_state(const std::vector<master_outcome>& seq, std::size_t k)
{
    const std::size_t n = seq.size();
    const std::size_t q = n / 2 + 1;
    std::size_t granted = 0;
    for (std::size_t i = 0; i != k; ++i)
        granted += seq[i] == master_outcome::granted ? 1 : 0;

    const std::size_t rest = n - k;
    bool some_reach = false;
    bool some_fail = false;
    for (std::uint32_t mask = 0; mask != (1u << rest); ++mask)
    {
        const auto total = granted + static_cast<std::size_t>(std::popcount(mask));
        (total >= q ? some_reach : some_fail) = true;
    }
    if (some_reach && !some_fail)
        return quorum_state::reached;
    if (some_fail && !some_reach)
        return quorum_state::failed;
    return quorum_state::undecided;
}

struct expectation
{
    std::size_t decided_at;  // number of answers after which the state is decided
    quorum_state final_state;
};

expectation reference(const std::vector<master_outcome>& seq)
{
    for (std::size_t k = 0; k <= seq.size(); ++k)
        if (const auto s = brute_force_state(seq, k); s != quorum_state::undecided)
            return {k, s};
    FAIL("a full round must be decided");
    return {};
}

redlock::error reference_reason(const std::vector<master_outcome>& seq, std::size_t k)
{
    std::size_t held = 0;
    std::size_t failed = 0;
    for (std::size_t i = 0; i != k; ++i)
    {
        held += seq[i] == master_outcome::held_by_other ? 1 : 0;
        failed += (seq[i] == master_outcome::failed || seq[i] == master_outcome::timed_out) ? 1 : 0;
    }
    return held > 0 && held >= failed ? redlock::error::contended : redlock::error::no_quorum;
}

// Feeds seq[k] to master order[k] and checks every step against the reference. Returns
// false at the first mismatch (the CHECKs say where).
bool run_one(const std::vector<master_outcome>& seq, const std::vector<std::size_t>& order,
             const expectation& exp)
{
    const std::size_t n = seq.size();
    quorum_tracker t(n);
    if (t.quorum() != n / 2 + 1 || t.state() != quorum_state::undecided || t.pending() != n)
        return false;
    for (std::size_t k = 0; k != n; ++k)
    {
        const auto expected = k + 1 < exp.decided_at ? quorum_state::undecided : exp.final_state;
        const auto got = t.record(order[k], seq[k]);
        if (got != expected || t.state() != expected)
            return false;
        if (t.outcome(order[k]) != seq[k])
            return false;
        if (t.granted() + t.held_by_other() + t.failed() + t.pending() != n ||
            t.pending() != n - k - 1)
            return false;
        if (t.failure_reason() != reference_reason(seq, k + 1))
            return false;
    }
    return true;
}

std::string describe(const std::vector<master_outcome>& seq, const std::vector<std::size_t>& order)
{
    static constexpr const char* names[] = {"pending", "granted", "held", "failed", "timed_out"};
    std::string s;
    for (std::size_t k = 0; k != seq.size(); ++k)
        s += "m" + std::to_string(order[k]) + "=" + names[static_cast<int>(seq[k])] + " ";
    return s;
}

}  // namespace

TEST_CASE("quorum: Q = N/2 + 1", "[quorum]")
{
    const std::size_t expected[] = {0, 1, 2, 2, 3, 3, 4, 4, 5};
    for (std::size_t n = 1; n <= 8; ++n)
    {
        quorum_tracker t(n);
        CHECK(t.masters() == n);
        CHECK(t.quorum() == expected[n]);
        CHECK(t.pending() == n);
        CHECK(t.granted() == 0);
        CHECK(t.state() == quorum_state::undecided);
        for (std::size_t i = 0; i != n; ++i)
            CHECK(t.outcome(i) == master_outcome::pending);
    }
    CHECK_THROWS_AS(quorum_tracker(0), std::invalid_argument);
}

TEST_CASE("quorum: every answer sequence for N = 1..7 against a brute-force reference",
          "[quorum][exhaustive]")
{
    // All 4^N arrival sequences of the four answer kinds; for N <= 5 each under every one of
    // the N! assignments of arrival slots to master indices, for N = 6, 7 under ten.
    std::mt19937_64 rng(20260401);
    std::size_t runs = 0;
    for (std::size_t n = 1; n <= 7; ++n)
    {
        std::vector<std::vector<std::size_t>> orders;
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        if (n <= 5)
        {
            do
                orders.push_back(order);
            while (std::next_permutation(order.begin(), order.end()));
        }
        else
        {
            orders.push_back(order);
            orders.emplace_back(order.rbegin(), order.rend());
            for (int i = 0; i != 8; ++i)
            {
                std::shuffle(order.begin(), order.end(), rng);
                orders.push_back(order);
            }
        }

        std::size_t sequences = 1;
        for (std::size_t i = 0; i != n; ++i)
            sequences *= answers.size();
        std::vector<master_outcome> seq(n);
        for (std::size_t code = 0; code != sequences; ++code)
        {
            auto c = code;
            for (std::size_t i = 0; i != n; ++i, c /= answers.size())
                seq[i] = answers[c % answers.size()];
            const auto exp = reference(seq);
            for (const auto& o : orders)
            {
                ++runs;
                if (!run_one(seq, o, exp))
                {
                    INFO("N=" << n << ": " << describe(seq, o) << " expected decision after "
                              << exp.decided_at << " answers");
                    FAIL("tracker disagrees with the reference");
                }
            }
        }
    }
    // 4*1 + 16*2 + 64*6 + 256*24 + 1024*120 + 4096*10 + 16384*10
    CHECK(runs == 4u + 32u + 384u + 6144u + 122880u + 40960u + 163840u);
}

TEST_CASE("quorum: decides as early as certain (N = 5)", "[quorum]")
{
    // Three answers decide, with two masters pending.
    const std::pair<const char*, std::vector<checked_answer>> three_decide[] = {
        {"three grants reach the quorum with two masters pending",
         {{4, master_outcome::granted, quorum_state::undecided},
          {0, master_outcome::granted, quorum_state::undecided},
          {2, master_outcome::granted, quorum_state::reached}}},
        {"three refusals fail it with two pending",
         {{0, master_outcome::held_by_other, quorum_state::undecided},
          {1, master_outcome::timed_out, quorum_state::undecided},
          {2, master_outcome::failed, quorum_state::failed}}},
    };
    for (const auto& [name, answers_in_order] : three_decide)
    {
        DYNAMIC_SECTION(name)
        {
            quorum_tracker t(5);
            record_checked(t, answers_in_order);
            CHECK(t.pending() == 2);
        }
    }
    SECTION("2 grants + 2 refusals: undecided until the last")
    {
        quorum_tracker t(5);
        t.record(0, master_outcome::granted);
        t.record(1, master_outcome::failed);
        t.record(2, master_outcome::granted);
        record_checked(t, {{3, master_outcome::held_by_other, quorum_state::undecided},
                           {4, master_outcome::granted, quorum_state::reached}});
    }
}

TEST_CASE("quorum: a decision is sticky, late answers are stored", "[quorum]")
{
    SECTION("reached stays reached")
    {
        quorum_tracker t(3);
        t.record(0, master_outcome::granted);
        record_checked(t, {{1, master_outcome::granted, quorum_state::reached},
                           {2, master_outcome::held_by_other, quorum_state::reached}});
        CHECK(t.outcome(2) == master_outcome::held_by_other);
        CHECK(t.held_by_other() == 1);
    }
    SECTION("failed stays failed, even if late grants would make a majority")
    {
        quorum_tracker t(3);
        t.record(0, master_outcome::timed_out);
        record_checked(t, {{1, master_outcome::timed_out, quorum_state::failed},
                           {2, master_outcome::granted, quorum_state::failed}});
        CHECK(t.granted() == 1);
        CHECK(t.outcome(2) == master_outcome::granted);
        CHECK(t.state() == quorum_state::failed);
    }
}

TEST_CASE("quorum: only the first answer of a master counts", "[quorum]")
{
    quorum_tracker t(5);
    CHECK(t.record(1, master_outcome::granted) == quorum_state::undecided);
    // A duplicate grant must not count toward the majority.
    CHECK(t.record(1, master_outcome::granted) == quorum_state::undecided);
    CHECK(t.record(1, master_outcome::granted) == quorum_state::undecided);
    CHECK(t.granted() == 1);
    // Nor may a later different answer replace the first.
    CHECK(t.record(1, master_outcome::failed) == quorum_state::undecided);
    CHECK(t.outcome(1) == master_outcome::granted);
    CHECK(t.failed() == 0);
    // pending is not an answer.
    CHECK(t.record(2, master_outcome::pending) == quorum_state::undecided);
    CHECK(t.pending() == 4);
    // Out of range is ignored.
    CHECK(t.record(5, master_outcome::granted) == quorum_state::undecided);
    CHECK(t.record(static_cast<std::size_t>(-1), master_outcome::granted) ==
          quorum_state::undecided);
    CHECK(t.granted() == 1);
    CHECK(t.outcome(5) == master_outcome::pending);
}

TEST_CASE("quorum: failure_reason", "[quorum]")
{
    auto reason = [](std::initializer_list<master_outcome> answers_in_order) {
        quorum_tracker t(answers_in_order.size());
        std::size_t i = 0;
        for (auto o : answers_in_order)
            t.record(i++, o);
        REQUIRE(t.state() == quorum_state::failed);
        return t.failure_reason();
    };
    using m = master_outcome;
    using redlock::error;
    CHECK(reason({m::held_by_other, m::held_by_other, m::held_by_other}) == error::contended);
    CHECK(reason({m::held_by_other, m::failed, m::granted}) == error::contended);    // 1 >= 1
    CHECK(reason({m::held_by_other, m::timed_out, m::failed}) == error::no_quorum);  // 1 < 2
    CHECK(reason({m::failed, m::timed_out, m::granted}) == error::no_quorum);
    CHECK(reason({m::timed_out, m::timed_out, m::timed_out}) == error::no_quorum);
    CHECK(reason({m::granted, m::held_by_other, m::held_by_other, m::failed, m::granted}) ==
          error::contended);
    // A cluster master held in part counts as held.
    CHECK(reason({m::held_in_part, m::held_in_part, m::held_in_part}) == error::contended);
    CHECK(reason({m::held_in_part, m::failed, m::granted}) == error::contended);
}

TEST_CASE("quorum: a master held in part is held for the decision, but gets the release of a "
          "failed attempt",
          "[quorum]")
{
    using m = master_outcome;
    quorum_tracker t(3);
    t.record(0, m::granted);
    CHECK(t.record(1, m::held_in_part) == quorum_state::undecided);
    CHECK(t.held_by_other() == 1);
    CHECK(t.record(2, m::held_by_other) == quorum_state::failed);
    const auto targets = redlock::detail::release_targets(t);
    CHECK(targets.contains(0));
    CHECK(targets.contains(1));  // it granted some of the keys
    CHECK_FALSE(targets.contains(2));
}

TEST_CASE("quorum: more masters than the inline buffer", "[quorum]")
{
    for (std::size_t n : {15u, 16u, 17u, 33u, 101u})
    {
        INFO("N=" << n);
        quorum_tracker t(n);
        CHECK(t.quorum() == n / 2 + 1);
        // As many refusals as can be afforded (N - Q) on the high indices, then Q grants
        // from index 0 up: the last one decides.
        const auto q = t.quorum();
        for (std::size_t i = 0; i != n - q; ++i)
            CHECK(t.record(n - 1 - i, master_outcome::failed) == quorum_state::undecided);
        for (std::size_t i = 0; i + 1 < q; ++i)
            CHECK(t.record(i, master_outcome::granted) == quorum_state::undecided);
        CHECK(t.record(q - 1, master_outcome::granted) == quorum_state::reached);
        CHECK(t.granted() == q);
        CHECK(t.failed() == n - q);
        CHECK(t.outcome(n - 1) == master_outcome::failed);
        CHECK(t.outcome(0) == master_outcome::granted);
        CHECK(t.pending() == 0);

        // And the failing side: one refusal more than N - Q.
        quorum_tracker f(n);
        for (std::size_t i = 0; i != n - q; ++i)
            CHECK(f.record(i, master_outcome::timed_out) == quorum_state::undecided);
        CHECK(f.record(n - 1, master_outcome::held_by_other) == quorum_state::failed);
        CHECK(f.failure_reason() == redlock::error::no_quorum);
    }
}

TEST_CASE("quorum: copies are independent (inline and heap)", "[quorum]")
{
    for (std::size_t n : {5u, 17u})
    {
        quorum_tracker a(n);
        a.record(0, master_outcome::granted);
        quorum_tracker b = a;
        b.record(1, master_outcome::failed);
        CHECK(a.outcome(1) == master_outcome::pending);
        CHECK(b.outcome(0) == master_outcome::granted);
        CHECK(b.outcome(1) == master_outcome::failed);
        quorum_tracker c = std::move(b);
        CHECK(c.outcome(1) == master_outcome::failed);
        CHECK(c.failed() == 1);
        a = c;
        CHECK(a.outcome(1) == master_outcome::failed);
    }
}

#include "fsm/release_verdict.hpp"

TEST_CASE("release verdict: success at a majority, else closed, no_quorum or lock_lost",
          "[unit][quorum]")
{
    using redlock::detail::master_outcome;
    using redlock::detail::quorum_tracker;
    using redlock::detail::release_verdict;
    namespace err = redlock;
    auto tracker = [](std::initializer_list<master_outcome> outcomes) {
        quorum_tracker q(outcomes.size());
        std::size_t i = 0;
        for (auto o : outcomes)
            q.record(i++, o);
        return q;
    };
    constexpr auto g = master_outcome::granted;
    constexpr auto h = master_outcome::held_by_other;
    constexpr auto f = master_outcome::failed;
    constexpr auto t = master_outcome::timed_out;
    CHECK_FALSE(release_verdict(tracker({g, g, g, f, f}), false));
    CHECK_FALSE(
        release_verdict(tracker({g, g, g, f, f}), true));  // deleted on a majority before the close
    CHECK(release_verdict(tracker({g, g, f, f, f}), true) == err::error::connection_closed);
    CHECK(release_verdict(tracker({g, g, f, t, f}), false) == err::error::no_quorum);
    // Deleted on 2, 2 never had it, 1 silent: the silent one and the deletes could make a
    // majority, so a majority is not known to lack our token.
    CHECK(release_verdict(tracker({g, g, h, h, f}), false) == err::error::no_quorum);
    CHECK(release_verdict(tracker({g, h, h, h, f}), false) == err::error::lock_lost);
    CHECK(release_verdict(tracker({h, h, h, f, f}), false) ==
          err::error::lock_lost);  // 2 failed: a majority answered
}

TEST_CASE("quorum: grants with choices (a semaphore's permits) against a brute-force reference, "
          "every answer sequence for N = 1..5 masters and 3 choices",
          "[quorum]")
{
    // Each master answers one of: granted choice 0, 1 or 2, held, failed. Every order of every
    // combination is fed; after each answer the state must be the reference's: reached once
    // some choice has Q grants, failed once no choice can get there, sticky afterwards.
    std::size_t sequences = 0;
    for (std::size_t n = 1; n <= 5; ++n)
    {
        const std::size_t q = n / 2 + 1;
        std::vector<int> answers(n, 0);  // 0..2: granted that choice; 3: held; 4: failed
        while (true)
        {
            std::vector<std::size_t> order(n);
            std::iota(order.begin(), order.end(), std::size_t{0});
            do
            {
                ++sequences;
                quorum_tracker t(n);
                auto expected = quorum_state::undecided;
                std::array<std::size_t, 3> per_choice{};
                std::size_t pending = n;
                for (const auto i : order)
                {
                    const int a = answers[i];
                    const auto o = a < 3    ? master_outcome::granted
                                   : a == 3 ? master_outcome::held_by_other
                                            : master_outcome::failed;
                    const auto got =
                        a < 3 ? t.record(i, o, static_cast<std::uint32_t>(a)) : t.record(i, o);
                    --pending;
                    if (a < 3)
                        ++per_choice[static_cast<std::size_t>(a)];
                    const auto best = *std::max_element(per_choice.begin(), per_choice.end());
                    if (expected == quorum_state::undecided)
                    {
                        if (best >= q)
                            expected = quorum_state::reached;
                        else if (best + pending < q)
                            expected = quorum_state::failed;
                    }
                    REQUIRE(got == expected);
                    if (a < 3)
                        CHECK(t.choice(i) == static_cast<std::uint32_t>(a));
                    else
                        CHECK_FALSE(t.choice(i).has_value());
                }
                if (expected == quorum_state::reached)
                    CHECK(per_choice[t.winner()] >= q);
            } while (std::next_permutation(order.begin(), order.end()));
            // Next combination of answers.
            std::size_t k = 0;
            while (k < n && ++answers[k] == 5)
                answers[k++] = 0;
            if (k == n)
                break;
        }
    }
    CHECK(sequences > 0);
}

TEST_CASE("quorum: a grant without a choice is choice 0, before or after grants with choices",
          "[quorum]")
{
    quorum_tracker t(5);
    t.record(0, master_outcome::granted);  // no choice: 0
    t.record(1, master_outcome::granted, 1);
    t.record(2, master_outcome::granted, 0);
    CHECK(t.state() == quorum_state::undecided);  // 2 for choice 0, 1 for choice 1
    CHECK(t.choice(0) == 0u);
    t.record(3, master_outcome::granted);  // no choice again: the third for choice 0
    CHECK(t.state() == quorum_state::reached);
    CHECK(t.winner() == 0u);
    CHECK(t.granted() == 4);
    // A split that no choice can win fails before the last answer.
    quorum_tracker u(5);
    u.record(0, master_outcome::granted, 0);
    u.record(1, master_outcome::granted, 1);
    u.record(2, master_outcome::granted, 2);
    CHECK(u.state() == quorum_state::undecided);
    u.record(3, master_outcome::held_by_other);
    CHECK(u.state() == quorum_state::failed);  // each choice has 1, one master is left
}
