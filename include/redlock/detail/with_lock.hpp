// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_DETAIL_WITH_LOCK_HPP
#define REDLOCK_DETAIL_WITH_LOCK_HPP

// The machinery of client::async_with_lock: what a `work` must be, and the coroutine that
// acquires, holds, runs the work and releases. The templates take the client as a parameter
// (`Client`) so that this header can come before the class that uses it.

#include <exception>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <redlock/error.hpp>
#include <redlock/hold.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>

namespace redlock {
class client;
}

namespace redlock::detail {

/// A new strand on the executor the client was constructed with (compiled; the client's own
/// executor is a strand on it too).
boost::asio::any_io_executor make_work_strand(const client& c);

// What async_with_lock's `work` is: callable with a lock, returning boost::asio::awaitable<R>.
// Computed without hard errors, so that a wrong work gets one static_assert with a sentence.
template <class T>
struct awaitable_result
{
    static constexpr bool is_awaitable = false;
    using type = void;
};

template <class T, class Executor>
struct awaitable_result<boost::asio::awaitable<T, Executor>>
{
    static constexpr bool is_awaitable = true;
    using type = T;
};

template <class Work, bool = std::is_invocable_v<Work&, lock>>
struct with_lock_work
{
    static constexpr bool invocable = false;
    static constexpr bool is_awaitable = false;
    using result_type = void;
};

template <class Work>
struct with_lock_work<Work, true> : awaitable_result<std::invoke_result_t<Work&, lock>>
{
    static constexpr bool invocable = true;
    using result_type = typename awaitable_result<std::invoke_result_t<Work&, lock>>::type;
};

// Cancellation of async_with_lock, shared between the initiating function (where the caller's
// slot is connected) and the body (where the phases are).
struct with_lock_control
{
    boost::asio::any_io_executor strand;
    boost::asio::cancellation_signal acquire;  // bound to the acquisition
    lock_holder* holder = nullptr;             // set while the work runs
    boost::asio::cancellation_signal work;     // bound to the work (with the loss)
    bool cancelled = false;
};

inline bool is_operation_aborted(const std::exception_ptr& e) noexcept
{
    try
    {
        std::rethrow_exception(e);
    }
    catch (const boost::system::system_error& se)
    {
        return se.code() == boost::asio::error::operation_aborted;
    }
    catch (...)
    {
        return false;
    }
}

template <class R>
using with_lock_value = std::conditional_t<std::is_void_v<R>, int, R>;

template <class R, class Client, class Work>
boost::asio::awaitable<std::tuple<error_code, with_lock_value<R>>> with_lock_body(
    Client& c, std::shared_ptr<with_lock_control> ctl, std::string resource, lock_options opts,
    hold_options hold, Work work)
{
    using value_type = with_lock_value<R>;
    using boost::asio::as_tuple;
    using boost::asio::bind_cancellation_slot;
    using boost::asio::use_awaitable;
    auto [ec, l] = co_await c.async_lock(
        resource, opts, bind_cancellation_slot(ctl->acquire.slot(), as_tuple(use_awaitable)));
    if (ec)
        co_return std::tuple<error_code, value_type>{ec, value_type{}};
    // The acquisition completed by dispatch from the client's strand, so this coroutine now
    // runs nested inside the strand's handler; the work's first step would too, and would
    // hold up the client's I/O on every thread while it runs. A post starts it afresh.
    co_await boost::asio::post(ctl->strand, use_awaitable);
    if (ctl->cancelled)
    {
        co_await c.async_unlock(l, as_tuple(use_awaitable));
        co_return std::tuple<error_code, value_type>{boost::asio::error::operation_aborted,
                                                     value_type{}};
    }

    lock_holder holder(c, l, hold, ctl->strand);
    ctl->holder = &holder;
    // The loss signal cancels the work through the work signal, so that the caller's
    // cancellation can reach it too.
    holder.loss_slot().assign([ctl](boost::asio::cancellation_type t) { ctl->work.emit(t); });

    std::exception_ptr failure;
    value_type result{};
    if constexpr (std::is_void_v<R>)
    {
        auto [e] = co_await boost::asio::co_spawn(
            ctl->strand, work(l),
            bind_cancellation_slot(ctl->work.slot(), as_tuple(use_awaitable)));
        failure = e;
    }
    else
    {
        auto [e, r] = co_await boost::asio::co_spawn(
            ctl->strand, work(l),
            bind_cancellation_slot(ctl->work.slot(), as_tuple(use_awaitable)));
        failure = e;
        result = std::move(r);
    }
    ctl->holder = nullptr;
    const error_code status = holder.status();
    auto [rec] = co_await holder.async_release(as_tuple(use_awaitable));
    (void)rec;
    const bool lost = status && status != error::released;
    // A work cancelled by the loss or by the caller usually ends with the operation_aborted
    // exception of what it was awaiting: that is our cancellation, not the work's failure.
    if (failure && (lost || ctl->cancelled) && is_operation_aborted(failure))
        failure = nullptr;
    if (failure)
        std::rethrow_exception(failure);
    if (ctl->cancelled)
        co_return std::tuple<error_code, value_type>{boost::asio::error::operation_aborted,
                                                     std::move(result)};
    if (lost)
        co_return std::tuple<error_code, value_type>{error::lock_lost, std::move(result)};
    co_return std::tuple<error_code, value_type>{error_code{}, std::move(result)};
}

/// The initiation of async_with_lock: connects the caller's cancellation to the phases, and
/// spawns the body on a strand of its own.
template <class R, class Client>
struct initiate_with_lock
{
    using executor_type = boost::asio::any_io_executor;
    static constexpr std::string_view name = "async_with_lock";

    Client* self;

    executor_type get_executor() const noexcept { return self->get_executor(); }

    template <class Handler, class Work>
    void operator()(Handler handler, std::string resource, lock_options opts, hold_options hold,
                    Work work) const
    {
        auto ctl = std::make_shared<with_lock_control>();
        // A strand of its own on the client's io_context: not the client's strand, so that a
        // work that computes does not stop the client's I/O (the extensions among it).
        ctl->strand = make_work_strand(*self);
        auto slot = boost::asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected())
        {
            slot.assign([ctl](boost::asio::cancellation_type t) {
                boost::asio::post(ctl->strand, [ctl, t] {
                    ctl->cancelled = true;
                    // The work is a co_spawned coroutine, which lets only terminal cancellation
                    // through: any type the caller asks for ends the work.
                    if (ctl->holder)
                        ctl->work.emit(boost::asio::cancellation_type::terminal);
                    else
                        ctl->acquire.emit(t);
                });
            });
        }
        // The completion runs on the handler's associated executor (co_spawn dispatches to the
        // executor bound to its completion handler).
        auto handler_ex = boost::asio::get_associated_executor(handler, get_executor());
        boost::asio::co_spawn(
            ctl->strand,
            with_lock_body<R>(*self, ctl, std::move(resource), opts, hold, std::move(work)),
            boost::asio::bind_executor(handler_ex, [h = std::move(handler), ctl](
                                                       std::exception_ptr e, auto result) mutable {
                auto own_slot = boost::asio::get_associated_cancellation_slot(h);
                if (own_slot.is_connected())
                    own_slot.clear();
                if constexpr (std::is_void_v<R>)
                    std::move(h)(e, std::get<0>(result));
                else
                    std::move(h)(e, std::get<0>(result), std::move(std::get<1>(result)));
            }));
    }
};

}  // namespace redlock::detail

#endif
