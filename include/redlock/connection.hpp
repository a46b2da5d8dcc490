// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_CONNECTION_HPP
#define REDLOCK_CONNECTION_HPP

#include <chrono>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/resp.hpp>

namespace redlock {

namespace detail {
class connection_impl;
}

/// An argument of a Redis command: a string (any bytes) or an integer.
template <class T>
concept command_argument = std::convertible_to<const T&, std::string_view> || std::integral<T>;

/// @brief One Redis command, encoded once as a RESP array of bulk strings (binary-safe).
class command
{
public:
    command() = default;

    /// Each argument is a string (any bytes) or an integer.
    template <command_argument... Args>
    requires(sizeof...(Args) > 0) explicit command(const Args&... args)
    {
        begin(sizeof...(Args));
        (add(args), ...);
    }

    /// The command whose arguments are the strings `args` (any bytes), in order.
    command(std::initializer_list<std::string_view> args);

    /// The RESP bytes of the command.
    std::string_view bytes() const noexcept { return bytes_; }

private:
    void begin(std::size_t n);
    void add(std::string_view arg);
    void add(std::int64_t arg);
    template <std::integral I>
    requires(!std::same_as<I, std::int64_t>) void add(I arg)
    {
        add(static_cast<std::int64_t>(arg));
    }

    std::string bytes_;
};

/// @brief Several commands sent as one pipelined batch; see connection::async_exec.
class request
{
public:
    request() = default;

    /// Appends one command; each argument is a string (any bytes) or an integer.
    template <command_argument... Args>
    requires(sizeof...(Args) > 0) request& push(const Args&... args)
    {
        command c(args...);
        bytes_.append(c.bytes());
        ++size_;
        return *this;
    }

    /// Appends an already encoded command.
    request& push(const command& c)
    {
        bytes_.append(c.bytes());
        ++size_;
        return *this;
    }

    /// The number of commands.
    std::size_t size() const noexcept { return size_; }
    /// The RESP bytes of all the commands.
    std::string_view bytes() const noexcept { return bytes_; }
    /// Removes every command, so that the request can be filled again.
    void clear() noexcept
    {
        bytes_.clear();
        size_ = 0;
    }

private:
    std::string bytes_;
    std::size_t size_ = 0;
};

/// Counters of one connection, for monitoring and benchmarks.
struct connection_stats
{
    std::uint64_t requests = 0;  ///< Requests accepted (health PINGs included).
    std::uint64_t replies = 0;   ///< Replies read.
    std::uint64_t writes = 0;    ///< Writes issued; requests / writes is the coalescing factor.
    std::uint64_t connects = 0;  ///< Successful (re)connections.
    std::uint64_t drops = 0;     ///< Connections lost after being established.
};

/// @brief A multiplexed, pipelined, self-healing connection to one Redis master.
///
/// Connects on construction and keeps reconnecting (exponential backoff with jitter) until
/// closed or destroyed. Any number of async_exec operations may be outstanding; the commands of
/// all of them go out coalesced into as few writes as possible and the replies come back in
/// order. This is the transport that redlock::client uses, exposed for raw commands.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: async_exec, async_wait_connected and close may be
/// called from any thread; all work runs on a strand of the executor given at construction.
class connection
{
public:
    /// The type of the executor given at construction.
    using executor_type = boost::asio::any_io_executor;

    // Overloads, not defaulted `connection_options` arguments: GCC 12 destroys a defaulted
    // argument twice when the argument list also holds a `co_await` (docs/usage.md §17), as
    // in `connection store(co_await asio::this_coro::executor, uri)`.

    /// Starts connecting to the master described by `cfg`, with default connection_options.
    connection(executor_type ex, master_config cfg);

    /// Starts connecting to the master described by `cfg`.
    /// Throws boost::system::system_error (error::invalid_option) when `opts` is invalid.
    connection(executor_type ex, master_config cfg, connection_options opts);

    /// Parses `uri` (see parse_master_uri) and starts connecting, with default
    /// connection_options; throws boost::system::system_error (error::invalid_uri) on a bad URI.
    connection(executor_type ex, std::string_view uri);

    /// Parses `uri` (see parse_master_uri) and starts connecting; throws on a bad URI or options.
    connection(executor_type ex, std::string_view uri, connection_options opts);

    /// Closes the connection; outstanding operations complete with connection_closed.
    ~connection();

    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// The strand on which the connection runs.
    executor_type get_executor() const noexcept;

    /// @brief Sends `cmd` and completes with its reply.
    ///
    /// A server error reply completes with the error value of its prefix (error::noscript,
    /// error::wrongtype, ..., error::server_error) and the reply, whose single node holds the
    /// server's message.
    ///
    /// @param cmd The command to send.
    /// @param timeout Deadline for the reply; zero means none (the connection's health check
    /// still bounds the wait). On expiry: error::request_timeout.
    /// @param token The completion token (by default `boost::asio::deferred`).
    ///
    /// @par Handler signature
    /// `void(error_code, resp::reply)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total: the operation completes with operation_aborted at once; the
    /// command may still have been executed by the server, and its reply is read and dropped, so
    /// later requests are unaffected.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_exec(command cmd, std::chrono::milliseconds timeout, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, resp::reply)>(
            [this](auto handler, command c, std::chrono::milliseconds t) {
                async_exec_impl(std::move(c), t, std::move(handler));
            },
            token, std::move(cmd), timeout);
    }

    /// @brief Sends every command of `req` in one batch and completes with all the replies,
    /// in order. The error is the first server error among them (the replies are all there),
    /// or the transport's error (then the replies are empty). Same deadline and cancellation
    /// rules as the single-command overload. An empty request completes at once with no reply.
    ///
    /// @par Handler signature
    /// `void(error_code, std::vector<resp::reply>)`
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_exec(request req, std::chrono::milliseconds timeout, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken,
                                           void(error_code, std::vector<resp::reply>)>(
            [this](auto handler, request r, std::chrono::milliseconds t) {
                async_exec_batch_impl(std::move(r), t, std::move(handler));
            },
            token, std::move(req), timeout);
    }

    /// async_exec without a deadline.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_exec(command cmd, CompletionToken&& token = {})
    {
        return async_exec(std::move(cmd), std::chrono::milliseconds(0),
                          std::forward<CompletionToken>(token));
    }

    /// @brief Completes when the current connection attempt settles: with no error when the
    /// connection is ready, else with the reason it is down (see last_error_detail()).
    ///
    /// @par Handler signature
    /// `void(error_code)`
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_wait_connected(CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code)>(
            [this](auto handler) { async_wait_connected_impl(std::move(handler)); }, token);
    }

    /// Closes for good: outstanding operations fail with connection_closed. Idempotent.
    void close();

    /// Counters; call on the connection's executor (or when nothing runs).
    connection_stats stats() const;

    /// Why the connection is down, naming the master (never its password); empty when up.
    /// Call on the connection's executor.
    std::string last_error_detail() const;

private:
    void async_exec_impl(
        command cmd, std::chrono::milliseconds timeout,
        boost::asio::any_completion_handler<void(error_code, resp::reply)> handler);
    void async_exec_batch_impl(
        request req, std::chrono::milliseconds timeout,
        boost::asio::any_completion_handler<void(error_code, std::vector<resp::reply>)> handler);
    void async_wait_connected_impl(boost::asio::any_completion_handler<void(error_code)> handler);

    std::shared_ptr<detail::connection_impl> impl_;
};

}  // namespace redlock

#endif
