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
#include <redlock/config.hpp>

#include <sys/un.h>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/ip/address_v6.hpp>
#include <boost/system/system_error.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/pct_string_view.hpp>
#include <boost/url/rfc/sub_delim_chars.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace redlock {
namespace {

constexpr std::string_view accepted_schemes =
    "redis://, rediss://, unix://, redis-cluster://, rediss-cluster://";

// sun_path holds the path and its terminating NUL.
constexpr std::size_t max_socket_path = sizeof(sockaddr_un{}.sun_path) - 1;

constexpr std::int64_t max_db = 2147483647;  // SELECT takes a signed 32-bit index.

bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_alnum(char c) noexcept { return is_alpha(c) || is_digit(c); }

char ascii_lower(char c) noexcept
{
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i != a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    return true;
}

namespace urls = boost::urls;

// Decodes %XX escapes. `+` stays a plus: these are URIs, not HTML form data.
bool percent_decode(std::string_view in, std::string& out)
{
    auto checked = urls::make_pct_string_view(in);
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

// host:port as a URI writes it: an IPv6 host in brackets, its zone after "%25" (RFC 6874).
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

// What a query may hold: redis:// and rediss:// take the db as their path and a cluster has
// only db 0, so neither takes a parameter; unix:// takes the db as ?db=N.
enum class query_rules : std::uint8_t
{
    redis,
    cluster,
    unix_socket,
};

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
            return parse_network(master_config::transport_kind::tcp, rest);
        if (iequals(scheme, "rediss"))
            return parse_network(master_config::transport_kind::tls, rest);
        if (iequals(scheme, "unix"))
            return parse_unix(rest);
        if (iequals(scheme, "redis-cluster"))
            return parse_cluster(master_config::transport_kind::tcp, rest);
        if (iequals(scheme, "rediss-cluster"))
            return parse_cluster(master_config::transport_kind::tls, rest);
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

    bool fail(std::string msg)
    {
        why_ = std::move(msg);
        return false;
    }

    // ---- redis:// and rediss:// ---------------------------------------------------------
    bool parse_network(master_config::transport_kind kind, std::string_view rest)
    {
        cfg_.transport = kind;

        std::string_view hostpart;
        if (!cut_userinfo(rest, hostpart))
            return false;

        const auto end = hostpart.find_first_of("/?#");
        if (!parse_host_port(hostpart.substr(0, end)))
            return false;
        if (end == std::string_view::npos)
            return true;

        auto tail = hostpart.substr(end);
        if (tail.front() == '/' && !parse_db_path(tail))
            return false;
        return tail.empty() || parse_query(tail, query_rules::redis);
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
        return parse_userinfo(rest.substr(0, at));
    }

    // `tail` starts with the path's '/'. Reads the db from the path's one segment (empty:
    // db 0) and leaves in `tail` what follows the path: nothing, a query or a fragment.
    bool parse_db_path(std::string_view& tail)
    {
        const auto stop = tail.find_first_of("/?#", 1);
        const auto segment = tail.substr(1, stop == std::string_view::npos ? stop : stop - 1);
        if (!segment.empty() && !parse_db(segment, cfg_.db))
            return false;
        tail = stop == std::string_view::npos ? std::string_view{} : tail.substr(stop);
        if (!tail.empty() && tail.front() == '/')
            return fail("unexpected " + quote_text(tail) +
                        " after the db (the path is only the db number, e.g. /2)");
        return true;
    }

    bool parse_host_port(std::string_view hp)
    {
        if (hp.empty())
            return fail("empty host");

        std::string_view after;
        if (hp.front() == '[')
        {
            const auto close = hp.find(']');
            if (close == std::string_view::npos)
                return fail("unterminated IPv6 address: '[' without a closing ']'");
            if (!parse_ipv6(hp.substr(1, close - 1)))
                return false;
            after = hp.substr(close + 1);
            if (!after.empty() && after.front() != ':')
                return fail("unexpected " + quote_text(after) +
                            " after the IPv6 address (expected ':port', '/db' or the end)");
        }
        else
        {
            const auto colon = hp.find(':');
            if (colon != std::string_view::npos &&
                hp.find(':', colon + 1) != std::string_view::npos)
                return fail("an IPv6 address must be written in brackets, e.g. redis://[::1]:6379");
            const auto host = hp.substr(0, colon);
            if (host.empty())
                return fail("empty host");
            for (char c : host)
                if (!is_alnum(c) && c != '-' && c != '.' && c != '_')
                    return fail("invalid character " + quote_text(std::string_view(&c, 1)) +
                                " in host " + quote_text(host));
            cfg_.host.assign(host);
            after = colon == std::string_view::npos ? std::string_view{} : hp.substr(colon);
        }

        if (after.empty())
        {
            cfg_.port = 6379;
            return true;
        }
        return parse_port(after.substr(1));
    }

    bool parse_ipv6(std::string_view inner)
    {
        if (inner.empty())
            return fail("empty IPv6 address '[]'");

        // RFC 6874 zone identifiers: [fe80::1%25eth0]; the resolver wants "fe80::1%eth0".
        auto address = inner;
        std::string_view zone;
        if (const auto pct = inner.find('%'); pct != std::string_view::npos)
        {
            address = inner.substr(0, pct);
            if (inner.substr(pct, 3) != "%25" || inner.size() == pct + 3)
                return fail("bad IPv6 zone identifier in " + quote_text(inner) +
                            " (write it as %25 followed by the zone, e.g. [fe80::1%25eth0])");
            zone = inner.substr(pct + 3);
            for (char c : zone)
                if (!urls::unreserved_chars(c))
                    return fail("invalid character " + quote_text(std::string_view(&c, 1)) +
                                " in the IPv6 zone identifier " + quote_text(zone));
        }

        boost::system::error_code bad;
        boost::asio::ip::make_address_v6(address, bad);
        if (bad)
            return fail("invalid IPv6 address " + quote_text(inner));

        cfg_.host.assign(address);
        if (!zone.empty())
        {
            cfg_.host.push_back('%');
            cfg_.host.append(zone);
        }
        return true;
    }

    bool parse_port(std::string_view text)
    {
        if (text.empty())
            return fail("empty port after ':' (expected a number from 1 to 65535)");
        // Not quoted: in "redis://user:secret" (the "@host" forgotten) the password is
        // where the port would be.
        for (char c : text)
            if (!is_digit(c))
                return fail("the port is not a number (expected 1 to 65535)");
        std::uint64_t value = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || p != text.data() + text.size() || value == 0 || value > 65535)
            return fail("the port is out of range (expected 1 to 65535)");
        cfg_.port = static_cast<std::uint16_t>(value);
        return true;
    }

    bool parse_db(std::string_view text, int& db)
    {
        if (text.empty())
            return fail("empty db (expected an integer from 0 to 2147483647)");
        for (char c : text)
            if (!is_digit(c))
                return fail("db " + quote_text(text) + " is not a non-negative integer");
        std::int64_t value = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || p != text.data() + text.size() || value > max_db)
            return fail("db " + quote_text(text) + " is out of range (0 to 2147483647)");
        db = static_cast<int>(value);
        return true;
    }

    // ---- redis-cluster:// and rediss-cluster:// ---------------------------------------------
    bool parse_cluster(master_config::transport_kind kind, std::string_view rest)
    {
        cfg_.transport = kind;

        std::string_view hostpart;
        if (!cut_userinfo(rest, hostpart))
            return false;

        const auto end = hostpart.find_first_of("/?#");
        if (!parse_seeds(hostpart.substr(0, end)))
            return false;
        if (end == std::string_view::npos)
            return true;

        auto tail = hostpart.substr(end);
        if (tail.front() == '/')
        {
            if (!parse_db_path(tail))
                return false;
            if (cfg_.db != 0)
                return fail("db " + std::to_string(cfg_.db) +
                            " in a cluster URI: a Redis Cluster has only database 0 (leave the "
                            "path out or write /0)");
        }
        return tail.empty() || parse_query(tail, query_rules::cluster);
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
        if (!parse_host_port(seed))
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
            if (!parse_userinfo(rest.substr(0, at)))
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
        return parse_query(pathpart.substr(stop), query_rules::unix_socket);
    }

    // `tail` starts with '?' or '#'. Only unix:// has parameters (db); see query_rules.
    bool parse_query(std::string_view tail, query_rules rules)
    {
        if (tail.front() == '#')
            return fail("a fragment ('#...') is not accepted in a master URI");

        auto query = tail.substr(1);
        const auto hash = query.find('#');
        if (hash != std::string_view::npos)
            return fail("a fragment ('#...') is not accepted in a master URI");

        bool have_db = false;
        while (!query.empty())
        {
            const auto amp = query.find('&');
            const auto param = query.substr(0, amp);
            query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
            if (param.empty())
                continue;

            // Only the name is ever quoted: a value could be a secret put in the wrong place.
            const auto eq = param.find('=');
            const auto name = param.substr(0, eq);
            if (rules == query_rules::redis)
                return fail("unknown query parameter " + quote_text(name) +
                            " (redis:// and rediss:// take no parameters; the db is the path, "
                            "e.g. redis://host:6379/2)");
            if (rules == query_rules::cluster)
                return fail("unknown query parameter " + quote_text(name) +
                            " (redis-cluster:// and rediss-cluster:// take no parameters)");
            if (name != "db")
                return fail("unknown query parameter " + quote_text(name) + " (accepted: db)");
            if (eq == std::string_view::npos)
                return fail("query parameter 'db' has no value (e.g. ?db=2)");
            if (have_db)
                return fail("query parameter 'db' is given more than once");
            have_db = true;
            if (!parse_db(param.substr(eq + 1), cfg_.db))
                return false;
        }
        return true;
    }

    // ---- user info (never quoted) -----------------------------------------------------------
    bool parse_userinfo(std::string_view info)
    {
        for (char c : info)
        {
            switch (c)
            {
            case '@':
                return fail(
                    "the user name or password contains an unescaped '@' (write it as %40)");
            case '/':
                return fail(
                    "the user name or password contains an unescaped '/' (write it as %2F)");
            case '?':
                return fail(
                    "the user name or password contains an unescaped '?' (write it as %3F)");
            case '#':
                return fail(
                    "the user name or password contains an unescaped '#' (write it as %23)");
            case '[':
                return fail(
                    "the user name or password contains an unescaped '[' (write it as %5B)");
            case ']':
                return fail(
                    "the user name or password contains an unescaped ']' (write it as %5D)");
            default: break;
            }
        }

        const auto colon = info.find(':');
        if (!percent_decode(info.substr(0, colon), cfg_.username))
            return fail("bad percent escape in the user name ('%' must be followed by two hex "
                        "digits)");
        if (colon == std::string_view::npos)
        {
            // "redis://secret@host" is ambiguous (user or password?) and, read as a user
            // name, would print the secret in to_string(). Refuse it.
            if (!cfg_.username.empty())
                return fail("a user name without a password; write redis://:password@host for "
                            "a password alone, or redis://user:password@host");
            return true;
        }
        if (!percent_decode(info.substr(colon + 1), cfg_.password))
            return fail("bad percent escape in the password ('%' must be followed by two hex "
                        "digits)");
        if (cfg_.password.empty() && !cfg_.username.empty())
            return fail("empty password for user " + quote_text(cfg_.username) +
                        " (an empty password means no AUTH, which would log in as the default "
                        "user)");
        return true;
    }

    std::string_view uri_;
    master_config& cfg_;
    std::string& why_;
};

}  // namespace

std::string master_config::to_string() const
{
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

master_config parse_master_uri(std::string_view uri, error_code& ec, std::string& why)
{
    master_config cfg;
    std::string message;
    if (uri_parser(uri, cfg, message).parse())
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
