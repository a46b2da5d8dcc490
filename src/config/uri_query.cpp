// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The db and the query parameters of a master URI (uri_parts.hpp): which parameters each
// scheme takes, and their values. A value is never quoted: it could be a secret put in the
// wrong place.
#include "config/uri_parts.hpp"

#include <charconv>

namespace redlock::detail::uri {
namespace {

constexpr std::int64_t max_db = 2147483647;  // SELECT takes a signed 32-bit index.

}  // namespace

bool parse_db(std::string_view text, int& db, std::string& why)
{
    if (text.empty())
        return fail(why, "empty db (expected an integer from 0 to 2147483647)");
    for (char c : text)
        if (!is_digit(c))
            return fail(why, "db " + quote_text(text) + " is not a non-negative integer");
    std::int64_t value = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || p != text.data() + text.size() || value > max_db)
        return fail(why, "db " + quote_text(text) + " is out of range (0 to 2147483647)");
    db = static_cast<int>(value);
    return true;
}

bool parse_query(std::string_view tail, query_rules rules, int& db, std::string& why)
{
    if (tail.front() == '#')
        return fail(why, "a fragment ('#...') is not accepted in a master URI");

    auto query = tail.substr(1);
    const auto hash = query.find('#');
    if (hash != std::string_view::npos)
        return fail(why, "a fragment ('#...') is not accepted in a master URI");

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
            return fail(why, "unknown query parameter " + quote_text(name) +
                                 " (redis:// and rediss:// take no parameters; the db is the "
                                 "path, e.g. redis://host:6379/2)");
        if (rules == query_rules::cluster)
            return fail(why, "unknown query parameter " + quote_text(name) +
                                 " (redis-cluster:// and rediss-cluster:// take no parameters)");
        if (name != "db")
            return fail(why, "unknown query parameter " + quote_text(name) + " (accepted: db)");
        if (eq == std::string_view::npos)
            return fail(why, "query parameter 'db' has no value (e.g. ?db=2)");
        if (have_db)
            return fail(why, "query parameter 'db' is given more than once");
        have_db = true;
        if (!parse_db(param.substr(eq + 1), db, why))
            return false;
    }
    return true;
}

}  // namespace redlock::detail::uri
