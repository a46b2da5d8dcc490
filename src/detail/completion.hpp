// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DETAIL_COMPLETION_HPP
#define REDLOCK_SRC_DETAIL_COMPLETION_HPP

#include <utility>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace redlock::detail {

namespace asio = boost::asio;

/// Completes `h` on its associated executor (default: `io_ex`), inline when already there.
/// Only for completions that follow I/O: an initiating function must use post_completion.
template <class Sig, class... Args>
void dispatch_completion(asio::any_completion_handler<Sig>& h, const asio::any_io_executor& io_ex,
                         Args&&... args)
{
    // Through io_ex: Asio then hops to the handler's associated executor (inline when it is
    // already running there) and keeps work counted on it meanwhile.
    asio::dispatch(io_ex, asio::append(std::move(h), std::forward<Args>(args)...));
}

/// Completes `h` on its associated executor, never inline.
template <class Sig, class... Args>
void post_completion(asio::any_completion_handler<Sig>& h, const asio::any_io_executor& io_ex,
                     Args&&... args)
{
    asio::post(io_ex, asio::append(std::move(h), std::forward<Args>(args)...));
}

}  // namespace redlock::detail

#endif
