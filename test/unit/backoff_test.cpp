// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/backoff.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <vector>

using namespace std::chrono_literals;
using redlock::detail::retry_policy;
using redlock::detail::retry_schedule;
using redlock::detail::xoshiro256ss;

namespace {

std::vector<std::chrono::milliseconds> all_delays(const retry_policy& p, std::uint64_t seed)
{
    retry_schedule s(p, seed);
    std::vector<std::chrono::milliseconds> out;
    while (auto d = s.next_delay(0ns))
        out.push_back(*d);
    return out;
}

}  // namespace

TEST_CASE("backoff: splitmix64 matches the published reference outputs", "[backoff]")
{
    // splitmix64 from state 0 (Steele, Lea & Flood; the seeding generator of xoshiro).
    std::uint64_t state = 0;
    CHECK(redlock::detail::splitmix64(state) == 0xe220a8397b1dcdafu);
    CHECK(redlock::detail::splitmix64(state) == 0x6e789e6aa1b965f4u);
    CHECK(redlock::detail::splitmix64(state) == 0x06c45d188009454fu);
    CHECK(redlock::detail::splitmix64(state) == 0xf88bb8a8724c81ecu);
}

TEST_CASE("backoff: xoshiro256** is deterministic per seed and uniform without bias", "[backoff]")
{
    xoshiro256ss a(42), b(42), c(43);
    bool differs = false;
    for (int i = 0; i != 100; ++i)
    {
        const auto x = a();
        CHECK(x == b());
        differs = differs || x != c();
    }
    CHECK(differs);

    SECTION("uniform_inclusive stays in range and hits both ends")
    {
        xoshiro256ss r(7);
        std::vector<int> histogram(11);
        for (int i = 0; i != 110000; ++i)
        {
            const auto v = r.uniform_inclusive(10);
            REQUIRE(v <= 10);
            ++histogram[v];
        }
        for (int count : histogram)
        {
            // 10000 expected per bucket; 6 sigma is about 570.
            CHECK(count > 9400);
            CHECK(count < 10600);
        }
        CHECK(r.uniform_inclusive(0) == 0);
        (void)r.uniform_inclusive(std::numeric_limits<std::uint64_t>::max());
    }
}

TEST_CASE("backoff: delays are base + [0, jitter]", "[backoff]")
{
    retry_policy p;
    p.max_attempts = 1000000;
    p.base_delay = 50ms;
    p.jitter = 100ms;
    retry_schedule s(p, 1);
    std::set<std::chrono::milliseconds::rep> seen;
    for (int i = 0; i != 20000; ++i)
    {
        const auto d = s.next_delay(0ns);
        REQUIRE(d);
        REQUIRE(*d >= 50ms);
        REQUIRE(*d <= 150ms);
        seen.insert(d->count());
    }
    // Both ends and every value in between turn up (101 values, 20000 draws).
    CHECK(seen.size() == 101);
    CHECK(*seen.begin() == 50);
    CHECK(*seen.rbegin() == 150);

    SECTION("zero jitter gives the base delay exactly")
    {
        p.jitter = 0ms;
        p.max_attempts = 10;
        for (auto d : all_delays(p, 99))
            CHECK(d == 50ms);
    }
    SECTION("zero base and zero jitter: retry at once")
    {
        p.base_delay = 0ms;
        p.jitter = 0ms;
        p.max_attempts = 3;
        CHECK(all_delays(p, 5) == std::vector<std::chrono::milliseconds>{0ms, 0ms});
    }
}

TEST_CASE("backoff: deterministic per seed, different across seeds", "[backoff]")
{
    retry_policy p;
    p.max_attempts = 50;
    const auto a = all_delays(p, 12345);
    const auto b = all_delays(p, 12345);
    const auto c = all_delays(p, 12346);
    REQUIRE(a.size() == 49);
    CHECK(a == b);
    CHECK(a != c);
    // Spread: not all equal.
    CHECK(std::set<std::chrono::milliseconds>(a.begin(), a.end()).size() > 10);
}

TEST_CASE("backoff: attempt limit", "[backoff]")
{
    retry_policy p;
    SECTION("default: 3 attempts, 2 delays")
    {
        retry_schedule s(p, 0);
        CHECK(s.attempts_made() == 1);
        CHECK(s.next_delay(0ns));
        CHECK(s.attempts_made() == 2);
        CHECK(s.next_delay(0ns));
        CHECK(s.attempts_made() == 3);
        CHECK_FALSE(s.next_delay(0ns));
        CHECK(s.attempts_made() == 3);
        CHECK_FALSE(s.next_delay(0ns));  // stays exhausted
    }
    SECTION("one attempt: no retry")
    {
        p.max_attempts = 1;
        retry_schedule s(p, 0);
        CHECK_FALSE(s.next_delay(0ns));
        CHECK(s.attempts_made() == 1);
    }
    SECTION("an invalid 0 behaves as 1")
    {
        p.max_attempts = 0;
        retry_schedule s(p, 0);
        CHECK_FALSE(s.next_delay(0ns));
    }
}

TEST_CASE("backoff: time budget", "[backoff]")
{
    retry_policy p;
    p.max_attempts = 100;
    p.base_delay = 100ms;
    p.jitter = 0ms;
    p.max_total_wait = 1000ms;

    SECTION("a delay that ends exactly at the budget is allowed; one that ends after is not")
    {
        retry_schedule s(p, 3);
        CHECK(s.next_delay(900ms) == 100ms);
        CHECK(s.attempts_made() == 2);
        CHECK_FALSE(s.next_delay(900ms + 1ns));
        CHECK(s.attempts_made() == 2);
    }
    SECTION("a run: attempts take 50 ms each, then wait")
    {
        retry_schedule s(p, 3);
        std::chrono::steady_clock::duration elapsed{};
        std::uint32_t retries = 0;
        for (;;)
        {
            elapsed += 50ms;  // the attempt itself
            const auto d = s.next_delay(elapsed);
            if (!d)
                break;
            elapsed += *d;
            ++retries;
        }
        // 50 + 7 * 150 = 1100 > 1000: after 6 retries (elapsed 950 ms), 950 + 50 + 100 > 1000.
        CHECK(retries == 6);
        CHECK(s.attempts_made() == 7);
        CHECK(elapsed <= 1000ms + 50ms);
    }
    SECTION("with jitter, every returned delay fits the budget")
    {
        p.jitter = 500ms;
        for (std::uint64_t seed = 0; seed != 200; ++seed)
        {
            retry_schedule s(p, seed);
            std::chrono::steady_clock::duration elapsed = 10ms;
            while (auto d = s.next_delay(elapsed))
            {
                elapsed += *d;
                REQUIRE(elapsed <= 1000ms);
                elapsed += 10ms;
            }
        }
    }
    SECTION("budget already spent, or negative elapsed counted as 0")
    {
        retry_schedule s(p, 3);
        CHECK_FALSE(s.next_delay(2s));
        CHECK(s.next_delay(-5s) == 100ms);
    }
    SECTION("no budget: elapsed does not matter")
    {
        p.max_total_wait = 0ms;
        retry_schedule s(p, 3);
        CHECK(s.next_delay(std::chrono::hours(24)) == 100ms);
    }
}

TEST_CASE("backoff: validate(retry_policy)", "[backoff]")
{
    std::string why = "stale";
    retry_policy p;
    CHECK(redlock::detail::validate(p, why));
    CHECK(why.empty());

    p.base_delay = 0ms;
    p.jitter = 0ms;
    CHECK(redlock::detail::validate(p, why));

    struct bad
    {
        void (*mutate)(retry_policy&);
        const char* expected;
    };
    const bad cases[] = {
        {[](retry_policy& q) { q.max_attempts = 0; }, "max_attempts must be at least 1"},
        {[](retry_policy& q) { q.base_delay = -1ms; }, "base_delay must not be negative"},
        {[](retry_policy& q) { q.jitter = -1ms; }, "jitter must not be negative"},
        {[](retry_policy& q) { q.max_total_wait = -1ms; }, "max_total_wait must not be negative"},
    };
    for (const auto& c : cases)
    {
        retry_policy q;
        c.mutate(q);
        why.clear();
        CHECK_FALSE(redlock::detail::validate(q, why));
        INFO(why);
        CHECK(why.find(c.expected) != std::string::npos);
    }
}
