// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// master_config::to_string(): a master as a URI that parses back, with the password masked
// as "***" (it is a secret: logs and messages print masters through this).
#include <redlock/config.hpp>

#include <string>
#include <string_view>

#include <boost/url/encode.hpp>
#include <boost/url/rfc/sub_delim_chars.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include "config/uri_parts.hpp"

namespace redlock {
namespace {

// The scheme as to_string() writes it.
std::string_view scheme_of(const master_config& cfg) noexcept
{
    using kind = master_config::transport_kind;
    if (cfg.is_cluster())
        return cfg.transport == kind::tls ? "rediss-cluster://" : "redis-cluster://";
    switch (cfg.transport)
    {
    case kind::tcp: return "redis://";
    case kind::tls: return "rediss://";
    case kind::unix_socket: return "unix://";
    }
    return "redis://";
}

}  // namespace

std::string master_config::to_string() const
{
    namespace urls = boost::urls;
    using detail::uri::append_host_port;

    std::string out(scheme_of(*this));

    if (!username.empty() || !password.empty())
    {
        out += urls::encode(username, urls::unreserved_chars + urls::sub_delim_chars);
        if (!password.empty())
            out += ":***";
        out += '@';
    }

    if (is_cluster())
    {
        // No db: a cluster has only db 0.
        for (std::size_t i = 0; i != cluster_seeds.size(); ++i)
        {
            if (i != 0)
                out += ',';
            append_host_port(out, cluster_seeds[i].host, cluster_seeds[i].port);
        }
        return out;
    }

    if (transport == transport_kind::unix_socket)
    {
        // '@' is escaped so that the output parses back: an "@/" would end the user info.
        out += urls::encode(path, urls::unreserved_chars + urls::sub_delim_chars + "/:");
        if (db != 0)
            out += "?db=" + std::to_string(db);
        return out;
    }

    append_host_port(out, host, port);
    if (db != 0)
        out += '/' + std::to_string(db);
    return out;
}

}  // namespace redlock
