// Which masters an acquisition's unawaited rounds go to (src/fsm/aside_targets.hpp): a fenced
// lock's trailing commit, a semaphore's release of its stray permits, a writer's deletion of its
// intent mark. Decided from the attempt's votes alone; the rounds that send them are stepped in
// round_test.cpp ("an acquisition's unawaited rounds").
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fsm/aside_targets.hpp"

using redlock::detail::master_outcome;
using redlock::detail::quorum_state;
using redlock::detail::quorum_tracker;
namespace rd = redlock::detail;

namespace {

// One master's vote in a semaphore's attempt: the permit it set, or another outcome. (Named
// apart from acquire_test_words.hpp's outcomes, which a unity build puts in the same unit.)
struct vote
{
    master_outcome outcome = master_outcome::pending;
    std::optional<std::uint32_t> permit;
};
vote set(std::uint32_t permit) { return {master_outcome::granted, permit}; }
constexpr vote refusal{master_outcome::held_by_other, {}};
constexpr vote failure{master_outcome::failed, {}};
constexpr vote timeout{master_outcome::timed_out, {}};
constexpr vote silence{};

template <std::size_t N>
quorum_tracker votes_of(const std::array<vote, N>& v)
{
    quorum_tracker q(N);
    for (std::size_t i = 0; i < N; ++i)
        if (v[i].permit)
            q.record(i, v[i].outcome, *v[i].permit);
        else
            q.record(i, v[i].outcome);
    return q;
}

}  // namespace

TEST_CASE("aside targets: a semaphore's stray permits are released where a master set another "
          "permit or has not answered, not where it set the majority's or refused (kinds: "
          "permit)",
          "[aside_targets][semaphore]")
{
    // Permit 1 reached the quorum on masters 0-2; master 3 set permit 0.
    for (const auto last : {refusal, failure, timeout, silence})
    {
        const auto votes = votes_of(std::array{set(1), set(1), set(1), set(0), last});
        REQUIRE(votes.state() == quorum_state::reached);
        REQUIRE(votes.winner() == 1);
        const auto to = rd::stray_permit_targets(votes);
        for (std::size_t i = 0; i < 3; ++i)
        {
            CHECK_FALSE(rd::holds_stray_permit(votes, i));
            CHECK_FALSE(to.to.contains(i));  // skipped
        }
        CHECK(rd::holds_stray_permit(votes, 3));
        CHECK(to.to.contains(3));  // sent, not awaited
        const bool answered_none = last.outcome == master_outcome::held_by_other;
        CHECK(rd::holds_stray_permit(votes, 4) == !answered_none);
        CHECK(to.to.contains(4) == !answered_none);
        CHECK(to.to.count() == (answered_none ? 1u : 2u));
        CHECK(to.awaited.empty());
    }
}

TEST_CASE("aside targets: every vote of three masters over two permits: a master that may hold "
          "a permit of ours other than the majority's is released, one that set the "
          "majority's or refused is not (kinds: permit)",
          "[aside_targets][semaphore]")
{
    const std::array<vote, 6> each{set(0), set(1), refusal, failure, timeout, silence};
    int granted_rounds = 0;
    for (const auto& a : each)
        for (const auto& b : each)
            for (const auto& c : each)
            {
                const std::array v{a, b, c};
                const auto votes = votes_of(v);
                if (votes.state() != quorum_state::reached)
                    continue;  // strays are released after a grant only
                ++granted_rounds;
                const auto to = rd::stray_permit_targets(votes);
                std::size_t strays = 0;
                for (std::size_t i = 0; i < v.size(); ++i)
                {
                    const bool may_hold_other = v[i].permit
                                                    ? *v[i].permit != votes.winner()
                                                    : v[i].outcome != master_outcome::held_by_other;
                    CHECK(rd::holds_stray_permit(votes, i) == may_hold_other);
                    CHECK(to.to.contains(i) == may_hold_other);
                    strays += may_hold_other ? 1 : 0;
                }
                CHECK(to.to.count() == strays);
                CHECK(to.awaited.empty());  // nothing awaited: the round ends as it starts
            }
    // Two masters of three on one permit: (3 choose 2) pairs per permit, 4 outcomes for the
    // third, plus all three on one permit.
    CHECK(granted_rounds == 2 * (3 * 5 + 1));
}

TEST_CASE("aside targets: a one-round fenced grant's trailing commit goes to every master but "
          "those that refused, including one that has not answered (kinds: fenced, fenced "
          "multi-resource, fenced writer)",
          "[aside_targets][fencing]")
{
    const auto votes = votes_of(std::array{set(0), refusal, set(0), timeout, silence});
    const auto to = rd::trailing_commit_targets(votes);
    for (const std::size_t i : {0u, 2u, 3u, 4u})
    {
        CHECK(to.to.contains(i));
        CHECK(to.awaited.contains(i));  // sent as a release that completes at its quorum
    }
    CHECK_FALSE(to.to.contains(1));
    CHECK_FALSE(to.awaited.contains(1));
    CHECK(to.to.count() == 4);
}

TEST_CASE("aside targets: a writer's intent mark is deleted on every master, none awaited "
          "(kinds: writer, fenced writer)",
          "[aside_targets][rwlock]")
{
    for (const std::size_t n : {1u, 3u, 5u, 17u})
    {
        const auto to = rd::unawaited_everywhere(n);
        CHECK(to.to.masters() == n);
        CHECK(to.to.count() == n);
        CHECK(to.awaited.empty());
    }
}
