// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DETAIL_RELAXED_COUNTER_HPP
#define REDLOCK_SRC_DETAIL_RELAXED_COUNTER_HPP

#include <atomic>
#include <cstdint>

namespace redlock::detail {

/// @brief A counter with one writer (the strand that owns it) and readers on any thread
/// (client::master_states()). The increment is a relaxed load and store, not a locked
/// read-modify-write: on the writer's path it costs what a plain integer does.
class relaxed_counter
{
public:
    void operator++() noexcept
    {
        v_.store(v_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    void operator+=(std::uint64_t n) noexcept
    {
        v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    operator std::uint64_t() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> v_{0};
};

}  // namespace redlock::detail

#endif
