// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_RESP_HPP
#define REDLOCK_RESP_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::resp {

/// @brief The RESP2 / RESP3 value types, named after the RESP3 specification.
enum class type : std::uint8_t
{
    simple_string,    ///< `+OK`
    simple_error,     ///< `-ERR message`
    integer,          ///< `:42`
    bulk_string,      ///< `$3\r\nfoo`
    bulk_error,       ///< `!21\r\nSYNTAX invalid syntax`
    null,             ///< `_`, `$-1`, `*-1`
    array,            ///< `*2` followed by two values
    map,              ///< `%1` followed by one key and one value
    set,              ///< `~2`
    push,             ///< `>2` (out-of-band; never matched to a request)
    attribute,        ///< `|1` (metadata attached to the next value)
    double_type,      ///< `,1.5`
    boolean,          ///< `#t`
    big_number,       ///< `(123456789012345678901234567890`
    verbatim_string,  ///< `=15\r\ntxt:Some string`
};

/// Returns true for the aggregate types (array, map, set, push, attribute).
constexpr bool is_aggregate(type t) noexcept
{
    return t == type::array || t == type::map || t == type::set || t == type::push ||
           t == type::attribute;
}

/// Returns true for simple_error and bulk_error.
constexpr bool is_error(type t) noexcept
{
    return t == type::simple_error || t == type::bulk_error;
}

/// A short lowercase name of a type ("bulk_string"), for messages.
std::string_view to_string(type t) noexcept;

/// @brief One value of a reply in pre-order (depth-first) layout, viewing the read buffer.
///
/// A reply is a sequence of nodes: an aggregate node is followed by its elements (for maps
/// and attributes: key, value, key, value...). `size` is the element count as sent (pairs
/// for maps and attributes); `value` is empty for aggregates and nulls.
struct node_view
{
    type data_type{};       ///< The value's RESP type.
    std::uint32_t depth{};  ///< 0 for the top-level value, 1 for its elements, and so on.
    std::uint64_t size{};   ///< Aggregates: the element count as sent (pairs for maps); else 0.
    std::string_view
        value;  ///< A leaf's payload or wire text (`"42"`); empty for aggregates, nulls.
};

/// An owning node; the same layout as node_view.
struct node
{
    type data_type{};       ///< As node_view::data_type.
    std::uint32_t depth{};  ///< As node_view::depth.
    std::uint64_t size{};   ///< As node_view::size.
    std::string value;      ///< As node_view::value, owned.

    /// True when every field is equal.
    friend bool operator==(const node&, const node&) = default;
};

/// An owning reply: the nodes of one top-level value in pre-order.
using reply = std::vector<node>;

}  // namespace redlock::resp

#endif
