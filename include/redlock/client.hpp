// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_CLIENT_HPP
#define REDLOCK_CLIENT_HPP

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <exception>
#include <tuple>
#include <type_traits>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/hold.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>

namespace redlock {


namespace detail {
class client_impl;

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
}  // namespace detail

/// @brief A Redlock client over N independent Redis masters.
///
/// Holds one multiplexed, pipelined connection per master. Every operation sends its command to
/// all masters at once and judges the quorum (N/2 + 1) as replies arrive, deciding as soon as
/// the outcome is certain. All operations accept any Asio completion token: the default
/// (`boost::asio::deferred`, so `co_await client.async_lock(...)` works), `boost::asio::use_awaitable`, a
/// plain callback, `boost::asio::use_future`, `boost::asio::deferred`.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: the async_ operations may be started from any thread;
/// all work runs on one strand of the executor given at construction, and handlers complete on
/// their associated executor.
///
/// @par Object lifetimes
/// The client must outlive the operations it started. Destroying it closes the connections
/// (see close()): outstanding operations complete with connection_closed once the io_context
/// runs. An io_context destroyed with operations outstanding destroys their handlers without
/// calling them, as Asio does with its own, and frees the client's internals; its destructor
/// first delivers what the connections had sent (see close()), blocking up to
/// `connection_options::close_timeout`.
class client
{
public:
    using executor_type = boost::asio::any_io_executor;

    /// Parses the masters' URIs and starts connecting. Throws boost::system::system_error with
    /// error::invalid_uri or error::invalid_option (and a message naming the problem) on bad
    /// configuration.
    client(executor_type ex, client_config cfg);
    ~client();

    client(const client&) = delete;
    client& operator=(const client&) = delete;

    executor_type get_executor() const noexcept;

    /// The number of masters.
    std::size_t size() const noexcept;

    /// @brief Acquires `resource`, retrying with random backoff per `opts`.
    ///
    /// Completes with the held lock, or with error::contended, error::no_quorum,
    /// error::validity_expired (the last attempt's cause), error::invalid_argument (empty
    /// resource, or a key longer than max_key_size), error::invalid_option (bad `opts`, see
    /// validate()), error::connection_closed (the client was
    /// closed), or operation_aborted; the lock then carries the diagnostics of the last attempt. After
    /// every failed attempt the keys are released on every master before retrying or
    /// completing.
    ///
    /// @par Handler signature
    /// `void(error_code, lock)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total. During an attempt: the attempt stops, the keys are
    /// released on all masters (the release has its own deadline, not cut short), then the
    /// operation completes with operation_aborted. During a backoff delay: completes at once.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_lock(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
            [this](auto handler, std::string r, const lock_options& o) {
                async_lock_impl(std::move(r), o, std::move(handler));
            },
            token, std::string(resource), opts);
    }

    /// async_lock with the client's default lock options.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_lock(std::string_view resource, CompletionToken&& token = {})
    {
        return async_lock(resource, default_options(), std::forward<CompletionToken>(token));
    }

    /// @brief One attempt to acquire `resource`. Contention is not an error: it completes
    /// with an empty optional. Errors: no_quorum, validity_expired, invalid_argument,
    /// operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, std::optional<lock>)`
    ///
    /// @par Per-operation cancellation
    /// As async_lock.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_try_lock(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, std::optional<lock>)>(
            [this](auto handler, std::string r, const lock_options& o) {
                async_try_lock_impl(std::move(r), o, std::move(handler));
            },
            token, std::string(resource), opts);
    }

    template <class CompletionToken = boost::asio::deferred_t>
    auto async_try_lock(std::string_view resource, CompletionToken&& token = {})
    {
        return async_try_lock(resource, default_options(), std::forward<CompletionToken>(token));
    }

    /// @brief Releases `l` on every master (compare-and-delete: a key holding another token is
    /// left alone).
    ///
    /// Completes with success as soon as the token was deleted on a majority and the delete to
    /// every other master needs nothing more from this process (written to its connection, and
    /// not an EVALSHA that might meet NOSCRIPT): the lock can then be taken by anyone, and the
    /// other masters execute their delete without this process (the answers are still read in
    /// the background until every master answered or the release deadline passed). Otherwise
    /// it waits for every master or the release deadline. Completes with error::lock_lost when
    /// it was no longer there on a majority (expired or taken over: the keys that were still
    /// ours are deleted all the same); error::no_quorum when too many masters failed to answer.
    /// The deadline is the client's default `release_timeout`.
    ///
    /// @par Handler signature
    /// `void(error_code)`
    ///
    /// @par Per-operation cancellation
    /// terminal: completes with operation_aborted at once; the release requests already sent
    /// still execute on the masters.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_unlock(const lock& l, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code)>(
            [this](auto handler, const lock& lk) { async_unlock_impl(lk, std::move(handler)); },
            token, l);
    }

    /// @brief Extends `l` to a new TTL: compare-and-PEXPIRE on every master, never re-creating
    /// a missing key. Same quorum and validity rule as acquisition, measured from the start of
    /// the extension.
    ///
    /// Completes with the extended lock (new valid_until), or with error::lock_lost (the lock
    /// is gone; the keys still ours are released), error::validity_expired, operation_aborted;
    /// the returned lock then carries the diagnostics.
    ///
    /// @par Handler signature
    /// `void(error_code, lock)`
    ///
    /// @par Per-operation cancellation
    /// terminal: completes with operation_aborted; the lock is left as it was (the PEXPIREs
    /// already sent may still apply, which only lengthens a lock the caller holds).
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_extend(const lock& l, std::chrono::milliseconds ttl, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
            [this](auto handler, const lock& lk, std::chrono::milliseconds t) {
                async_extend_impl(lk, t, std::move(handler));
            },
            token, l, ttl);
    }

    /// @brief Acquires several resources as one lock: on each master one script sets every key
    /// with the token, or none of them (if any exists). Same quorum, validity, release,
    /// extension and retry rules as async_lock; a conflict on any resource leaves no key.
    /// Errors as async_lock; error::invalid_argument for an empty list, an empty resource, a
    /// key longer than max_key_size or a resource named twice.
    ///
    /// @par Handler signature
    /// `void(error_code, lock)`
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_lock_all(std::vector<std::string> resources, lock_options opts, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
            [this](auto handler, std::vector<std::string> r, const lock_options& o) {
                async_lock_all_impl(std::move(r), o, std::move(handler));
            },
            token, std::move(resources), opts);
    }

    /// @brief Asks every master whether the lock's token is still in its keys.
    ///
    /// Completes with how many masters hold it and the smallest PTTL among them (waits for
    /// every master or the attempt deadline). Errors: invalid_argument (empty lock),
    /// connection_closed, operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, check_result)`
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_check(const lock& l, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, check_result)>(
            [this](auto handler, const lock& lk) { async_check_impl(lk, std::move(handler)); }, token, l);
    }

    /// @brief Acquires `resource`, runs `work(lock)` while the lock is kept alive by automatic
    /// extension, and releases afterwards whatever happens.
    ///
    /// `work` is a callable taking a `redlock::lock` and returning `boost::asio::awaitable<R>`. It runs
    /// on a strand of the client's io_context, bound to the lock's loss signal: when the lock
    /// is lost, its pending operation is cancelled (terminal) and, once it returns, the
    /// operation completes with error::lock_lost. The release always runs: after a normal
    /// return, an exception, a cancellation or a loss.
    ///
    /// Completes with the work's result; or with the acquisition's error (R default-constructed);
    /// or with lock_lost; or operation_aborted; or with the work's exception.
    ///
    /// @par Handler signature
    /// `void(std::exception_ptr, error_code, R)`, or `void(std::exception_ptr, error_code)` when
    /// the work returns `awaitable<void>`. With `co_await` (the default token, or
    /// `use_awaitable`) the work's exception is rethrown and the result is
    /// `std::tuple<error_code, R>` (`error_code` alone for a void work): a lost lock is an
    /// outcome to branch on, not an exception.
    ///
    /// @par Default completion token
    /// `boost::asio::use_awaitable`, not `boost::asio::deferred`: Boost 1.81 cannot `co_await` a deferred
    /// operation whose signature starts with `std::exception_ptr` followed by more arguments
    /// (`awaitable_async_op_handler<R(std::exception_ptr, Ts...)>::resume` tests `*result`
    /// instead of `*result.ex_` and does not compile). An explicit `boost::asio::deferred` still works
    /// for composition, but not with a direct `co_await` on 1.81.
    ///
    /// @par Per-operation cancellation
    /// terminal, partial, total: during acquisition, as async_lock; while the work runs, the
    /// work is cancelled, then the lock is released and the operation completes with
    /// operation_aborted.
    template <class Work, class CompletionToken = boost::asio::use_awaitable_t<>>
    auto async_with_lock(std::string_view resource, lock_options opts, hold_options hold, Work work,
                         CompletionToken&& token = {})
    {
        using traits = detail::with_lock_work<Work>;
        using result_type = typename traits::result_type;
        static_assert(traits::invocable,
                      "async_with_lock: `work` must be callable with a redlock::lock, e.g. "
                      "[](redlock::lock l) -> boost::asio::awaitable<void> { ... }");
        static_assert(!traits::invocable || traits::is_awaitable,
                      "async_with_lock: `work(lock)` must return boost::asio::awaitable<R> (write `work` as a "
                      "coroutine: [](redlock::lock l) -> boost::asio::awaitable<R> { ...; co_return ...; })");
        static_assert(std::is_void_v<result_type> || std::is_default_constructible_v<result_type>,
                      "the work's result type must be default-constructible (it is produced on failure)");
        if constexpr (!traits::is_awaitable)
        {
            return;  // only the static_assert above is reported
        }
        else if constexpr (std::is_void_v<result_type>)
        {
            return boost::asio::async_initiate<CompletionToken, void(std::exception_ptr, error_code)>(
                [this](auto handler, std::string r, lock_options o, hold_options h, Work w) {
                    start_with_lock<void>(std::move(handler), std::move(r), o, h, std::move(w));
                },
                token, std::string(resource), opts, hold, std::move(work));
        }
        else
        {
            return boost::asio::async_initiate<CompletionToken, void(std::exception_ptr, error_code, result_type)>(
                [this](auto handler, std::string r, lock_options o, hold_options h, Work w) {
                    start_with_lock<result_type>(std::move(handler), std::move(r), o, h, std::move(w));
                },
                token, std::string(resource), opts, hold, std::move(work));
        }
    }

    /// async_with_lock with the client's default lock options and default hold options.
    template <class Work, class CompletionToken = boost::asio::use_awaitable_t<>>
    auto async_with_lock(std::string_view resource, Work work, CompletionToken&& token = {})
    {
        return async_with_lock(resource, default_options(), hold_options{}, std::move(work),
                               std::forward<CompletionToken>(token));
    }

    /// @brief Completes once every master's first connection attempt has settled, with the
    /// number of masters connected (an error only when fewer than a majority are).
    ///
    /// @par Handler signature
    /// `void(error_code, std::size_t)`
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_wait_connected(CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
            [this](auto handler) { async_wait_connected_impl(std::move(handler)); }, token);
    }

    /// The default lock options given in the configuration.
    const lock_options& default_options() const noexcept;

    /// @brief Rebuilds a lock from its parts, so that a process that knows them (another one,
    /// or this one after a restart) can release, extend or check what it owns.
    ///
    /// The key is this client's `key_prefix` + `resource`, as for async_lock. The validity is
    /// not known (the keys' owner measured it): the lock is not `held()` and its
    /// `valid_until()` is the clock's epoch until an async_extend succeeds, which measures a
    /// new validity from its own start. async_unlock, async_extend and async_check act on the
    /// keys whose value is `token` and leave any other owner's keys alone; a token of another
    /// Redlock client (a peer library) works the same way. Keep tokens secret: whoever knows
    /// one can release the lock.
    ///
    /// @param ttl The TTL the keys were set with (used by async_check's deadline).
    /// @throws boost::system::system_error with error::invalid_argument, naming the part, for
    /// an empty resource or token, a non-positive TTL, a key over max_key_size or a resource
    /// named twice.
    lock lock_from_parts(std::string_view resource, std::string_view token, std::chrono::milliseconds ttl) const;

    /// lock_from_parts for a multi-resource lock (async_lock_all).
    lock lock_from_parts(std::span<const std::string> resources, std::string_view token,
                         std::chrono::milliseconds ttl) const;

    /// @brief Closes every connection. Idempotent; the destructor calls it.
    ///
    /// Operations still in progress complete with error::connection_closed (unless a quorum
    /// had already answered). An acquisition attempt cut short still sends its release.
    /// Nothing that was sent is lost: each connection writes what is queued, shuts down its
    /// sending side and reads until the master closes, within
    /// `connection_options::close_timeout` (1 s by default) while the io_context runs, so
    /// every master executes the deletes of the releases that completed. When the io_context
    /// is destroyed instead, its destructor does that drain synchronously, within the same
    /// bound, for plain TCP and Unix-socket masters (a TLS connection is closed as it is).
    /// Past the bound (a master that does not answer) the rest is left to the keys' TTL.
    void close();

private:
    friend class lock_holder;

    // Cancellation of async_with_lock, shared between the initiating function (where the
    // caller's slot is connected) and the body (where the phases are).
    struct with_lock_control
    {
        boost::asio::any_io_executor strand;
        boost::asio::cancellation_signal acquire;  // bound to the acquisition
        lock_holder* holder = nullptr;      // set while the work runs
        boost::asio::cancellation_signal work;     // bound to the work (with the loss)
        bool cancelled = false;
    };

    static bool is_operation_aborted(const std::exception_ptr& e) noexcept
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

    template <class R, class Work>
    static boost::asio::awaitable<std::tuple<error_code, std::conditional_t<std::is_void_v<R>, int, R>>>
    with_lock_body(client& c, std::shared_ptr<with_lock_control> ctl, std::string resource,
                   lock_options opts, hold_options hold, Work work)
    {
        using value_type = std::conditional_t<std::is_void_v<R>, int, R>;
        auto [ec, l] = co_await c.async_lock(
            resource, opts,
            boost::asio::bind_cancellation_slot(ctl->acquire.slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
        if (ec)
            co_return std::tuple<error_code, value_type>{ec, value_type{}};
        // The acquisition completed by dispatch from the client's strand, so this coroutine now
        // runs nested inside the strand's handler; the work's first step would too, and would
        // hold up the client's I/O on every thread while it runs. A post starts it afresh.
        co_await boost::asio::post(ctl->strand, boost::asio::use_awaitable);
        if (ctl->cancelled)
        {
            co_await c.async_unlock(l, boost::asio::as_tuple(boost::asio::use_awaitable));
            co_return std::tuple<error_code, value_type>{boost::asio::error::operation_aborted, value_type{}};
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
                boost::asio::bind_cancellation_slot(ctl->work.slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
            failure = e;
        }
        else
        {
            auto [e, r] = co_await boost::asio::co_spawn(
                ctl->strand, work(l),
                boost::asio::bind_cancellation_slot(ctl->work.slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
            failure = e;
            result = std::move(r);
        }
        ctl->holder = nullptr;
        const error_code status = holder.status();
        auto [rec] = co_await holder.async_release(boost::asio::as_tuple(boost::asio::use_awaitable));
        (void)rec;
        const bool lost = status && status != error::released;
        // A work cancelled by the loss or by the caller usually ends with the operation_aborted
        // exception of what it was awaiting: that is our cancellation, not the work's failure.
        if (failure && (lost || ctl->cancelled) && is_operation_aborted(failure))
            failure = nullptr;
        if (failure)
            std::rethrow_exception(failure);
        if (ctl->cancelled)
            co_return std::tuple<error_code, value_type>{boost::asio::error::operation_aborted, std::move(result)};
        if (lost)
            co_return std::tuple<error_code, value_type>{error::lock_lost, std::move(result)};
        co_return std::tuple<error_code, value_type>{error_code{}, std::move(result)};
    }

    template <class R, class Handler, class Work>
    void start_with_lock(Handler handler, std::string resource, lock_options opts, hold_options hold, Work work)
    {
        auto ctl = std::make_shared<with_lock_control>();
        // A strand of its own on the client's io_context: not the client's strand, so that a
        // work that computes does not stop the client's I/O (the extensions among it).
        ctl->strand = make_work_strand();
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
        boost::asio::co_spawn(ctl->strand,
                       with_lock_body<R>(*this, ctl, std::move(resource), opts, hold, std::move(work)),
                       boost::asio::bind_executor(handler_ex, [h = std::move(handler), ctl](std::exception_ptr e, auto result) mutable {
                           auto own_slot = boost::asio::get_associated_cancellation_slot(h);
                           if (own_slot.is_connected())
                               own_slot.clear();
                           if constexpr (std::is_void_v<R>)
                               std::move(h)(e, std::get<0>(result));
                           else
                               std::move(h)(e, std::get<0>(result), std::move(std::get<1>(result)));
                       }));
    }

    /// A new strand on the executor the client was constructed with (get_executor() is the
    /// client's own strand on it).
    executor_type make_work_strand() const;

    void async_lock_all_impl(std::vector<std::string> resources, const lock_options& opts,
                             boost::asio::any_completion_handler<void(error_code, lock)> handler);
    void async_check_impl(const lock& l, boost::asio::any_completion_handler<void(error_code, check_result)> handler);
    void async_lock_impl(std::string resource, const lock_options& opts,
                         boost::asio::any_completion_handler<void(error_code, lock)> handler);
    void async_try_lock_impl(std::string resource, const lock_options& opts,
                             boost::asio::any_completion_handler<void(error_code, std::optional<lock>)> handler);
    void async_unlock_impl(const lock& l, boost::asio::any_completion_handler<void(error_code)> handler);
    void async_extend_impl(const lock& l, std::chrono::milliseconds ttl,
                           boost::asio::any_completion_handler<void(error_code, lock)> handler);
    void async_wait_connected_impl(boost::asio::any_completion_handler<void(error_code, std::size_t)> handler);

    std::shared_ptr<detail::client_impl> impl_;
};

}  // namespace redlock

#endif
