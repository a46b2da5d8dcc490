// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_FSM_ASIDE_TARGETS_HPP
#define REDLOCK_SRC_FSM_ASIDE_TARGETS_HPP

// Which masters the rounds an acquisition sends and nobody awaits go to (src/driver/
// acquire_background.cpp sends them): a fenced lock's commit after a grant in one round, a
// semaphore's release of the permits set outside the majority's, a writer's deletion of its
// intent mark. Each answer is a quorum_tracker that a round starts from (round::start's
// `previous`): a master recorded held_by_other is skipped, one recorded timed_out is sent to and
// not awaited, one recorded granted is sent to as a release that completes at its quorum is.
// Pure: decided from the attempt's votes (acquire_fsm::last_attempt()) alone.

#include <cstddef>

#include "algorithm/quorum.hpp"

namespace redlock::detail {

/// The trailing commit of a fenced lock granted in one round: every master but those that
/// refused the attempt. A master that has not answered may still run our SET: the commit, queued
/// behind it on the same connection, then runs after it.
inline quorum_tracker trailing_commit_targets(const quorum_tracker& votes)
{
    quorum_tracker to(votes.masters());
    for (std::size_t i = 0; i < votes.masters(); ++i)
        to.record(i, votes.outcome(i) == master_outcome::held_by_other
                         ? master_outcome::held_by_other
                         : master_outcome::granted);
    return to;
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

/// A semaphore's release of its stray permits: the masters that may hold one (sent to, not
/// awaited), no other. Nothing to send when its failed() is 0.
inline quorum_tracker stray_permit_targets(const quorum_tracker& votes)
{
    quorum_tracker to(votes.masters());
    for (std::size_t i = 0; i < votes.masters(); ++i)
        to.record(i, holds_stray_permit(votes, i) ? master_outcome::timed_out
                                                  : master_outcome::held_by_other);
    return to;
}

/// Every one of `masters`, sent to and not awaited: a writer's intent mark may stand on any
/// master its attempts reached.
inline quorum_tracker unawaited_everywhere(std::size_t masters)
{
    quorum_tracker to(masters);
    for (std::size_t i = 0; i < masters; ++i)
        to.record(i, master_outcome::timed_out);
    return to;
}

}  // namespace redlock::detail

#endif
