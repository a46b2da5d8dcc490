// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_INVALIDATION_HPP
#define REDLOCK_SRC_PROTOCOL_INVALIDATION_HPP

#include <optional>
#include <string_view>
#include <vector>

#include <redlock/resp.hpp>

namespace redlock::detail {

/// @brief A client-tracking invalidation pushed by a master (RESP3 `>2 invalidate [keys]`):
/// the keys it names changed (deleted, overwritten, expired, evicted), or, when `all`, every
/// tracked key may have (FLUSHALL, the tracking table full). The views point into the push.
struct invalidation
{
    bool all = false;
    std::vector<std::string_view> keys;
};

/// @brief Reads a push message as an invalidation; std::nullopt when it is another push
/// (pub/sub messages, a malformed push).
std::optional<invalidation> read_invalidation(const resp::reply& push);

}  // namespace redlock::detail

#endif
