// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_ACQUIRE_FSM_HPP
#define REDLOCK_SRC_OPERATION_ACQUIRE_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <redlock/error.hpp>
#include <redlock/options.hpp>

#include "algorithm/backoff.hpp"
#include "algorithm/quorum.hpp"
#include "operation/master_set.hpp"

namespace redlock::detail {

/// @brief Something that happened to an acquisition, as its driver saw it.
///
/// Every event carries the time at which it happened (`now`): the machine never reads a
/// clock. Times must not decrease from one event to the next.
struct acquire_event
{
    using time_point = std::chrono::steady_clock::time_point;

    enum class kind : std::uint8_t
    {
        start,            ///< The operation begins; `now` is the first attempt's t0.
        reply,            ///< Master `master` answered round `round_id` with `outcome`.
        deadline,         ///< The deadline armed for round `round_id` has passed.
        backoff_elapsed,  ///< The wait_until time of the retry delay has come.
        cancel,           ///< The caller cancelled (per-operation cancellation).
        closed,           ///< The client was closed.
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

    static acquire_event start(time_point now) noexcept { return {kind::start, now}; }
    static acquire_event reply(std::uint64_t round_id, std::size_t master, master_outcome o,
                                  time_point now) noexcept
    {
        return {kind::reply, now, round_id, master, o};
    }
    static acquire_event deadline(std::uint64_t round_id, time_point now) noexcept
    {
        return {kind::deadline, now, round_id};
    }
    static acquire_event backoff_elapsed(time_point now) noexcept { return {kind::backoff_elapsed, now}; }
    static acquire_event cancel(time_point now) noexcept { return {kind::cancel, now}; }
    static acquire_event closed(time_point now) noexcept { return {kind::closed, now}; }
};

/// @brief What the driver must do next for an acquisition.
struct acquire_action
{
    using time_point = std::chrono::steady_clock::time_point;

    enum class kind : std::uint8_t
    {
        /// Nothing to do: keep waiting for the events already expected.
        none,
        /// Send `SET key token NX PX ttl` to every master, tagged `round_id`, and arm a deadline
        /// at `deadline`. `new_token`: draw a fresh token first (true for every attempt, the
        /// first included: a token is never reused across attempts).
        send_attempt,
        /// Send the release (compare-and-delete with the attempt's token) to every master,
        /// tagged `round_id`, and arm a deadline at `deadline`. Only the masters in `awaited`
        /// are waited for; the others timed out in the attempt and get the release queued
        /// behind their SET all the same (see round::start's `previous`). When nobody is
        /// awaited, `deadline` is the event's own time: the release ends when that deadline
        /// is echoed back.
        send_release,
        /// Wait for the retry delay: echo backoff_elapsed at `until` (or later).
        wait_until,
        /// The acquisition is over. `ec`: empty on success, else why it failed;
        /// `valid_until`: on success, the local time after which the lock must be considered
        /// lost. The per-master outcomes of the decisive attempt are
        /// acquire_fsm::last_attempt(). In try mode `ec` is error::contended when another
        /// owner holds the lock: the async_try_lock driver turns that into an empty optional
        /// with no error, because that is a matter of its handler's signature.
        complete,
    };

    kind type = kind::none;
    /// send_attempt, send_release: the round's id; the driver echoes it in reply and deadline.
    std::uint64_t round_id = 0;
    /// send_attempt: whether to draw a new token.
    bool new_token = false;
    /// send_attempt, send_release: when the round's deadline is due.
    time_point deadline{};
    /// send_release: the masters whose answer ends the release.
    master_set awaited;
    /// wait_until: when the next attempt may start.
    time_point until{};
    /// complete: the result.
    error_code ec;
    /// complete, on success: t0 + ttl - clock_drift(ttl, drift_factor).
    time_point valid_until{};
};

/// @brief The decisions of one Redlock acquisition (async_lock, async_try_lock), as a sans-io
/// state machine: no sockets, no timers, no clock.
///
/// The driver feeds it events (a master's classified answer, a deadline it armed, the end of a
/// retry delay, a cancellation, the client's close) and performs the action each returns.
/// The machine decides exactly as the callback-based `acquire_op` of client.cpp does:
///
/// - an attempt sends SET NX PX to every master at t0 and arms t0 + attempt_timeout_of(o);
///   at that deadline every master still pending counts as timed_out;
/// - the quorum_tracker decides as early as certain. Reached: the lock is granted when
///   remaining_validity(ttl, now - t0, drift_factor) > 0, with valid_until =
///   validity_deadline(t0, ttl, drift_factor); otherwise the attempt fails with
///   error::validity_expired. Failed: the attempt fails with failure_reason();
/// - a failed attempt (no quorum, validity expired, cancelled or closed during it) is always
///   released on every master, with its own deadline (now + release_timeout) that a
///   cancellation does not cut short. When the release is over: cancelled, operation_aborted;
///   closed, connection_closed; try mode, the attempt's error; otherwise the retry_schedule
///   gives a delay (a new attempt with a new token after it) or none (the last real error).
///
/// Each round (attempt or release) has an id, unique within the machine and never 0; replies
/// and deadlines that name another round than the current one are stale and ignored, as are
/// a second answer of one master, an answer of a master the round does not await, and any
/// event after completion. The machine completes exactly once.
///
/// Validation of the options and of the resource names stays with the caller: the machine
/// assumes a valid lock_options.
///
/// @par Per-operation cancellation
/// A cancel event while backing off completes with operation_aborted at once; during an
/// attempt it fails the attempt, releases, then completes with operation_aborted; during a
/// release it completes with operation_aborted once the release is over. Before start it
/// completes at once; after completion it does nothing.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class acquire_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// @param o        The lock's options (ttl, drift, timeouts, retry policy); copied.
    /// @param masters  N, at least 1.
    /// @param seed     Seeds the retry delays' jitter (retry_schedule).
    /// @param try_mode async_try_lock: one attempt, no retry.
    /// @throws std::invalid_argument if masters is 0.
    acquire_fsm(const lock_options& o, std::size_t masters, std::uint64_t seed, bool try_mode);

    /// @brief Takes one event into account and says what to do next.
    acquire_action resume(const acquire_event& ev);

    /// @brief Whether the machine has completed.
    bool done() const noexcept { return phase_ == phase::done; }

    /// @brief The outcomes of the current attempt; once complete, of the decisive one (the
    /// granted attempt, or the last failed one), as they stood when it was decided. Masters
    /// still pending then stay `pending`. Meant for the lock's per-master diagnostics.
    const quorum_tracker& last_attempt() const noexcept { return attempt_; }

    /// @brief Attempts started so far.
    std::uint32_t attempts() const noexcept { return attempts_; }

    /// @brief The current attempt's t0 (the time of the event that started it).
    time_point attempt_started() const noexcept { return t0_; }

private:
    enum class phase : std::uint8_t
    {
        idle,
        attempting,
        releasing,
        backing_off,
        done
    };

    acquire_action begin_attempt(time_point now);
    acquire_action on_attempt_decided(time_point now);
    acquire_action fail_attempt(error_code reason, time_point now);
    acquire_action after_release(time_point now);
    acquire_action complete(error_code ec, time_point valid_until = {});

    acquire_action on_idle(const acquire_event& ev);
    acquire_action on_attempting(const acquire_event& ev);
    acquire_action on_releasing(const acquire_event& ev);
    acquire_action on_backing_off(const acquire_event& ev);

    std::chrono::milliseconds ttl_;
    double drift_factor_;
    std::chrono::milliseconds attempt_timeout_;
    std::chrono::milliseconds release_timeout_;
    retry_schedule retry_;
    quorum_tracker attempt_;
    master_set release_waiting_;
    std::uint64_t round_ = 0;
    time_point start_{};
    time_point t0_{};
    error_code last_error_;
    std::uint32_t attempts_ = 0;
    phase phase_ = phase::idle;
    bool try_mode_;
    bool cancelled_ = false;
    bool closed_ = false;
};

}  // namespace redlock::detail

#endif
