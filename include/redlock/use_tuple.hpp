// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
/// @file
/// redlock::use_tuple: the completion token for `auto [ec, result] = co_await ...`.
#ifndef REDLOCK_USE_TUPLE_HPP
#define REDLOCK_USE_TUPLE_HPP

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace redlock {

/// @brief The completion token with which `co_await` yields the error instead of throwing it:
/// `auto [ec, l] = co_await client.async_lock("r", redlock::use_tuple);`.
///
/// It is `boost::asio::as_tuple(boost::asio::use_awaitable)`, so it works for any Asio
/// operation in a `boost::asio::awaitable` coroutine, not only redlock's. The result is a
/// `std::tuple` of the handler's arguments: `(error_code, lock)` for async_lock,
/// `(error_code)` for async_unlock. On failure the lock carries the per-master diagnostics
/// (`lock::masters()`, `lock::describe()`) that the default token puts in operation_error.
inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace redlock

#endif
