// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/reply_route.hpp"

namespace redlock::detail {

namespace {

bool starts_with_word(std::string_view text, std::string_view word) noexcept
{
    return text.substr(0, word.size()) == word &&
           (text.size() == word.size() || text[word.size()] == ' ');
}

}  // namespace

reply_route route_reply(const resp::node_view& head, std::string_view answering_host, unsigned hops)
{
    reply_route r;
    if (!resp::is_error(head.data_type))
        return r;
    const std::string_view text = head.value;
    if (starts_with_word(text, "MOVED") || starts_with_word(text, "ASK"))
    {
        auto to = parse_redirect(text, answering_host);
        r.refresh = !to || to->kind == redirect_kind::moved || hops >= max_redirects;
        if (to && hops < max_redirects)
            r.follow = std::move(to);
        return r;
    }
    r.refresh = starts_with_word(text, "CLUSTERDOWN");
    return r;
}

}  // namespace redlock::detail
