// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_REPLY_SINK_HPP
#define REDLOCK_SRC_PROTOCOL_REPLY_SINK_HPP

#include <cstdint>
#include <span>

#include <redlock/error.hpp>
#include <redlock/resp.hpp>

namespace redlock::detail {

/// @brief Receives the outcome of one request sent through a connection.
///
/// on_reply is called exactly once per accepted request unless the request was abandoned
/// first. With `ec` set (connection lost, connect failed, closed) `nodes` is empty; otherwise
/// `nodes` is the reply (possibly a server error reply) and views the read buffer: copy what
/// must outlive the call.
class reply_sink
{
public:
    virtual void on_reply(std::uint32_t tag, const error_code& ec,
                          std::span<const resp::node_view> nodes) = 0;

protected:
    ~reply_sink() = default;
};

/// Identifies an accepted request for abandon().
struct request_ticket
{
    std::uint64_t seq = 0;
};

}  // namespace redlock::detail

#endif
