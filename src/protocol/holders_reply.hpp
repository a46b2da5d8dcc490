// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_HOLDERS_REPLY_HPP
#define REDLOCK_SRC_PROTOCOL_HOLDERS_REPLY_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <redlock/resp.hpp>

namespace redlock::detail {

/// One thing a master holds of a resource: a string key's value or a live reader's member.
struct held_value
{
    std::string value;      ///< The key's value or the member; empty for a key not a string.
    std::int64_t pttl = 0;  ///< ms left (-1: a key without expiry).
    bool reader = false;    ///< A member of the readers' set.
    bool foreign = false;   ///< A key that is not a string: nobody's lock of ours.
    /// Which string key (0 for a mutex's; a semaphore's permit index); 0 for a reader.
    std::uint32_t key = 0;
};

/// What one master answered to lock_command::read_holders.
struct master_holdings
{
    std::uint64_t fence = 0;  ///< The fence counter (0: absent).
    /// The counter's record (fence_holder_key): the first 16 hex characters of the SHA-1 of
    /// the value whose commit set the counter; empty when absent (no commit recorded there).
    std::string fence_holder;
    std::vector<held_value> held;
};

/// @brief Reads one master's reply to read_holders over `string_keys` string keys
/// (holders_read_script): false, with `why` said, when it is not that shape (a counter that is
/// not a decimal integer, a record that is not a string or nil, a value that is not a bulk
/// string or nil, a PTTL that is not an integer, an odd count). Keys that do not exist are
/// left out.
bool read_holders_reply(std::span<const resp::node_view> nodes, std::size_t string_keys,
                        master_holdings& out, std::string& why);

}  // namespace redlock::detail

#endif
