// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_DETAIL_CLIENT_INITIATION_HPP
#define REDLOCK_DETAIL_CLIENT_INITIATION_HPP

// How client's operation templates reach the compiled library: one named initiation object per
// operation (it has get_executor(), and a name for diagnostics), each calling a compiled body
// that takes a type-erased handler; and which completion tokens get with_diagnostics.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <redlock/detail/awaitable_fix.hpp>
#include <redlock/error.hpp>
#include <redlock/hold.hpp>
#include <redlock/holders.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>
#include <redlock/with_diagnostics.hpp>

namespace redlock {

class client;

/// The default completion token of client's operations: `boost::asio::deferred`, whose errors
/// surface as operation_error (see with_diagnostics_t) when the operation is `co_await`ed.
using default_token_t = with_diagnostics_t<boost::asio::deferred_t>;

namespace detail {

template <class Signature>
using handler_of = boost::asio::any_completion_handler<Signature>;

// The compiled bodies (src/api/client.cpp).
boost::asio::any_io_executor executor_of(const client& c) noexcept;
void start_lock(client& c, std::string resource, const lock_options& opts,
                handler_of<void(error_code, lock)> h);
void start_try_lock(client& c, std::string resource, const lock_options& opts,
                    handler_of<void(error_code, std::optional<lock>)> h);
void start_lock_all(client& c, std::vector<std::string> resources, const lock_options& opts,
                    handler_of<void(error_code, lock)> h);
void start_unlock(client& c, const lock& l, handler_of<void(error_code)> h);
void start_extend(client& c, const lock& l, std::chrono::milliseconds ttl,
                  handler_of<void(error_code, lock)> h);
void start_check(client& c, const lock& l, handler_of<void(error_code, check_result)> h);
void start_holders(client& c, std::string resource, const lock_options& opts,
                   handler_of<void(error_code, holders_result)> h);
/// Whether `r` came from a read that a majority answered (one with no master, a caller's
/// empty result, counts as one that saw no holder): async_next_holders's `seen`.
inline bool decided(const holders_result& r) noexcept
{
    std::size_t answered = 0;
    for (const auto& m : r.masters)
        if (m.diagnostic.status == master_status::granted)
            ++answered;
    return r.masters.empty() || answered >= r.masters.size() / 2 + 1;
}

void start_next_holders(client& c, std::string resource, const lock_options& opts,
                        std::vector<holder_info> seen, bool seen_decided,
                        std::chrono::milliseconds reread_every,
                        handler_of<void(error_code, holders_result)> h);
void start_wait_connected(client& c, handler_of<void(error_code, std::size_t)> h);

/// What every initiation object of the client has: the client and its executor.
struct client_initiation
{
    using executor_type = boost::asio::any_io_executor;

    client* self;

    executor_type get_executor() const noexcept { return executor_of(*self); }
};

struct initiate_lock : client_initiation
{
    static constexpr std::string_view name = "async_lock";

    template <class Handler>
    void operator()(Handler&& h, std::string resource, const lock_options& opts) const
    {
        start_lock(*self, std::move(resource), opts, std::forward<Handler>(h));
    }
};

struct initiate_try_lock : client_initiation
{
    static constexpr std::string_view name = "async_try_lock";

    template <class Handler>
    void operator()(Handler&& h, std::string resource, const lock_options& opts) const
    {
        start_try_lock(*self, std::move(resource), opts, std::forward<Handler>(h));
    }
};

struct initiate_lock_all : client_initiation
{
    static constexpr std::string_view name = "async_lock_all";

    template <class Handler>
    void operator()(Handler&& h, std::vector<std::string> resources, const lock_options& opts) const
    {
        start_lock_all(*self, std::move(resources), opts, std::forward<Handler>(h));
    }
};

struct initiate_unlock : client_initiation
{
    static constexpr std::string_view name = "async_unlock";

    template <class Handler>
    void operator()(Handler&& h, const lock& l) const
    {
        start_unlock(*self, l, std::forward<Handler>(h));
    }
};

struct initiate_extend : client_initiation
{
    static constexpr std::string_view name = "async_extend";

    template <class Handler>
    void operator()(Handler&& h, const lock& l, std::chrono::milliseconds ttl) const
    {
        start_extend(*self, l, ttl, std::forward<Handler>(h));
    }
};

struct initiate_check : client_initiation
{
    static constexpr std::string_view name = "async_check";

    template <class Handler>
    void operator()(Handler&& h, const lock& l) const
    {
        start_check(*self, l, std::forward<Handler>(h));
    }
};

struct initiate_holders : client_initiation
{
    static constexpr std::string_view name = "async_holders";

    template <class Handler>
    void operator()(Handler&& h, std::string_view resource, const lock_options& opts) const
    {
        start_holders(*self, std::string(resource), opts, std::forward<Handler>(h));
    }
};

struct initiate_next_holders : client_initiation
{
    static constexpr std::string_view name = "async_next_holders";

    template <class Handler>
    void operator()(Handler&& h, std::string_view resource, const lock_options& opts,
                    std::vector<holder_info> seen, bool seen_decided,
                    std::chrono::milliseconds reread_every) const
    {
        start_next_holders(*self, std::string(resource), opts, std::move(seen), seen_decided,
                           reread_every, std::forward<Handler>(h));
    }
};

struct initiate_wait_connected : client_initiation
{
    static constexpr std::string_view name = "async_wait_connected";

    template <class Handler>
    void operator()(Handler&& h) const
    {
        start_wait_connected(*self, std::forward<Handler>(h));
    }
};

/// Tokens that turn an error into an exception get with_diagnostics, so that the exception
/// names the resource and each master's outcome.
template <class Token>
inline constexpr bool throws_errors = false;
template <class Executor>
inline constexpr bool throws_errors<boost::asio::use_awaitable_t<Executor>> = true;
template <class Allocator>
inline constexpr bool throws_errors<boost::asio::use_future_t<Allocator>> = true;

/// A plain callback: a function, a function pointer, or an object with one non-template
/// operator() (a lambda whose parameters are not `auto`). Completion tokens (use_awaitable,
/// deferred...) and wrapped handlers (bind_executor...) are not.
template <class T>
concept plain_callback = std::is_function_v<std::remove_pointer_t<T>> || requires
{
    &T::operator();
};

template <class Handler, class Signature>
inline constexpr bool callable_as = false;
template <class Handler, class R, class... Args>
inline constexpr bool callable_as<Handler, R(Args...)> = std::is_invocable_v<Handler&, Args...>;

/// async_initiate, with with_diagnostics applied to the tokens of throws_errors.
template <class Signature, class Initiation, class CompletionToken, class... Args>
auto initiate(Initiation initiation, CompletionToken&& token, Args&&... args)
{
    using token_type = std::decay_t<CompletionToken>;
    static_assert(
        !plain_callback<token_type> || callable_as<token_type, Signature>,
        "this callback cannot be called with the operation's result: its parameters must be "
        "(redlock::error_code, redlock::lock) for async_lock, async_lock_all and async_extend; "
        "(redlock::error_code, std::optional<redlock::lock>) for async_try_lock; "
        "(redlock::error_code) for async_unlock; (redlock::error_code, redlock::check_result) "
        "for async_check; (redlock::error_code, redlock::holders_result) for async_holders; "
        "(redlock::error_code, std::size_t) for async_wait_connected "
        "(the \"Handler signature\" of each operation in redlock/client.hpp)");
    if constexpr (plain_callback<token_type> && !callable_as<token_type, Signature>)
        return;  // only the static_assert above is reported
    else if constexpr (throws_errors<token_type>)
    {
        auto wrapped = with_diagnostics(std::forward<CompletionToken>(token));
        return boost::asio::async_initiate<decltype(wrapped), Signature>(
            std::move(initiation), wrapped, std::forward<Args>(args)...);
    }
    else
    {
        return boost::asio::async_initiate<CompletionToken, Signature>(std::move(initiation), token,
                                                                       std::forward<Args>(args)...);
    }
}

}  // namespace detail
}  // namespace redlock

#endif
