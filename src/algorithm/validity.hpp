// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_VALIDITY_HPP
#define REDLOCK_SRC_ALGORITHM_VALIDITY_HPP

// The Redlock validity rule: a lock taken with time-to-live TTL at local time t0 is held,
// at best, until t0 + TTL - drift, where drift = TTL * drift_factor + 2 ms compensates for
// the masters' clocks running at slightly different rates than ours (redlock-spec.md, "Is
// the Algorithm Asynchronous?"; the 2 ms is the spec's fixed allowance for timer precision).

#include <chrono>
#include <cstdint>

namespace redlock::detail {

/// @brief The clock drift allowance: ttl * drift_factor + 2 ms, rounded up to microseconds.
///
/// A negative or NaN drift_factor counts as 0 (the 2 ms remain). The product is computed in
/// floating point; a relative tolerance of 1e-12 keeps decimal factors such as 0.01 from
/// gaining a spurious microsecond from binary rounding (an error below a nanosecond for any
/// TTL under 11 days, far less than the 2 ms margin).
constexpr std::chrono::microseconds clock_drift(std::chrono::milliseconds ttl,
                                                double drift_factor) noexcept
{
    using std::chrono::microseconds;
    constexpr std::int64_t fixed_us = 2000;
    // About 31 years: beyond any real TTL, and small enough that the result still fits
    // in steady_clock's nanoseconds (and the conversion below stays defined, +inf too).
    constexpr double cap_us = 1.0e15;

    double us = static_cast<double>(ttl.count()) * 1000.0 * drift_factor;
    if (!(us > 0.0))  // also NaN
        return microseconds{fixed_us};
    if (us >= cap_us)
        return microseconds{static_cast<std::int64_t>(cap_us) + fixed_us};
    us -= us * 1e-12;
    auto whole = static_cast<std::int64_t>(us);
    if (static_cast<double>(whole) < us)
        ++whole;
    return microseconds{whole + fixed_us};
}

/// @brief The validity left after acquiring: ttl - elapsed - clock_drift(ttl, drift_factor).
///
/// May be zero or negative: the majority was reached too late and the caller must not report
/// success (it releases and reports error::validity_expired).
///
/// @param ttl          The TTL sent with SET PX.
/// @param elapsed      Time from just before the first request was sent to the decision.
/// @param drift_factor Fraction of the TTL allowed for clock drift (e.g. 0.01).
constexpr std::chrono::steady_clock::duration remaining_validity(
    std::chrono::milliseconds ttl, std::chrono::steady_clock::duration elapsed,
    double drift_factor) noexcept
{
    // Brace conversions: they compile only where exact, so no precision is lost silently.
    return std::chrono::steady_clock::duration{ttl} - elapsed -
           std::chrono::steady_clock::duration{clock_drift(ttl, drift_factor)};
}

/// @brief The local time after which the lock must be considered lost:
/// t0 + ttl - clock_drift(ttl, drift_factor).
///
/// @param t0  steady_clock::now() taken just before the first request was sent (not when the
///            replies arrived: the masters' TTLs started no earlier than that).
constexpr std::chrono::steady_clock::time_point validity_deadline(
    std::chrono::steady_clock::time_point t0, std::chrono::milliseconds ttl,
    double drift_factor) noexcept
{
    return t0 + std::chrono::steady_clock::duration{ttl} -
           std::chrono::steady_clock::duration{clock_drift(ttl, drift_factor)};
}

}  // namespace redlock::detail

#endif
