// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The user info of a master URI, user[:password] (uri_parts.hpp). The password is a secret:
// no message here quotes the user info, only the character that is wrong in it (and, once
// decoded, the user name).
#include "config/uri_parts.hpp"

namespace redlock::detail::uri {
namespace {

// The characters that end or split user info where it stands unescaped, and how to write them.
struct reserved_char
{
    char c;
    std::string_view escape;
};
constexpr reserved_char reserved_in_userinfo[] = {
    {'@', "%40"}, {'/', "%2F"}, {'?', "%3F"}, {'#', "%23"}, {'[', "%5B"}, {']', "%5D"},
};

}  // namespace

bool parse_userinfo(std::string_view info, std::string& username, std::string& password,
                    std::string& why)
{
    for (char c : info)
        for (const auto& r : reserved_in_userinfo)
            if (c == r.c)
                return fail(why, std::string("the user name or password contains an unescaped '") +
                                     c + "' (write it as " + std::string(r.escape) + ")");

    const auto colon = info.find(':');
    if (!percent_decode(info.substr(0, colon), username))
        return fail(why, "bad percent escape in the user name ('%' must be followed by two hex "
                         "digits)");
    if (colon == std::string_view::npos)
    {
        // "redis://secret@host" is ambiguous (user or password?) and, read as a user
        // name, would print the secret in to_string(). Refuse it.
        if (!username.empty())
            return fail(why, "a user name without a password; write redis://:password@host for "
                             "a password alone, or redis://user:password@host");
        return true;
    }
    if (!percent_decode(info.substr(colon + 1), password))
        return fail(why, "bad percent escape in the password ('%' must be followed by two hex "
                         "digits)");
    if (password.empty() && !username.empty())
        return fail(why, "empty password for user " + quote_text(username) +
                             " (an empty password means no AUTH, which would log in as the "
                             "default user)");
    return true;
}

}  // namespace redlock::detail::uri
