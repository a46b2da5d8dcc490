// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_LOCK_TIMING_HPP
#define REDLOCK_SRC_ALGORITHM_LOCK_TIMING_HPP

// The times that decide a round that sets keys (an acquisition, an extension): the TTL and
// drift that bound its validity, its attempt deadline, and the deadline of the release after
// a failure. No clock is read: the times are passed in.

#include <chrono>

#include <redlock/options.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/validity.hpp"

namespace redlock::detail {

struct lock_timing
{
    using time_point = std::chrono::steady_clock::time_point;

    std::chrono::milliseconds ttl;
    double drift_factor;
    std::chrono::milliseconds attempt_timeout;
    std::chrono::milliseconds release_timeout;

    /// The timing of the lock options `o` (the attempt timeout derived when it is 0).
    static lock_timing of(const lock_options& o) noexcept
    {
        return {o.ttl, o.drift_factor, attempt_timeout_of(o), o.release_timeout};
    }

    /// Whether keys set by a round started at `t0` still leave validity at `now`.
    bool valid_at(time_point t0, time_point now) const noexcept
    {
        return remaining_validity(ttl, now - t0, drift_factor) > time_point::duration::zero();
    }
    /// The end of that validity: t0 + ttl - drift.
    time_point valid_until(time_point t0) const noexcept
    {
        return validity_deadline(t0, ttl, drift_factor);
    }
    /// A release's deadline: `now` when it awaits nobody (it ends when that deadline is
    /// echoed), else now + release_timeout.
    time_point release_deadline(time_point now, bool awaits_someone) const noexcept
    {
        return awaits_someone ? now + release_timeout : now;
    }
};

}  // namespace redlock::detail

#endif
