// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_FENCING_HPP
#define REDLOCK_SRC_ALGORITHM_FENCING_HPP

// Fencing tokens across a quorum (docs/algorithm.md, "Fencing tokens across a quorum"): the
// names of a resource's fence counter and of its record (whose value it was committed for),
// and the part of a key Redis Cluster hashes, so that they and the lock key share a slot.

#include <string>
#include <string_view>

namespace redlock::detail {

/// @brief The part of `key` that Redis Cluster hashes to choose its slot: the text between
/// the first `{` and the first `}` after it when that text is not empty (a hash tag), else the
/// whole key.
constexpr std::string_view hashed_part(std::string_view key) noexcept
{
    const auto open = key.find('{');
    if (open == std::string_view::npos)
        return key;
    const auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1)
        return key;
    return key.substr(open + 1, close - open - 1);
}

/// @brief A key beside `key` in the same hash slot, named by `suffix`: `key` wrapped in a hash
/// tag, `{key}<suffix>`, or, when `key` has a hash tag of its own, `key<suffix>` (its tag stays
/// the first). A key with a `}` but no hash tag cannot be wrapped (the tag would end at its
/// `}`): it gets `key<suffix>`, in another slot, which matters only to a Redis Cluster.
inline std::string slot_sibling(std::string_view key, std::string_view suffix)
{
    const bool as_is =
        hashed_part(key).size() != key.size() || key.find('}') != std::string_view::npos;
    std::string out;
    out.reserve(key.size() + suffix.size() + 2);
    if (as_is)
        out.append(key);
    else
        out.append("{").append(key).append("}");
    out.append(suffix);
    return out;
}

/// The key of the fence counter of the lock key `key`: `{key}:fence` (see slot_sibling).
inline std::string fence_key(std::string_view key) { return slot_sibling(key, ":fence"); }

/// The key of the fence counter's record of `key`: `{key}:fence:holder`, the fence key's name
/// and ":holder" (see slot_sibling), in the counter's slot. The fence commit sets it beside the
/// counter, to the first 16 hex characters of the SHA-1 of the value the counter was committed
/// for (the holder's, holder_id); without expiry, as the counter. client::async_holders takes
/// a master's counter as a holder's term only where this record names the holder.
inline std::string fence_holder_key(std::string_view key)
{
    return slot_sibling(key, ":fence:holder");
}

}  // namespace redlock::detail

#endif
