// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_DEPLOYMENT_CHECK_HPP
#define REDLOCK_SRC_ALGORITHM_DEPLOYMENT_CHECK_HPP

// The deployment checks (docs/algorithm.md, "Deployment checks"): a master that can lose a
// lock key — evicted, forgotten at a restart, missing on a promoted replica — silently breaks
// mutual exclusion. What a master says of itself at each handshake is turned here into
// warnings; they never refuse a connection. No I/O: the connection passes the facts in.

#include <cstdint>
#include <vector>

#include <redlock/error.hpp>

#include "protocol/server_info.hpp"

namespace redlock::detail {

/// @brief A set of deployment warnings: error::eviction_can_drop_locks, persistence_off,
/// master_has_replicas and master_is_replica.
class deployment_warnings
{
public:
    /// Adds `e`, one of the four warnings (anything else is ignored).
    void add(error e) noexcept;
    bool contains(error e) const noexcept;
    bool empty() const noexcept { return bits_ == 0; }
    /// The warnings of this set that `before` does not have.
    deployment_warnings new_since(deployment_warnings before) const noexcept;
    /// The warnings as error codes, in the order of the enum.
    std::vector<error_code> codes() const;

    friend bool operator==(deployment_warnings, deployment_warnings) = default;

private:
    std::uint8_t bits_ = 0;
};

/// @brief What `facts` say about the safety of lock keys on that master. An unknown fact
/// never gives a warning:
/// - eviction_can_drop_locks: maxmemory > 0 and a policy other than `noeviction` (the
///   `volatile-*` ones too: lock keys carry a TTL);
/// - persistence_off: `aof_enabled:0` and no RDB save points;
/// - master_has_replicas: `role:master` with `connected_slaves` > 0;
/// - master_is_replica: `role:slave`.
deployment_warnings check_deployment(const server_facts& facts);

}  // namespace redlock::detail

#endif
