// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_LOCK_HPP
#define REDLOCK_LOCK_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <redlock/error.hpp>

namespace redlock {

/// What one master answered in the last round of an operation (acquire, extend, release).
enum class master_status : std::uint8_t
{
    not_needed,     ///< No answer was needed: the outcome was decided before it came.
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
    std::size_t index = 0;  ///< The master's position: client_config::masters, then master_configs.
    master_status status = master_status::not_needed;  ///< What the master answered.
    error_code ec;        ///< Set for status::error (connection or server error).
    std::string message;  ///< The server's error message or the transport's detail.
    std::chrono::microseconds latency{0};  ///< From the start of the round to the answer.
};

namespace detail {
struct lock_state;
struct access;
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
    /// The clock of valid_until() and remaining(): the steady (monotonic) clock.
    using clock = std::chrono::steady_clock;

    lock() = default;

    /// The resource name as given to async_lock.
    std::string_view resource() const noexcept;

    /// The Redis key (key prefix + resource); the first one of a multi-resource lock.
    std::string_view key() const noexcept;

    /// Every key of the lock (one, or several for a multi-resource lock).
    std::span<const std::string> keys() const noexcept;

    /// Every resource of the lock.
    std::span<const std::string> resources() const noexcept;

    /// The value stored in the keys, which releases, extends and checks them: for the locks
    /// of this library, the random token of 40 lowercase hex characters, followed with
    /// lock_options::identity by one space and the identity (`<token> <identity>`); for a
    /// lock rebuilt by client::lock_from_parts, the token given. Empty when never acquired.
    /// Secret: whoever has it can release the lock. Passed whole to lock_from_parts, it
    /// rebuilds the lock, identity included.
    std::string_view token() const noexcept;

    /// The holder's identity the keys publish (lock_options::identity): what follows the
    /// 40 hex characters of the token and one space in token(); empty when the lock publishes
    /// none (or its value has another form, e.g. another library's token). Public, unlike
    /// the token.
    std::string_view identity() const noexcept;

    /// The end of validity: t0 + ttl - drift, t0 taken before the first request was sent;
    /// for a lock handed over by a release of this client (lock_options::handoff), the
    /// previous holder's, which the keys still carry. The epoch of the steady clock for a lock that was never acquired, or rebuilt by
    /// client::lock_from_parts and not extended since.
    clock::time_point valid_until() const noexcept;

    /// The TTL the keys were last set (or extended) with. A lock taken over from a holder of
    /// the same client (lock_options::handoff) gives the TTL its acquisition asked for, which
    /// extensions use; its keys keep the holder's expiry until the first.
    std::chrono::milliseconds ttl() const noexcept;

    /// The fencing token of a lock taken with lock_options::fencing: at least 1, and larger
    /// than the token of every earlier holder of the resource whose lock was fenced too (the
    /// sequence may skip numbers). Pass it with every write to the protected resource and
    /// have the resource refuse a token lower than the highest it has seen. 0 for a lock
    /// taken without fencing or never acquired. Of a multi-resource lock: its first resource's.
    std::uint64_t fencing_token() const noexcept;

    /// The fencing tokens of a lock taken with lock_options::fencing, one per resource in the
    /// order of resources() (each resource has its own sequence); empty without fencing.
    std::span<const std::uint64_t> fencing_tokens() const noexcept;

    /// Validity left now (zero when past), on the monotonic clock.
    clock::duration remaining() const noexcept
    {
        auto left = valid_until() - clock::now();
        return left > clock::duration::zero() ? left : clock::duration::zero();
    }

    /// True when the lock was acquired and its validity has not run out.
    bool held() const noexcept { return !token().empty() && clock::now() < valid_until(); }

    /// Diagnostics of the last round, one entry per master in configuration order.
    std::span<const master_diagnostic> masters() const noexcept;

    /// Why the operation that returned this lock failed, when the cause is not a master's
    /// answer: which argument or option was refused and why ("lock_options::ttl must be
    /// positive"), or that the client was closed before the operation started (closed
    /// during it, the operation completes with connection_closed and no reason). Empty
    /// otherwise.
    std::string_view reason() const noexcept;

    /// A one-line summary for logs: resource, identity (when published), remaining validity,
    /// the reason of a failure and per-master outcomes.
    /// Never includes the token.
    std::string describe() const;

private:
    friend struct detail::access;
    explicit lock(std::shared_ptr<const detail::lock_state> s) noexcept : s_(std::move(s)) {}

    std::shared_ptr<const detail::lock_state> s_;
};

namespace detail {
template <std::size_t>
inline constexpr bool not_a_tuple = false;
}  // namespace detail

/// @brief Not a tuple: `auto [ec, l] = co_await client.async_lock(...)` is a mistake, reported
/// by this function's static_assert with the fix. With the default token `co_await` yields the
/// lock alone and throws on failure; with `redlock::use_tuple` it yields `(error_code, lock)`.
template <std::size_t I>
lock get(const lock& l)
{
    static_assert(detail::not_a_tuple<I>,
                  "a redlock::lock is not a tuple: with the default completion token, `co_await "
                  "c.async_lock(...)` yields the lock and throws on failure; write `auto [ec, l] = "
                  "co_await c.async_lock(..., redlock::use_tuple);` to get the error code too");
    return l;
}

}  // namespace redlock

// A redlock::lock declares two elements only so that a structured binding of it reaches
// redlock::get, whose static_assert says what to write instead. (Not in the API reference.)
/// @cond
namespace std {
template <>
struct tuple_size<redlock::lock> : integral_constant<size_t, 2>
{};
template <size_t I>
struct tuple_element<I, redlock::lock>
{
    using type = redlock::lock;  // never used: redlock::get does not compile
};
}  // namespace std
/// @endcond

#endif
