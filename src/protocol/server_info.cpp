// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/server_info.hpp"

#include <charconv>

namespace redlock::detail {

std::optional<server_identity> parse_server_identity(std::string_view info)
{
    server_identity id;
    bool uptime_seen = false;
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
        const auto name = line.substr(0, colon);
        const auto value = line.substr(colon + 1);
        if (name == "run_id")
        {
            if (value.empty() || value.size() > 64)
                return std::nullopt;
            id.run_id.assign(value);
        }
        else if (name == "uptime_in_seconds")
        {
            const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), id.uptime_seconds);
            if (ec != std::errc() || p != value.data() + value.size() || id.uptime_seconds < 0)
                return std::nullopt;
            uptime_seen = true;
        }
    }
    if (id.run_id.empty() || !uptime_seen)
        return std::nullopt;
    return id;
}

}  // namespace redlock::detail
