// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_ACQUIRE_FSM_HPP
#define REDLOCK_SRC_OPERATION_ACQUIRE_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <boost/container/small_vector.hpp>

#include <redlock/error.hpp>
#include <redlock/options.hpp>

#include "algorithm/backoff.hpp"
#include "algorithm/lock_timing.hpp"
#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"
#include "fsm/master_set.hpp"

namespace redlock::detail {

/// The acquisition speaks the operations' common vocabulary (fsm_vocabulary.hpp).
using acquire_event = fsm_event;
using acquire_action = fsm_action;

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
///   released on every master where our key may stand (all but those that refused it), with
///   its own deadline (now + release_timeout) that a cancellation does not cut short. When the release is over: cancelled, operation_aborted;
///   closed, connection_closed; try mode, the attempt's error; otherwise the retry_schedule
///   gives a delay (a new attempt with a new token after it) or none (the last real error).
///
/// @par Fencing (lock_options::fencing)
/// The attempt's replies carry each granting master's fence counter as it was before the
/// attempt moved it to its value + 1 (the fenced acquisition script does, where it sets our
/// key). For each resource, t = 1 + the largest counter of the masters counted in the quorum.
/// When every one of them read the same counter (for every resource), t stands on each of
/// them already: the lock is granted at once, with fencing token t, as an unfenced one would
/// be. Otherwise a second round commits t (send_commit, deadline now + attempt_timeout, no
/// later than the validity's end). A master commits (granted) when our key still stands there
/// and its counter is below t, or is t by our own first round. A majority of commits and a
/// validity still positive (from the attempt's t0) grant the lock with fencing token t; a
/// commit round that fails or ends too late fails the attempt like a first round would
/// (released everywhere, then a retry). docs/algorithm.md argues why this orders holders.
///
/// @par Waiting for the release (lock_options::wait, not in try mode)
/// An attempt that failed because other owners hold the resource (error::contended) is not
/// retried after a blind delay: once released, the machine asks the masters that refused it to
/// watch the keys (send_watch: client tracking, then each key's PTTL) and waits. It tries again
/// as soon as enough of them have let go (an invalidated event, or a watch answering that no
/// key is left) for a quorum to be possible, and never later than a fallback: the smallest
/// PTTL the watch saw plus a little jitter (the keys expire then), or, on a master that cannot
/// track, the retry delay (it is polled as before). An attempt that fails for another reason
/// is retried as without waiting (max_attempts, retry_delay); attempts refused by holders do
/// not count toward max_attempts. The wait ends at start + wait (and max_wait, when set):
/// error::contended. A waiting acquisition that starts behind others of its process on the
/// same resource (queued event) waits for its turn (turn event) before its first attempt,
/// within the same bound; when the one before took the lock, the turn starts a wait for that
/// lock's release on every master (reported by the driver as invalidated events; no watch is
/// sent: the keys are this process's own), or its TTL, rather than an attempt that this
/// process's own keys would refuse.
///
/// @par Hand-off within a process (lock_options::handoff)
/// While it waits for its turn, waits for a release, or backs off between attempts, a waiting
/// acquisition may be offered the lock of a holder of its process that releases it (handed
/// event, with that lock's end of validity). It takes it, completing at once with that
/// validity, when at least ttl / 2 of it is left, the wait is not over, and it is not fenced;
/// otherwise it declines and goes on as before. Never during a round: an attempt in flight
/// might be granted somewhere and would need its release.
///
/// Each round (attempt, commit or release) has an id, unique within the machine and never 0; replies
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
    /// @param resources The lock's resources (a fenced lock commits one token for each).
    /// @throws std::invalid_argument if masters is 0.
    acquire_fsm(const lock_options& o, std::size_t masters, std::uint64_t seed, bool try_mode,
                std::size_t resources = 1);

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

    /// @brief The outcomes of the current (or decisive) attempt's commit round, when fencing.
    const quorum_tracker& last_commit() const noexcept { return commit_; }

private:
    enum class phase : std::uint8_t
    {
        idle,
        attempting,
        committing,
        releasing,
        backing_off,
        queued,   ///< behind others of the process (wait mode): waiting for the turn event
        waiting,  ///< refused by holders (wait mode): watching for their release
        done
    };

    acquire_action begin_attempt(time_point now);
    acquire_action on_attempt_decided(time_point now);
    acquire_action on_commit_decided(time_point now);
    acquire_action grant_if_valid(time_point now, std::span<const std::uint64_t> fences);
    acquire_action fail_attempt(error_code reason, time_point now);
    acquire_action after_release(time_point now);
    acquire_action complete(error_code ec, time_point valid_until = {});

    acquire_action on_idle(const acquire_event& ev);
    acquire_action on_attempting(const acquire_event& ev);
    acquire_action on_committing(const acquire_event& ev);
    /// The cancellation and the close of the client during a round of the attempt.
    acquire_action on_interrupted(const acquire_event& ev);
    /// Records a reply or the deadline of `round` (the current one) in `q`; true when it
    /// changed q's decision.
    bool record(quorum_tracker& q, const acquire_event& ev);
    acquire_action on_releasing(const acquire_event& ev);
    acquire_action on_backing_off(const acquire_event& ev);
    acquire_action on_queued(const acquire_event& ev);
    acquire_action on_waiting(const acquire_event& ev);
    /// After the release of an attempt refused by holders: the watch of the masters that
    /// refused it, or the end of the wait. `all_masters`: this process holds the keys; every
    /// master is blocked until the driver reports this process's release, and no watch is sent.
    acquire_action begin_wait(time_point now, bool all_masters = false);
    /// A holder of this process offers its lock (handed event): completes with it, or
    /// declines (nothing) and goes on as it was.
    acquire_action take_handed(const acquire_event& ev);
    /// A refusing master let go: try again if a quorum is possible now.
    acquire_action unblock(std::size_t master, time_point now);
    /// The fallback moves to `at` (plus jitter) if that is earlier.
    acquire_action fall_back_at(time_point at);
    /// Jitter for the fallback: a few milliseconds, so that waiters do not retry in lockstep.
    std::chrono::milliseconds fallback_jitter();

    lock_timing timing_;
    retry_schedule retry_;
    quorum_tracker attempt_;
    quorum_tracker commit_;
    master_set release_to_;       // where the release goes (release_targets)
    master_set release_waiting_;  // of those, the ones still awaited
    // Fencing: per resource, the largest and the smallest counter of the current attempt's
    // granting masters, and the tokens committed (largest + 1).
    boost::container::small_vector<std::int64_t, 4> largest_;
    boost::container::small_vector<std::int64_t, 4> smallest_;
    boost::container::small_vector<std::uint64_t, 4> fences_;
    // Waiting (lock_options::wait): the masters still holding the keys against us, when to try
    // again at the latest, and when the wait ends. Nothing here allocates until a wait begins.
    master_set blocked_;
    time_point fallback_{};
    time_point wait_end_{};
    std::chrono::milliseconds wait_;
    std::chrono::milliseconds max_wait_;
    std::chrono::milliseconds poll_delay_;
    std::chrono::milliseconds poll_jitter_;
    std::uint64_t seed_;
    std::optional<xoshiro256ss> jitter_;
    std::uint64_t round_ = 0;
    time_point start_{};
    time_point t0_{};
    error_code last_error_;
    std::uint32_t attempts_ = 0;
    phase phase_ = phase::idle;
    bool try_mode_;
    bool fencing_;
    std::uint32_t permits_;  // lock_options::permits: more than 1, a semaphore
    bool waits_;
    bool handoff_;
    bool cancelled_ = false;
    bool closed_ = false;
};

}  // namespace redlock::detail

#endif
