// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/invalidation.hpp"

namespace redlock::detail {

// The shape (Redis docs, "Client-side caching", RESP3): a push of two elements, the bulk
// string "invalidate" then an array of the keys, or a null for all keys.
std::optional<invalidation> read_invalidation(const resp::reply& push)
{
    using resp::type;
    if (push.size() < 3 || push[0].data_type != type::push || push[0].size != 2)
        return std::nullopt;
    const auto& name = push[1];
    if (name.depth != 1 ||
        (name.data_type != type::bulk_string && name.data_type != type::simple_string) ||
        name.value != "invalidate")
        return std::nullopt;
    const auto& what = push[2];
    invalidation inv;
    if (what.data_type == type::null)
    {
        inv.all = true;
        return push.size() == 3 ? std::optional(inv) : std::nullopt;
    }
    if (what.data_type != type::array || push.size() != 3 + what.size)
        return std::nullopt;
    inv.keys.reserve(what.size);
    for (std::size_t i = 3; i < push.size(); ++i)
    {
        const auto& k = push[i];
        if (k.depth != 2 ||
            (k.data_type != type::bulk_string && k.data_type != type::simple_string))
            return std::nullopt;
        inv.keys.emplace_back(k.value);
    }
    return inv;
}

}  // namespace redlock::detail
