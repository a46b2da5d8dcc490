// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_SCRIPTS_HPP
#define REDLOCK_SRC_PROTOCOL_SCRIPTS_HPP

#include <string>
#include <string_view>

namespace redlock::detail {

/// A Lua script and the hex SHA1 that EVALSHA names it by.
struct lua_script
{
    std::string_view body;
    std::string sha1;  ///< 40 lowercase hex characters, computed once from `body`.
};

/// Compare-and-delete (the spec's release script): deletes KEYS[1] only while it holds
/// ARGV[1]. Returns 1 when deleted, 0 otherwise.
const lua_script& release_script();

/// Compare-and-PEXPIRE: sets the TTL of KEYS[1] to ARGV[2] ms only while it holds ARGV[1].
/// Returns 1 when extended, 0 otherwise; a missing key is never re-created.
const lua_script& extend_script();

/// Hex SHA1 of `data` (OpenSSL).
std::string sha1_hex(std::string_view data);

}  // namespace redlock::detail

#endif
