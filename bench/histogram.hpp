// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// A log-linear latency histogram in the manner of HdrHistogram: every sample is counted, none
// is dropped or subsampled, and percentiles are exact up to the bucket width.
//
// Written here, not taken from a library: Debian has no C or C++ HdrHistogram package, and
// this sits on the measurement path (a few relaxed atomic stores per sample, no allocation),
// where a general-purpose statistics library would cost more than what it measures.
#ifndef REDLOCK_BENCH_HISTOGRAM_HPP
#define REDLOCK_BENCH_HISTOGRAM_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <limits>

namespace redlock::bench {

/// @brief Bucket layout shared by histogram_data and recorder (values in nanoseconds).
///
/// Values below 2^sub_bits ns get a bucket each; above, every power of two is split into
/// 2^(sub_bits-1) equal buckets, so a bucket is at most 1/128 (0.78 %) of its values wide.
/// Values from 1 ns up to 2^max_bits ns (68.7 s) are kept; larger ones count as 2^max_bits - 1.
/// 3,840 counters in all (30 KiB).
struct histogram_layout
{
    static constexpr int sub_bits = 8;
    static constexpr int max_bits = 36;
    static constexpr std::uint64_t sub_count = std::uint64_t{1} << sub_bits;  // 256
    static constexpr std::uint64_t half = sub_count / 2;                      // 128
    static constexpr std::uint64_t max_value = (std::uint64_t{1} << max_bits) - 1;
    static constexpr std::size_t buckets = sub_count + (max_bits - sub_bits) * half;

    static constexpr std::size_t index(std::uint64_t v) noexcept
    {
        v = std::min(v, max_value);
        if (v < sub_count)
            return static_cast<std::size_t>(v);
        const int msb = static_cast<int>(std::bit_width(v)) - 1;  // >= sub_bits
        const int shift = msb - (sub_bits - 1);  // keeps the top sub_bits bits: [half, sub_count)
        return static_cast<std::size_t>(sub_count + static_cast<std::uint64_t>(shift - 1) * half +
                                        ((v >> shift) - half));
    }

    /// The largest value that lands in bucket `i` (HdrHistogram's "highest equivalent value").
    static constexpr std::uint64_t highest(std::size_t i) noexcept
    {
        if (i < sub_count)
            return i;
        const std::uint64_t j = i - sub_count;
        const int shift = static_cast<int>(j / half) + 1;
        const std::uint64_t lower = (half + j % half) << shift;
        return lower + (std::uint64_t{1} << shift) - 1;
    }
};

static_assert(histogram_layout::index(255) == 255);
static_assert(histogram_layout::index(256) == 256);
static_assert(histogram_layout::highest(256) == 257);
static_assert(histogram_layout::index(histogram_layout::max_value) ==
              histogram_layout::buckets - 1);
static_assert(histogram_layout::highest(histogram_layout::buckets - 1) ==
              histogram_layout::max_value);

/// @brief Plain counts: merged from recorders, subtracted for an interval, queried.
class histogram_data
{
public:
    void add(std::chrono::nanoseconds d) noexcept
    {
        const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(d.count(), 0));
        ++counts_[histogram_layout::index(v)];
        ++total_;
        sum_ns_ += static_cast<double>(v);
        max_ns_ = std::max(max_ns_, std::min(v, histogram_layout::max_value));
        min_ns_ = std::min(min_ns_, std::min(v, histogram_layout::max_value));
    }

    void merge(const histogram_data& o) noexcept
    {
        for (std::size_t i = 0; i < counts_.size(); ++i)
            counts_[i] += o.counts_[i];
        total_ += o.total_;
        sum_ns_ += o.sum_ns_;
        max_ns_ = std::max(max_ns_, o.max_ns_);
        min_ns_ = std::min(min_ns_, o.min_ns_);
    }

    /// The samples of `now` that are not in `before` (an interval). Min and max are those of
    /// the interval's buckets, not exact.
    static histogram_data difference(const histogram_data& now,
                                     const histogram_data& before) noexcept
    {
        histogram_data d;
        for (std::size_t i = 0; i < d.counts_.size(); ++i)
        {
            d.counts_[i] = now.counts_[i] - before.counts_[i];
            if (d.counts_[i])
            {
                d.max_ns_ = histogram_layout::highest(i);
                d.min_ns_ = std::min(d.min_ns_, histogram_layout::highest(i));
            }
        }
        d.total_ = now.total_ - before.total_;
        d.sum_ns_ = now.sum_ns_ - before.sum_ns_;
        return d;
    }

    std::uint64_t count() const noexcept { return total_; }

    /// p in [0, 100], in microseconds: the highest value equivalent to the sample of rank
    /// ceil(p/100 * count) (at least 1), never above the exact maximum. 0 when empty.
    double percentile_us(double p) const noexcept
    {
        if (total_ == 0)
            return 0;
        if (p >= 100)
            return max_us();
        auto rank =
            static_cast<std::uint64_t>(p / 100.0 * static_cast<double>(total_) + 0.999999999);
        rank = std::clamp<std::uint64_t>(rank, 1, total_);
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < counts_.size(); ++i)
        {
            seen += counts_[i];
            if (seen >= rank)
                return static_cast<double>(std::min(histogram_layout::highest(i), max_ns_)) /
                       1000.0;
        }
        return max_us();
    }

    double max_us() const noexcept { return total_ ? static_cast<double>(max_ns_) / 1000.0 : 0.0; }
    double min_us() const noexcept { return total_ ? static_cast<double>(min_ns_) / 1000.0 : 0.0; }
    double mean_us() const noexcept
    {
        return total_ ? sum_ns_ / static_cast<double>(total_) / 1000.0 : 0.0;
    }

    const std::array<std::uint64_t, histogram_layout::buckets>& counts() const noexcept
    {
        return counts_;
    }

private:
    friend class recorder;
    std::array<std::uint64_t, histogram_layout::buckets> counts_{};
    std::uint64_t total_ = 0;
    double sum_ns_ = 0;
    std::uint64_t max_ns_ = 0;
    std::uint64_t min_ns_ = std::numeric_limits<std::uint64_t>::max();
};

/// @brief A histogram written by ONE thread and read by others at any time.
///
/// The single writer updates each counter with a relaxed load and store (no locked
/// instruction on the hot path); readers see each counter whole, possibly a few samples behind.
/// Read the final counts after synchronising with the writer (e.g. thread join, or an
/// acquire/release handshake).
class recorder
{
public:
    void add(std::chrono::nanoseconds d) noexcept
    {
        const auto v = std::min(static_cast<std::uint64_t>(std::max<std::int64_t>(d.count(), 0)),
                                histogram_layout::max_value);
        bump(counts_[histogram_layout::index(v)]);
        bump(total_);
        sum_ns_.store(sum_ns_.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
        if (v > max_ns_.load(std::memory_order_relaxed))
            max_ns_.store(v, std::memory_order_relaxed);
        if (v < min_ns_.load(std::memory_order_relaxed))
            min_ns_.store(v, std::memory_order_relaxed);
    }

    /// Adds this recorder's counts to `out`.
    void snapshot_into(histogram_data& out) const noexcept
    {
        for (std::size_t i = 0; i < counts_.size(); ++i)
            out.counts_[i] += counts_[i].load(std::memory_order_relaxed);
        const auto total = total_.load(std::memory_order_relaxed);
        out.total_ += total;
        out.sum_ns_ += static_cast<double>(sum_ns_.load(std::memory_order_relaxed));
        if (total)
        {
            out.max_ns_ = std::max(out.max_ns_, max_ns_.load(std::memory_order_relaxed));
            out.min_ns_ = std::min(out.min_ns_, min_ns_.load(std::memory_order_relaxed));
        }
    }

private:
    static void bump(std::atomic<std::uint64_t>& c) noexcept
    {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

    std::array<std::atomic<std::uint64_t>, histogram_layout::buckets> counts_{};
    std::atomic<std::uint64_t> total_{0};
    std::atomic<std::uint64_t> sum_ns_{0};
    std::atomic<std::uint64_t> max_ns_{0};
    std::atomic<std::uint64_t> min_ns_{std::numeric_limits<std::uint64_t>::max()};
};

}  // namespace redlock::bench

#endif
