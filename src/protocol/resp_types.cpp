// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/resp.hpp>

namespace redlock::resp {

std::string_view to_string(type t) noexcept
{
    switch (t)
    {
    case type::simple_string: return "simple_string";
    case type::simple_error: return "simple_error";
    case type::integer: return "integer";
    case type::bulk_string: return "bulk_string";
    case type::bulk_error: return "bulk_error";
    case type::null: return "null";
    case type::array: return "array";
    case type::map: return "map";
    case type::set: return "set";
    case type::push: return "push";
    case type::attribute: return "attribute";
    case type::double_type: return "double";
    case type::boolean: return "boolean";
    case type::big_number: return "big_number";
    case type::verbatim_string: return "verbatim_string";
    }
    // Only reachable through a cast of an out-of-range value.
    return "unknown";
}

}  // namespace redlock::resp
