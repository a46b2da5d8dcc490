// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The end of an acquisition: the lock a grant hands out, and the rounds it sends that nobody
// awaits: a fenced lock's commit after a grant in one round, a semaphore's release of the
// permits set outside the majority's, a writer's deletion of its intent mark (after a grant or
// a failure); which masters each goes to is src/fsm/aside_targets.hpp's. Each is queued on every master's connection behind what the acquisition
// sent there, so that it runs after any SET still on its way. The rest of acquire_op is in
// acquire_op.cpp; its keys are acquire_keys'.
#include "driver/acquire_op.hpp"
#include "fsm/aside_targets.hpp"
#include "runtime/lock_state.hpp"
#include "runtime/recycling_allocator.hpp"

namespace redlock::detail {

void merge_commit(diagnostic_list& attempt, const diagnostic_list& commit)
{
    for (std::size_t i = 0; i < attempt.size() && i < commit.size(); ++i)
        if (attempt[i].status == master_status::granted)
            attempt[i] = commit[i];
}

lock acquire_op::grant(const acquire_action& a)
{
    leave_waiting_room(true, true);  // before the keys move into the lock
    auto st = make_recycled<lock_state>();
    st->token.assign(token_view());
    st->valid_until = a.valid_until;
    st->claim().valid_until = a.valid_until;
    // Taken over too, the TTL is the one asked for, which extensions use (the keys keep
    // the holder's expiry until then).
    st->ttl = o_.ttl;
    if (handed_)
    {
        // Taken over (take_over): the holder's masters' outcomes say where the keys stand.
        st->masters = handed_->masters;
    }
    else
    {
        if (!a.fences.empty())
            st->fences.assign(a.fences.begin(), a.fences.end());
        st->masters = attempt_.take_diagnostics();
        keys_.move_kind_keys_into(*st, fsm_->last_attempt().winner());
        if (keys_.semaphore())
            release_strays(st->masters);
        if (keys_.writer())
            for (const auto& d : st->masters)
                intent_marked_ = intent_marked_ || d.status != master_status::granted;
        if (committing_)
            merge_commit(st->masters, commit_->diagnostics());
    }
    keys_.move_names_into(*st);
    attempt_.stop();
    if (commit_)
        commit_->stop();
    if (commit_ && !committing_ && !handed_)
        commit_in_background(a.fences);
    return access::make(std::move(st));
}

void acquire_op::commit_in_background(std::span<const std::uint64_t> fences)
{
    // A fenced lock granted in one round (its quorum read the same counters): the tokens stand
    // on the quorum already. Their commit records them as the holder's term for readers
    // (async_holders, an election's observers), which must never take a term the holder may
    // not get, and brings the masters outside the quorum to them.
    // Every master but those that refused the attempt (trailing_commit_targets). Queued, then
    // left: nobody awaits it. As a release that completes at its quorum, it goes as EVALSHA where the
    // connection has seen the script run, else as EVAL (a SCRIPT FLUSH since would leave
    // that master's record unwritten: its read then shows no term there).
    const auto to = trailing_commit_targets(fsm_->last_attempt());
    commit_->set_fences(fences);
    commit_->start(*c_, round::kind::commit_fence, keys_.commit_keys(), token_view(), 0,
                   o_.release_timeout, this, &to);
    commit_->stop();
}

void acquire_op::forget_intent()
{
    intent_marked_ = false;
    const auto to = unawaited_everywhere(c_->size());
    aside().start(*c_, round::kind::release, keys_.intent_key(),
                  {intent_, token_source::token_chars}, 0, o_.release_timeout, this, &to);
}

void acquire_op::release_strays(diagnostic_list& diagnostics)
{
    const auto& votes = fsm_->last_attempt();
    const auto to = stray_permit_targets(votes);
    if (to.failed() == 0)
        return;
    for (std::size_t i = 0; i < votes.masters() && i < diagnostics.size(); ++i)
    {
        const auto c = votes.choice(i);
        if (c && holds_stray_permit(votes, i))
        {
            diagnostics[i].status = master_status::held_by_other;
            diagnostics[i].message = "set permit key " + keys_.tried_permit(*c) +
                                     ", not the majority's: our token is deleted from it";
        }
    }
    // Nobody awaits it: each master gets it as EVAL, and the round ends within start().
    aside().start(*c_, keys_.row().release, keys_.strays(votes.winner()), token_view(),
                  static_cast<std::int64_t>(keys_.permits() - 1), o_.release_timeout, this, &to);
}

round& acquire_op::aside()
{
    if (!aside_)
        aside_ = std::make_unique<round>();
    return *aside_;
}

}  // namespace redlock::detail
