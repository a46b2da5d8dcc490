// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUTING_REQUEST_MODE_HPP
#define REDLOCK_SRC_ROUTING_REQUEST_MODE_HPP

#include <cstdint>

namespace redlock::detail {

/// What a command sent to a master asks of it besides its routing (a cluster master acts on
/// it; a standalone master sends every command plainly).
enum class request_mode : std::uint8_t
{
    plain,
    /// A write whose answer counts only once the shard's replicas acknowledged it (when
    /// the cluster master asks for acknowledgements: client_config::cluster_replica_acks).
    replicated,
    /// A read that the node tracks for this client (`CLIENT CACHING yes` before it, on a
    /// connection with client tracking on): it pushes an invalidation when the key changes.
    tracked_read,
};

}  // namespace redlock::detail

#endif
