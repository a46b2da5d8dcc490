// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The text helpers the master URI parts share (uri_parts.hpp).
#include "config/uri_parts.hpp"

#include <boost/url/pct_string_view.hpp>

namespace redlock::detail::uri {
namespace {

char ascii_lower(char c) noexcept
{
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i != a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    return true;
}

bool percent_decode(std::string_view in, std::string& out)
{
    auto checked = boost::urls::make_pct_string_view(in);
    if (!checked)
        return false;
    out = checked->decode();
    return true;
}

std::string quote_text(std::string_view s)
{
    std::string r;
    r.reserve(s.size() + 2);
    r.push_back('\'');
    r.append(s);
    r.push_back('\'');
    return r;
}

void append_host_port(std::string& out, const std::string& host, std::uint16_t port)
{
    if (host.find(':') != std::string::npos)
    {
        out += '[';
        const auto pct = host.find('%');
        out.append(host, 0, pct);
        if (pct != std::string::npos)
        {
            out += "%25";
            out.append(host, pct + 1);
        }
        out += ']';
    }
    else
    {
        out += host;
    }
    out += ':';
    out += std::to_string(port);
}

}  // namespace redlock::detail::uri
