// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_REPLY_ROUTE_HPP
#define REDLOCK_SRC_CLUSTER_REPLY_ROUTE_HPP

// What a cluster master does with a node's reply to a command it routed: hand it to the
// command's owner, or follow a redirection. Sans-io: the decision only; cluster_master acts.

#include "routing/redirect.hpp"

#include <redlock/resp.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace redlock::detail {

/// @brief How many redirections one command follows before its vote fails. A key moves at
/// most twice in a resharding (MOVED to the new owner, or ASK during the migration and MOVED
/// once it is done); more means the nodes disagree, which a fresh slot map settles.
inline constexpr unsigned max_redirects = 5;

/// @brief The decision on one reply.
struct reply_route
{
    /// Set: send the command again as it says (MOVED: to that node from now on; ASK: to that
    /// node, once, after ASKING). Empty: the reply is the command's answer, for its owner.
    std::optional<redirect> follow;
    /// Whether the slot map is stale and should be read again (CLUSTER SLOTS): after any MOVED,
    /// a CLUSTERDOWN (a slot not bound to a node), or a redirection that cannot be followed.
    bool refresh = false;

    friend bool operator==(const reply_route&, const reply_route&) = default;
};

/// @brief Decides what to do with `head`, the first node of a reply from the node at
/// `answering_host`, to a command that followed `hops` redirections so far.
///
/// - Not an error: the answer. So are other errors, TRYAGAIN (a multi-key command during a
///   migration: the master's vote fails for this attempt, the next attempt retries) and
///   CLUSTERDOWN (the same, and the map is read again).
/// - `MOVED` or `ASK` that parses, with `hops < max_redirects`: followed; a MOVED also asks
///   for a fresh map (the whole range probably moved, the reply names one slot).
/// - A redirection that does not parse (the unknown host `?`) or one too many: the answer
///   (the vote fails) and a fresh map.
reply_route route_reply(const resp::node_view& head, std::string_view answering_host,
                        unsigned hops);

}  // namespace redlock::detail

#endif
