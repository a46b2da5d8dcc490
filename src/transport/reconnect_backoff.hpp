// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_TRANSPORT_RECONNECT_BACKOFF_HPP
#define REDLOCK_SRC_TRANSPORT_RECONNECT_BACKOFF_HPP

#include <algorithm>
#include <chrono>
#include <random>

namespace redlock::detail {

/// @brief The waits between a connection's attempts (connection_options::reconnect_min_delay,
/// reconnect_max_delay): exponential backoff with jitter, sans-io.
///
/// Each wait is a uniform draw from [d/2, d], d the current delay, which then doubles up to
/// the maximum; reset() brings it back to the minimum (after a connection the master
/// answered on). The jitter spreads the reconnections of many clients to a master that
/// restarted; it is not security-sensitive.
class reconnect_backoff
{
public:
    using duration = std::chrono::milliseconds;

    reconnect_backoff(duration min_delay, duration max_delay) noexcept
        : min_(min_delay),
          max_(std::max(min_delay, max_delay)),
          delay_(min_delay)
    {}

    /// The wait before the next attempt, drawn with `rng`; the delay then doubles.
    template <class UniformRandomBitGenerator>
    duration next(UniformRandomBitGenerator& rng)
    {
        const auto d = delay_.count();
        std::uniform_int_distribution<long long> draw(d / 2, d);
        delay_ = std::min(delay_ * 2, max_);
        return duration(draw(rng));
    }

    /// Back to the shortest delay.
    void reset() noexcept { delay_ = min_; }

    /// The delay the next wait is drawn under.
    duration delay() const noexcept { return delay_; }

private:
    duration min_;
    duration max_;
    duration delay_;
};

}  // namespace redlock::detail

#endif
