// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DETAIL_COMPLETION_HPP
#define REDLOCK_SRC_DETAIL_COMPLETION_HPP

#include <utility>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace redlock::detail {

namespace asio = boost::asio;

/// @brief Calls `f` with `ex`'s own executor when it is one the client makes (a strand on an
/// io_context's executor, or that executor), else with `ex` itself.
///
/// An any_completion_handler's associated executor is an any_completion_executor made from the
/// candidate it is given. Made from an any_io_executor, it wraps one type-erased executor in
/// another, and that allocates: once to name the candidate and once more for the work-tracking
/// `prefer` of each dispatch (two allocations per operation's completion, measured with
/// heaptrack). Made from the concrete executor, both fit in place.
template <class F>
decltype(auto) with_concrete_executor(const asio::any_io_executor& ex, F&& f)
{
    if (const auto* s = ex.target<asio::strand<asio::io_context::executor_type>>())
        return std::forward<F>(f)(*s);
    if (const auto* io = ex.target<asio::io_context::executor_type>())
        return std::forward<F>(f)(*io);
    return std::forward<F>(f)(ex);
}

/// Completes `h` on its associated executor (default: `io_ex`), inline when already there.
/// Only for completions that follow I/O: an initiating function must use post_completion.
template <class Sig, class... Args>
void dispatch_completion(asio::any_completion_handler<Sig>& h, const asio::any_io_executor& io_ex,
                         Args&&... args)
{
    // Through io_ex: Asio then hops to the handler's associated executor (inline when it is
    // already running there) and keeps work counted on it meanwhile.
    with_concrete_executor(io_ex, [&](const auto& ex) {
        asio::dispatch(ex, asio::append(std::move(h), std::forward<Args>(args)...));
    });
}

/// Completes `h` on its associated executor, never inline.
template <class Sig, class... Args>
void post_completion(asio::any_completion_handler<Sig>& h, const asio::any_io_executor& io_ex,
                     Args&&... args)
{
    with_concrete_executor(io_ex, [&](const auto& ex) {
        asio::post(ex, asio::append(std::move(h), std::forward<Args>(args)...));
    });
}

}  // namespace redlock::detail

#endif
