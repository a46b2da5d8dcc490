// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// An acquisition that waits (lock_options::wait) among the others of its client: its place in
// its resource's queue, its turn, the releases of its keys it hears of, and a lock handed over
// to it by a holder of this client (waiting_room, release_watch). The rest of acquire_op is in
// acquire_op.cpp.
#include "driver/acquire_op.hpp"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

namespace redlock::detail {

bool acquire_op::join_waiting_room()
{
    // A waiting acquisition of one resource takes its turn behind the others of this client:
    // only the first of them competes (a multi-resource one competes at once: queues over
    // several resources could wait for each other).
    bool first = true;
    if (o_.wait.count() > 0 && !try_mode_)
    {
        // It hears of its keys' releases from now on (the machine ignores them until it waits).
        c_->waiting.watch(keys_.watch_keys(), this);
        watching_ = true;
        if (!keys_.multi())
        {
            queued_ = true;
            first = c_->waiting.enqueue(keys_.key(), this);
        }
    }
    return first;
}

void acquire_op::on_turn(bool taken_before)
{
    drive(acquire_event::turn(clock::now(), taken_before));
}

bool acquire_op::take_over(const lock_state& from,
                           std::chrono::steady_clock::time_point valid_until,
                           std::span<char, token_source::token_chars> token)
{
    // Not with an identity (lock_options::identity): the keys take a fixed-size token
    // (round::start_release), which would drop it; this acquisition takes the lock anew after
    // the release.
    if (!o_.identity.empty())
        return false;
    // Only a lock of this one key, between rounds (the machine declines during one), and not
    // while the machine is being driven (an event would be queued, and its outcome come late).
    // Only a kind that takes hand-offs, from a lock of the same kind.
    if (answered_ || !fsm_ || driving() || !o_.handoff || !keys_.row().handoff ||
        from.kind != keys_.kind() || from.key != keys_.key() || attempt_.active() ||
        (commit_ && commit_->active()) || (release_ && release_->active()))
        return false;
    auto keep = hold();
    // No round uses the token between rounds: the offer's goes there, and a declined one is
    // replaced by the next attempt's.
    c_->tokens.next(std::span<char, token_source::token_chars>(token_));
    // While the offer is driven: complete() reads the holder's lock through handed_, and the
    // completion is posted (as during the initiation), so that the caller hands the keys over
    // to the new token before the new holder can send anything with it. Both are undone
    // however the drive ends.
    struct offer_scope
    {
        acquire_op& op;
        bool was_initiating;
        offer_scope(acquire_op& o, const lock_state& from)
            : op(o),
              was_initiating(std::exchange(o.initiating_, true))
        {
            op.handed_ = &from;
        }
        ~offer_scope()
        {
            op.initiating_ = was_initiating;
            op.handed_ = nullptr;
        }
        offer_scope(const offer_scope&) = delete;
        offer_scope& operator=(const offer_scope&) = delete;
    };
    {
        const offer_scope scope(*this, from);
        drive(acquire_event::handed(clock::now(), valid_until));
    }
    if (!answered_)
        return false;
    std::copy(std::begin(token_), std::end(token_), token.begin());
    return true;
}

void acquire_op::on_watched(std::size_t master, master_outcome o, std::int64_t pttl, bool tracked)
{
    drive(acquire_event::watched(watch_id_, master, o, pttl, tracked, clock::now()));
}

void acquire_op::leave_waiting_room(bool pass_turn, bool acquired) noexcept
{
    watch_.stop();
    if (watching_)
    {
        c_->waiting.unwatch(keys_.watch_keys(), this);
        watching_ = false;
    }
    if (!queued_)
        return;
    queued_ = false;
    auto* next = c_->waiting.leave(keys_.key(), this);
    // A shared kind's lock (a permit, a reader's) leaves room for the next one: it attempts at
    // once (a writer then finds our reader and waits as for any holder). Any other lock taken
    // blocks it.
    const bool blocks = acquired && !keys_.row().shared;
    if (next && pass_turn)
        // Posted: the next one starts its attempt after this completion, not inside it.
        asio::post(c_->strand, [next, keep = next->hold(), blocks] { next->on_turn(blocks); });
}

}  // namespace redlock::detail
