// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// bench/histogram.hpp, as docs/performance.md ("redlock-bench") describes it: buckets at most
// 1/128 (0.78 %) of their values wide, a percentile never above the exact maximum, every sample
// counted (guarantees.md B11).
#include <catch2/catch.hpp>

#include "../histogram.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

using redlock::bench::histogram_data;
using redlock::bench::histogram_layout;
using redlock::bench::recorder;
using ns = std::chrono::nanoseconds;

std::uint64_t lowest(std::size_t i) { return i == 0 ? 0 : histogram_layout::highest(i - 1) + 1; }

std::uint64_t total_of(const histogram_data& h)
{
    const auto& c = h.counts();
    return std::accumulate(c.begin(), c.end(), std::uint64_t{0});
}

// Samples from 1 ns to 60 s, spread over every power of two, and a few on bucket edges.
std::vector<std::uint64_t> samples(std::size_t n, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> exponent(0.0, 35.8);
    std::vector<std::uint64_t> v;
    for (std::size_t i = 0; i < n; ++i)
        v.push_back(static_cast<std::uint64_t>(std::exp2(exponent(rng))));
    for (std::size_t i : {std::size_t{255}, std::size_t{256}, std::size_t{1000}, std::size_t{3000}})
        v.push_back(histogram_layout::highest(i));
    return v;
}

}  // namespace

TEST_CASE(
    "histogram: the buckets tile 0 to 2^36 - 1 ns, each at most 1/128 (0.78 %) of its values wide")
{
    REQUIRE(histogram_layout::buckets == 3840);
    std::uint64_t expected_lowest = 0;
    for (std::size_t i = 0; i < histogram_layout::buckets; ++i)
    {
        const auto lo = lowest(i), hi = histogram_layout::highest(i);
        REQUIRE(lo == expected_lowest);  // no gap, no overlap
        REQUIRE(hi >= lo);
        REQUIRE(histogram_layout::index(lo) == i);
        REQUIRE(histogram_layout::index(hi) == i);
        const auto width = hi - lo + 1;
        if (lo < histogram_layout::sub_count)
            REQUIRE(width == 1);  // exact below 256 ns
        else
            REQUIRE(width * 128 <= lo);  // width / lowest value <= 1/128
        expected_lowest = hi + 1;
    }
    CHECK(expected_lowest == std::uint64_t{1} << 36);
    // The widest buckets reach 1/128 exactly: 0.78 % is the bound, not a loose one.
    CHECK(histogram_layout::highest(256 + 128) - lowest(256 + 128) + 1 == lowest(256 + 128) / 128);
}

TEST_CASE("histogram: a percentile is the sample's bucket's highest value, within 0.78 %, never "
          "above the maximum")
{
    const auto v = samples(20000, 7);
    histogram_data h;
    for (auto x : v)
        h.add(ns(x));
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const double exact_max_us = static_cast<double>(sorted.back()) / 1000.0;
    CHECK(h.max_us() == exact_max_us);
    CHECK(h.min_us() == static_cast<double>(sorted.front()) / 1000.0);
    for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0})
    {
        INFO("p" << p);
        const auto rank = std::clamp<std::size_t>(
            static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size()))), 1,
            sorted.size());
        const double exact_us = static_cast<double>(sorted[rank - 1]) / 1000.0;
        const double got = h.percentile_us(p);
        CHECK(got >= exact_us);
        CHECK(got <= exact_us * (1.0 + 1.0 / 128) + 1e-9);
        CHECK(got <= exact_max_us);
    }
    // One sample low in a wide bucket: the percentile is clamped to it, not its bucket's top.
    histogram_data one;
    one.add(ns(1'000'001));  // its bucket is 999,424 to 1,003,519 ns
    CHECK(histogram_layout::highest(histogram_layout::index(1'000'001)) > 1'000'001);
    CHECK(one.percentile_us(50) == 1000.001);
    CHECK(one.percentile_us(99.999) == 1000.001);
    CHECK(one.percentile_us(100) == 1000.001);
}

TEST_CASE(
    "histogram: every sample is counted, none dropped, also out of range and through recorders")
{
    const auto v = samples(50000, 11);
    histogram_data h;
    for (auto x : v)
        h.add(ns(x));
    // Out of range: negative counts as 0, beyond 2^36 - 1 ns (68.7 s) as the largest value.
    h.add(ns(-5));
    h.add(std::chrono::duration_cast<ns>(std::chrono::hours(2)));
    const auto n = v.size() + 2;
    CHECK(h.count() == n);
    CHECK(total_of(h) == n);
    CHECK(h.counts()[0] >= 1);
    CHECK(h.counts()[histogram_layout::buckets - 1] >= 1);
    CHECK(h.max_us() == static_cast<double>(histogram_layout::max_value) / 1000.0);

    // Recorders (one per io thread) merged: the same counts as one histogram_data.
    recorder a, b;
    for (std::size_t i = 0; i < v.size(); ++i)
        (i % 2 ? a : b).add(ns(v[i]));
    histogram_data merged;
    a.snapshot_into(merged);
    b.snapshot_into(merged);
    histogram_data direct;
    for (auto x : v)
        direct.add(ns(x));
    CHECK(merged.count() == v.size());
    CHECK(merged.counts() == direct.counts());
    CHECK(merged.max_us() == direct.max_us());
    CHECK(merged.min_us() == direct.min_us());
    CHECK(merged.percentile_us(99) == direct.percentile_us(99));

    // An interval (the progress line): the samples between two snapshots, all of them.
    histogram_data before = direct;
    direct.add(ns(5000));
    direct.add(ns(7000));
    const auto interval = histogram_data::difference(direct, before);
    CHECK(interval.count() == 2);
    CHECK(total_of(interval) == 2);

    histogram_data sum;
    sum.merge(merged);
    sum.merge(interval);
    CHECK(sum.count() == v.size() + 2);
    CHECK(total_of(sum) == v.size() + 2);
}

TEST_CASE("histogram: an empty histogram reports zeros")
{
    const histogram_data h;
    CHECK(h.count() == 0);
    CHECK(h.percentile_us(50) == 0);
    CHECK(h.max_us() == 0);
    CHECK(h.mean_us() == 0);
}
