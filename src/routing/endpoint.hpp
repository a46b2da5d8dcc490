// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_ENDPOINT_HPP
#define REDLOCK_SRC_CLUSTER_ENDPOINT_HPP

// A node of a Redis Cluster as the cluster names it: in a CLUSTER SLOTS reply and in a MOVED
// or ASK redirection.

#include <cstdint>
#include <string>

namespace redlock::detail {

/// @brief Where a cluster node listens for clients, and which node it is.
///
/// `host` is what the cluster announced (an IP address, or a host name with
/// `cluster-preferred-endpoint-type hostname`), already resolved against the node that
/// answered when the cluster left it unknown. IPv6 addresses are kept without brackets.
struct cluster_endpoint
{
    std::string host;        ///< Host name or IP address, never empty.
    std::uint16_t port = 0;  ///< Client port, 1 to 65535.
    std::string id;  ///< The 40-character node id; empty when unknown (a redirection has none).

    /// Equal when all three fields are.
    friend bool operator==(const cluster_endpoint&, const cluster_endpoint&) = default;
};

/// @brief Whether `a` and `b` are one address (host and port; the id is not compared): how
/// a redirection's target, which has no id, is matched to a known node. Hosts are compared
/// as written, as the cluster writes a node's endpoint the same way in every reply.
inline bool same_address(const cluster_endpoint& a, const cluster_endpoint& b) noexcept
{
    return a.port == b.port && a.host == b.host;
}

}  // namespace redlock::detail

#endif
