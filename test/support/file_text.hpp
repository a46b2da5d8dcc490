// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// Reading the files the test harnesses leave (server logs, a child's output, /proc entries)
// and quoting their last lines in a failure's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace redlock::test {

/// The content of `path` from byte `offset` on (from its start when it is shorter), as bytes;
/// "" when it cannot be read.
std::string read_text(const std::filesystem::path& path, std::uintmax_t offset = 0);

/// The last `max_lines` lines of `text` (all of it when it has fewer): its final newline ends
/// the last line, it starts none.
std::string_view final_lines(std::string_view text, std::size_t max_lines);

}  // namespace redlock::test
