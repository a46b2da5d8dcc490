// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CONNECTION_IMPL_HPP
#define REDLOCK_SRC_CONNECTION_IMPL_HPP

#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include <redlock/config.hpp>

#include "runtime/op_registry.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

/// @brief The state behind a public redlock::connection: its node_connection and the requests
/// in flight, owned as a client's operations are (op_registry.hpp): each async_exec tracks
/// itself here, and the execution context's shutdown lets them go and delivers what was sent.
class connection_impl final : public std::enable_shared_from_this<connection_impl>,
                              public shutdown_participant
{
public:
    connection_impl(boost::asio::any_io_executor strand, master_config cfg, connection_options opts)
        : conn(std::make_shared<node_connection>(strand, std::move(cfg), opts)),
          close_timeout_(opts.close_timeout),
          registry_(&shutdown_registry::of(strand))
    {
        registry_->add(this);
    }

    ~connection_impl() { registry_->remove(this); }

    connection_impl(const connection_impl&) = delete;
    connection_impl& operator=(const connection_impl&) = delete;

    void on_shutdown() noexcept override
    {
        ops.abandon_all();
        conn->abandon_waiters();
        // As a client's connections: what left is delivered, within the close timeout.
        node_connection::drain_now({&conn, 1}, std::chrono::steady_clock::now() + close_timeout_);
    }

    std::shared_ptr<void> keep_alive() noexcept override { return weak_from_this().lock(); }

    std::shared_ptr<node_connection> conn;
    op_list ops;  // the async_exec operations in flight

private:
    std::chrono::milliseconds close_timeout_;
    shutdown_registry* registry_;
};

}  // namespace redlock::detail

#endif
