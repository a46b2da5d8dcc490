// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_SERVER_INFO_HPP
#define REDLOCK_SRC_PROTOCOL_SERVER_INFO_HPP

// What a master says of itself in `INFO` and `CONFIG GET`, as far as the client needs it:
// which process it is (run_id, a new random value at every start) and how long it has run,
// for the restart quarantine; how it keeps its keys (memory limit and eviction, persistence,
// replication), for the deployment checks (algorithm/deployment_check.hpp).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <redlock/resp.hpp>

namespace redlock::detail {

struct server_identity
{
    std::string run_id;               ///< 40 hex characters; empty when unknown.
    std::int64_t uptime_seconds = 0;  ///< uptime_in_seconds.
};

/// @brief The identity in the text of an `INFO server` reply ("field:value" lines, CRLF or LF,
/// "# Section" headers), or nullopt when run_id or uptime_in_seconds is missing or malformed.
std::optional<server_identity> parse_server_identity(std::string_view info);

/// @brief How a master keeps its keys. Each field is unknown (nullopt, empty) when the master
/// did not say, or said something unreadable: unknown is never taken for either answer.
struct server_facts
{
    std::optional<std::int64_t> maxmemory;  ///< INFO memory `maxmemory` (bytes; 0: no limit).
    std::string maxmemory_policy;           ///< INFO memory `maxmemory_policy`.
    std::optional<bool> aof_enabled;        ///< INFO persistence `aof_enabled`.
    std::optional<bool> rdb_save_points;    ///< `CONFIG GET save` is not empty.
    std::string role;                       ///< INFO replication `role` ("master", "slave").
    std::optional<std::int64_t> connected_replicas;  ///< INFO replication `connected_slaves`.
};

/// @brief The facts in the text of an `INFO` reply with the default sections (memory,
/// persistence and replication among them); `rdb_save_points` is left unknown (it is not in
/// INFO: see parse_save_points).
server_facts parse_server_facts(std::string_view info);

/// @brief Whether the reply of `CONFIG GET save` names RDB save points: true for a non-empty
/// value ("3600 1 300 100"), false for `save ""`, nullopt for anything else (an error reply:
/// CONFIG refused by an ACL rule or renamed away).
std::optional<bool> parse_save_points(std::span<const resp::node_view> config_get_reply);

}  // namespace redlock::detail

#endif
