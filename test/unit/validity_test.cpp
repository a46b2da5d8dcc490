// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/validity.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <limits>

using namespace std::chrono_literals;
using redlock::detail::clock_drift;
using redlock::detail::remaining_validity;
using redlock::detail::validity_deadline;
using steady = std::chrono::steady_clock;

// Usable at compile time.
static_assert(clock_drift(10000ms, 0.01) == 102000us);
static_assert(remaining_validity(10000ms, 5ms, 0.01) == 9893ms);
static_assert(validity_deadline(steady::time_point{}, 30000ms, 0.01) ==
              steady::time_point{} + 29698ms);

TEST_CASE("validity: clock_drift = ttl * factor + 2 ms, rounded up to microseconds", "[validity]")
{
    CHECK(clock_drift(10000ms, 0.01) == 102000us);
    CHECK(clock_drift(30000ms, 0.01) == 302000us);
    CHECK(clock_drift(1000ms, 0.001) == 3000us);
    CHECK(clock_drift(100ms, 0.1) == 12000us);
    CHECK(clock_drift(3ms, 1.0 / 3.0) == 3000us);
    CHECK(clock_drift(7ms, 0.3) == 4100us);

    SECTION("no drift leaves the fixed 2 ms")
    {
        CHECK(clock_drift(10000ms, 0.0) == 2000us);
        CHECK(clock_drift(0ms, 0.01) == 2000us);
    }
    SECTION("fractions of a microsecond round up")
    {
        CHECK(clock_drift(1ms, 0.0001) == 2001us);     // 0.1 us
        CHECK(clock_drift(1ms, 0.0015) == 2002us);     // 1.5 us
        CHECK(clock_drift(3ms, 0.00001) == 2001us);    // 0.03 us
        CHECK(clock_drift(1ms, 0.000999) == 2001us);   // 0.999 us
        CHECK(clock_drift(1ms, 0.0010001) == 2002us);  // 1.0001 us
    }
    SECTION("a negative or NaN factor counts as 0")
    {
        CHECK(clock_drift(10000ms, -0.5) == 2000us);
        CHECK(clock_drift(10000ms, std::numeric_limits<double>::quiet_NaN()) == 2000us);
    }
    SECTION("absurd values saturate instead of overflowing")
    {
        const auto d = clock_drift(std::chrono::milliseconds::max(), 10.0);
        CHECK(d > 0us);
        CHECK(clock_drift(1000ms, std::numeric_limits<double>::infinity()) > 0us);
    }
}

TEST_CASE("validity: remaining_validity = ttl - elapsed - drift", "[validity]")
{
    SECTION("exact arithmetic in steady_clock ticks")
    {
        CHECK(remaining_validity(10000ms, 0ms, 0.01) == 9898ms);
        CHECK(remaining_validity(10000ms, 5ms, 0.01) == 9893ms);
        CHECK(remaining_validity(10000ms, 1234567ns, 0.01) == 9898ms - 1234567ns);
        CHECK(remaining_validity(1000ms, 250ms, 0.0) == 748ms);
        CHECK(remaining_validity(1ms, 0ns, 0.0001) == 1ms - 2001us);
    }
    SECTION("zero and negative results are reported as such")
    {
        CHECK(remaining_validity(1000ms, 988ms, 0.01) == 0ns);  // 1000 - 988 - 12
        CHECK(remaining_validity(1000ms, 988ms + 1ns, 0.01) == -1ns);
        CHECK(remaining_validity(1000ms, 2000ms, 0.01) == -1012ms);
        CHECK(remaining_validity(1ms, 0ns, 0.0) == -1ms);  // the 2 ms exceed a 1 ms TTL
    }
    SECTION("drift in microseconds is kept exactly")
    {
        // 7 ms * 0.3 = 2.1 ms -> 4.1 ms of drift
        CHECK(remaining_validity(7ms, 0ns, 0.3) == 2900us);
    }
}

TEST_CASE("validity: validity_deadline = t0 + ttl - drift", "[validity]")
{
    const steady::time_point t0{123456789ns};
    CHECK(validity_deadline(t0, 10000ms, 0.01) == t0 + 9898ms);
    CHECK(validity_deadline(t0, 7ms, 0.3) == t0 + 2900us);
    CHECK(validity_deadline(t0, 1ms, 0.0) == t0 - 1ms);

    // The deadline and the remaining validity agree for any elapsed time.
    for (steady::duration elapsed :
         {steady::duration{0ns}, steady::duration{1ns}, steady::duration{999999ns},
          steady::duration{5ms}, steady::duration{9898ms}, steady::duration{20s}})
    {
        const auto decided = t0 + elapsed;
        CHECK(validity_deadline(t0, 10000ms, 0.01) - decided ==
              remaining_validity(10000ms, elapsed, 0.01));
    }
}
