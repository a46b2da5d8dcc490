// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What an acquisition sends: the round each action of acquire_fsm asks for (the attempt, a
// fenced lock's commit, the release after a failed attempt, the watch of a waiting one), what
// the rounds tell the machine, and the rounds that nobody awaits: a fenced lock's commit after
// a grant in one round, a semaphore's release of the permits set outside the majority's, a
// writer's deletion of its intent mark (after a grant or a failure); which masters each of
// those goes to is src/fsm/aside_targets.hpp's. Each is queued on every master's connection
// behind what the acquisition sent there, so that it runs after any SET still on its way.
#include "algorithm/attempt_timeout.hpp"
#include "driver/acquire_op.hpp"
#include "fsm/aside_targets.hpp"

namespace redlock::detail {

void acquire_op::execute(const acquire_action& a)
{
    using kind = acquire_action::kind;
    switch (a.type)
    {
    case kind::none: return;
    case kind::send_attempt:
        if (wait_armed_)
        {
            // Woken before the fallback (or the turn came): that wait is moot.
            c_->deadlines.cancel(*this);
            wait_armed_ = false;
            watch_.stop();
        }
        attempt_id_ = a.round_id;
        committing_ = false;
        new_token();
        if (keys_.semaphore())
        {
            keys_.rotate_permits(c_->jitter_rng() % keys_.permits());
            attempt_.set_text(keys_.mark());
        }
        if (keys_.row().marks_intent)
            attempt_.set_intent(intent_);
        attempt_.start(*c_, keys_.row().acquire, keys_.attempt_keys(), token_view(), o_.ttl.count(),
                       attempt_timeout_of(o_), this, nullptr, nullptr, a.deadline, a.at);
        return;
    case kind::send_commit:
        // The attempt round stays active: a late grant still shows in its diagnostics.
        commit_id_ = a.round_id;
        committing_ = true;
        commit_->set_fences(a.fences);  // in the machine, unchanged while this round is active
        commit_->start(*c_, round::kind::commit_fence, keys_.commit_keys(), token_view(), 0,
                       a.deadline - a.at, this, nullptr, nullptr, a.deadline, a.at);
        return;
    case kind::send_release:
        release_id_ = a.round_id;
        diagnostics_ = attempt_.diagnostics();
        if (committing_)
            merge_commit(diagnostics_, commit_->diagnostics());
        attempt_.stop();
        if (commit_)
            commit_->stop();
        if (!release_)
            release_ = std::make_unique<round>();
        // The machine's plan: every master but those that refused the attempt (a.to), also
        // those that timed out or never answered (not awaited): a grant may still arrive, and
        // the release queued behind it on the same connection undoes it.
        intent_marked_ = intent_marked_ || keys_.row().marks_intent;
        release_->start(*c_, keys_.row().release, keys_.release_keys(), token_view(),
                        static_cast<std::int64_t>(keys_.permits()), o_.release_timeout, this, a.to,
                        a.awaited, a.deadline, a.at);
        return;
    case kind::send_watch:
        watch_id_ = a.round_id;
        // Refused by holders that this client did not hand the keys to: a row of local
        // hand-offs (waiting_room::released_here) is over. Unless this is the acquisition's
        // first attempt while a row is live: then the holder is this client's own (the
        // newcomer asked while the row's last holder holds), and the row goes on.
        c_->waiting.refused_elsewhere(keys_.watch_keys(), fsm_->attempts() <= 1);
        watch_.start(*c_, *a.awaited, keys_.watch_keys(), this, keys_.semaphore());
        [[fallthrough]];  // and arm the fallback
    case kind::wait_until:
        if (c_->closed)
            return drive(acquire_event::closed(clock::now()));
        c_->deadlines.schedule(*this, a.until);
        wait_armed_ = true;
        return;
    case kind::complete:
        if (a.ec)
            return complete(a.ec, {});
        complete({}, grant(a));
        return;
    }
}

void acquire_op::on_round_outcome(round& r, std::size_t i)
{
    // The machine decides: it is told each outcome of the attempt and of the commit as it
    // comes (the release's end is its round's, on_round_finished). The time is now, not the
    // replies' batch time: a lock whose validity ran out while the batch was being parsed is
    // not handed out.
    if (fsm_->done())
        return;  // (a late answer, or the commit sent after a grant in one round)
    if (&r == &attempt_)
        drive_outcome(r, i, attempt_id_, clock::now());
    else if (&r == commit_.get())
        drive_outcome(r, i, commit_id_, clock::now());
}

void acquire_op::on_round_finished(round& r)
{
    if (&r != release_.get())
        return;
    // Every awaited master answered, or the release deadline passed: the release is over.
    drive(ended_events(c_->closed, release_id_, clock::now()));
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
                   o_.release_timeout, this, &to.to, &to.awaited);
    commit_->stop();
}

void acquire_op::forget_intent()
{
    intent_marked_ = false;
    const auto to = unawaited_everywhere(c_->size());
    aside().start(*c_, round::kind::release, keys_.intent_key(),
                  {intent_, token_source::token_chars}, 0, o_.release_timeout, this, &to.to,
                  &to.awaited);
}

void acquire_op::release_strays(diagnostic_list& diagnostics)
{
    const auto& votes = fsm_->last_attempt();
    const auto to = stray_permit_targets(votes);
    if (to.to.empty())
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
                  static_cast<std::int64_t>(keys_.permits() - 1), o_.release_timeout, this, &to.to,
                  &to.awaited);
}

round& acquire_op::aside()
{
    if (!aside_)
        aside_ = std::make_unique<round>();
    return *aside_;
}

}  // namespace redlock::detail
