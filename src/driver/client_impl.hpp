// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLIENT_IMPL_HPP
#define REDLOCK_SRC_CLIENT_IMPL_HPP

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include <redlock/client.hpp>
#include <redlock/options.hpp>

#include "driver/op_context.hpp"
#include "runtime/op_registry.hpp"

namespace redlock::detail {

/// @brief A client's shared state over real connections: an op_context (what operations use)
/// whose masters it makes from their configurations, whose connections' callbacks (identity,
/// warnings, availability, invalidations) it wires to the quarantine, the events and the
/// waiting room, and which lets go of every operation when the execution context shuts down.
class client_impl final : public op_context, public shutdown_participant
{
public:
    client_impl(asio::any_io_executor ex, client_config cfg, std::vector<master_config> configs);
    ~client_impl();

    void start();

    /// The execution context is shutting down (shutdown_registry): every tracked operation is
    /// abandoned and let go, the client is closed for new operations, and what the connections
    /// sent is delivered.
    void on_shutdown() noexcept override;
    std::shared_ptr<void> keep_alive() noexcept override { return weak_from_this().lock(); }

private:
    shutdown_registry* registry_;  // of the execution context
};

/// The library's way into a client (the public class names it as a friend).
struct client_access
{
    static const std::shared_ptr<client_impl>& impl(const client& c) noexcept { return c.impl_; }
};

}  // namespace redlock::detail

#endif
