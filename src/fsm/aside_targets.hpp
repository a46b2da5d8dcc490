// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_FSM_ASIDE_TARGETS_HPP
#define REDLOCK_SRC_FSM_ASIDE_TARGETS_HPP

// Which masters the rounds an acquisition sends and nobody awaits go to (src/driver/
// acquire_rounds.cpp sends them): a fenced lock's commit after a grant in one round, a
// semaphore's release of the permits set outside the majority's, a writer's deletion of its
// intent mark. Each answer is a send_plan, which the round carries out (round::start's `to`
// and `awaited`).
// Pure: decided from the attempt's votes (acquire_fsm::last_attempt()) alone.

#include <cstddef>

#include "algorithm/quorum.hpp"
#include "fsm/master_set.hpp"

namespace redlock::detail {

/// The trailing commit of a fenced lock granted in one round: every master but those that
/// refused the attempt. A master that has not answered may still run our SET: the commit,
/// queued behind it on the same connection, then runs after it. Planned as awaited, so that
/// it goes as a release that completes at its quorum does (EVALSHA where the connection has
/// seen the script run); the driver leaves the round as soon as it is queued.
inline send_plan trailing_commit_targets(const quorum_tracker& votes)
{
    send_plan p{master_set(votes.masters()), master_set(votes.masters())};
    for (std::size_t i = 0; i < votes.masters(); ++i)
        if (votes.outcome(i) != master_outcome::held_by_other)
        {
            p.to.insert(i);
            p.awaited.insert(i);
        }
    return p;
}

/// Whether master `i` may hold a permit of ours that the majority did not set, after a
/// semaphore's grant: it set another permit than the winner(), or it has not answered (its SET
/// may still run). A master that set the winner, and one that set none (every permit held),
/// holds no stray.
inline bool holds_stray_permit(const quorum_tracker& votes, std::size_t i) noexcept
{
    const auto c = votes.choice(i);
    return c ? *c != votes.winner() : votes.outcome(i) != master_outcome::held_by_other;
}

/// A semaphore's release of its stray permits: the masters that may hold one, none awaited.
/// Nothing to send when its `to` is empty.
inline send_plan stray_permit_targets(const quorum_tracker& votes)
{
    send_plan p{master_set(votes.masters()), master_set(votes.masters())};
    for (std::size_t i = 0; i < votes.masters(); ++i)
        if (holds_stray_permit(votes, i))
            p.to.insert(i);
    return p;
}

/// Every one of `masters`, none awaited: a writer's intent mark may stand on any master its
/// attempts reached.
inline send_plan unawaited_everywhere(std::size_t masters)
{
    send_plan p{master_set(masters), master_set(masters)};
    for (std::size_t i = 0; i < masters; ++i)
        p.to.insert(i);
    return p;
}

}  // namespace redlock::detail

#endif
