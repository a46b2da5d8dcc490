// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// Master URIs: redis://, rediss://, unix://, redis-cluster:// and rediss-cluster://.
//
// The one rule that shapes this parser: the password is a secret, so no error message may
// quote it, not even in part. The user-info part is therefore cut off *first*, at the last
// '@' (redis, rediss and their cluster forms) or the last "@/" (unix), before anything else is
// looked at. Everything after that cut (hosts, ports, db, socket path, query names) can then be
// quoted safely, and nothing before it ever is: a password with an unescaped '/', '?' or '@'
// stays on the user-info side and is rejected there with a message that names the character,
// not the text.
//
// The generic parts come from libraries that do them well: percent-decoding and -encoding and
// the RFC 3986 character sets from Boost.URL, IPv6 addresses from Asio. The structure stays
// ours: Boost.URL's parser cannot cut the user info first (the rule above), nor read an IPv6
// zone id (fe80::1%25eth0) in 1.81, and its errors are not the messages we want to give.
//
// This file is the grammar: the scheme, where the user info ends, and the form of each
// scheme. The parts live beside it (uri_parts.hpp): host[:port] in uri_host.cpp, the db and
// the query in uri_query.cpp, the user info in uri_userinfo.cpp; master_config::to_string()
// in master_uri_print.cpp.
#include <redlock/config.hpp>

#include <sys/un.h>

#include <string>
#include <string_view>
#include <utility>

#include <boost/system/system_error.hpp>

#include "config/uri_parts.hpp"

namespace redlock {
namespace detail::uri {
namespace {

constexpr std::string_view accepted_schemes =
    "redis://, rediss://, unix://, redis-cluster://, rediss-cluster://";

// sun_path holds the path and its terminating NUL.
constexpr std::size_t max_socket_path = sizeof(sockaddr_un{}.sun_path) - 1;

std::string host_port(const master_config::node_address& node)
{
    std::string out;
    append_host_port(out, node.host, node.port);
    return out;
}

// Whether two seeds name the same node as written. Host names and IPv6 hex digits are
// case-insensitive; other spellings of one address (::1 and 0::1) are not recognised.
bool same_node(const master_config::node_address& a, const master_config::node_address& b) noexcept
{
    return a.port == b.port && iequals(a.host, b.host);
}

// The parse state; every check returns false after putting its message in why_.
class uri_parser
{
public:
    uri_parser(std::string_view uri, master_config& out, std::string& why)
        : uri_(uri),
          cfg_(out),
          why_(why)
    {}

    bool parse()
    {
        if (uri_.empty())
            return fail("the URI is empty (expected e.g. redis://host:port; accepted: " +
                        std::string(accepted_schemes) + ")");

        // Checked before anything else, so that a password with a stray newline is never
        // split into pieces that later messages would quote.
        for (std::size_t i = 0; i != uri_.size(); ++i)
        {
            const auto b = static_cast<unsigned char>(uri_[i]);
            if (b <= 0x20 || b == 0x7f)
                return fail("the URI contains a space or control character at offset " +
                            std::to_string(i) + " (percent-encode it, e.g. %20)");
        }

        const auto sep = uri_.find("://");
        const auto scheme = uri_.substr(0, sep == std::string_view::npos ? 0 : sep);
        if (sep == std::string_view::npos || !is_scheme(scheme))
            return fail("missing or malformed scheme (accepted: " + std::string(accepted_schemes) +
                        ")");

        const auto rest = uri_.substr(sep + 3);
        if (iequals(scheme, "redis"))
            return parse_network(master_config::transport_kind::tcp, rest, false);
        if (iequals(scheme, "rediss"))
            return parse_network(master_config::transport_kind::tls, rest, false);
        if (iequals(scheme, "unix"))
            return parse_unix(rest);
        if (iequals(scheme, "redis-cluster"))
            return parse_network(master_config::transport_kind::tcp, rest, true);
        if (iequals(scheme, "rediss-cluster"))
            return parse_network(master_config::transport_kind::tls, rest, true);
        return fail("unknown scheme " + quote_text(scheme) +
                    " (accepted: " + std::string(accepted_schemes) + ")");
    }

private:
    static bool is_scheme(std::string_view s) noexcept
    {
        if (s.empty() || !is_alpha(s.front()))
            return false;
        for (char c : s)
            if (!is_alnum(c) && c != '+' && c != '-' && c != '.')
                return false;
        return true;
    }

    bool fail(std::string msg) { return uri::fail(why_, std::move(msg)); }

    // ---- redis://, rediss:// and their cluster forms --------------------------------------
    // [user info@]hosts[/db][?query]: one host[:port], or (cluster) comma-separated seeds.
    bool parse_network(master_config::transport_kind kind, std::string_view rest, bool cluster)
    {
        cfg_.transport = kind;

        std::string_view hostpart;
        if (!cut_userinfo(rest, hostpart))
            return false;

        const auto end = hostpart.find_first_of("/?#");
        const auto hosts = hostpart.substr(0, end);
        if (!(cluster ? parse_seeds(hosts) : parse_host_port(hosts, cfg_.host, cfg_.port, why_)))
            return false;
        if (end == std::string_view::npos)
            return true;

        auto tail = hostpart.substr(end);
        if (tail.front() == '/')
        {
            if (!parse_db_path(tail))
                return false;
            if (cluster && cfg_.db != 0)
                return fail("db " + std::to_string(cfg_.db) +
                            " in a cluster URI: a Redis Cluster has only database 0 (leave the "
                            "path out or write /0)");
        }
        return tail.empty() ||
               parse_query(tail, cluster ? query_rules::cluster : query_rules::redis, cfg_.db,
                           why_);
    }

    // Parses the user info in front of the last '@' of `rest`, if any, and sets `after` to
    // what follows it. Hosts, ports and the db never contain '@', so the last one ends the
    // user info even when the password holds an unescaped '@' or '/'.
    bool cut_userinfo(std::string_view rest, std::string_view& after)
    {
        after = rest;
        const auto at = rest.rfind('@');
        if (at == std::string_view::npos)
            return true;
        after = rest.substr(at + 1);
        return parse_userinfo(rest.substr(0, at), cfg_.username, cfg_.password, why_);
    }

    // `tail` starts with the path's '/'. Reads the db from the path's one segment (empty:
    // db 0) and leaves in `tail` what follows the path: nothing, a query or a fragment.
    bool parse_db_path(std::string_view& tail)
    {
        const auto stop = tail.find_first_of("/?#", 1);
        const auto segment = tail.substr(1, stop == std::string_view::npos ? stop : stop - 1);
        if (!segment.empty() && !parse_db(segment, cfg_.db, why_))
            return false;
        tail = stop == std::string_view::npos ? std::string_view{} : tail.substr(stop);
        if (!tail.empty() && tail.front() == '/')
            return fail("unexpected " + quote_text(tail) +
                        " after the db (the path is only the db number, e.g. /2)");
        return true;
    }

    // The comma-separated seeds, in order; host and port are set to the first one.
    bool parse_seeds(std::string_view list)
    {
        if (list.empty())
            return fail("no seed node (expected host[:port][,host[:port]...] after the scheme)");
        for (std::size_t start = 0;;)
        {
            const auto comma = list.find(',', start);
            const auto seed =
                list.substr(start, comma == std::string_view::npos ? comma : comma - start);
            if (!parse_seed(seed))
                return false;
            if (comma == std::string_view::npos)
                break;
            start = comma + 1;
        }
        cfg_.host = cfg_.cluster_seeds.front().host;
        cfg_.port = cfg_.cluster_seeds.front().port;
        return true;
    }

    // One seed, host[:port] as in redis://, appended to cluster_seeds unless it repeats one.
    bool parse_seed(std::string_view seed)
    {
        const auto position = std::to_string(cfg_.cluster_seeds.size() + 1);
        if (seed.empty())
            return fail("seed " + position + " is empty (a stray comma?)");
        if (!parse_host_port(seed, cfg_.host, cfg_.port, why_))
        {
            why_.insert(0, "seed " + position + ": ");
            return false;
        }

        master_config::node_address node{cfg_.host, cfg_.port};
        for (std::size_t i = 0; i != cfg_.cluster_seeds.size(); ++i)
            if (same_node(cfg_.cluster_seeds[i], node))
                return fail("seeds " + std::to_string(i + 1) + " and " + position +
                            " are the same node " + quote_text(host_port(node)));
        cfg_.cluster_seeds.push_back(std::move(node));
        return true;
    }

    // ---- unix:// ------------------------------------------------------------------------
    bool parse_unix(std::string_view rest)
    {
        cfg_.transport = master_config::transport_kind::unix_socket;

        // The path starts with '/', so user info ends at an "@/"; the last one, for the
        // same reason as the last '@' above.
        auto pathpart = rest;
        if (rest.empty() || rest.front() != '/')
        {
            const auto at = rest.rfind("@/");
            if (at == std::string_view::npos)
                return fail("unix:// needs an absolute socket path: unix:///path/to/socket or "
                            "unix://user:password@/path/to/socket");
            if (!parse_userinfo(rest.substr(0, at), cfg_.username, cfg_.password, why_))
                return false;
            pathpart = rest.substr(at + 1);
        }

        const auto stop = pathpart.find_first_of("?#");
        if (!percent_decode(pathpart.substr(0, stop), cfg_.path))
            return fail("bad percent escape in the socket path ('%' must be followed by two hex "
                        "digits)");
        if (cfg_.path == "/")
            return fail("empty socket path (expected unix:///path/to/socket)");
        if (cfg_.path.find('\0') != std::string::npos)
            return fail("the socket path contains a NUL byte (%00)");
        if (cfg_.path.size() > max_socket_path)
            return fail("the socket path is " + std::to_string(cfg_.path.size()) +
                        " bytes long; the limit is " + std::to_string(max_socket_path));
        if (stop == std::string_view::npos)
            return true;
        return parse_query(pathpart.substr(stop), query_rules::unix_socket, cfg_.db, why_);
    }

    std::string_view uri_;
    master_config& cfg_;
    std::string& why_;
};

}  // namespace
}  // namespace detail::uri

master_config parse_master_uri(std::string_view uri, error_code& ec, std::string& why)
{
    master_config cfg;
    std::string message;
    if (detail::uri::uri_parser(uri, cfg, message).parse())
    {
        ec = {};
        why.clear();
    }
    else
    {
        ec = make_error_code(error::invalid_uri);
        why = std::move(message);
    }
    return cfg;
}

master_config parse_master_uri(std::string_view uri)
{
    error_code ec;
    std::string why;
    auto cfg = parse_master_uri(uri, ec, why);
    if (ec)
        throw boost::system::system_error(ec, why);
    return cfg;
}

}  // namespace redlock
