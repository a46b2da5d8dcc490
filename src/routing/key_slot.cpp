// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/key_slot.hpp"

#include "algorithm/fencing.hpp"

#include <array>
#include <cstddef>

namespace redlock::detail {
namespace {

// One entry per value of the high byte of the CRC: what shifting it out through the
// polynomial XORs into the register. Computed at compile time from the polynomial.
constexpr std::array<std::uint16_t, 256> crc16_table = [] {
    constexpr std::uint16_t polynomial = 0x1021;
    std::array<std::uint16_t, 256> table{};
    for (std::size_t byte = 0; byte < table.size(); ++byte)
    {
        auto crc = static_cast<std::uint16_t>(byte << 8);
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 0x8000) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ polynomial)
                                      : static_cast<std::uint16_t>(crc << 1);
        table[byte] = crc;
    }
    return table;
}();

static_assert(crc16_table[1] == 0x1021 && crc16_table[255] == 0x1EF0);

}  // namespace

std::uint16_t crc16(std::string_view bytes) noexcept
{
    std::uint16_t crc = 0;
    for (const char c : bytes)
    {
        const auto index = static_cast<std::size_t>((crc >> 8) ^ static_cast<unsigned char>(c));
        crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[index]);
    }
    return crc;
}

std::uint16_t key_slot(std::string_view key) noexcept
{
    // 16384 is a power of two: the remainder is the low 14 bits.
    return static_cast<std::uint16_t>(crc16(hashed_part(key)) & (slot_count - 1));
}

}  // namespace redlock::detail
