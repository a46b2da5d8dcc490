// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_DETAIL_AWAITABLE_FIX_HPP
#define REDLOCK_DETAIL_AWAITABLE_FIX_HPP

// Boost 1.81 cannot `co_await` an async operation whose handler signature is
// `void(std::exception_ptr, T)` when the operation is deferred (the default token): Asio's
// `awaitable_async_op_handler<R(std::exception_ptr, T)>::resume` tests the result structure
// (`*result`) where it means the exception (`*result.ex_`), which does not compile. The client's
// operations complete that way through with_diagnostics, so for the types they complete with, a
// constrained specialization (more specialized than Asio's) supplies the handler with the test
// it means. Later Boost versions do not need it; the guard keeps it to 1.81.

#include <boost/version.hpp>

#if BOOST_VERSION == 108100

#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/asio/awaitable.hpp>

#include <redlock/hold.hpp>
#include <redlock/lock.hpp>

namespace redlock::detail {

template <class T>
concept completes_client_operation =
    std::is_same_v<T, lock> || std::is_same_v<T, std::optional<lock>> ||
    std::is_same_v<T, check_result> || std::is_same_v<T, std::size_t>;

}  // namespace redlock::detail

namespace boost::asio::detail {

template <typename R, typename T, typename Executor>
requires redlock::detail::completes_client_operation<T>
class awaitable_async_op_handler<R(std::exception_ptr, T), Executor>
    : public awaitable_thread<Executor>
{
public:
    struct result_type
    {
        std::exception_ptr* ex_;
        T* value_;
    };

    awaitable_async_op_handler(awaitable_thread<Executor>* h, result_type& result)
        : awaitable_thread<Executor>(std::move(*h)),
          result_(result)
    {}

    void operator()(std::exception_ptr ex, T value)
    {
        result_.ex_ = &ex;
        result_.value_ = &value;
        this->entry_point()->top_of_stack_->attach_thread(this);
        this->entry_point()->top_of_stack_->clear_cancellation_slot();
        this->pump();
    }

    static T resume(result_type& result)
    {
        if (*result.ex_)
            std::rethrow_exception(std::exchange(*result.ex_, nullptr));
        return std::move(*result.value_);
    }

private:
    result_type& result_;
};

}  // namespace boost::asio::detail

#endif  // BOOST_VERSION == 108100

#endif
