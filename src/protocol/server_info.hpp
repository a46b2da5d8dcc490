// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_SERVER_INFO_HPP
#define REDLOCK_SRC_PROTOCOL_SERVER_INFO_HPP

// What a master says of itself in `INFO server`, as far as the client needs it: which process
// it is (run_id, a new random value at every start) and how long it has run.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

struct server_identity
{
    std::string run_id;               ///< 40 hex characters; empty when unknown.
    std::int64_t uptime_seconds = 0;  ///< uptime_in_seconds.
};

/// @brief The identity in the text of an `INFO server` reply ("field:value" lines, CRLF or LF,
/// "# Section" headers), or nullopt when run_id or uptime_in_seconds is missing or malformed.
std::optional<server_identity> parse_server_identity(std::string_view info);

}  // namespace redlock::detail

#endif
