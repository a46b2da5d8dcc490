// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_REDIRECT_HPP
#define REDLOCK_SRC_CLUSTER_REDIRECT_HPP

// The error replies of a Redis Cluster that are not failures of the command but directions:
// MOVED and ASK (go to another node), TRYAGAIN and CLUSTERDOWN (try again later). See the
// Redis Cluster specification, "Redirection and resharding".

#include "routing/endpoint.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace redlock::detail {

/// @brief Which redirection a node answered.
enum class redirect_kind : std::uint8_t
{
    moved,  ///< The slot is served by another node from now on: update the slot map.
    ask,    ///< The slot is migrating: send this one command, after ASKING, to the target only.
};

/// @brief A MOVED or ASK error reply, parsed.
struct redirect
{
    redirect_kind kind = redirect_kind::moved;  ///< MOVED or ASK.
    std::uint16_t slot = 0;                     ///< The key's hash slot, below 16384.
    cluster_endpoint to;                        ///< The node to ask; its `id` is empty.

    /// Equal when all fields are.
    friend bool operator==(const redirect&, const redirect&) = default;
};

/// @brief Parses the text of an error reply (its value, without the leading `-`), e.g.
/// `MOVED 3999 127.0.0.1:6381` or `ASK 3999 127.0.0.1:6381`.
///
/// The format is exactly `<MOVED|ASK> <slot> <host>:<port>`, single spaces, no trailing text.
/// The host is everything before the last colon, so an IPv6 address comes unbracketed as
/// the server writes it (`MOVED 1 ::1:6381`); a bracketed one is accepted too. An empty host
/// (`MOVED 1 :6381`, a node with `cluster-preferred-endpoint-type unknown-endpoint`) means
/// the node that answered: `answering_host`.
///
/// @return nullopt for any other error, and for a malformed redirection: a slot that is not
///         a decimal number below 16384, a port that is not one of 1 to 65535, an empty host
///         with an empty `answering_host`, the unknown host `?` (a node told to prefer host
///         names that has none: read CLUSTER SLOTS again), missing or extra fields.
std::optional<redirect> parse_redirect(std::string_view error_text,
                                       std::string_view answering_host);

/// @brief Whether the error reply's text (without the leading `-`) says that the cluster
/// cannot serve the command right now but may soon: its first word is `TRYAGAIN` (a
/// multi-key command during a slot migration) or `CLUSTERDOWN` (the cluster is down or the
/// slot unbound). A retry after a pause may succeed; a retry right away probably will not.
bool is_cluster_retryable(std::string_view error_text) noexcept;

}  // namespace redlock::detail

#endif
