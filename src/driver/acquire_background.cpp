// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The rounds an acquisition sends and nobody awaits: a fenced lock's commit after a grant in one
// round, a semaphore's release of the permits set outside the majority's, a writer's deletion
// of its intent mark. Each is queued on every master's connection behind what the acquisition
// sent there, so that it runs after any SET still on its way. The rest of acquire_op is in
// acquire_op.cpp; its keys are acquire_keys'.
#include "driver/acquire_op.hpp"

namespace redlock::detail {

void acquire_op::commit_in_background(std::span<const std::uint64_t> fences)
{
    // A fenced lock granted in one round (its quorum read the same counters): the tokens stand
    // on the quorum already. Their commit records them as the holder's term for readers
    // (async_holders, an election's observers), which must never take a term the holder may
    // not get, and brings the masters outside the quorum to them.
    // Every master but those that refused the attempt (as a failed attempt's release): a SET
    // still on its way runs before the commit queued behind it. Queued, then left: nobody
    // awaits it. As a release that completes at its quorum, it goes as EVALSHA where the
    // connection has seen the script run, else as EVAL (a SCRIPT FLUSH since would leave
    // that master's record unwritten: its read then shows no term there).
    const auto& votes = fsm_->last_attempt();
    quorum_tracker to(votes.masters());
    for (std::size_t i = 0; i < votes.masters(); ++i)
        to.record(i, votes.outcome(i) == master_outcome::held_by_other
                         ? master_outcome::held_by_other
                         : master_outcome::granted);  // (any outcome but timed_out: sent as usual)
    commit_->set_fences(fences);
    commit_->start(*c_, round::kind::commit_fence, keys_.commit_keys(), token_view(), 0,
                   o_.release_timeout, this, &to);
    commit_->stop();
}

void acquire_op::forget_intent()
{
    intent_marked_ = false;
    // Nobody awaits it (every master as timed_out: sent, not awaited), as a semaphore's strays.
    quorum_tracker to(c_->size());
    for (std::size_t i = 0; i < c_->size(); ++i)
        to.record(i, master_outcome::timed_out);
    aside().start(*c_, round::kind::release, keys_.intent_key(),
                  {intent_, token_source::token_chars}, 0, o_.release_timeout, this, &to);
}

void acquire_op::release_strays(diagnostic_list& diagnostics)
{
    const auto& votes = fsm_->last_attempt();
    const auto won = votes.winner();
    quorum_tracker to(votes.masters());  // timed_out: sent, not awaited; held: skipped
    bool any = false;
    for (std::size_t i = 0; i < votes.masters(); ++i)
    {
        // Every master but those that set the majority's permit and those that set none
        // (all held): one that set another, and one that has not answered yet (its SET may
        // still run; the release queued behind it on the connection then undoes it).
        const auto c = votes.choice(i);
        const bool stray = c ? *c != won : votes.outcome(i) != master_outcome::held_by_other;
        to.record(i, stray ? master_outcome::timed_out : master_outcome::held_by_other);
        any = any || stray;
        if (stray && c && i < diagnostics.size())
        {
            diagnostics[i].status = master_status::held_by_other;
            diagnostics[i].message = "set permit key " + keys_.tried_permit(*c) +
                                     ", not the majority's: our token is deleted from it";
        }
    }
    if (!any)
        return;
    // Nobody awaits it: each master gets it as EVAL, and the round ends within start().
    aside().start(*c_, keys_.row().release, keys_.strays(won), token_view(),
                  static_cast<std::int64_t>(keys_.permits() - 1), o_.release_timeout, this, &to);
}

round& acquire_op::aside()
{
    if (!aside_)
        aside_ = std::make_unique<round>();
    return *aside_;
}

}  // namespace redlock::detail
