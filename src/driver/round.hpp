// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUND_HPP
#define REDLOCK_SRC_ROUND_HPP

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <redlock/lock.hpp>

#include "algorithm/quorum.hpp"
#include "algorithm/token.hpp"
#include "fsm/master_set.hpp"
#include "protocol/holders_reply.hpp"
#include "protocol/lock_command_table.hpp"
#include "protocol/lock_commands.hpp"
#include "protocol/reply_sink.hpp"
#include "routing/request_mode.hpp"
#include "runtime/deadline_list.hpp"
#include "runtime/lock_state.hpp"
#include "runtime/op_registry.hpp"

namespace redlock::detail {

class round_context;
class round;

/// The owner of a round: told each master's outcome as it becomes known, and when every
/// awaited master has answered. What the outcomes mean (a quorum reached or failed, a release
/// done) is its machine's decision: the round counts nothing.
class round_listener
{
public:
    /// Master `master`'s outcome is known (round::outcome): an answer, a failure, the
    /// deadline. Called once per master the round awaits, in the order the outcomes came.
    virtual void on_round_outcome(round& r, std::size_t master) = 0;
    /// Every awaited master answered or timed out; called once per round, after the last
    /// on_round_outcome.
    virtual void on_round_finished(round& r) = 0;
    /// Keeps the listener alive while a callback of the round runs (a listener that is no
    /// tracked operation: one that is, the round keeps with a busy_scope).
    virtual std::shared_ptr<void> hold() = 0;
    /// The tracked operation this listener is, if it is one (set_tracked).
    tracked_op* tracked() const noexcept { return tracked_; }

protected:
    ~round_listener() = default;
    /// Called in the operation's constructor body (once every base is made).
    void set_tracked(tracked_op* op) noexcept { tracked_ = op; }

private:
    tracked_op* tracked_ = nullptr;
};

/// What a round holds of its listener around the listener's callbacks: a busy_scope on a
/// tracked operation (no reference count touched), else the listener's hold().
class listener_keep
{
public:
    explicit listener_keep(round_listener& l)
        : busy_(l.tracked()),
          owned_(l.tracked() ? nullptr : l.hold())
    {}

private:
    busy_scope busy_;  // first made, last gone: its end may destroy the listener
    std::shared_ptr<void> owned_;
};

/// @brief One command sent to every master at once, outcomes gathered against a deadline.
///
/// The unit of the Redlock algorithm: an acquisition attempt (SET NX PX), a release
/// (compare-and-delete) or an extension (compare-and-PEXPIRE). Each reply is classified into a
/// master_outcome and told to the listener, whose machine decides (as early as the outcome is
/// certain); the round sends where the machine's plan says and keeps no quorum of its own.
/// A release goes as EVALSHA to a connection that has seen the script run, as EVAL to one that
/// has not (which caches it there); a master that lost the script since (NOSCRIPT) gets it
/// again as EVAL. A release that will not be awaited goes as EVAL from the start,
/// and one still unanswered at the deadline gets an EVAL queued behind it, so that a key is
/// never left behind for lack of a script. Extensions always go as EVAL (see round.cpp). The
/// deadline marks every master still silent as timed out.
class round final : public reply_sink, public timed_entry
{
public:
    /// The command the round sends (protocol/lock_commands.hpp).
    using kind = lock_command;

    using time_point = std::chrono::steady_clock::time_point;

    /// @brief Sends to all masters. `keys` and `token` must stay valid while the round is active.
    /// `arg` is the number the command carries: the TTL in ms (acquire, extend), the fencing
    /// token (commit_fence); unused otherwise.
    /// May call the listener before returning (e.g. when every master is down).
    ///
    /// @param to The masters the command goes to, as the operation decided (its machine's
    /// action, src/fsm/aside_targets.hpp); nullptr: every master. The others' status stays
    /// `pending` (a release after a failed attempt skips the masters that refused it: they
    /// hold nothing of ours).
    /// @param awaited Of `to`, the masters whose answers the round waits for; nullptr: all of
    /// `to`. The others still get the command, queued on their connection (a release right
    /// behind the attempt's SET, so the master executes it after the SET whenever it wakes
    /// up: waiting for its answer would add no safety, only the release deadline to the
    /// caller's latency); it goes with the script's body (nobody will see a NOSCRIPT), and
    /// their status stays `pending`. A round that awaits nobody is over within start().
    /// @param timeout The round's deadline is `started() + timeout` (`started()` is read once,
    /// just before the first request is queued), or `latest` if that is earlier.
    /// @param at When the caller read the clock just before (the time of the event that made
    /// it start the round): `started()`, saving a clock read. The default reads the clock.
    void start(round_context& c, kind k, std::span<const std::string> keys, std::string_view token,
               std::int64_t arg, std::chrono::steady_clock::duration timeout, round_listener* l,
               const master_set* to = nullptr, const master_set* awaited = nullptr,
               time_point latest = time_point::max(), time_point at = time_point{});

    /// @brief The release of a held lock (async_unlock, a hold's release): a release round,
    /// or, when the lock's claim is live (lock_state::claim) and the next waiter of this
    /// client for its key takes the lock over (waiting_room::successor,
    /// lock_options::handoff), a hand_over round to the waiter's token. Ends the claim either
    /// way. `held` must stay valid while the round is active.
    void start_release(round_context& c, const lock_state& held,
                       std::chrono::steady_clock::duration timeout, round_listener* l,
                       time_point latest = time_point::max(), time_point at = time_point{});

    round() = default;
    round(const round&) = delete;
    round& operator=(const round&) = delete;
    /// An active round is stopped: the connections and the deadline list point at it.
    ~round() { stop(); }

    /// No more callbacks: outstanding requests are abandoned (their replies dropped).
    /// Inline: most rounds stopped (and every round destroyed) are no longer active.
    void stop() noexcept
    {
        if (active_)
            halt();
    }

    bool active() const noexcept { return active_; }
    /// Whether the round's outcome on every master still awaited no longer needs this
    /// process: each request has left the client (node_connection::written), and a release sent
    /// as EVALSHA went only to a master known to have the script (script_cache;
    /// the others get EVAL), so that no NOSCRIPT will need an EVAL from us — barring a SCRIPT
    /// FLUSH or restart since the connection last saw it.
    bool runs_without_us() const noexcept;
    /// N, the masters of the client the round was started on.
    std::size_t masters() const noexcept { return m_.size(); }
    /// Master i's outcome so far (`pending`: not known yet, or not awaited).
    master_outcome outcome(std::size_t i) const noexcept
    {
        return i < m_.size() ? m_[i].outcome : master_outcome::pending;
    }
    /// The numbers master i's reply carried, as its machine's event takes them: a fenced
    /// attempt's counters (one per resource), a semaphore's permit; empty for other rounds.
    std::span<const std::int64_t> values_of(std::size_t i) const noexcept
    {
        if (values_.size() < (i + 1) * per_master_)
            return {};
        return std::span<const std::int64_t>(values_).subspan(i * per_master_, per_master_);
    }
    /// The operation has decided on this round (its machine answered, e.g. a release at its
    /// quorum): a yielded hand-off's notice to this client's waiters (waiting_room::
    /// released_here) goes out now rather than at the round's end.
    void decided()
    {
        if (active_)
            tell_deferred();
    }
    time_point started() const noexcept { return t0_; }
    /// When the latest outcome became known (a reply's read batch, the deadline, a failure);
    /// started() before any. What a driver gives its machine as the time of the round's
    /// events, without reading the clock again.
    time_point last_outcome_at() const noexcept { return std::max(t0_, last_outcome_at_); }
    /// Each master's outcome so far, as a lock's diagnostics.
    const diagnostic_list& diagnostics() const noexcept { return diag_; }
    /// Moved from by the assignment it is given to (one move of the list, no temporary).
    diagnostic_list&& take_diagnostics() noexcept { return std::move(diag_); }
    /// kind::check: master i's smallest PTTL in ms (-1: no expiry), or -3 when not ours / unknown.
    std::int64_t value(std::size_t i) const noexcept
    {
        return i < values_.size() ? values_[i] : -3;
    }
    /// kind::acquire_fenced, kind::acquire_writer_fenced: the fence counters each granting
    /// master sent, values_per_master() (one per resource) per master, master after master.
    std::span<const std::int64_t> values() const noexcept { return values_; }
    std::size_t values_per_master() const noexcept { return per_master_; }
    /// kind::read_holders: what master i holds of the resource; nullptr when it did not answer
    /// (or not in that shape).
    const master_holdings* holdings(std::size_t i) const noexcept
    {
        return rare_ && i < rare_->holdings.size() && diag_[i].status == master_status::granted
                   ? &rare_->holdings[i]
                   : nullptr;
    }
    /// kind::commit_fence: the tokens to commit, one per resource; they must stay valid while
    /// the round is active. Set before start().
    void set_fences(std::span<const std::uint64_t> fences) noexcept { fences_ = fences; }
    /// kind::acquire_writer, kind::acquire_writer_fenced: the writer's intent id
    /// (docs/algorithm.md, "A read-write lock"), the same for every attempt of one
    /// acquisition. Set before start().
    void set_intent(std::span<const char, token_source::token_chars> id) noexcept
    {
        std::copy(id.begin(), id.end(), successor_);
    }
    /// kind::acquire_permit: the semaphore's mark (redlock:permits:<N>), which must stay valid
    /// while the round is active. Set before start().
    void set_text(std::string_view text) noexcept { text_ = text; }

private:
    // stop() of an active round.
    void halt() noexcept;
    void on_reply(std::uint32_t tag, const error_code& ec,
                  std::span<const resp::node_view> nodes) override;
    void on_deadline() override;
    // A request's tag: the master's index in the low 16 bits, a part's slot group + 1 above it
    // (round_parts.cpp), and this bit when the command went as EVAL.
    static constexpr std::uint32_t fallback_bit = 1u << 31;
    // A cluster has 16384 slots, so a lock has at most that many groups.
    static_assert(16384 + 1 < (fallback_bit >> 16), "a part's tag would overflow");
    static request_mode mode_of(kind k) noexcept;
    // `from_start`: within start(), where the encoded command is shared by the masters.
    bool send(std::size_t i, bool fallback, bool from_start = false);
    // After master i's command was handed over (`ec` clear: it is outstanding, `fallback` saying
    // whether it went as EVAL) or refused (`ec`: it failed). Returns whether it was queued.
    // Inline: it follows every command's submit.
    bool queued(std::size_t i, bool fallback, const error_code& ec)
    {
        if (ec)
            return refused(i, ec), false;
        m_[i].outstanding = true;
        m_[i].fallback = fallback;
        ++outstanding_;
        return true;
    }
    // Master i's connection refused its command: it failed.
    void refused(std::size_t i, const error_code& ec);
    // `at`: when the outcome became known (the read batch's time for a reply).
    void settle(std::size_t i, master_outcome o, const error_code& ec, std::string_view msg,
                time_point at);
    void settle(std::size_t i, master_outcome o, const error_code& ec, std::string_view msg)
    {
        settle(i, o, ec, msg, std::chrono::steady_clock::now());
    }
    // A semaphore's attempt found the resource held as another kind (`found`: what holds it).
    // Out of line and cold: it keeps on_reply, which every reply goes through, short.
    [[gnu::noinline, gnu::cold]] void settle_other_kind(std::size_t i, std::string_view found,
                                                        time_point at);
    void notify();
    // Posts the notice of a release whose local hand-off yielded (deferred_notice_), once.
    void tell_deferred()
    {
        if (deferred_notice_.masters() != 0)
            tell_deferred_now();
    }
    void tell_deferred_now();
    // The script a round runs as EVALSHA where the connection has seen it (script_cache ids,
    // eval_policy::cached); no_script for the others.
    unsigned script_id() const noexcept { return cached_script_for(k_, keys_.size()); }
    bool cached_script() const noexcept { return script_id() != no_script; }
    // A fenced acquisition's first round (a mutex's or a writer's): its replies carry counters.
    bool fenced_attempt() const noexcept { return row_of(k_).fenced_attempt(); }
    // A fenced attempt: where master i's counters go; empty otherwise.
    std::span<std::int64_t> counters_of(std::size_t i) noexcept
    {
        if (!fenced_attempt())
            return {};
        return std::span<std::int64_t>(values_).subspan(i * per_master_, per_master_);
    }

    // A cluster master given keys of several hash slots gets one command per slot (a part),
    // and its outcome combines theirs (see send_parts).
    void group_by_slot();
    // Whether master i gets one command per slot: inline for the common case, a round with
    // one part (every standalone round), without a call.
    bool split_for(std::size_t i) const noexcept { return groups_ > 1 && split_master(i); }
    bool split_master(std::size_t i) const noexcept;
    bool send_parts(std::size_t i);
    void on_part_reply(std::size_t i, std::size_t part, const error_code& ec,
                       std::span<const resp::node_view> nodes);
    void abandon_master(std::size_t i) noexcept;
    std::span<const std::string> group_keys(std::size_t g) const noexcept
    {
        const auto& r = *rare_;
        return std::span<const std::string>(r.slot_keys)
            .subspan(r.group_start[g], r.group_start[g + 1] - r.group_start[g]);
    }

    struct per_master
    {
        request_ticket ticket;
        bool outstanding = false;
        bool fallback = false;
        master_outcome outcome = master_outcome::pending;
    };
    // What a split master's parts said so far (send_parts).
    struct parts_state
    {
        std::size_t left = 0;  // unanswered parts
        bool any_granted = false;
        bool any_held = false;
        bool failed = false;
        std::int64_t pttl = -3;
        error_code ec;  // the first failed part's
        std::string message;
    };
    // What only some rounds need (a read of the holders, a cluster master's parts): made when
    // first needed (rare()), so that the rounds of a plain lock cycle neither build nor
    // destroy it, and the round stays a few cache lines smaller.
    struct rare_state
    {
        std::vector<master_holdings> holdings;  // kind::read_holders only
        // Cluster masters: keys_ ordered by hash slot, and where each slot's group starts
        // (groups_ + 1 entries).
        std::vector<std::string> slot_keys;
        std::vector<std::size_t> group_start;
        std::vector<request_ticket> part_tickets;  // master i's part g: [i * groups_ + g]
        std::vector<parts_state> parts;            // per master, when groups_ > 1
    };
    rare_state& rare()
    {
        if (!rare_)
            rare_ = std::make_unique<rare_state>();
        return *rare_;
    }

    // The members in the order a reply reads them (on_reply, settle, notify): what every
    // reply touches first, then the quorum and the per-master arrays, and last what only
    // some rounds use. With 128 operations in flight a round's lines are seldom still in the
    // cache when its next reply comes, so each line that a reply needs costs a miss.
    round_context* c_ = nullptr;
    round_listener* l_ = nullptr;
    std::size_t outstanding_ = 0;
    time_point t0_{};
    time_point last_outcome_at_{};
    std::span<const std::string> keys_;
    std::string_view token_;
    std::size_t per_master_ = 1;
    // Cluster masters: the number of hash slots of keys_ (rare_state's groups); 1 when every
    // key is in one slot.
    std::size_t groups_ = 1;
    kind k_ = kind::acquire;
    bool active_ = false;
    // Inline up to 9 masters: a round is made for every operation, and these would otherwise
    // be two allocations per round on the hot path.
    static constexpr std::size_t inline_masters = 9;
    boost::container::small_vector<per_master, inline_masters> m_;
    // The masters whose outcome is known, in the order they became known; the listener has
    // been told the first told_ of them.
    boost::container::small_vector<std::uint16_t, inline_masters> settled_;
    std::size_t told_ = 0;
    diagnostic_list diag_;
    std::int64_t arg_ = 0;
    std::vector<std::int64_t> values_;
    std::span<const std::uint64_t> fences_;
    std::unique_ptr<rare_state> rare_;
    // A release whose local hand-off yields (waiting_room::released_here): the masters it was
    // queued on, told to this client's waiters when the round is decided; empty otherwise.
    master_set deferred_notice_;
    // kind::hand_over: the new owner's token; a writer's acquisition: the writer's intent id.
    char successor_[token_source::token_chars]{};
    std::string_view text_;  // next_arg::text: set_text's
    std::string_view successor_token() const noexcept
    {
        const auto next = row_of(k_).next;
        if (next == next_arg::text)
            return text_;
        return next == next_arg::token ? std::string_view(successor_, sizeof successor_)
                                       : std::string_view();
    }
};

}  // namespace redlock::detail

#endif
