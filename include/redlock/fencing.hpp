// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_FENCING_HPP
#define REDLOCK_FENCING_HPP

#include <cstdint>
#include <string>
#include <string_view>

#include <redlock/connection.hpp>
#include <redlock/error.hpp>
#include <redlock/resp.hpp>

namespace redlock {

/// @brief The protected resource's side of fencing (lock_options::fencing), for a resource
/// kept in Redis: the Lua script of a fenced write. KEYS[1] is the data key, KEYS[2] the key
/// of the highest token seen for it, ARGV[1] the writer's fencing token, ARGV[2] the value.
/// It sets KEYS[1] to ARGV[2] and returns 1 when the token is at least the highest seen (and
/// remembers it), else changes nothing and returns 0. The same holder may write many times
/// with its token; a holder whose lock was superseded is refused once its successor wrote.
std::string_view fenced_write_script() noexcept;

/// @brief The command of a fenced write of `value` to `key` with fencing token `token`, for
/// connection::async_exec to the store. The highest token seen is kept at `{key}:token`
/// (`key:token` when `key` has a hash tag), in `key`'s hash slot (not for a key with a `}`
/// but no valid hash tag, e.g. `x}y`: its `key:token` is in another slot). Read the reply with
/// fenced_write_accepted.
command fenced_set(std::string_view key, std::string_view value, std::uint64_t token);

/// @brief Whether the store took the write of fenced_set: true when it did, false when it
/// refused a token lower than one it has seen. Any other reply sets `ec`
/// (error::unexpected_reply) and returns false.
bool fenced_write_accepted(const resp::reply& r, error_code& ec) noexcept;

}  // namespace redlock

#endif
