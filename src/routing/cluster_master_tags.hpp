// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUTING_CLUSTER_MASTER_TAGS_HPP
#define REDLOCK_SRC_ROUTING_CLUSTER_MASTER_TAGS_HPP

// What the tag of a reply to the cluster master says (its files share it; not a public header).

#include <cstdint>

namespace redlock::detail::cluster_tag {

// A routed command's tag is its index. Replies to CLUSTER SLOTS carry map_bit and the node
// asked; to WAIT, wait_bit and the node; to HELLO 3 and CLIENT TRACKING, tracking_bit.
inline constexpr std::uint32_t map_bit = 1u << 31;
inline constexpr std::uint32_t wait_bit = 1u << 30;
inline constexpr std::uint32_t tracking_bit = 1u << 29;
inline constexpr std::uint32_t kind_bits = map_bit | wait_bit | tracking_bit;

}  // namespace redlock::detail::cluster_tag

#endif
