// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_LOCK_HPP
#define REDLOCK_LOCK_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>

namespace redlock {

/// What one master answered in the last round of an operation (acquire, extend, release).
enum class master_status : std::uint8_t
{
    pending,        ///< No answer was needed: the outcome was decided before it came.
    granted,        ///< The master agreed (key set, extended or deleted).
    held_by_other,  ///< The key holds another owner's token (or is absent, for extend/release).
    error,          ///< The master failed: see `ec` and `message`.
    timed_out,      ///< No answer within the deadline.
};

/// A short name of a status ("granted").
std::string_view to_string(master_status s) noexcept;

/// Per-master diagnostics of the last round.
struct master_diagnostic
{
    std::size_t index = 0;       ///< The master's position in client_config::masters.
    master_status status = master_status::pending;
    error_code ec;               ///< Set for status::error (connection or server error).
    std::string message;         ///< The server's error message or the transport's detail.
    std::chrono::microseconds latency{0};  ///< From the start of the round to the answer.
};

namespace detail {
/// The immutable state shared by the copies of a lock.
struct lock_state
{
    std::string resource;   ///< The (first) resource.
    std::string key;        ///< The (first) key.
    std::string token;
    std::chrono::steady_clock::time_point valid_until{};
    std::chrono::milliseconds ttl{0};    ///< The TTL the keys were last set or extended with.
    std::vector<master_diagnostic> masters;
    std::vector<std::string> resources;  ///< Multi-resource locks only: every resource.
    std::vector<std::string> keys;       ///< Multi-resource locks only: every key.

    std::span<const std::string> key_span() const noexcept
    {
        return keys.empty() ? std::span<const std::string>(&key, 1) : std::span<const std::string>(keys);
    }
};
}  // namespace detail

/// @brief A lock on a resource held on a majority of masters, as returned by async_lock.
///
/// A cheap-to-copy handle to immutable state: the resource, the random token stored in the
/// keys, the validity deadline on the steady clock, and per-master diagnostics. When an
/// operation fails, the lock it returns is not held (`held()` is false) but still carries the
/// diagnostics of the last round.
class lock
{
public:
    using clock = std::chrono::steady_clock;

    lock() = default;
    explicit lock(std::shared_ptr<const detail::lock_state> s) noexcept : s_(std::move(s)) {}

    /// The resource name as given to async_lock.
    std::string_view resource() const noexcept { return s_ ? std::string_view(s_->resource) : std::string_view(); }
    /// The Redis key (key prefix + resource); the first one of a multi-resource lock.
    std::string_view key() const noexcept { return s_ ? std::string_view(s_->key) : std::string_view(); }
    /// Every key of the lock (one, or several for a multi-resource lock).
    std::span<const std::string> keys() const noexcept
    {
        return s_ ? s_->key_span() : std::span<const std::string>();
    }
    /// Every resource of the lock.
    std::span<const std::string> resources() const noexcept
    {
        if (!s_)
            return {};
        return s_->resources.empty() ? std::span<const std::string>(&s_->resource, 1)
                                     : std::span<const std::string>(s_->resources);
    }
    /// The random value stored in the keys: 40 hex characters; empty when never acquired.
    std::string_view token() const noexcept { return s_ ? std::string_view(s_->token) : std::string_view(); }
    /// The end of validity: t0 + ttl - drift, t0 taken before the first request was sent.
    clock::time_point valid_until() const noexcept { return s_ ? s_->valid_until : clock::time_point{}; }
    /// The TTL the keys were last set (or extended) with.
    std::chrono::milliseconds ttl() const noexcept { return s_ ? s_->ttl : std::chrono::milliseconds(0); }
    /// Validity left now (zero when past), on the monotonic clock.
    clock::duration remaining() const noexcept
    {
        auto left = valid_until() - clock::now();
        return left > clock::duration::zero() ? left : clock::duration::zero();
    }
    /// True when the lock was acquired and its validity has not run out.
    bool held() const noexcept { return s_ && !s_->token.empty() && clock::now() < s_->valid_until; }
    /// Diagnostics of the last round, one entry per master in configuration order.
    std::span<const master_diagnostic> masters() const noexcept
    {
        return s_ ? std::span<const master_diagnostic>(s_->masters) : std::span<const master_diagnostic>();
    }

    /// A one-line summary for logs: resource, remaining validity, and per-master outcomes.
    /// Never includes the token.
    std::string describe() const;

    /// The shared state (for the library's own operations).
    const std::shared_ptr<const detail::lock_state>& state() const noexcept { return s_; }

private:
    std::shared_ptr<const detail::lock_state> s_;
};

}  // namespace redlock

#endif
