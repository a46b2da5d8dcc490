// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The lock an acquisition's grant hands out: its token, keys and the masters' outcomes, and
// what the grant leaves to clean up (the rounds in acquire_rounds.cpp). The rest of acquire_op
// is in acquire_op.cpp; its keys are acquire_keys'.
#include "driver/acquire_op.hpp"
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

}  // namespace redlock::detail
