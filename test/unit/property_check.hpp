// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_UNIT_PROPERTY_CHECK_HPP
#define REDLOCK_TEST_UNIT_PROPERTY_CHECK_HPP

// How many random event sequences a property test runs, and from which seed: the defaults keep
// the unit suite quick; REDLOCK_PROPERTY_ITERATIONS=n runs n sequences (and prints the rate),
// REDLOCK_PROPERTY_SEED=s starts from another base seed. Sequence k uses seed base + k, so a
// failure names the one seed that replays it.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace redlock_test {

struct property_budget
{
    std::uint64_t iterations = 0;
    std::uint64_t base_seed = 0;
    bool from_env = false;  ///< REDLOCK_PROPERTY_ITERATIONS was given: a long run, report its rate
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

    static property_budget read(std::uint64_t default_seed,
                                std::uint64_t default_iterations = 20'000)
    {
        property_budget b;
        b.iterations = env_or("REDLOCK_PROPERTY_ITERATIONS", default_iterations);
        b.base_seed = env_or("REDLOCK_PROPERTY_SEED", default_seed);
        const char* v = std::getenv("REDLOCK_PROPERTY_ITERATIONS");
        b.from_env = v && *v;
        return b;
    }

    /// Prints "`what`: n sequences in s (rate/s)" after a long run.
    void report(const char* what) const
    {
        if (!from_env)
            return;
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::printf("%s: %llu sequences in %.1f s (%.0f/s)\n", what,
                    static_cast<unsigned long long>(iterations), s,
                    static_cast<double>(iterations) / s);
    }

private:
    static std::uint64_t env_or(const char* name, std::uint64_t fallback)
    {
        const char* v = std::getenv(name);
        return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
    }
};

/// Runs `run(seed)` (empty: the sequence kept every invariant, else what it broke) over the
/// budget's seeds; fails the test naming the first five seeds that broke one.
template <class Run>
void check_property(const char* name, std::uint64_t default_seed, Run run)
{
    const auto budget = property_budget::read(default_seed);
    std::uint64_t failures = 0;
    for (std::uint64_t k = 0; k < budget.iterations; ++k)
    {
        const auto seed = budget.base_seed + k;
        if (const std::string why = run(seed); !why.empty() && ++failures <= 5)
            FAIL_CHECK(name << ", seed " << seed << ": " << why);
    }
    CHECK(failures == 0);
    budget.report(name);
}

}  // namespace redlock_test

#endif
