// The completion token with which the test harnesses and the live tests await an operation.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace redlock::test {

/// `co_await op(..., tuple_awaitable)` yields (error_code, results...) instead of throwing.
inline constexpr auto tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace redlock::test
