// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_FSM_VOCABULARY_HPP
#define REDLOCK_SRC_OPERATION_FSM_VOCABULARY_HPP

// The words every operation's state machine and its driver share: events in (a master's
// answer, a deadline, a cancellation, the client closed), actions out (send to the masters,
// send the release, wait, complete). Each event carries its time: no machine reads a clock.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <redlock/error.hpp>

#include "algorithm/quorum.hpp"
#include "fsm/master_set.hpp"

namespace redlock::detail {

/// @brief Something that happened to an operation (acquisition, extension, release, check), as
/// its driver saw it.
///
/// Every event carries the time at which it happened (`now`): the machine never reads a
/// clock. Times must not decrease from one event to the next.
struct fsm_event
{
    using time_point = std::chrono::steady_clock::time_point;

    enum class kind : std::uint8_t
    {
        start,            ///< The operation begins; `now` is the first attempt's t0.
        reply,            ///< Master `master` answered round `round_id` with `outcome`.
        deadline,         ///< The deadline armed for round `round_id` has passed.
        backoff_elapsed,  ///< The wait_until time of the retry delay has come (acquisition).
        cancel,           ///< The caller cancelled (per-operation cancellation).
        closed,           ///< The client was closed.
        /// Every request of round `round_id` still awaited has left this process and needs
        /// nothing more from it (written to its connection; no NOSCRIPT can need our EVAL):
        /// the masters will execute it even if the client is closed at once (a release).
        handed_off,
        /// The owner asks for the release (a holder's release(), its destructor).
        release,
        /// A waiting acquisition (lock_options::wait) starts behind others of its process
        /// waiting for the same resource: it waits for its turn.
        queued,
        /// The acquisitions queued before this one are gone: it is its turn to compete.
        /// `tracked` true: the one before took the lock (this process holds it now).
        turn,
        /// Master `master` answered the watch of round `round_id`: `value` is the smallest
        /// PTTL of the lock's keys there in ms (-1: a key without expiry; -2: no key left);
        /// `tracked`: the master will push an invalidation when a key changes. `outcome`
        /// failed: the watch failed there (an error, the connection lost).
        watched,
        /// Master `master` says that a watched key changed (a client-tracking invalidation),
        /// or its connection dropped and the watch with it.
        invalidated,
        /// A holder of this process releases the lock this acquisition waits for and offers it
        /// instead (waiting_room::successor): the same key, valid until `until`.
        handed,
    };

    kind type = kind::start;
    time_point now{};
    /// reply, deadline: the id of the round the driver is reporting on, as the action gave it.
    std::uint64_t round_id = 0;
    /// reply: the master's index in [0, N).
    std::size_t master = 0;
    /// reply: the driver's classification of the answer (SET OK: granted, nil: held_by_other,
    /// error or lost connection: failed; for a release any answer will do).
    master_outcome outcome = master_outcome::pending;
    /// reply, granted, of a fenced acquisition's first round: the master's fence counters, one
    /// per resource. They point into the round and are valid during the resume() they are
    /// given to.
    std::span<const std::int64_t> counters{};
    /// watched: the smallest PTTL of the lock's keys on the master (ms; -1 none, -2 no key).
    std::int64_t value = 0;
    /// watched: whether the master tracks the keys for us (an invalidation will come).
    bool tracked = false;
    /// handed: the end of the offered lock's validity.
    time_point until{};

    static fsm_event start(time_point now) noexcept { return {kind::start, now}; }
    static fsm_event reply(std::uint64_t round_id, std::size_t master, master_outcome o,
                           time_point now, std::span<const std::int64_t> counters = {}) noexcept
    {
        return {kind::reply, now, round_id, master, o, counters};
    }
    static fsm_event deadline(std::uint64_t round_id, time_point now) noexcept
    {
        return {kind::deadline, now, round_id};
    }
    static fsm_event backoff_elapsed(time_point now) noexcept
    {
        return {kind::backoff_elapsed, now};
    }
    static fsm_event cancel(time_point now) noexcept { return {kind::cancel, now}; }
    static fsm_event closed(time_point now) noexcept { return {kind::closed, now}; }
    static fsm_event release(time_point now) noexcept { return {kind::release, now}; }
    static fsm_event queued(time_point now) noexcept { return {kind::queued, now}; }
    static fsm_event turn(time_point now, bool taken_before = false) noexcept
    {
        return {.type = kind::turn, .now = now, .tracked = taken_before};
    }
    static fsm_event watched(std::uint64_t round_id, std::size_t master, master_outcome o,
                             std::int64_t pttl, bool tracked, time_point now) noexcept
    {
        return {kind::watched, now, round_id, master, o, {}, pttl, tracked};
    }
    static fsm_event invalidated(std::size_t master, time_point now) noexcept
    {
        return {kind::invalidated, now, 0, master};
    }
    static fsm_event handed(time_point now, time_point valid_until) noexcept
    {
        return {.type = kind::handed, .now = now, .until = valid_until};
    }
    static fsm_event handed_off(std::uint64_t round_id, time_point now) noexcept
    {
        return {kind::handed_off, now, round_id};
    }
};

/// @brief What the driver must do next for an operation.
struct fsm_action
{
    using time_point = std::chrono::steady_clock::time_point;

    enum class kind : std::uint8_t
    {
        /// Nothing to do: keep waiting for the events already expected.
        none,
        /// Send the operation's command to every master, tagged `round_id`, and arm a deadline
        /// at `deadline`: `SET key token NX PX ttl` for an acquisition, the compare-and-PEXPIRE
        /// for an extension, the read of the token's PTTL for a check. `new_token`: draw a fresh token first (an acquisition's every
        /// attempt, the first included: a token is never reused across attempts).
        send_attempt,
        /// Send the release (compare-and-delete with the attempt's token) to the masters in
        /// `to`, tagged `round_id`, and arm a deadline at `deadline`. Only the masters in
        /// `awaited` are waited for: the others of `to` (those that timed out in the attempt)
        /// get the release queued behind their SET all the same, and the masters outside `to`
        /// (those that refused the attempt) get nothing. When nobody is awaited, `deadline` is
        /// the event's own time: the release ends when that deadline is echoed back.
        send_release,
        /// A fenced acquisition's second round: send the commit of fencing token `fence` (set
        /// the counter to it where our key still stands and the counter is below it) to every
        /// master, tagged `round_id`, and arm a deadline at `deadline`.
        send_commit,
        /// A waiting acquisition's watch: ask every master of `awaited` to track the lock's
        /// keys (client tracking), then to say how long they have left (PTTL), tagged
        /// `round_id`; each answers with a watched event, and from then on an invalidated
        /// event when a key changes there. Also arm the fallback: echo backoff_elapsed at
        /// `until`, as wait_until does.
        send_watch,
        /// Wait: echo backoff_elapsed at `until` (or later), replacing any wait armed before.
        /// The acquisition's retry delay; the holder's next extension, retry or loss time.
        wait_until,
        /// The caller's answer. `ec`: empty on success, else why it failed; `valid_until`: on
        /// success, the local time after which the lock must be considered lost. The
        /// per-master outcomes of the decisive round are the machine's last_attempt(). In an
        /// acquisition's try mode `ec` is error::contended when another owner holds the lock:
        /// the async_try_lock driver turns that into an empty optional with no error, because
        /// that is a matter of its handler's signature. The machine is done() then, except
        /// for a release completed at the quorum: its round goes on without the caller until
        /// done() (the driver keeps it until then; see unlock_fsm).
        complete,
    };

    kind type = kind::none;
    /// send_attempt, send_release: the round's id; the driver echoes it in reply and deadline.
    std::uint64_t round_id = 0;
    /// send_attempt: whether to draw a new token.
    bool new_token = false;
    /// send_attempt, send_release: when the round's deadline is due.
    time_point deadline{};
    /// send_release: the masters whose answer ends the release. It points into the machine
    /// and is valid until the machine's next resume(): an action stays trivially copyable and
    /// destructible, so that returning one per event costs next to nothing.
    const master_set* awaited = nullptr;
    /// send_release: the masters it is sent to (a superset of `awaited`); as `awaited`, it
    /// points into the machine.
    const master_set* to = nullptr;
    /// wait_until: when the next attempt may start. send_attempt of a holder: the loss time
    /// (the end of validity), at which backoff_elapsed must be echoed if the round has not
    /// been decided by then.
    time_point until{};
    /// complete: the result.
    error_code ec{};
    /// complete, on success: t0 + ttl - clock_drift(ttl, drift_factor).
    time_point valid_until{};
    /// send_commit: the fencing tokens to commit, one per resource; complete, on success of a
    /// fenced acquisition: the lock's tokens (empty otherwise). They point into the machine and
    /// are valid until its next resume(), as `awaited`.
    std::span<const std::uint64_t> fences{};
    /// The time of the event this action answers, set by fsm_pump: a driver starting a round
    /// gives it as the round's start instead of reading the clock again.
    time_point at{};

    static fsm_action send(std::uint64_t round_id, time_point deadline,
                           bool new_token = false) noexcept
    {
        return {.type = kind::send_attempt,
                .round_id = round_id,
                .new_token = new_token,
                .deadline = deadline};
    }
    static fsm_action wait(time_point until) noexcept
    {
        return {.type = kind::wait_until, .until = until};
    }
    static fsm_action release(std::uint64_t round_id, const master_set& to,
                              const master_set& awaited, time_point deadline) noexcept
    {
        return {.type = kind::send_release,
                .round_id = round_id,
                .deadline = deadline,
                .awaited = &awaited,
                .to = &to};
    }
    static fsm_action commit(std::uint64_t round_id, std::span<const std::uint64_t> fences,
                             time_point deadline) noexcept
    {
        return {.type = kind::send_commit,
                .round_id = round_id,
                .deadline = deadline,
                .fences = fences};
    }
    static fsm_action watch(std::uint64_t round_id, const master_set& awaited,
                            time_point until) noexcept
    {
        return {
            .type = kind::send_watch, .round_id = round_id, .awaited = &awaited, .until = until};
    }
    static fsm_action complete(error_code ec, time_point valid_until = {},
                               std::span<const std::uint64_t> fences = {}) noexcept
    {
        return {.type = kind::complete, .ec = ec, .valid_until = valid_until, .fences = fences};
    }
};

static_assert(std::is_trivially_copyable_v<fsm_action> &&
                  std::is_trivially_destructible_v<fsm_action>,
              "an action is returned on every event: it must stay cheap to make and drop");

/// The masters a release must wait for after `round`: all but those that timed out in it (a
/// master still silent answers the release queued behind its request; one that timed out gets
/// the release all the same, but waiting for it would only add the release's deadline).
inline master_set awaited_after(const quorum_tracker& round)
{
    master_set s(round.masters());
    for (std::size_t i = 0; i < round.masters(); ++i)
        if (round.outcome(i) != master_outcome::timed_out)
            s.insert(i);
    return s;
}

/// The masters an acquisition's failed attempt must be released on: all but those that
/// refused it (held_by_other: SET NX, or the all-or-nothing scripts, set nothing there, so
/// there is nothing of ours to delete). A master that has not answered may still run our SET:
/// the release, queued behind it on the same connection, undoes it.
inline master_set release_targets(const quorum_tracker& attempt)
{
    master_set s(attempt.masters());
    for (std::size_t i = 0; i < attempt.masters(); ++i)
        if (attempt.outcome(i) != master_outcome::held_by_other)
            s.insert(i);
    return s;
}

/// Of release_targets, those the release waits for: all but those that timed out (as
/// awaited_after).
inline master_set release_awaited(const quorum_tracker& attempt)
{
    master_set s = awaited_after(attempt);
    for (std::size_t i = 0; i < attempt.masters(); ++i)
        if (attempt.outcome(i) == master_outcome::held_by_other)
            s.erase(i);
    return s;
}

}  // namespace redlock::detail

#endif
