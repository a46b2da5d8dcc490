// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// A connection's waits between attempts (src/transport/reconnect_backoff.hpp): each drawn from
// [d/2, d], d doubling from the minimum to the maximum, back to the minimum on reset().
#include "transport/reconnect_backoff.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace std::chrono_literals;
using redlock::detail::reconnect_backoff;

TEST_CASE(
    "reconnect_backoff: d doubles from the minimum to the maximum, each wait drawn from [d/2, d]",
    "[reconnect_backoff]")
{
    std::mt19937_64 rng(20261127);
    reconnect_backoff b(50ms, 2000ms);
    const std::chrono::milliseconds expected[] = {50ms,  100ms,  200ms,  400ms,
                                                  800ms, 1600ms, 2000ms, 2000ms};
    for (const auto d : expected)
    {
        CAPTURE(d.count());
        CHECK(b.delay() == d);
        const auto w = b.next(rng);
        CHECK(w >= d / 2);
        CHECK(w <= d);
    }
    b.reset();
    CHECK(b.delay() == 50ms);
    (void)b.next(rng);
    CHECK(b.delay() == 100ms);
}

TEST_CASE("reconnect_backoff: the draws cover [d/2, d] uniformly", "[reconnect_backoff]")
{
    // 20,000 draws at d = 1000 ms: both ends are reached within 1 %, each half gets about half.
    std::mt19937_64 rng(7);
    long long lowest = 1000, highest = 0, lower_half = 0;
    constexpr int n = 20000;
    for (int i = 0; i < n; ++i)
    {
        reconnect_backoff b(1000ms, 1000ms);
        const long long w = b.next(rng).count();
        lowest = std::min(lowest, w);
        highest = std::max(highest, w);
        lower_half += w < 750 ? 1 : 0;
    }
    CHECK(lowest >= 500);
    CHECK(lowest <= 505);
    CHECK(highest <= 1000);
    CHECK(highest >= 995);
    CHECK(lower_half > n * 45 / 100);
    CHECK(lower_half < n * 55 / 100);
}

TEST_CASE("reconnect_backoff: a maximum below the minimum is the minimum", "[reconnect_backoff]")
{
    std::mt19937_64 rng(1);
    reconnect_backoff b(300ms, 100ms);
    for (int i = 0; i < 3; ++i)
    {
        CHECK(b.delay() == 300ms);
        const auto w = b.next(rng);
        CHECK(w >= 150ms);
        CHECK(w <= 300ms);
    }
}
