// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/fencing.hpp>

#include "algorithm/fencing.hpp"

namespace redlock {

std::string_view fenced_write_script() noexcept
{
    return "local seen = tonumber(redis.call('get', KEYS[2]) or '0')\n"
           "local token = tonumber(ARGV[1])\n"
           "if token == nil or seen == nil or token < seen then return 0 end\n"
           "if token > seen then redis.call('set', KEYS[2], ARGV[1]) end\n"
           "redis.call('set', KEYS[1], ARGV[2])\n"
           "return 1\n";
}

command fenced_set(std::string_view key, std::string_view value, std::uint64_t token)
{
    const auto seen = detail::slot_sibling(key, ":token");
    const auto t = std::to_string(token);
    return command{"EVAL", fenced_write_script(), "2", key, seen, t, value};
}

bool fenced_write_accepted(const resp::reply& r, error_code& ec) noexcept
{
    ec = {};
    if (r.size() == 1 && r[0].data_type == resp::type::integer &&
        (r[0].value == "1" || r[0].value == "0"))
        return r[0].value == "1";
    ec = error::unexpected_reply;
    return false;
}

}  // namespace redlock
