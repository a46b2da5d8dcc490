// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/connection.hpp>

#include <optional>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>

#include "driver/connection_impl.hpp"
#include "driver/exec_op.hpp"
#include "protocol/resp_encoder.hpp"
#include "runtime/completion.hpp"
#include "runtime/strand.hpp"
#include "transport/node_connection.hpp"

namespace redlock {

namespace asio = boost::asio;

// ---- command --------------------------------------------------------------------------------

command::command(std::initializer_list<std::string_view> args)
{
    begin(args.size());
    for (auto a : args)
        add(a);
}

void command::begin(std::size_t n) { resp::append_array_header(bytes_, n); }
void command::add(std::string_view arg) { resp::append_bulk(bytes_, arg); }
void command::add(std::int64_t arg) { resp::append_bulk(bytes_, arg); }

// ---- connection -----------------------------------------------------------------------------

connection::connection(executor_type ex, master_config cfg, connection_options opts)
{
    error_code ec;
    std::string why;
    opts.validate(ec, why);
    if (ec)
        throw boost::system::system_error(ec, why);
    impl_ = std::make_shared<detail::connection_impl>(detail::make_strand_of(ex), std::move(cfg),
                                                      std::move(opts));
    asio::dispatch(impl_->conn->get_executor(), [conn = impl_->conn] { conn->start(); });
}

connection::connection(executor_type ex, std::string_view uri, connection_options opts)
    : connection(std::move(ex), parse_master_uri(uri), std::move(opts))
{}

connection::connection(executor_type ex, master_config cfg)
    : connection(std::move(ex), std::move(cfg), connection_options{})
{}

connection::connection(executor_type ex, std::string_view uri)
    : connection(std::move(ex), parse_master_uri(uri), connection_options{})
{}

connection::~connection() { close(); }

connection::executor_type connection::get_executor() const noexcept
{
    return impl_->conn->get_executor();
}

void connection::close()
{
    asio::dispatch(impl_->conn->get_executor(), [conn = impl_->conn] { conn->close(); });
}

connection_stats connection::stats() const
{
    const auto& s = impl_->conn->stats();
    return {s.requests, s.replies, s.writes, s.connects, s.drops};
}

std::string connection::last_error_detail() const { return impl_->conn->last_error_detail(); }

void connection::async_exec_impl(
    command cmd, std::chrono::milliseconds timeout,
    asio::any_completion_handler<void(error_code, resp::reply)> handler)
{
    auto op = std::make_shared<detail::exec_op>(impl_, std::move(handler));
    op->bind_cancellation();
    asio::dispatch(impl_->conn->get_executor(),
                   [op, cmd = std::move(cmd), timeout] { op->start(cmd.bytes(), 1, timeout); });
}

void connection::async_exec_batch_impl(
    request req, std::chrono::milliseconds timeout,
    asio::any_completion_handler<void(error_code, std::vector<resp::reply>)> handler)
{
    auto op = std::make_shared<detail::exec_op>(impl_, std::move(handler));
    op->bind_cancellation();
    asio::dispatch(impl_->conn->get_executor(), [op, req = std::move(req), timeout] {
        op->start(req.bytes(), static_cast<std::uint32_t>(req.size()), timeout);
    });
}

void connection::async_wait_connected_impl(asio::any_completion_handler<void(error_code)> handler)
{
    asio::dispatch(impl_->conn->get_executor(),
                   [impl = impl_->conn, h = std::move(handler)]() mutable {
                       auto shared_h = std::make_shared<decltype(h)>(std::move(h));
                       // The connection keeps the waiter: a reference to it from there would be a cycle that
                       // an io_context destroyed while connecting could not break.
                       impl->wait_settled([ex = impl->get_executor(), shared_h](error_code ec) {
                           detail::dispatch_completion(*shared_h, ex, ec);
                       });
                   });
}

}  // namespace redlock
