// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_LIVE_HOLDER_WITNESS_HPP
#define REDLOCK_TEST_LIVE_HOLDER_WITNESS_HPP

#include "client_fixture.hpp"
#include "io_helpers.hpp"

#include <atomic>
#include <optional>
#include <string>

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

/// @brief One acquisition of a contender in the stress tests: async_lock of `resource` with
/// `o` on `c`. Returns the lock when granted; nothing at once when `refused(ec)` says the error
/// is one the test expects (contended); nothing after 10 ms for any other error, which is
/// logged in `errors` with the contender's client `id` and the lock's diagnostics (the pause
/// keeps a failing client from spinning).
template <class Refused>
asio::awaitable<std::optional<lock>> contend_for(client& c, std::string resource, lock_options o,
                                                 int id, error_log& errors, Refused refused)
{
    auto [ec, l] = co_await c.async_lock(std::move(resource), o, tuple_awaitable);
    if (!ec)
        co_return std::move(l);
    if (refused(ec))
        co_return std::nullopt;
    errors.add("client " + std::to_string(id) + " lock: " + ec.message() + " " + l.describe());
    co_await sleep_for(std::chrono::milliseconds(10));
    co_return std::nullopt;
}

}  // namespace redlock::test

#endif
