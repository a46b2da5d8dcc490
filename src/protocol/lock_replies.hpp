// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_LOCK_REPLIES_HPP
#define REDLOCK_SRC_PROTOCOL_LOCK_REPLIES_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <redlock/resp.hpp>

#include "protocol/lock_commands.hpp"

namespace redlock::detail {

/// What one master's reply to a lock command says of the keys.
enum class lock_answer : std::uint8_t
{
    ours,         ///< Done: set, deleted, extended, handed over; a check found our token.
    other_owner,  ///< Refused: another owner's token, or no key.
    /// Refused: the resource is held as another kind of lock (a semaphore's attempt found a
    /// mutex's or a writer's token, the readers' mark, or another size's mark: lock_reply::what).
    other_kind,
    unexpected,  ///< A well-formed reply the command cannot return (see lock_reply::what).
};

/// One reply read. No string is made: it is read on every reply.
struct lock_reply
{
    lock_answer answer = lock_answer::unexpected;
    std::string_view
        what;  ///< unexpected: what returned `type` ("SET returned "); other_kind: what holds it
    resp::type type{};         ///< unexpected: the reply's type
    std::int64_t pttl = -3;    ///< check: the smallest PTTL (-1: no expiry, -3: not ours)
    std::uint32_t permit = 0;  ///< acquire_permit, ours: the index of the key set
    std::string message() const { return std::string(what) + std::string(resp::to_string(type)); }
};

/// read_lock_reply() for any reply (lock_replies.cpp).
lock_reply read_any_lock_reply(lock_command k, std::span<const resp::node_view> nodes,
                               std::size_t key_count, std::span<std::int64_t> counters);

/// @brief Reads the reply `nodes` (not an error, not NOSCRIPT) to command `k` over
/// `key_count` keys.
/// @param counters acquire_fenced, acquire_writer_fenced: where each resource's fence counter
/// goes (one per resource); ours only when the reply is an array of exactly that many
/// non-negative integers.
///
/// Inline for the replies of a mutex's every cycle (a single-key SET's OK, a release's 1);
/// the others are read out of line.
inline lock_reply read_lock_reply(lock_command k, std::span<const resp::node_view> nodes,
                                  std::size_t key_count, std::span<std::int64_t> counters = {})
{
    const auto& v = nodes[0];
    if ((k == lock_command::acquire && key_count == 1 && v.data_type == resp::type::simple_string &&
         v.value == "OK") ||
        (k == lock_command::release && v.data_type == resp::type::integer && v.value == "1"))
    {
        lock_reply r;
        r.answer = lock_answer::ours;
        return r;
    }
    return read_any_lock_reply(k, nodes, key_count, counters);
}

}  // namespace redlock::detail

#endif
