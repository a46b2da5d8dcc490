// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_TRANSPORT_STREAM_HPP
#define REDLOCK_SRC_TRANSPORT_STREAM_HPP

#include <utility>
#include <variant>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/stream.hpp>

namespace redlock::detail {

namespace asio = boost::asio;

/// @brief The byte stream to one master: TCP, TLS over TCP, or a Unix domain socket.
///
/// A closed variant rather than a virtual interface: the hot path (read_some / write_some with
/// a lambda handler) stays a direct call, and no handler is type-erased. A fresh stream is made
/// for every connection attempt because a TLS stream cannot be reused after an error.
class any_stream
{
public:
    using executor_type = asio::any_io_executor;
    using tcp_socket = asio::ip::tcp::socket;
    using tls_stream = asio::ssl::stream<tcp_socket>;
    using unix_socket = asio::local::stream_protocol::socket;

    explicit any_stream(executor_type ex) : ex_(std::move(ex)) {}

    executor_type get_executor() const { return ex_; }

    tcp_socket& emplace_tcp() { return v_.emplace<tcp_socket>(ex_); }
    tls_stream& emplace_tls(asio::ssl::context& ctx) { return v_.emplace<tls_stream>(ex_, ctx); }
    unix_socket& emplace_unix() { return v_.emplace<unix_socket>(ex_); }

    bool is_tls() const noexcept { return std::holds_alternative<tls_stream>(v_); }
    tls_stream& tls() { return std::get<tls_stream>(v_); }
    tcp_socket& tcp() { return std::get<tcp_socket>(v_); }
    unix_socket& local_socket() { return std::get<unix_socket>(v_); }

    /// The underlying socket of a TCP or TLS stream; nullptr otherwise.
    tcp_socket* tcp_layer() noexcept
    {
        if (auto* s = std::get_if<tcp_socket>(&v_))
            return s;
        if (auto* t = std::get_if<tls_stream>(&v_))
            return &t->next_layer();
        return nullptr;
    }

    /// Closes the socket: every pending operation completes with operation_aborted.
    void close() noexcept
    {
        boost::system::error_code ignored;
        if (auto* s = tcp_layer())
            s->close(ignored);
        else if (auto* u = std::get_if<unix_socket>(&v_))
            u->close(ignored);
    }

    /// Shuts down the sending direction of the socket (TCP or Unix; for TLS, of the TCP
    /// layer under it): the peer reads end-of-stream after the bytes already written.
    void shutdown_send() noexcept
    {
        boost::system::error_code ignored;
        if (auto* s = tcp_layer())
            s->shutdown(tcp_socket::shutdown_send, ignored);
        else if (auto* u = std::get_if<unix_socket>(&v_))
            u->shutdown(unix_socket::shutdown_send, ignored);
    }

    /// The file descriptor of a plain TCP or Unix socket that is open; -1 otherwise (TLS too).
    int plain_native_handle() noexcept
    {
        if (auto* s = std::get_if<tcp_socket>(&v_); s && s->is_open())
            return s->native_handle();
        if (auto* u = std::get_if<unix_socket>(&v_); u && u->is_open())
            return u->native_handle();
        return -1;
    }

    void reset() noexcept { v_.emplace<std::monostate>(); }

    template <class MutableBuffers, class Token>
    decltype(auto) async_read_some(const MutableBuffers& b, Token&& token)
    {
        return visit_stream([&](auto& s) -> decltype(auto) {
            return s.async_read_some(b, std::forward<Token>(token));
        });
    }

    template <class ConstBuffers, class Token>
    decltype(auto) async_write_some(const ConstBuffers& b, Token&& token)
    {
        return visit_stream([&](auto& s) -> decltype(auto) {
            return s.async_write_some(b, std::forward<Token>(token));
        });
    }

private:
    template <class F>
    decltype(auto) visit_stream(F&& f)
    {
        // monostate is never visited: operations start only on an emplaced stream.
        if (auto* s = std::get_if<tcp_socket>(&v_))
            return f(*s);
        if (auto* u = std::get_if<unix_socket>(&v_))
            return f(*u);
        return f(std::get<tls_stream>(v_));
    }

    executor_type ex_;
    std::variant<std::monostate, tcp_socket, tls_stream, unix_socket> v_;
};

}  // namespace redlock::detail

#endif
