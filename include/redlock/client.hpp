// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_CLIENT_HPP
#define REDLOCK_CLIENT_HPP

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <redlock/config.hpp>
#include <redlock/detail/client_initiation.hpp>
#include <redlock/detail/with_lock.hpp>
#include <redlock/error.hpp>
#include <redlock/hold.hpp>
#include <redlock/holders.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>
#include <redlock/with_diagnostics.hpp>

namespace redlock {

namespace detail {
class client_impl;
struct client_access;
}  // namespace detail

/// @brief A Redlock client over N independent Redis masters.
///
/// Holds one multiplexed, pipelined connection per master. Every operation sends its command to
/// all masters at once and judges the quorum (N/2 + 1) as replies arrive, deciding as soon as
/// the outcome is certain. All operations accept any Asio completion token: the default
/// (`default_token_t`: `boost::asio::deferred`, so `co_await client.async_lock(...)` works),
/// `boost::asio::use_awaitable`, a plain callback, `boost::asio::use_future`, `boost::asio::deferred`,
/// `boost::asio::as_tuple(...)`.
///
/// @par Errors as exceptions
/// With the default token under `co_await`, with `use_awaitable` and with `use_future`, a
/// failed operation throws operation_error: a `boost::system::system_error` whose message
/// names the operation, the resource, the reason and each master's outcome (with_diagnostics
/// is applied for you). Handlers that take the `error_code` see the same details in the lock
/// they receive (`lock::describe()`, `lock::reason()`, `lock::masters()`).
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
    /// The type of the executor given at construction.
    using executor_type = boost::asio::any_io_executor;

    /// Parses the masters' URIs and starts connecting. Throws boost::system::system_error with
    /// error::invalid_uri or error::invalid_option (and a message naming the problem) on bad
    /// configuration.
    client(executor_type ex, client_config cfg);
    ~client();

    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// The strand, on the executor given at construction, on which all the client's work runs.
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
    /// every failed attempt the keys are released on every master that may hold them (all but
    /// those that refused the attempt) before retrying or completing.
    ///
    /// @par Handler signature
    /// `void(error_code, lock)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total. During an attempt: the attempt stops, the keys are
    /// released on all masters (the release has its own deadline, not cut short), then the
    /// operation completes with operation_aborted. During a backoff delay: completes at once.
    template <class CompletionToken = default_token_t>
    auto async_lock(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, lock)>(detail::initiate_lock{{this}},
                                                        std::forward<CompletionToken>(token),
                                                        std::string(resource), opts);
    }

    /// async_lock with the client's default lock options.
    template <class CompletionToken = default_token_t>
    auto async_lock(std::string_view resource, CompletionToken&& token = {})
    {
        return async_lock(resource, default_options(), std::forward<CompletionToken>(token));
    }

    /// @brief One attempt to acquire `resource`. Contention is not an error: it completes
    /// with an empty optional. Errors: no_quorum, validity_expired, invalid_argument,
    /// invalid_option (bad `opts`), connection_closed (the client was closed),
    /// operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, std::optional<lock>)`
    ///
    /// @par Per-operation cancellation
    /// As async_lock.
    template <class CompletionToken = default_token_t>
    auto async_try_lock(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, std::optional<lock>)>(
            detail::initiate_try_lock{{this}}, std::forward<CompletionToken>(token),
            std::string(resource), opts);
    }

    /// async_try_lock with the client's default lock options.
    template <class CompletionToken = default_token_t>
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
    /// it was no longer there on a majority (taken over or dropped: the keys that were still
    /// ours are deleted all the same), error::lock_expired for the same once `l`'s validity
    /// had ended before the call; error::no_quorum when too many masters failed to answer;
    /// error::invalid_argument for an empty lock; error::connection_closed when the client
    /// was closed. The deadline is the client's default `release_timeout`.
    ///
    /// @par Handler signature
    /// `void(error_code)`
    ///
    /// @par Per-operation cancellation
    /// terminal: completes with operation_aborted at once; the release requests already sent
    /// still execute on the masters.
    template <class CompletionToken = default_token_t>
    auto async_unlock(const lock& l, CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code)>(detail::initiate_unlock{{this}},
                                                  std::forward<CompletionToken>(token), l);
    }

    /// @brief Extends `l` to a new TTL: compare-and-PEXPIRE on every master, never re-creating
    /// a missing key. Same quorum and validity rule as acquisition, measured from the start of
    /// the extension.
    ///
    /// Completes with the extended lock (new valid_until), or with error::lock_lost (the keys
    /// hold another token or are gone on enough masters while `l` was valid; the keys still
    /// ours are released), error::lock_expired (the same once `l`'s validity had ended before
    /// the call), error::no_quorum (too many masters failed or timed out), error::validity_expired,
    /// error::invalid_argument (an empty lock, a TTL that is not positive, or one whose
    /// attempt timeout would be longer), error::connection_closed (the client was closed),
    /// operation_aborted; the returned lock then carries the diagnostics.
    ///
    /// @par Handler signature
    /// `void(error_code, lock)`
    ///
    /// @par Per-operation cancellation
    /// terminal: completes with operation_aborted; the lock is left as it was (the PEXPIREs
    /// already sent may still apply, which only lengthens a lock the caller holds).
    template <class CompletionToken = default_token_t>
    auto async_extend(const lock& l, std::chrono::milliseconds ttl, CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, lock)>(
            detail::initiate_extend{{this}}, std::forward<CompletionToken>(token), l, ttl);
    }

    /// @brief Acquires several resources as one lock: on each master one script sets every key
    /// with the token, or none of them (if any exists). Same quorum, validity, release,
    /// extension and retry rules as async_lock; a conflict on any resource leaves no key.
    /// Errors as async_lock; error::invalid_argument for an empty list, an empty resource, a
    /// key longer than max_key_size or a resource named twice.
    ///
    /// @par Handler signature
    /// `void(error_code, lock)`
    template <class CompletionToken = default_token_t>
    auto async_lock_all(std::vector<std::string> resources, lock_options opts,
                        CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, lock)>(detail::initiate_lock_all{{this}},
                                                        std::forward<CompletionToken>(token),
                                                        std::move(resources), opts);
    }

    /// @brief Asks every master whether the lock's token is still in its keys.
    ///
    /// Completes with how many masters hold it and the smallest PTTL among them (waits for
    /// every master or the attempt deadline). Errors: invalid_argument (empty lock),
    /// connection_closed (the client was closed before or during the check: the count would
    /// take closed connections for masters that lost the lock), operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, check_result)`
    template <class CompletionToken = default_token_t>
    auto async_check(const lock& l, CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, check_result)>(
            detail::initiate_check{{this}}, std::forward<CompletionToken>(token), l);
    }

    /// @brief Who holds `resource`, read from the masters: the holders that a majority of them
    /// agree on, each with the identity it published (lock_options::identity), its own fencing
    /// token (0 without one, never an earlier holder's: holder_info::fencing_token) and how
    /// long a majority still holds it; and what each master holds (never a token). Writes
    /// nothing.
    ///
    /// `opts` says what to read as acquisitions with those options take it: `permits` a
    /// semaphore's permit keys; otherwise the resource's key and its readers' set (a mutex's,
    /// a writer's or the readers' of a read-write lock). Also its `attempt_timeout` (the read's
    /// deadline), and its `ttl` and `drift_factor`, which should be the holders': a holder is
    /// reported only with validity left, the majority's shortest time left less the read's
    /// duration and the drift allowance of that TTL, as an acquisition counts its own
    /// (docs/algorithm.md, "Who holds a resource").
    ///
    /// Waits for every master or the deadline. Errors: no_quorum (fewer than a majority
    /// answered: the masters' answers are in the result, no holder is), invalid_argument (an
    /// empty resource, a key too long, keys a Redis Cluster master cannot read in one slot;
    /// holders_result::message says which), invalid_option (bad `opts`), connection_closed,
    /// operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, holders_result)`
    template <class CompletionToken = default_token_t>
    auto async_holders(std::string_view resource, lock_options opts, CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, holders_result)>(
            detail::initiate_holders{{this}}, std::forward<CompletionToken>(token), resource, opts);
    }

    /// @brief async_holders with the client's default options.
    template <class CompletionToken = default_token_t>
    auto async_holders(std::string_view resource, CompletionToken&& token = {})
    {
        return async_holders(resource, default_options(), std::forward<CompletionToken>(token));
    }

    /// @brief Completes with who holds `resource` as soon as it differs from `seen` (another
    /// holder, another fencing token, a holder gone or added): call it in a loop, passing what
    /// it gave, to follow a resource's holders as they change.
    ///
    /// Reads as async_holders does, and compares the holders (by holder_info::id, reader and
    /// fencing_token; not their time left). Between reads it is woken by the masters' client
    /// tracking on the resource's keys (armed before each read, so a change between the read
    /// and the wait is not lost), by this client's own acquisitions and releases, when a
    /// holder's validity runs out, and at least every `reread_every` (the bound on how late a
    /// change is seen when a master refuses tracking or a push is lost).
    ///
    /// A read that fewer than a majority answer is a change when `seen` came from one that a
    /// majority answered: it completes with no_quorum (what each master said in the result;
    /// pass it back as `seen` to wait for a majority again). Else it is no change, and the
    /// masters are read again every `reread_every`. Other errors: invalid_argument,
    /// invalid_option (bad `opts`, `reread_every` not positive), connection_closed,
    /// operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, holders_result)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total: completes at once with operation_aborted.
    template <class CompletionToken = default_token_t>
    auto async_next_holders(std::string_view resource, lock_options opts,
                            const holders_result& seen, std::chrono::milliseconds reread_every,
                            CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, holders_result)>(
            detail::initiate_next_holders{{this}}, std::forward<CompletionToken>(token), resource,
            opts, seen.holders, detail::decided(seen), reread_every);
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
        static_assert(
            !traits::invocable || traits::is_awaitable,
            "async_with_lock: `work(lock)` must return boost::asio::awaitable<R> (write `work` as "
            "a "
            "coroutine: [](redlock::lock l) -> boost::asio::awaitable<R> { ...; co_return ...; })");
        static_assert(
            std::is_void_v<result_type> || std::is_default_constructible_v<result_type>,
            "the work's result type must be default-constructible (it is produced on failure)");
        if constexpr (!traits::is_awaitable)
        {
            return;  // only the static_assert above is reported
        }
        else if constexpr (std::is_void_v<result_type>)
        {
            return boost::asio::async_initiate<CompletionToken,
                                               void(std::exception_ptr, error_code)>(
                detail::initiate_with_lock<void, client>{this}, token, std::string(resource), opts,
                hold, std::move(work));
        }
        else
        {
            return boost::asio::async_initiate<CompletionToken,
                                               void(std::exception_ptr, error_code, result_type)>(
                detail::initiate_with_lock<result_type, client>{this}, token, std::string(resource),
                opts, hold, std::move(work));
        }
    }

    // The shorter forms are overloads rather than defaulted `hold_options` arguments, so that
    // a call needs no options temporary: GCC 12 destroys such a temporary twice when the call
    // is `co_await`ed (docs/usage.md §17).

    /// async_with_lock with the lock options `opts` and default hold options.
    template <class Work, class CompletionToken = boost::asio::use_awaitable_t<>>
    requires(!std::is_convertible_v<Work, hold_options>) auto async_with_lock(
        std::string_view resource, lock_options opts, Work work, CompletionToken&& token = {})
    {
        return async_with_lock(resource, opts, hold_options{}, std::move(work),
                               std::forward<CompletionToken>(token));
    }

    /// async_with_lock with the client's default lock options and default hold options.
    template <class Work, class CompletionToken = boost::asio::use_awaitable_t<>>
    requires(!std::is_convertible_v<Work, lock_options>) auto async_with_lock(
        std::string_view resource, Work work, CompletionToken&& token = {})
    {
        return async_with_lock(resource, default_options(), hold_options{}, std::move(work),
                               std::forward<CompletionToken>(token));
    }

    /// @brief Completes once every master's first connection attempt has settled, with the
    /// number of masters connected (an error only when fewer than a majority are).
    ///
    /// @par Handler signature
    /// `void(error_code, std::size_t)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total: completes at once with operation_aborted and the number
    /// of masters connected so far; the connections go on.
    template <class CompletionToken = default_token_t>
    auto async_wait_connected(CompletionToken&& token = {})
    {
        return detail::initiate<void(error_code, std::size_t)>(
            detail::initiate_wait_connected{{this}}, std::forward<CompletionToken>(token));
    }

    /// @brief Each master's connection state and counters, in configuration order (the index
    /// of diagnostics and events). A snapshot; safe to call from any thread.
    std::vector<master_info> master_states() const;

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
    /// @param resource The resource name as given to async_lock (without the key prefix).
    /// @param token The value stored in the keys (1 to max_key_size bytes).
    /// @param ttl The TTL the keys were set with (used by async_check's deadline).
    /// @param fencing_token The lock's fencing token, when it was taken with fencing (0: none):
    /// what `fencing_token()` of the rebuilt lock returns. Nothing checks it against the
    /// masters; it is carried for the holder's writes to the protected resource.
    /// @throws boost::system::system_error with error::invalid_argument, naming the part, for
    /// an empty resource or token, a non-positive TTL, a key over max_key_size or a resource
    /// named twice.
    lock lock_from_parts(std::string_view resource, std::string_view token,
                         std::chrono::milliseconds ttl, std::uint64_t fencing_token = 0) const;

    /// lock_from_parts for a multi-resource lock (async_lock_all).
    lock lock_from_parts(std::span<const std::string> resources, std::string_view token,
                         std::chrono::milliseconds ttl) const;

    /// @brief Closes every connection. Idempotent; the destructor calls it.
    ///
    /// Operations still in progress complete with error::connection_closed (unless a quorum
    /// had already answered). An acquisition attempt cut short still sends its release, to
    /// every master where its SET may have landed, also to those closed before the attempt
    /// knew it had failed (the shutdowns wait for the end of the handler that called close()).
    /// Locks already granted stay held until their TTL. Nothing that was sent is lost: each connection writes what is queued, shuts down its
    /// sending side and reads until the master closes, within
    /// `connection_options::close_timeout` (1 s by default) while the io_context runs, so
    /// every master executes the deletes of the releases that completed. When the io_context
    /// is destroyed instead, its destructor does that drain synchronously, within the same
    /// bound, for plain TCP and Unix-socket masters (a TLS connection is closed as it is).
    /// Past the bound (a master that does not answer) the rest is left to the keys' TTL.
    void close();

private:
    friend class lock_holder;
    friend struct detail::client_access;

    std::shared_ptr<detail::client_impl> impl_;
};

}  // namespace redlock

#endif
