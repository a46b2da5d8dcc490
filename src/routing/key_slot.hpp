// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_KEY_SLOT_HPP
#define REDLOCK_SRC_CLUSTER_KEY_SLOT_HPP

// Which of the 16384 hash slots of a Redis Cluster a key belongs to (the Redis Cluster
// specification, "Key distribution model"), so that a command on the key goes to the shard
// that serves its slot.

#include <cstdint>
#include <string_view>

namespace redlock::detail {

/// The number of hash slots of a Redis Cluster; slots are 0 to slot_count - 1.
inline constexpr std::uint16_t slot_count = 16384;

/// @brief CRC-16/XMODEM of `bytes`: polynomial 0x1021, initial value 0, no reflection, no
/// final XOR (the variant the Redis Cluster specification names CRC16-CCITT). Its check value,
/// over "123456789", is 0x31C3.
std::uint16_t crc16(std::string_view bytes) noexcept;

/// @brief The hash slot of `key`: crc16(hashed_part(key)) mod 16384, where hashed_part is
/// the key's hash tag when it has one (algorithm/fencing.hpp). The same as the server's
/// `CLUSTER KEYSLOT key`.
std::uint16_t key_slot(std::string_view key) noexcept;

}  // namespace redlock::detail

#endif
