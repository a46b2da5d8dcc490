// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/redirect.hpp"

#include "routing/key_slot.hpp"

#include <string>
#include <utility>

namespace redlock::detail {
namespace {

/// `text` as a decimal number no greater than `max`: digits only, no sign, no spaces.
std::optional<unsigned> decimal(std::string_view text, unsigned max) noexcept
{
    // Five digits hold 65535, the largest bound used here; longer text (leading zeros
    // included) is refused.
    if (text.empty() || text.size() > 5)
        return std::nullopt;
    unsigned value = 0;
    for (const char c : text)
    {
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > max)
        return std::nullopt;
    return value;
}

/// The first word of `text` (up to the first space) and the rest after that space.
std::pair<std::string_view, std::string_view> split_word(std::string_view text) noexcept
{
    const auto space = text.find(' ');
    if (space == std::string_view::npos)
        return {text, {}};
    return {text.substr(0, space), text.substr(space + 1)};
}

/// Whether the first word of `text` (up to a space or the end) is `word`.
bool first_word_is(std::string_view text, std::string_view word) noexcept
{
    return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

}  // namespace

std::optional<redirect> parse_redirect(std::string_view error_text, std::string_view answering_host)
{
    redirect r;
    const auto [word, after_word] = split_word(error_text);
    if (word == "MOVED")
        r.kind = redirect_kind::moved;
    else if (word == "ASK")
        r.kind = redirect_kind::ask;
    else
        return std::nullopt;

    const auto [slot_text, address] = split_word(after_word);
    const auto slot = decimal(slot_text, slot_count - 1);
    if (!slot)
        return std::nullopt;
    r.slot = static_cast<std::uint16_t>(*slot);

    // A space in the address is a fourth field, which the format does not have.
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos || address.find(' ') != std::string_view::npos)
        return std::nullopt;
    const auto port = decimal(address.substr(colon + 1), 65535);
    if (!port || *port == 0)
        return std::nullopt;
    r.to.port = static_cast<std::uint16_t>(*port);

    auto host = address.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.empty())
        host = answering_host;
    // "?": a node told to prefer host names that has none. Not the node that answered, and
    // not a name to resolve: the caller reads the slot map again instead.
    if (host.empty() || host == "?")
        return std::nullopt;
    r.to.host.assign(host);
    return r;
}

bool is_cluster_retryable(std::string_view error_text) noexcept
{
    return first_word_is(error_text, "TRYAGAIN") || first_word_is(error_text, "CLUSTERDOWN");
}

}  // namespace redlock::detail
