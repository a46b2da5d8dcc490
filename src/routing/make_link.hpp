// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUTING_MAKE_LINK_HPP
#define REDLOCK_SRC_ROUTING_MAKE_LINK_HPP

#include <memory>

#include "routing/master_link.hpp"

namespace redlock::detail {

class cluster_master;

/// A standalone Redis as a Redlock master: every command on its one connection
/// (routing/standalone_link.cpp).
std::unique_ptr<master_link> make_standalone_link(std::shared_ptr<node_connection> node);
/// A Redis Cluster as one Redlock master: each command routed by its key's hash slot
/// (routing/cluster_link.cpp).
std::unique_ptr<master_link> make_cluster_link(std::shared_ptr<cluster_master> cluster);

}  // namespace redlock::detail

#endif
