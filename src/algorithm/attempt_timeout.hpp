// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_ATTEMPT_TIMEOUT_HPP
#define REDLOCK_SRC_ALGORITHM_ATTEMPT_TIMEOUT_HPP

#include <algorithm>
#include <chrono>

#include <redlock/options.hpp>

namespace redlock::detail {

/// @brief How long one attempt (or extension round) waits for the masters' answers.
///
/// `o.attempt_timeout` when set; otherwise ttl / 20 clamped to [10 ms, 200 ms]: small against
/// the TTL, as the spec asks, so that a silent master costs little validity, yet many round
/// trips long.
inline std::chrono::milliseconds attempt_timeout_of(const lock_options& o) noexcept
{
    if (o.attempt_timeout.count() > 0)
        return o.attempt_timeout;
    return std::clamp(o.ttl / 20, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
}

}  // namespace redlock::detail

#endif
