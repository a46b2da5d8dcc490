// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/lock_value.hpp"

#include <cstdio>

#include <redlock/options.hpp>

#include "algorithm/token.hpp"

namespace redlock::detail {

std::string identity_problem(std::string_view identity, std::size_t length)
{
    if (length > max_identity_size || identity.size() > max_identity_size)
        return "lock_options::identity is " + std::to_string(length) + " bytes long: at most " +
               std::to_string(max_identity_size);
    for (std::size_t i = 0; i < identity.size(); ++i)
    {
        const auto c = static_cast<unsigned char>(identity[i]);
        if (c < 0x20 || c > 0x7e)
        {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", c);
            return "lock_options::identity has byte " + std::string(hex) + " at offset " +
                   std::to_string(i) + ": only printable ASCII (0x20 to 0x7E) is allowed";
        }
    }
    return {};
}

void compose_value_into(std::string& out, std::string_view token, std::string_view identity)
{
    out.assign(token);
    if (identity.empty())
        return;
    out += ' ';
    out += identity;
}

value_parts split_value(std::string_view value) noexcept
{
    constexpr auto n = token_source::token_chars;
    if (value.size() <= n + 1 || value[n] != ' ')
        return {value, {}};
    for (std::size_t i = 0; i < n; ++i)
        if (!((value[i] >= '0' && value[i] <= '9') || (value[i] >= 'a' && value[i] <= 'f')))
            return {value, {}};
    return {value.substr(0, n), value.substr(n + 1)};
}

}  // namespace redlock::detail
