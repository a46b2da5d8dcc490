// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: who holds each resource at once, as the workers see it (--permits,
// --read-share). Entered when a lock is granted, left before its release is sent.
#ifndef REDLOCK_BENCH_HOLDERS_WITNESS_HPP
#define REDLOCK_BENCH_HOLDERS_WITNESS_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace redlock::bench {

class holders_witness
{
public:
    /// `limit`: how many holders (a read-write lock: readers) a resource may have at once; a
    /// writer must be alone.
    holders_witness(std::size_t resources, std::uint32_t limit)
        : holders_(std::make_unique<std::atomic<std::uint32_t>[]>(resources)),
          writers_(std::make_unique<std::atomic<std::uint32_t>[]>(resources)),
          limit_(limit)
    {}

    void enter(std::size_t r, bool writer) noexcept
    {
        checked_.fetch_add(1, std::memory_order_relaxed);
        bool bad = false;
        if (writer)
        {
            const auto w = writers_[r].fetch_add(1) + 1;
            bad = w > 1 || holders_[r].load() != 0;
        }
        else
        {
            const auto h = holders_[r].fetch_add(1) + 1;
            bad = h > limit_ || writers_[r].load() != 0;
            raise(most_, h);
        }
        if (bad)
            violations_.fetch_add(1, std::memory_order_relaxed);
    }
    void leave(std::size_t r, bool writer) noexcept
    {
        (writer ? writers_ : holders_)[r].fetch_sub(1);
    }

    std::uint64_t checked() const noexcept { return checked_.load(); }
    std::uint64_t violations() const noexcept { return violations_.load(); }
    /// The most holders (readers) one resource had at once.
    std::uint32_t most() const noexcept { return most_.load(); }

private:
    static void raise(std::atomic<std::uint32_t>& to, std::uint32_t v) noexcept
    {
        auto seen = to.load();
        while (v > seen && !to.compare_exchange_weak(seen, v))
        {}
    }

    std::unique_ptr<std::atomic<std::uint32_t>[]> holders_, writers_;
    std::uint32_t limit_;
    std::atomic<std::uint64_t> checked_{0}, violations_{0};
    std::atomic<std::uint32_t> most_{0};
};

}  // namespace redlock::bench

#endif
