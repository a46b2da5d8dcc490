// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_RESTART_WATCH_HPP
#define REDLOCK_SRC_ALGORITHM_RESTART_WATCH_HPP

// The delayed restart, enforced by the client (docs/algorithm.md, "Masters that restarted"):
// a master that restarted may have forgotten keys (and fence counters) that other clients
// still count on, so it stays out of every acquisition's quorum until the quarantine has
// passed since its start. No clock is read here: the driver passes the times in.

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>

namespace redlock::detail {

/// @brief One master's restarts, as the client sees them at each (re)connection.
///
/// - The first identity seen is remembered. With `young_is_restarted`, a master first seen
///   with an uptime below the quarantine counts as restarted too (the client cannot tell a
///   fresh deployment from a restart it did not see).
/// - A run_id different from the one remembered is a restart, quarantined until its start +
///   `quarantine`. The start is placed at the latest it can be: `uptime_in_seconds` is the
///   difference of two whole-second times (the server's clock at the INFO, and at its start,
///   both rounded down), so the master may have been up for up to a second less than it says;
///   the start is taken as `now - uptime + 1 s` (or `now`, if sooner), never earlier than it
///   was.
/// - A quarantine of zero or less turns the watch off.
class restart_watch
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    /// How much longer than the truth the reported uptime can be (see above).
    static constexpr std::chrono::seconds uptime_resolution{1};

    /// Takes a connection's identity into account; returns whether it is a restart (a new
    /// quarantine began).
    bool observe(std::string_view run_id, std::chrono::seconds uptime, time_point now,
                 std::chrono::milliseconds quarantine, bool young_is_restarted)
    {
        const bool first = run_id_.empty();
        const auto latest_start = std::min(now - uptime + uptime_resolution, now);
        const bool restarted =
            first ? young_is_restarted && latest_start + quarantine > now : run_id != run_id_;
        run_id_.assign(run_id);
        if (!restarted || quarantine <= std::chrono::milliseconds::zero())
            return false;
        started_ = latest_start;
        until_ = started_ + quarantine;
        ++restarts_;
        return until_ > now;
    }

    /// Whether the master is out of the quorums at `now`.
    bool quarantined(time_point now) const noexcept { return now < until_; }
    /// The end of the current (or last) quarantine; the epoch when there was none.
    time_point until() const noexcept { return until_; }
    /// When the master started, as of its last restart seen.
    time_point started() const noexcept { return started_; }
    /// Restarts seen since the client started.
    unsigned restarts() const noexcept { return restarts_; }

private:
    std::string run_id_;
    time_point started_{};
    time_point until_{};
    unsigned restarts_ = 0;
};

}  // namespace redlock::detail

#endif
