// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_CLIENT_HPP
#define REDLOCK_CLIENT_HPP

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>

namespace redlock {

namespace asio = boost::asio;

namespace detail {
class client_impl;
}

/// @brief A Redlock client over N independent Redis masters.
///
/// Holds one multiplexed, pipelined connection per master. Every operation sends its command to
/// all masters at once and judges the quorum (N/2 + 1) as replies arrive, deciding as soon as
/// the outcome is certain. All operations accept any Asio completion token: the default
/// (`asio::deferred`, so `co_await client.async_lock(...)` works), `asio::use_awaitable`, a
/// plain callback, `asio::use_future`, `asio::deferred`.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: the async_ operations may be started from any thread;
/// all work runs on one strand of the executor given at construction, and handlers complete on
/// their associated executor.
///
/// @par Object lifetimes
/// The client must outlive the operations it started. Destroying it closes the connections:
/// outstanding operations complete with connection_closed (keys they set expire by TTL).
class client
{
public:
    using executor_type = asio::any_io_executor;

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
    /// resource), error::invalid_option (bad `opts`), error::connection_closed (the client was
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
    template <class CompletionToken = asio::deferred_t>
    auto async_lock(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return asio::async_initiate<CompletionToken, void(error_code, lock)>(
            [this](auto handler, std::string r, const lock_options& o) {
                async_lock_impl(std::move(r), o, std::move(handler));
            },
            token, std::string(resource), opts);
    }

    /// async_lock with the client's default lock options.
    template <class CompletionToken = asio::deferred_t>
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
    template <class CompletionToken = asio::deferred_t>
    auto async_try_lock(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return asio::async_initiate<CompletionToken, void(error_code, std::optional<lock>)>(
            [this](auto handler, std::string r, const lock_options& o) {
                async_try_lock_impl(std::move(r), o, std::move(handler));
            },
            token, std::string(resource), opts);
    }

    template <class CompletionToken = asio::deferred_t>
    auto async_try_lock(std::string_view resource, CompletionToken&& token = {})
    {
        return async_try_lock(resource, default_options(), std::forward<CompletionToken>(token));
    }

    /// @brief Releases `l` on every master (compare-and-delete: a key holding another token is
    /// left alone). Waits for every master or the release deadline.
    ///
    /// Completes with success when the token was deleted on a majority; error::lock_lost when
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
    template <class CompletionToken = asio::deferred_t>
    auto async_unlock(const lock& l, CompletionToken&& token = {})
    {
        return asio::async_initiate<CompletionToken, void(error_code)>(
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
    template <class CompletionToken = asio::deferred_t>
    auto async_extend(const lock& l, std::chrono::milliseconds ttl, CompletionToken&& token = {})
    {
        return asio::async_initiate<CompletionToken, void(error_code, lock)>(
            [this](auto handler, const lock& lk, std::chrono::milliseconds t) {
                async_extend_impl(lk, t, std::move(handler));
            },
            token, l, ttl);
    }

    /// @brief Completes once every master's first connection attempt has settled, with the
    /// number of masters connected (an error only when fewer than a majority are).
    ///
    /// @par Handler signature
    /// `void(error_code, std::size_t)`
    template <class CompletionToken = asio::deferred_t>
    auto async_wait_connected(CompletionToken&& token = {})
    {
        return asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
            [this](auto handler) { async_wait_connected_impl(std::move(handler)); }, token);
    }

    /// The default lock options given in the configuration.
    const lock_options& default_options() const noexcept;

    /// Closes every connection. Idempotent; the destructor calls it.
    void close();

private:
    void async_lock_impl(std::string resource, const lock_options& opts,
                         asio::any_completion_handler<void(error_code, lock)> handler);
    void async_try_lock_impl(std::string resource, const lock_options& opts,
                             asio::any_completion_handler<void(error_code, std::optional<lock>)> handler);
    void async_unlock_impl(const lock& l, asio::any_completion_handler<void(error_code)> handler);
    void async_extend_impl(const lock& l, std::chrono::milliseconds ttl,
                           asio::any_completion_handler<void(error_code, lock)> handler);
    void async_wait_connected_impl(asio::any_completion_handler<void(error_code, std::size_t)> handler);

    std::shared_ptr<detail::client_impl> impl_;
};

}  // namespace redlock

#endif
