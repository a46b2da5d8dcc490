// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// Establishing one connection of a node_connection: resolve, connect (TCP, TLS or Unix
// socket), the TLS handshake with its verification, and the Redis handshake (AUTH, SELECT,
// CLIENT SETNAME). The lifecycle that calls it (node_connection::run) is in node_connection.cpp.
#include "transport/node_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <openssl/ssl.h>

#include "protocol/resp_encoder.hpp"

namespace redlock::detail {

namespace {

bool is_ip_literal(const std::string& host)
{
    error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

std::unique_ptr<asio::ssl::context> make_tls_context(const master_config& cfg, error_code& ec,
                                                     std::string& why)
{
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                     asio::ssl::context::no_tlsv1_1);
    const auto& t = cfg.tls;
    auto fail = [&](const char* what, const std::string& file, const error_code& e) {
        ec = error::invalid_option;
        why = std::string(what) + " '" + file + "': " + e.message();
        return nullptr;
    };
    error_code e;
    if (!t.ca_file.empty() && ctx->load_verify_file(t.ca_file, e))
        return fail("cannot load CA file", t.ca_file, e);
    if (!t.ca_dir.empty() && ctx->add_verify_path(t.ca_dir, e))
        return fail("cannot use CA directory", t.ca_dir, e);
    if (t.ca_file.empty() && t.ca_dir.empty() && ctx->set_default_verify_paths(e))
        return fail("cannot load the default trust store", "", e);
    if (!t.cert_file.empty() && ctx->use_certificate_chain_file(t.cert_file, e))
        return fail("cannot load client certificate", t.cert_file, e);
    if (!t.key_file.empty() && ctx->use_private_key_file(t.key_file, asio::ssl::context::pem, e))
        return fail("cannot load client key", t.key_file, e);
    ctx->set_verify_mode(t.verify_peer ? asio::ssl::verify_peer : asio::ssl::verify_none);
    return ctx;
}

}  // namespace

asio::awaitable<error_code> node_connection::connect_once()
{
    connect_timed_out_ = false;
    const auto gen = gen_;
    connect_timer_.expires_after(opts_.connect_timeout);
    connect_timer_.async_wait([this, gen](const error_code& ec) {
        if (ec || gen != gen_ || state_ != state::connecting)
            return;
        connect_timed_out_ = true;
        resolver_.cancel();
        stream_.close();
    });

    error_code ec = co_await connect_stream();
    if (!ec)
        ec = co_await handshake();
    connect_timer_.cancel();
    if (ec && connect_timed_out_)
    {
        set_error(error::connect_failed, "connection attempt timed out after " +
                                             std::to_string(opts_.connect_timeout.count()) + " ms");
        ec = error::connect_failed;
    }
    co_return ec;
}

asio::awaitable<error_code> node_connection::connect_stream()
{
    using transport = master_config::transport_kind;
    if (cfg_.transport == transport::unix_socket)
    {
        auto& s = stream_.emplace_unix();
        auto [ec] = co_await s.async_connect(asio::local::stream_protocol::endpoint(cfg_.path),
                                             as_tuple_awaitable);
        if (ec)
        {
            set_error(error::connect_failed, "cannot connect to socket: " + ec.message());
            co_return error::connect_failed;
        }
        co_return error_code{};
    }

    auto [rec, endpoints] =
        co_await resolver_.async_resolve(cfg_.host, std::to_string(cfg_.port), as_tuple_awaitable);
    if (rec)
    {
        set_error(error::resolve_failed,
                  "cannot resolve host '" + cfg_.host + "': " + rec.message());
        co_return error::resolve_failed;
    }

    asio::ip::tcp::socket* sock = nullptr;
    if (cfg_.transport == transport::tls)
    {
        if (!tls_ctx_)
        {
            error_code cec;
            std::string why;
            tls_ctx_ = make_tls_context(cfg_, cec, why);
            if (cec)
            {
                set_error(cec, why);
                co_return cec;
            }
        }
        sock = &stream_.emplace_tls(*tls_ctx_).next_layer();
    }
    else
    {
        sock = &stream_.emplace_tcp();
    }

    auto [cec, ep] = co_await asio::async_connect(*sock, endpoints, as_tuple_awaitable);
    if (cec)
    {
        set_error(error::connect_failed, "cannot connect: " + cec.message());
        co_return error::connect_failed;
    }
    error_code ignored;
    // Lock requests are tiny and latency-bound: never let Nagle hold them back.
    sock->set_option(asio::ip::tcp::no_delay(true), ignored);

    if (cfg_.transport == transport::tls)
    {
        auto& tls = stream_.tls();
        const std::string& name = cfg_.tls.server_name.empty() ? cfg_.host : cfg_.tls.server_name;
        // SNI carries host names only (RFC 6066 forbids IP literals there).
        if (!is_ip_literal(name))
            SSL_set_tlsext_host_name(tls.native_handle(), name.c_str());
        if (cfg_.tls.verify_peer)
            tls.set_verify_callback(asio::ssl::host_name_verification(name));
        auto [hec] =
            co_await tls.async_handshake(asio::ssl::stream_base::client, as_tuple_awaitable);
        if (hec)
        {
            set_error(error::tls_handshake_failed, "TLS handshake failed: " + hec.message());
            co_return error::tls_handshake_failed;
        }
    }
    co_return error_code{};
}

bool node_connection::has_handshake() const noexcept
{
    return !cfg_.password.empty() || cfg_.db != 0 || !opts_.client_name.empty() || identity_fn_ ||
           deployment_fn_;
}

asio::awaitable<error_code> node_connection::handshake()
{
    // RESP2 login (AUTH / SELECT / CLIENT SETNAME), pipelined in one write. It works on every
    // Redis from 6.0 on (ACL users) without depending on HELLO; the parser reads RESP3 anyway.
    std::string out;
    int expected = 0;
    if (!cfg_.password.empty())
    {
        if (cfg_.username.empty())
            resp::append_command(out, "AUTH", cfg_.password);
        else
            resp::append_command(out, "AUTH", cfg_.username, cfg_.password);
        ++expected;
    }
    if (cfg_.db != 0)
    {
        resp::append_command(out, "SELECT", static_cast<std::int64_t>(cfg_.db));
        ++expected;
    }
    if (!opts_.client_name.empty())
    {
        resp::append_command(out, "CLIENT", "SETNAME", opts_.client_name);
        ++expected;
    }
    // Last, so that they run logged in: who the master is (on_identity) and how it keeps its
    // keys (on_deployment_warnings). A plain INFO (the default sections) rather than the four
    // needed: several section arguments need Redis 7, and its few KiB cost no round trip.
    identity_.reset();
    facts_ = {};
    const int info_reply = identity_fn_ || deployment_fn_ ? expected++ : -1;
    if (deployment_fn_)
        resp::append_command(out, "INFO");
    else if (identity_fn_)
        resp::append_command(out, "INFO", "server");
    const int save_reply = deployment_fn_ ? expected++ : -1;
    if (deployment_fn_)
        resp::append_command(out, "CONFIG", "GET", "save");
    if (expected == 0)
        co_return error_code{};

    auto [wec, wn] = co_await asio::async_write(stream_, asio::buffer(out), as_tuple_awaitable);
    (void)wn;
    if (wec)
    {
        set_error(error::handshake_failed, "handshake write failed: " + wec.message());
        co_return error::handshake_failed;
    }

    error_code first_error;
    std::string first_detail;
    for (int got = 0; got < expected;)
    {
        std::span<const resp::node_view> nodes;
        const auto st = mux_.parse_unmatched(nodes);
        if (st == resp::parse_status::failed)
        {
            set_error(error::protocol_error, "handshake: " + std::string(mux_.error()));
            co_return error::protocol_error;
        }
        if (st == resp::parse_status::done)
        {
            if (nodes[0].data_type == resp::type::push)
                continue;
            // Neither is a reason to refuse the connection: a master whose identity is unknown
            // only cannot be watched for restarts, and unknown facts give no warning.
            if (got == info_reply)
            {
                if (!resp::is_error(nodes[0].data_type))
                {
                    identity_ = parse_server_identity(nodes[0].value);
                    facts_ = parse_server_facts(nodes[0].value);
                }
                ++got;
                continue;
            }
            if (got == save_reply)
            {
                facts_.rdb_save_points = parse_save_points(nodes);
                ++got;
                continue;
            }
            if (resp::is_error(nodes[0].data_type) && !first_error)
            {
                first_error = error_from_server_reply(nodes[0].value);
                first_detail = "handshake rejected: " + std::string(nodes[0].value);
            }
            ++got;
            continue;
        }
        const auto space = mux_.read_space(min_read_space);
        auto [rec, n] = co_await stream_.async_read_some(asio::buffer(space.data(), space.size()),
                                                         as_tuple_awaitable);
        if (rec)
        {
            set_error(error::handshake_failed, "handshake read failed: " + rec.message());
            co_return error::handshake_failed;
        }
        mux_.commit_read(n);
    }
    if (first_error)
    {
        set_error(first_error, first_detail);
        co_return first_error;
    }
    co_return error_code{};
}

}  // namespace redlock::detail
