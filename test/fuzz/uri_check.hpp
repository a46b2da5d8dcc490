// The invariants of master URI parsing and connection_options validation, checked on one input.
// Shared by the libFuzzer target (uri_fuzz.cpp) and the unit test that replays the corpus and
// the regressions.
//
// The first byte chooses what the rest is:
//   mode 0  a raw URI. Parsing succeeds or fails with invalid_uri and a message; a parsed
//           configuration prints (to_string) the same whatever its password, and what it
//           prints parses back to the same configuration (with "***" for a password).
//   mode 1  a URI built around a password: scheme, then user, ':', password, '@', rest, the
//           lengths taken from the next two bytes. The same URI with the password's letters
//           and digits replaced by others of their class (so every escape and separator stays
//           where it was) must give the same verdict and the same message, and print the same:
//           nothing that redlock says may depend on the password. A byte >= 0x80 found only
//           in the password (no message text has one) must not appear in the message or the
//           printout.
//   mode 2  connection_options from the bytes: validate() accepts exactly the documented
//           ranges and names the field otherwise.
#pragma once

#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <boost/system/system_error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace redlock::fuzz {

namespace detail {

inline bool same_except_password(const master_config& a, const master_config& b)
{
    return a.transport == b.transport && a.host == b.host && a.port == b.port && a.path == b.path &&
           a.username == b.username && a.db == b.db && a.cluster_seeds == b.cluster_seeds;
}

// Letters and digits to another of their class, keeping hex digits hex: [0-9], [a-f], [g-z],
// [A-F], [G-Z] each rotate within themselves; bytes >= 0x80 to another such byte. Escapes and
// separators stay put.
inline char rotate(char c)
{
    if (static_cast<unsigned char>(c) >= 0x80)
        return static_cast<char>(static_cast<unsigned char>(c) ^ 0x40);
    auto in = [c](char lo, char hi) { return c >= lo && c <= hi; };
    auto rot = [c](char lo, char hi) { return static_cast<char>(c == hi ? lo : c + 1); };
    if (in('0', '9'))
        return rot('0', '9');
    if (in('a', 'f'))
        return rot('a', 'f');
    if (in('g', 'z'))
        return rot('g', 'z');
    if (in('A', 'F'))
        return rot('A', 'F');
    if (in('G', 'Z'))
        return rot('G', 'Z');
    return c;
}

struct parsed
{
    master_config cfg;
    error_code ec;
    std::string why;
};

inline parsed parse(std::string_view uri)
{
    parsed p;
    p.why = "not cleared";
    p.cfg = parse_master_uri(uri, p.ec, p.why);
    return p;
}

/// How the checks print a configuration: master_config::to_string (the test that shows the
/// checks find a leak gives another printer).
struct to_string_printer
{
    std::string operator()(const master_config& c) const { return c.to_string(); }
};

// The checks that hold for any input.
template <class Print = to_string_printer>
std::string check_any(std::string_view uri, const parsed& p, Print print = {})
{
    if (p.ec && p.ec != error::invalid_uri)
        return "parse_master_uri failed with " + p.ec.message() + ", not invalid_uri";
    if (p.ec.failed() == p.why.empty())
        return p.ec ? "failure without a message" : "success with a message";

    // The throwing overload agrees.
    try
    {
        (void)parse_master_uri(uri);
        if (p.ec)
            return "the throwing overload accepted what the other rejected";
    }
    catch (const boost::system::system_error& e)
    {
        if (!p.ec || e.code() != p.ec)
            return "the throwing overload threw for an accepted URI, or another code";
    }
    if (p.ec)
        return {};

    // What it prints does not depend on the password's value...
    master_config other = p.cfg;
    if (!other.password.empty())
        other.password = other.password == "x" ? "y" : "x";
    const std::string printed = print(p.cfg);
    if (printed != print(other))
        return "to_string() depends on the password's value";
    // ...and parses back to the same configuration.
    const parsed back = parse(printed);
    if (back.ec)
        return "to_string() output does not parse back: " + back.why;
    if (!same_except_password(back.cfg, p.cfg))
        return "to_string() output parses back to another configuration";
    if (back.cfg.password != (p.cfg.password.empty() ? "" : "***"))
        return "to_string() output parses back with another password";
    return {};
}

inline std::string check_raw(std::string_view uri) { return check_any(uri, parse(uri)); }

inline std::string check_with_password(const std::uint8_t* data, std::size_t size)
{
    if (size < 3)
        return {};
    // Modulo 6, so that the inputs written when there were four schemes (0 to 3) keep theirs.
    static constexpr std::string_view schemes[] = {
        "redis://", "rediss://", "unix://", "REDIS://", "redis-cluster://", "rediss-cluster://"};
    const std::string_view scheme = schemes[data[0] % 6];
    const bool unix_socket = data[0] % 6 == 2;
    std::string_view rest(reinterpret_cast<const char*>(data + 3), size - 3);
    const std::size_t user_len = rest.empty() ? 0 : data[1] % (rest.size() + 1);
    std::string user(rest.substr(0, user_len));
    // unix:// has user info only when what follows "//" does not start with '/'.
    if (unix_socket && !user.empty() && user.front() == '/')
        user.insert(0, "u");
    rest.remove_prefix(user_len);
    const std::size_t pass_len = rest.empty() ? 0 : data[2] % (rest.size() + 1);
    const std::string_view password = rest.substr(0, pass_len);
    rest.remove_prefix(pass_len);
    // unix:// ends the user info at the last "@/": a rest that starts with '/' keeps the whole
    // password before the cut, wherever its own "@/" are.
    const std::string tail = unix_socket && (rest.empty() || rest.front() != '/')
                                 ? "/" + std::string(rest)
                                 : std::string(rest);

    auto build = [&](std::string_view pw) {
        std::string u(scheme);
        u.append(user).append(":").append(pw).append("@").append(tail);
        return u;
    };
    std::string rotated(password);
    for (auto& c : rotated)
        c = rotate(c);

    const std::string uri_a = build(password);
    const std::string uri_b = build(rotated);
    const parsed a = parse(uri_a);
    const parsed b = parse(uri_b);
    if (auto e = check_any(uri_a, a); !e.empty())
        return e;
    if (auto e = check_any(uri_b, b); !e.empty())
        return e;

    if (a.ec != b.ec || a.why != b.why)
        return "the verdict or message depends on the password: '" + a.why + "' vs '" + b.why + "'";
    if (!a.ec)
    {
        if (!same_except_password(a.cfg, b.cfg))
            return "the parsed configuration depends on the password";
        if (a.cfg.to_string() != b.cfg.to_string())
            return "to_string() depends on the password";
    }

    // A byte >= 0x80 that only the password has (no message text has one, and the rest of
    // the URI does not) must not show up anywhere.
    for (char c : password)
    {
        if (static_cast<unsigned char>(c) < 0x80 || user.find(c) != std::string::npos ||
            tail.find(c) != std::string::npos)
            continue;
        if (a.why.find(c) != std::string::npos)
            return "the message quotes the password";
        if (!a.ec && a.cfg.to_string().find(c) != std::string::npos)
            return "to_string() shows the password";
    }
    return {};
}

inline std::string check_options(const std::uint8_t* data, std::size_t size)
{
    // 5 durations (2 bytes each, signed), 3 sizes (2 bytes each), then the client name.
    if (size < 16)
        return {};
    auto i16 = [&](std::size_t at) {
        std::int16_t v;
        std::memcpy(&v, data + at, 2);
        return std::chrono::milliseconds(v);
    };
    auto u16 = [&](std::size_t at) {
        std::uint16_t v;
        std::memcpy(&v, data + at, 2);
        return static_cast<std::size_t>(v);
    };
    connection_options o;
    o.connect_timeout = i16(0);
    o.health_check_interval = i16(2);
    o.health_check_timeout = i16(4);
    o.reconnect_min_delay = i16(6);
    o.reconnect_max_delay = i16(8);
    o.max_nesting_depth = u16(10);
    o.max_bulk_length = u16(12);
    o.max_aggregate_size = u16(14);
    o.client_name.assign(reinterpret_cast<const char*>(data + 16), size - 16);

    bool name_ok = true;
    for (char c : o.client_name)
        if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            name_ok = false;
    using std::chrono::milliseconds;
    const bool valid =
        name_ok && o.connect_timeout > milliseconds(0) &&
        o.health_check_interval >= milliseconds(0) && o.health_check_timeout >= milliseconds(0) &&
        o.reconnect_min_delay > milliseconds(0) && o.reconnect_max_delay >= o.reconnect_min_delay &&
        o.max_nesting_depth >= 1 && o.max_nesting_depth <= 1024 && o.max_bulk_length >= 1 &&
        o.max_aggregate_size >= 1;

    error_code ec = error::server_error;
    std::string why = "not cleared";
    o.validate(ec, why);
    if (ec && ec != error::invalid_option)
        return "validate() failed with " + ec.message() + ", not invalid_option";
    if (ec.failed() == why.empty())
        return ec ? "validate() failed without a message" : "validate() succeeded with a message";
    if (valid == ec.failed())
        return std::string("validate() ") +
               (valid ? "rejected valid options: " + why : "accepted invalid options");
    if (ec && why.find(' ') == std::string::npos)
        return "validate()'s message does not look like a sentence";
    return {};
}

}  // namespace detail

/// @brief Checks every invariant on `data`; returns an empty string when they all hold, else
/// what went wrong.
inline std::string check_uri_input(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return {};
    const std::uint8_t mode = data[0] % 3;
    ++data;
    --size;
    switch (mode)
    {
    case 0: return detail::check_raw(std::string_view(reinterpret_cast<const char*>(data), size));
    case 1: return detail::check_with_password(data, size);
    default: return detail::check_options(data, size);
    }
}

}  // namespace redlock::fuzz
