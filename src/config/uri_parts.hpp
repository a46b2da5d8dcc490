// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The parts of a master URI, each parsed in its own file; master_uri.cpp puts them together
// (the grammar: scheme, user info cut, hosts, path, query) and master_uri_print.cpp writes a
// master_config back as a URI.
//
// Every part returns false after putting its message in `why`. A part may quote what it is
// given: the caller hands it only text from after the user-info cut (master_uri.cpp), except
// parse_userinfo, which never quotes its input.
#ifndef REDLOCK_SRC_CONFIG_URI_PARTS_HPP
#define REDLOCK_SRC_CONFIG_URI_PARTS_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <redlock/config.hpp>

namespace redlock::detail::uri {

// ---- Text (uri_text.cpp) ------------------------------------------------------------------

inline bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline bool is_alnum(char c) noexcept { return is_alpha(c) || is_digit(c); }

/// ASCII case-insensitive equality (schemes, host names).
bool iequals(std::string_view a, std::string_view b) noexcept;

/// Decodes %XX escapes into `out`; false on a bad escape. `+` stays a plus: these are URIs,
/// not HTML form data.
bool percent_decode(std::string_view in, std::string& out);

/// `s` in single quotes, for a message.
std::string quote_text(std::string_view s);

/// Appends host:port as a URI writes it: an IPv6 host in brackets, its zone after "%25"
/// (RFC 6874).
void append_host_port(std::string& out, const std::string& host, std::uint16_t port);

/// Puts `message` in `why` and returns false: `return fail(why, "...")`.
inline bool fail(std::string& why, std::string message)
{
    why = std::move(message);
    return false;
}

// ---- host[:port] (uri_host.cpp) -----------------------------------------------------------

/// Parses host[:port] (a name, an IPv4 address or a bracketed IPv6 address with an optional
/// RFC 6874 zone) into `host` and `port` (6379 when there is none).
bool parse_host_port(std::string_view hp, std::string& host, std::uint16_t& port, std::string& why);

// ---- The db and the query (uri_query.cpp) -------------------------------------------------

/// A db index, 0 to 2147483647 (SELECT takes a signed 32-bit index).
bool parse_db(std::string_view text, int& db, std::string& why);

/// What a query may hold: redis:// and rediss:// take the db as their path and a cluster has
/// only db 0, so neither takes a parameter; unix:// takes the db as ?db=N.
enum class query_rules : std::uint8_t
{
    redis,
    cluster,
    unix_socket,
};

/// `tail` starts with '?' or '#'. Only unix:// has parameters (db); see query_rules.
bool parse_query(std::string_view tail, query_rules rules, int& db, std::string& why);

// ---- User info (uri_userinfo.cpp) ---------------------------------------------------------

/// Parses user[:password] into `username` and `password`. Its messages never quote `info`:
/// the password is a secret.
bool parse_userinfo(std::string_view info, std::string& username, std::string& password,
                    std::string& why);

}  // namespace redlock::detail::uri

#endif
