// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/holders_reply.hpp"

#include <charconv>
#include <string_view>

namespace redlock::detail {

namespace {

bool to_int(std::string_view text, std::int64_t& out)
{
    const auto* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, out);
    return !text.empty() && r.ec == std::errc() && r.ptr == end;
}

bool is_text(const resp::node_view& n)
{
    return n.data_type == resp::type::bulk_string || n.data_type == resp::type::simple_string;
}

bool is_nil(const resp::node_view& n)
{
    // A script's Lua false: nil (RESP2), or null or false (RESP3).
    return n.data_type == resp::type::null ||
           (n.data_type == resp::type::boolean && n.value == "f");
}

}  // namespace

bool read_holders_reply(std::span<const resp::node_view> nodes, std::size_t string_keys,
                        master_holdings& out, std::string& why)
{
    out = master_holdings{};
    if (nodes.empty() || nodes[0].data_type != resp::type::array)
        return why = "the read of the holders returned no array", false;
    const auto count = nodes[0].size;
    if (count < 2 + 2 * string_keys || (count - 2) % 2 != 0 || nodes.size() != count + 1)
        return why = "the read of the holders returned " + std::to_string(count) +
                     " elements, not 2 + 2 per key and per reader",
               false;
    for (std::size_t i = 1; i < nodes.size(); ++i)
        if (nodes[i].depth != 1)
            return why = "the read of the holders returned a nested element", false;
    const auto& counter = nodes[1];
    if (!is_nil(counter))
    {
        std::int64_t c = 0;
        if (!is_text(counter) || !to_int(counter.value, c) || c < 0)
            return why = "the fence counter is not a non-negative integer", false;
        out.fence = static_cast<std::uint64_t>(c);
    }
    const auto& record = nodes[2];
    if (is_text(record))
        out.fence_holder.assign(record.value);
    else if (!is_nil(record))
        return why = "the fence counter's record is not a string", false;
    for (std::size_t i = 3; i + 1 < nodes.size(); i += 2)
    {
        const bool reader = (i - 3) / 2 >= string_keys;
        const auto& value = nodes[i];
        const auto& ttl = nodes[i + 1];
        held_value h;
        h.reader = reader;
        if (!reader)
            h.key = static_cast<std::uint32_t>((i - 3) / 2);
        if (ttl.data_type != resp::type::integer || !to_int(ttl.value, h.pttl))
            return why = "a time left is not an integer", false;
        if (is_text(value))
            h.value.assign(value.value);
        else if (!is_nil(value) || reader)
            return why = "a holder's value is not a string", false;
        if (!reader && h.pttl == -2)
            continue;                          // no such key
        h.foreign = !reader && is_nil(value);  // it exists, and is not a string
        out.held.push_back(std::move(h));
    }
    return true;
}

}  // namespace redlock::detail
