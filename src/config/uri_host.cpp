// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// host[:port] in a master URI (uri_parts.hpp): a host name, an IPv4 address, or an IPv6
// address in brackets, with an RFC 6874 zone identifier; the port, 1 to 65535. IPv6
// addresses are checked by Asio, the zone's characters by Boost.URL's RFC 3986 sets.
#include "config/uri_parts.hpp"

#include <charconv>

#include <boost/asio/ip/address_v6.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace redlock::detail::uri {
namespace {

bool parse_ipv6(std::string_view inner, std::string& host, std::string& why)
{
    if (inner.empty())
        return fail(why, "empty IPv6 address '[]'");

    // RFC 6874 zone identifiers: [fe80::1%25eth0]; the resolver wants "fe80::1%eth0".
    auto address = inner;
    std::string_view zone;
    if (const auto pct = inner.find('%'); pct != std::string_view::npos)
    {
        address = inner.substr(0, pct);
        if (inner.substr(pct, 3) != "%25" || inner.size() == pct + 3)
            return fail(why, "bad IPv6 zone identifier in " + quote_text(inner) +
                                 " (write it as %25 followed by the zone, e.g. [fe80::1%25eth0])");
        zone = inner.substr(pct + 3);
        for (char c : zone)
            if (!boost::urls::unreserved_chars(c))
                return fail(why, "invalid character " + quote_text(std::string_view(&c, 1)) +
                                     " in the IPv6 zone identifier " + quote_text(zone));
    }

    boost::system::error_code bad;
    boost::asio::ip::make_address_v6(address, bad);
    if (bad)
        return fail(why, "invalid IPv6 address " + quote_text(inner));

    host.assign(address);
    if (!zone.empty())
    {
        host.push_back('%');
        host.append(zone);
    }
    return true;
}

bool parse_port(std::string_view text, std::uint16_t& port, std::string& why)
{
    if (text.empty())
        return fail(why, "empty port after ':' (expected a number from 1 to 65535)");
    // Not quoted: in "redis://user:secret" (the "@host" forgotten) the password is
    // where the port would be.
    for (char c : text)
        if (!is_digit(c))
            return fail(why, "the port is not a number (expected 1 to 65535)");
    std::uint64_t value = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || p != text.data() + text.size() || value == 0 || value > 65535)
        return fail(why, "the port is out of range (expected 1 to 65535)");
    port = static_cast<std::uint16_t>(value);
    return true;
}

}  // namespace

bool parse_host_port(std::string_view hp, std::string& host, std::uint16_t& port, std::string& why)
{
    if (hp.empty())
        return fail(why, "empty host");

    std::string_view after;
    if (hp.front() == '[')
    {
        const auto close = hp.find(']');
        if (close == std::string_view::npos)
            return fail(why, "unterminated IPv6 address: '[' without a closing ']'");
        if (!parse_ipv6(hp.substr(1, close - 1), host, why))
            return false;
        after = hp.substr(close + 1);
        if (!after.empty() && after.front() != ':')
            return fail(why, "unexpected " + quote_text(after) +
                                 " after the IPv6 address (expected ':port', '/db' or the end)");
    }
    else
    {
        const auto colon = hp.find(':');
        if (colon != std::string_view::npos && hp.find(':', colon + 1) != std::string_view::npos)
            return fail(why,
                        "an IPv6 address must be written in brackets, e.g. redis://[::1]:6379");
        const auto name = hp.substr(0, colon);
        if (name.empty())
            return fail(why, "empty host");
        for (char c : name)
            if (!is_alnum(c) && c != '-' && c != '.' && c != '_')
                return fail(why, "invalid character " + quote_text(std::string_view(&c, 1)) +
                                     " in host " + quote_text(name));
        host.assign(name);
        after = colon == std::string_view::npos ? std::string_view{} : hp.substr(colon);
    }

    if (after.empty())
    {
        port = 6379;
        return true;
    }
    return parse_port(after.substr(1), port, why);
}

}  // namespace redlock::detail::uri
