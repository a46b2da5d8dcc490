// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_HOLD_FSM_HPP
#define REDLOCK_SRC_OPERATION_HOLD_FSM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <boost/container/small_vector.hpp>

#include <redlock/error.hpp>
#include <redlock/options.hpp>

#include "algorithm/quorum.hpp"
#include "fsm/fsm_vocabulary.hpp"
#include "fsm/master_set.hpp"

namespace redlock::detail {

/// The holder's settings, resolved from hold_options and the lock (see lock_holder).
struct hold_settings
{
    std::chrono::milliseconds ttl{0};
    double drift_factor = 0.01;
    std::chrono::milliseconds attempt_timeout{0};  ///< of each extension round
    std::chrono::milliseconds extend_before{0};    ///< extend this long before the validity ends
    std::chrono::milliseconds release_timeout{0};
    std::uint32_t max_extensions = 0;       ///< 0: no limit
    std::chrono::milliseconds max_hold{0};  ///< from acquisition; 0: no limit
    std::size_t masters = 1;

    /// @brief The settings of a holder of a lock of TTL `ttl` (its acquisition's) on `masters`
    /// masters: the client's `defaults` for the drift, the attempt timeout (attempt_timeout_of)
    /// and the release timeout, `o` for the schedule and the limits. extend_before 0 means
    /// max(ttl / 3, 3 x attempt_timeout).
    static hold_settings resolve(const lock_options& defaults, std::chrono::milliseconds ttl,
                                 std::chrono::milliseconds extend_before,
                                 std::uint32_t max_extensions, std::chrono::milliseconds max_hold,
                                 std::size_t masters);
};

/// What a holder's driver must tell the world after a step, besides the action.
struct hold_notice
{
    enum class kind : std::uint8_t
    {
        extended,       ///< valid_until moved to `valid_until` (extension number `extensions`)
        extend_failed,  ///< an extension round failed with `ec` (a retry may follow)
        lost,           ///< the lock is lost, for reason `ec`: tell the work (loss signal)
        degraded,       ///< after a successful extension, `holding` masters hold the lock
        released,       ///< a requested release ended with `ec` (not after a loss)
    };
    kind type = kind::extended;
    error_code ec;
    std::chrono::steady_clock::time_point valid_until{};
    std::uint32_t extensions = 0;
    std::size_t holding = 0;
};

/// @brief The decisions of a lock_holder (auto-extension), as a sans-io state machine:
/// `resume(event) -> action`, in the vocabulary of fsm_vocabulary.hpp, plus the notices the
/// step produced (take_notices()). Driven by the holder's state in hold.cpp.
///
///     waiting --(its time)--> extending --(quorum, validity > 0)--> waiting (next time)
///                                       --(failed, a retry fits)--> waiting (retry time)
///                                       --(taken over, or no retry fits)--> lost
///             --(limit reached)--> expiring --(valid_until)--> lost (extension_limit)
///     extending --(valid_until passes undecided)--> lost (lock_expired)
///     any --(release)--> releasing --> done;  lost --> releasing (what is still ours) --> done
///     closed: lost (connection_closed) and done without a release round (nothing can be sent)
///
/// One wait at a time (wait_until replaces the one before): the next extension or retry time
/// while waiting, the end of validity while extending (the action's `until`) or expiring.
/// An extension is sent at most once per attempt_timeout and never from inside the step that
/// decided the previous one (a retry is a wait, even if due at once), so a round that fails
/// inside its own start cannot recurse. An extension's validity is measured from the event
/// that sent it (no later than the round's real start: conservative). A successful
/// extension's round goes on until every master answered (deadline): then `degraded` reports
/// how many hold the lock when that number changed.
class hold_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    using notices = boost::container::small_vector<hold_notice, 2>;

    /// @param acquired_at when the lock was acquired (for max_hold).
    /// @param valid_until the lock's validity when the holder takes it.
    /// @throws std::invalid_argument if s.masters is 0.
    hold_fsm(const hold_settings& s, time_point acquired_at, time_point valid_until);

    fsm_action resume(const fsm_event& ev);

    /// The notices of the steps since the last call, oldest first.
    notices take_notices() noexcept { return std::move(notices_); }

    bool done() const noexcept { return phase_ == phase::done; }
    bool releasing() const noexcept { return phase_ == phase::releasing; }
    /// The release's outcomes so far (the quorum of its deletes, as this machine counts it).
    const quorum_tracker& release_outcomes() const noexcept { return release_; }
    time_point valid_until() const noexcept { return valid_until_; }

private:
    enum class phase : std::uint8_t
    {
        idle,
        waiting,
        extending,
        expiring,
        releasing,
        done
    };

    bool limit_reached(time_point now) const noexcept;
    fsm_action schedule_next(time_point now);
    fsm_action on_extension_decided(time_point now);
    fsm_action lose(error_code reason, time_point now);
    fsm_action release(time_point now);
    fsm_action finish(error_code ec);
    void notify(hold_notice::kind k, error_code ec = {});

    hold_settings s_;
    time_point acquired_at_;
    time_point valid_until_;
    time_point extension_sent_{};
    quorum_tracker extension_;
    quorum_tracker release_;
    master_set all_;  // what a release awaits: every master
    notices notices_;
    std::uint64_t round_ = 0;
    std::uint64_t counting_round_ = 0;  // a successful extension still hearing from its masters
    std::uint32_t extensions_ = 0;
    std::size_t holding_;
    phase phase_ = phase::idle;
    bool lost_ = false;
    bool closed_ = false;
};

}  // namespace redlock::detail

#endif
