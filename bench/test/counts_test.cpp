// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The counts check of a run (bench_worker.hpp, totals::add_up): attempts = acquired + failed,
// acquired = released + release failed, and every cycle has its two samples; any of them off
// makes the run exit 1 (guarantees.md B2).
#include <catch2/catch.hpp>

#include "../bench_worker.hpp"

#include <chrono>
#include <memory>

namespace {

using namespace redlock::bench;

// A consistent window: 10 attempts, 7 acquired (3 failed: 2 contended, 1 no_quorum), 7
// released but 1 (lock_lost), each acquired cycle with an acquire and a release sample.
std::unique_ptr<totals> consistent()
{
    auto t = std::make_unique<totals>();
    t->attempts = 10;
    t->acquired = 7;
    t->failed[contended] = 2;
    t->failed[no_quorum] = 1;
    t->released = 6;
    t->release_failed[lock_lost] = 1;
    for (int i = 0; i < 7; ++i)
    {
        t->acquire.add(std::chrono::microseconds(100 + i));
        t->release.add(std::chrono::microseconds(50 + i));
    }
    return t;
}

}  // namespace

TEST_CASE("counts: a window whose counts add up passes, and each way of not adding up fails")
{
    CHECK(consistent()->add_up());
    CHECK(totals{}.add_up());  // nothing measured (interrupted during the warm-up)

    // Each way of not adding up, made from a consistent window.
    struct broken
    {
        const char* what;
        void (*mutate)(totals&);
    };
    const broken cases[] = {
        {"an attempt neither acquired nor failed", [](totals& t) { ++t.attempts; }},
        {"a failure of a kind counted without its attempt", [](totals& t) { ++t.failed[other]; }},
        {"an acquired lock neither released nor failed to release",
         [](totals& t) { --t.released; }},
        {"a release failure counted twice",
         [](totals& t) { ++t.release_failed[release_timed_out]; }},
        {"a cycle without its acquire sample",
         [](totals& t) {
             t.acquire = histogram_data{};
             for (int i = 0; i < 6; ++i)
                 t.acquire.add(std::chrono::microseconds(100));
         }},
        {"a cycle without its release sample",
         [](totals& t) {
             t.release.add(std::chrono::microseconds(1));  // 8 release samples for 7 cycles
         }},
    };
    for (const auto& c : cases)
    {
        INFO(c.what);
        auto t = consistent();
        c.mutate(*t);
        CHECK_FALSE(t->add_up());
    }
}
