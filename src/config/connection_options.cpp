// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/config.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace redlock {
namespace {

// The deepest reply nesting a sane server sends is a handful of levels; above this the
// parser's explicit stack would be a memory lever for a hostile peer.
constexpr std::size_t nesting_depth_limit = 1024;

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

void connection_options::validate(error_code& ec, std::string& why) const
{
    const auto fail = [&](std::string message) {
        ec = make_error_code(error::invalid_option);
        why = std::move(message);
    };
    using std::chrono::milliseconds;

    // CLIENT SETNAME refuses spaces, newlines and other non-printable bytes; finding out at
    // configuration time beats a handshake that fails on every connect.
    for (char c : client_name)
    {
        const auto b = static_cast<unsigned char>(c);
        if (b <= 0x20 || b >= 0x7f)
            return fail("client_name must not contain spaces, newlines or other non-printable "
                        "characters (CLIENT SETNAME refuses them)");
    }
    if (connect_timeout <= milliseconds::zero())
        return fail("connect_timeout must be positive (got " + ms(connect_timeout) + ")");
    if (health_check_interval < milliseconds::zero())
        return fail("health_check_interval must not be negative (got " + ms(health_check_interval) +
                    "; 0 disables it)");
    if (health_check_timeout < milliseconds::zero())
        return fail("health_check_timeout must not be negative (got " + ms(health_check_timeout) +
                    "; 0 disables it)");
    if (close_timeout < milliseconds::zero())
        return fail("close_timeout must not be negative (got " + ms(close_timeout) +
                    "; 0 closes at once)");
    if (reconnect_min_delay <= milliseconds::zero())
        return fail("reconnect_min_delay must be positive (got " + ms(reconnect_min_delay) + ")");
    if (reconnect_max_delay < reconnect_min_delay)
        return fail("reconnect_max_delay must not be less than reconnect_min_delay (got " +
                    ms(reconnect_max_delay) + " < " + ms(reconnect_min_delay) + ")");
    if (max_nesting_depth == 0)
        return fail("max_nesting_depth must be positive");
    if (max_nesting_depth > nesting_depth_limit)
        return fail("max_nesting_depth must not exceed " + std::to_string(nesting_depth_limit) +
                    " (got " + std::to_string(max_nesting_depth) + ")");
    if (max_bulk_length == 0)
        return fail("max_bulk_length must be positive");
    if (max_aggregate_size == 0)
        return fail("max_aggregate_size must be positive");

    ec = {};
    why.clear();
}

}  // namespace redlock
