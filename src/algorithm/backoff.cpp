// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/backoff.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace redlock::detail {

bool validate(const retry_policy& policy, std::string& why)
{
    using std::chrono::milliseconds;
    if (policy.max_attempts < 1)
        why = "max_attempts must be at least 1 (the first attempt counts)";
    else if (policy.base_delay < milliseconds::zero())
        why = "base_delay must not be negative (got " + std::to_string(policy.base_delay.count()) +
              " ms)";
    else if (policy.jitter < milliseconds::zero())
        why = "jitter must not be negative (got " + std::to_string(policy.jitter.count()) + " ms)";
    else if (policy.max_total_wait < milliseconds::zero())
        why = "max_total_wait must not be negative (got " +
              std::to_string(policy.max_total_wait.count()) + " ms; 0 means no budget)";
    else
    {
        why.clear();
        return true;
    }
    return false;
}

std::uint64_t splitmix64(std::uint64_t& state) noexcept
{
    std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

xoshiro256ss::xoshiro256ss(std::uint64_t seed) noexcept
{
    // splitmix64 never yields four zero words in a row, the one state xoshiro cannot leave.
    for (auto& word : s_)
        word = splitmix64(seed);
}

std::uint64_t xoshiro256ss::operator()() noexcept
{
    const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
}

std::uint64_t xoshiro256ss::uniform_inclusive(std::uint64_t bound) noexcept
{
    if (bound == std::numeric_limits<std::uint64_t>::max())
        return (*this)();
    // Rejection below 2^64 mod range keeps every value equally likely; the loop runs more
    // than once with probability range / 2^64, i.e. practically never for delays.
    const std::uint64_t range = bound + 1;
    const std::uint64_t threshold = (0 - range) % range;
    for (;;)
    {
        const std::uint64_t r = (*this)();
        if (r >= threshold)
            return r % range;
    }
}

retry_schedule::retry_schedule(const retry_policy& policy, std::uint64_t seed) noexcept
    : policy_(policy),
      rng_(seed)
{}

std::optional<std::chrono::milliseconds> retry_schedule::next_delay(
    std::chrono::steady_clock::duration elapsed_since_start) noexcept
{
    using std::chrono::milliseconds;
    if (attempts_ >= policy_.max_attempts)
        return std::nullopt;

    // An unvalidated policy with negative durations degrades to no wait rather than UB.
    const auto base = std::max(policy_.base_delay, milliseconds::zero());
    const auto jitter = std::max(policy_.jitter, milliseconds::zero());
    const auto extra = rng_.uniform_inclusive(static_cast<std::uint64_t>(jitter.count()));
    const milliseconds delay = base + milliseconds{static_cast<milliseconds::rep>(extra)};

    if (policy_.max_total_wait > milliseconds::zero())
    {
        const auto elapsed =
            std::max(elapsed_since_start, std::chrono::steady_clock::duration::zero());
        if (elapsed + delay > policy_.max_total_wait)
            return std::nullopt;
    }
    ++attempts_;
    return delay;
}

}  // namespace redlock::detail
