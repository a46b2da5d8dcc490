// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_BACKOFF_HPP
#define REDLOCK_SRC_ALGORITHM_BACKOFF_HPP

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace redlock::detail {

/// @brief How often and how long to wait between acquisition attempts.
///
/// The delay is random so that clients that failed together (split vote) do not retry in
/// lockstep (redlock-spec.md, "Retry on Failure").
struct retry_policy
{
    /// Attempts in total, the first included; at least 1.
    std::uint32_t max_attempts = 3;
    /// The fixed part of each delay.
    std::chrono::milliseconds base_delay{50};
    /// Each delay adds a uniform draw from [0, jitter].
    std::chrono::milliseconds jitter{100};
    /// Total time budget from the start of the first attempt; 0: no budget.
    std::chrono::milliseconds max_total_wait{0};
};

/// @brief Checks a retry_policy: max_attempts >= 1 and no negative duration.
/// @returns true if valid; otherwise false with `why` naming the field.
bool validate(const retry_policy& policy, std::string& why);

/// @brief splitmix64 (Steele, Lea & Flood): advances `state` and returns the next output.
///
/// Used to expand a 64-bit seed into xoshiro256**'s state, as its authors recommend.
std::uint64_t splitmix64(std::uint64_t& state) noexcept;

/// @brief xoshiro256** (Blackman & Vigna), seeded through splitmix64.
///
/// Small, fast and statistically sound for jitter; not cryptographic (lock tokens come from
/// token_source, never from here).
class xoshiro256ss
{
public:
    /// @brief Expands `seed` into the 256-bit state with splitmix64 (so any seed, 0 included,
    /// gives a valid non-zero state).
    explicit xoshiro256ss(std::uint64_t seed) noexcept;

    /// @brief The next 64 random bits.
    std::uint64_t operator()() noexcept;

    /// @brief A uniform draw from [0, bound], without modulo bias.
    std::uint64_t uniform_inclusive(std::uint64_t bound) noexcept;

private:
    std::uint64_t s_[4];
};

/// @brief The retry delays of one acquisition: base_delay + uniform[0, jitter] after each
/// failed attempt, until the attempts or the time budget run out.
///
/// Deterministic for a given seed (tests); seed it from random_seed() in production so that
/// clients differ.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class retry_schedule
{
public:
    /// @brief A schedule whose first attempt is under way (attempts_made() == 1).
    retry_schedule(const retry_policy& policy, std::uint64_t seed) noexcept;

    /// @brief After a failed attempt: the delay before the next one, or std::nullopt when no
    /// attempt is left.
    ///
    /// No attempt is left when max_attempts have been made, or when a budget is set and
    /// elapsed_since_start + delay would exceed max_total_wait (waiting only to give up later
    /// is pointless). A returned delay counts the next attempt in attempts_made().
    ///
    /// @param elapsed_since_start  Time since the first attempt started (negative counts as 0).
    std::optional<std::chrono::milliseconds> next_delay(
        std::chrono::steady_clock::duration elapsed_since_start) noexcept;

    /// @brief Attempts made or under way: 1 + the delays returned so far.
    std::uint32_t attempts_made() const noexcept { return attempts_; }

private:
    retry_policy policy_;
    xoshiro256ss rng_;
    std::uint32_t attempts_ = 1;
};

}  // namespace redlock::detail

#endif
