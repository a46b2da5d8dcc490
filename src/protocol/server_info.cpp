// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/server_info.hpp"

#include <charconv>

namespace redlock::detail {

namespace {

// Calls fn(name, value) for each "name:value" line of an INFO text (CRLF or LF; "# Section"
// headers and blank lines skipped); stops at the first call that returns false.
template <class Fn>
void for_each_field(std::string_view info, Fn fn)
{
    while (!info.empty())
    {
        const auto eol = info.find('\n');
        auto line = info.substr(0, eol);
        info.remove_prefix(eol == std::string_view::npos ? info.size() : eol + 1);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        const auto colon = line.find(':');
        if (line.empty() || line[0] == '#' || colon == std::string_view::npos)
            continue;
        if (!fn(line.substr(0, colon), line.substr(colon + 1)))
            return;
    }
}

std::optional<std::int64_t> non_negative(std::string_view value)
{
    std::int64_t n = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || p != value.data() + value.size() || n < 0)
        return std::nullopt;
    return n;
}

}  // namespace

std::optional<server_identity> parse_server_identity(std::string_view info)
{
    server_identity id;
    bool uptime_seen = false;
    bool malformed = false;
    for_each_field(info, [&](std::string_view name, std::string_view value) {
        if (name == "run_id")
        {
            malformed = value.empty() || value.size() > 64;
            id.run_id.assign(value);
        }
        else if (name == "uptime_in_seconds")
        {
            const auto uptime = non_negative(value);
            malformed = !uptime;
            id.uptime_seconds = uptime.value_or(0);
            uptime_seen = true;
        }
        return !malformed;
    });
    if (malformed || id.run_id.empty() || !uptime_seen)
        return std::nullopt;
    return id;
}

server_facts parse_server_facts(std::string_view info)
{
    server_facts f;
    for_each_field(info, [&](std::string_view name, std::string_view value) {
        if (name == "maxmemory")
            f.maxmemory = non_negative(value);
        else if (name == "maxmemory_policy")
            f.maxmemory_policy.assign(value);
        else if (name == "aof_enabled" && (value == "0" || value == "1"))
            f.aof_enabled = value == "1";
        else if (name == "role")
            f.role.assign(value);
        else if (name == "connected_slaves")
            f.connected_replicas = non_negative(value);
        return true;
    });
    return f;
}

std::optional<bool> parse_save_points(std::span<const resp::node_view> reply)
{
    // RESP2 an array ["save", value], RESP3 a map {save: value}: the same three nodes.
    if (reply.size() != 3 ||
        (reply[0].data_type != resp::type::array && reply[0].data_type != resp::type::map) ||
        reply[1].value != "save" ||
        (reply[2].data_type != resp::type::bulk_string &&
         reply[2].data_type != resp::type::simple_string))
        return std::nullopt;
    return !reply[2].value.empty();
}

}  // namespace redlock::detail
