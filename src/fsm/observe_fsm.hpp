// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_FSM_OBSERVE_FSM_HPP
#define REDLOCK_SRC_FSM_OBSERVE_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <redlock/error.hpp>

namespace redlock::detail {

/// What observe_fsm asks its driver to do.
struct observe_action
{
    enum class kind : std::uint8_t
    {
        none,
        /// Ask every master to track the keys (release_watch), and give up waiting for their
        /// answers at `until`.
        arm,
        /// Read the holders (holders_op); its answer comes back as read_answered(read_id, ...).
        read,
        /// Nothing to do until `until` (the next re-read) or a change of the keys.
        wait_until,
        /// Complete with `ec`, and with the last read's holders when `with_read`.
        finish
    };
    kind type = kind::none;
    std::chrono::steady_clock::time_point until{};
    std::uint64_t read_id = 0;
    error_code ec;
    bool with_read = false;
};

/// @brief The decisions of one async_next_holders, as a sans-io state machine, driven by
/// next_holders_op: read who holds a resource until it differs from what the caller saw,
/// never missing a change between a read and the wait that follows it.
///
/// - start: arm (client tracking of the keys asked of every master, until the attempt
///   timeout); a re-read interval that is not positive finishes with invalid_option.
/// - arming: each master's answer to the watch (armed: it tracks the keys). Once a majority
///   tracks them (a change of the holders takes a majority, so one of them will push it),
///   every master answered, or the arming deadline passed: read.
/// - reading: the read's answer. A read that differs from what the caller saw (or the caller's
///   own read had no majority) finishes with it; an error finishes with it, except no_quorum
///   when the caller's read had none either (then it waits: nothing can be told yet). The same
///   holders: arm again when a key changed meanwhile (or the driver re-keyed the watch), else
///   wait until the first holder's validity ends or the re-read interval passes.
/// - waiting: a key's change or the deadline: arm again.
/// - A key's change during arming or reading makes the next wait end at once (arm again).
/// - cancel: operation_aborted; closed: connection_closed; in every phase before the end.
///
/// A read's answer other than the current read's, and every event after the end, are
/// ignored. The machine finishes exactly once.
class observe_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    using duration = std::chrono::steady_clock::duration;

    /// @param masters N, at least 1. @param quorum N / 2 + 1.
    /// @param seen_decided Whether what the caller saw came from a read that a majority
    /// answered. @param reread_every The longest wait between reads.
    /// @param arm_timeout How long the arming waits for the masters' answers.
    observe_fsm(std::size_t masters, std::size_t quorum, bool seen_decided, duration reread_every,
                duration arm_timeout) noexcept;

    /// The start: on a closed client, connection_closed (after the options' check).
    observe_action start(time_point now, bool closed = false);
    /// A master's answer to the watch: `armed` when it tracks the keys now.
    observe_action watched(bool armed, time_point now);
    /// Read `read_id`'s answer: `ec`; whether its holders differ from what the caller saw;
    /// whether the driver re-keyed the watch (a semaphore of other permits than it was told:
    /// the watch must be armed again); `next_expiry`: how long until the first of its
    /// holders' validity ends (or duration::max()).
    observe_action read_answered(std::uint64_t read_id, error_code ec, bool differs, bool rekeyed,
                                 duration next_expiry, time_point now);
    observe_action key_changed(time_point now);
    observe_action deadline(time_point now);
    observe_action cancel();
    observe_action closed();

    bool done() const noexcept { return phase_ == phase::done; }
    /// Whether `read_id` is the read under way (an older one's answer is dropped).
    bool awaits(std::uint64_t read_id) const noexcept
    {
        return phase_ == phase::reading && read_id == reads_;
    }

private:
    enum class phase : std::uint8_t
    {
        idle,
        arming,
        reading,
        waiting,
        done
    };

    observe_action arm(time_point now);
    observe_action read();
    observe_action wait(duration next_expiry, time_point now);
    observe_action finish(error_code ec, bool with_read);

    std::size_t masters_;
    std::size_t quorum_;
    duration reread_every_;
    duration arm_timeout_;
    std::size_t answered_ = 0;
    std::size_t armed_ = 0;
    std::uint64_t reads_ = 0;
    phase phase_ = phase::idle;
    bool seen_decided_;
    bool changed_ = false;
};

}  // namespace redlock::detail

#endif
