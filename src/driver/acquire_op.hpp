// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_ACQUIRE_OP_HPP
#define REDLOCK_SRC_OPERATION_ACQUIRE_OP_HPP

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/lock.hpp>
#include <redlock/options.hpp>

#include "algorithm/token.hpp"
#include "driver/acquire_keys.hpp"
#include "driver/op_context.hpp"
#include "driver/op_driver.hpp"
#include "driver/release_watch.hpp"
#include "driver/round.hpp"
#include "driver/waiting_room.hpp"
#include "fsm/acquire_fsm.hpp"

namespace redlock::detail {

/// A fenced acquisition's diagnostics: a master that granted in the first round shows how its
/// commit went (granted: it committed the token); the others keep their first-round answer,
/// which says why they did not count (an error, another holder, silence).
void merge_commit(diagnostic_list& attempt, const diagnostic_list& commit);

/// @brief The Asio side of an acquisition (async_lock, async_try_lock, async_lock_all): it
/// runs acquire_fsm, which makes every decision, and carries out its actions with its rounds
/// (the attempt, with fencing its commit, and the release) and the client's deadline list
/// (the backoff).
///
/// What it adds to the machine: the token of each attempt, the keys, the lock handed out and
/// the handler. Events reach the machine through drive(), one at a time: an event raised while
/// an action is being carried out (a round that finishes inside its own start(), when every
/// master is down) is queued and handled once that action is done, so the machine is never
/// re-entered.
class acquire_op final : public round_listener,
                         public release_listener,
                         public watch_listener,
                         public timed_entry,
                         public op_driver<acquire_op, acquire_fsm>
{
public:
    using lock_handler = asio::any_completion_handler<void(error_code, lock)>;
    using try_handler = asio::any_completion_handler<void(error_code, std::optional<lock>)>;

    acquire_op(std::shared_ptr<op_context> c, std::string resource, const lock_options& o);
    /// A multi-resource lock: every key is set (all or none) by one script on each master.
    acquire_op(std::shared_ptr<op_context> c, std::vector<std::string> resources,
               const lock_options& o);

    // Boost 1.81's any_completion_handler move-assignment recurses without end (fixed in
    // 1.82), so handlers are only ever move-constructed: here, into an optional.
    void start(lock_handler h);
    void start(try_handler h);

    // (Every listener's: one function overrides them all.)
    std::shared_ptr<void> hold() override { return shared_from_this(); }
    void abandon() noexcept override;

private:
    friend op_driver;

    void begin();
    // Before begin(): begin() completes at once.
    void cancelled_before_start() { cancelled_early_ = true; }
    // What each action sends (acquire_rounds.cpp).
    void execute(const acquire_action& a);
    void complete(error_code ec, lock l);
    // The lock granted by the action (acquire_grant.cpp): the keys, the token and the masters'
    // outcomes move into it; what it may have left elsewhere is cleaned up, unawaited.
    lock grant(const acquire_action& a);
    // A fenced lock granted in one round: its commit, sent to every master, awaited by none.
    void commit_in_background(std::span<const std::uint64_t> fences);
    // A writer's acquisition that may have left its intent mark (a refused or silent master):
    // deletes it on every master, not awaited.
    void forget_intent();
    // A successful semaphore attempt: deletes our token from the permits that masters set
    // outside the majority's, and says so in their diagnostics.
    void release_strays(diagnostic_list& diagnostics);
    // The round of release_strays or forget_intent (a kind needs one of them at most).
    round& aside();
    // The value the keys hold: the attempt's token, or with an identity (lock_options::
    // identity) the token, a space and the identity (value_). What the rounds call the token.
    std::string_view token_view() const
    {
        return o_.identity.empty() ? std::string_view(token_, token_source::token_chars)
                                   : std::string_view(value_);
    }
    // A new token for the next attempt, and its value.
    void new_token();

    void on_round_outcome(round& r, std::size_t i) override;
    void on_round_finished(round& r) override;
    void on_deadline() override;
    void on_invalidated(std::size_t master) override;
    void on_turn(bool taken_before) override;
    bool take_over(const lock_state& from, std::chrono::steady_clock::time_point valid_until,
                   std::span<char, token_source::token_chars> token) override;
    void on_watched(std::size_t master, master_outcome o, std::int64_t pttl, bool tracked) override;
    // A waiting acquisition (acquire_waiting.cpp) joins its keys' watchers and, of one
    // resource, the resource's queue; whether it is the first there (the others wait their turn).
    bool join_waiting_room();
    /// Out of its resource's queue and the watchers (the next in the queue told its turn when
    /// `pass_turn`, and whether this one took the lock).
    void leave_waiting_room(bool pass_turn, bool acquired = false) noexcept;

    acquire_keys keys_;  // of the kind that the options take (acquire_keys::prepare)
    lock_options o_;
    std::optional<lock_handler> h_lock_;
    std::optional<try_handler> h_try_;
    round attempt_;
    // Made when first needed, so that an acquisition that needs none (a mutex's that
    // succeeds at once, the hot path) neither builds nor destroys them.
    std::unique_ptr<round> commit_;   // fencing only: made in begin()
    std::unique_ptr<round> release_;  // made by the first failed attempt's release
    std::unique_ptr<round> aside_;    // aside(): a semaphore's strays, a writer's intent
    release_watch watch_;             // waiting (lock_options::wait) only
    std::uint64_t attempt_id_ = 0;    // the machine's round ids of the rounds
    std::uint64_t commit_id_ = 0;
    std::uint64_t release_id_ = 0;
    std::uint64_t watch_id_ = 0;
    char intent_[token_source::token_chars]{};  // a writer's intent id, one per acquisition
    bool intent_marked_ = false;          // a writer's attempt was refused or unanswered somewhere
    diagnostic_list diagnostics_;         // of the last failed attempt
    const lock_state* handed_ = nullptr;  // during take_over(): the lock offered
    std::string reason_;                  // of a failure that is not the masters' doing
    std::chrono::steady_clock::time_point started_{};  // for the acquired event's elapsed
    char token_[token_source::token_chars]{};
    std::string value_;  // with an identity only: token_, a space, the identity
    bool try_mode_ = false;
    bool committing_ = false;       // the attempt under way has reached its commit round
    bool cancelled_early_ = false;  // cancelled before begin()
    bool queued_ = false;           // in its resource's queue (waiting_room)
    bool watching_ = false;         // among the watchers of its keys (waiting_room)
    bool wait_armed_ = false;       // a retry delay, the wait's end or its fallback is scheduled
};

}  // namespace redlock::detail

#endif
