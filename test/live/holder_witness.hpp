// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_LIVE_HOLDER_WITNESS_HPP
#define REDLOCK_TEST_LIVE_HOLDER_WITNESS_HPP

#include <atomic>

namespace redlock::test {

/// @brief Counts the holders of one resource across threads and clients: enter() when a lock
/// is granted, leave() before it is released. most() is the largest number seen at once.
class holder_witness
{
public:
    /// Returns how many hold now, this one included.
    int enter() noexcept
    {
        const int now = holders_.fetch_add(1) + 1;
        int seen = most_.load();
        while (now > seen && !most_.compare_exchange_weak(seen, now))
        {}
        return now;
    }
    void leave() noexcept { holders_.fetch_sub(1); }
    int now() const noexcept { return holders_.load(); }
    int most() const noexcept { return most_.load(); }

private:
    std::atomic<int> holders_{0};
    std::atomic<int> most_{0};
};

}  // namespace redlock::test

#endif
