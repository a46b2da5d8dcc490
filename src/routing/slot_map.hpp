// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_SLOT_MAP_HPP
#define REDLOCK_SRC_CLUSTER_SLOT_MAP_HPP

// Which node of a Redis Cluster serves which hash slot, as a CLUSTER SLOTS reply says and
// MOVED redirections correct it.

#include "routing/endpoint.hpp"
#include "routing/key_slot.hpp"

#include <redlock/resp.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

struct parsed_slot_map;

/// @brief The 16384 hash slots of a Redis Cluster, each served by one shard primary or by
/// none (uncovered).
///
/// A shard is identified by its primary's address (host and port): every slot range served
/// by one primary maps to one shard. Shard indices are stable: @ref moved only ever appends,
/// so a caller may keep per-shard state (a connection) in a vector indexed like the shards.
/// A shard that loses all its slots stays, serving none. Replicas are not kept: a Redlock
/// master is written to, which only a primary accepts.
///
/// A plain value (about 32 KiB for the slots), copied and compared as such.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class slot_map
{
public:
    /// @brief A map with no shard and every slot uncovered.
    slot_map();

    /**
     * @brief Builds the map from the nodes of a `CLUSTER SLOTS` reply, RESP2 or RESP3.
     *
     * The reply is an array of entries `[start, end, primary, replica...]`; `start` and `end`
     * are integers, `0 <= start <= end < 16384`, and each node is
     * `[host, port, id, metadata]`, where `host` is a string or null, `port` an integer 1 to
     * 65535, `id` a string, and `metadata` (Redis 7+) a map (RESP3) or a flat array of
     * name/value pairs (RESP2). Servers before 7 omit the metadata, servers before 4 also the
     * id; both are accepted, and elements after the metadata are ignored. Replicas are checked
     * as nodes, then dropped. An empty array is a valid reply: no slot is covered.
     *
     * Hosts the cluster leaves unknown are resolved as the Redis documentation of
     * `CLUSTER SLOTS` says: an empty or null host is the node that answered,
     * `answering_host`; `?` (a node told to prefer host names that has none) is the `ip` of
     * its metadata, as it is not necessarily the node that answered.
     *
     * @param nodes  The reply in pre-order, as `resp::parser::nodes()` gives it. Leading
     *               attributes are skipped.
     * @param answering_host  The host the reply came from, as the client reached it.
     * @return The map, or why the reply is not a valid `CLUSTER SLOTS` reply: an error reply,
     *         a wrong type, a slot range out of order or beyond 16383, overlapping ranges, a
     *         port out of range, an unknown host that cannot be resolved, one address with
     *         two node ids or one node id at two addresses, nodes nested other than as above.
     *         Never throws for a malformed reply; throws only std::bad_alloc.
     */
    static parsed_slot_map parse(std::span<const resp::node_view> nodes,
                                 std::string_view answering_host);

    /// @brief The number of shards known (those serving no slot included).
    std::size_t shards() const noexcept { return shards_.size(); }

    /// @brief The primary of shard `i`. @throws std::out_of_range if `i >= shards()`.
    const cluster_endpoint& shard(std::size_t i) const { return shards_.at(i); }

    /// @brief The shard serving `slot`; nullopt for an uncovered slot or a slot >= 16384.
    std::optional<std::size_t> shard_of(std::uint16_t slot) const noexcept
    {
        if (slot >= slot_count || owner_[slot] == 0)
            return std::nullopt;
        return std::size_t{owner_[slot]} - 1;
    }

    /// @brief The shard whose primary is at `to`'s address (the id is not compared).
    std::optional<std::size_t> find(const cluster_endpoint& to) const noexcept;

    /// @brief How many slots are served by some shard.
    std::size_t covered_slots() const noexcept { return covered_; }

    /// @brief Whether every slot is served by some shard.
    bool covers_all() const noexcept { return covered_ == slot_count; }

    /**
     * @brief Re-points `slot` to the primary at `to` after a MOVED redirection, adding a shard
     *        when `to` is at a new address.
     *
     * Only `slot` changes; the cluster usually moved more (a whole range), which the next
     * MOVED or a fresh `CLUSTER SLOTS` tells. A new shard takes `to`'s id (empty from a
     * redirection); a known one keeps its own.
     *
     * @return The shard now serving `slot`; nullopt, with nothing changed, when `slot` is
     *         >= 16384, `to` has no host, the unknown host `?` or port 0, or a new shard would make more shards than
     *         slots (then the map is stale beyond repair: parse a fresh `CLUSTER SLOTS`).
     */
    std::optional<std::size_t> moved(std::uint16_t slot, const cluster_endpoint& to);

    /// Equal when the shards (in order) and every slot's shard are.
    friend bool operator==(const slot_map&, const slot_map&) = default;

private:
    std::vector<cluster_endpoint> shards_;
    // Per slot, the serving shard's index + 1; 0 for an uncovered slot. Always slot_count long.
    std::vector<std::uint16_t> owner_;
    std::size_t covered_ = 0;
};

/// @brief What slot_map::parse returns: the map, or why the reply is not one.
struct parsed_slot_map
{
    /// The map; empty when the reply was rejected.
    std::optional<slot_map> map;
    /// Why the reply was rejected, for diagnostics (e.g. next to error::unexpected_reply);
    /// empty when it was accepted.
    std::string error;

    /// Whether the reply was accepted.
    explicit operator bool() const noexcept { return map.has_value(); }
};

}  // namespace redlock::detail

#endif
