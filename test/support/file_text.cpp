// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "file_text.hpp"

#include <fstream>
#include <iterator>

namespace redlock::test {

std::string read_text(const std::filesystem::path& path, std::uintmax_t offset)
{
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in)
    {
        in.clear();
        in.seekg(0);
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string_view final_lines(std::string_view text, std::size_t max_lines)
{
    if (text.empty())
        return text;
    constexpr auto npos = std::string_view::npos;
    // Walk back one newline per line.
    std::size_t start = text.size() - 1;
    for (std::size_t lines = 0; lines < max_lines; ++lines)
    {
        const auto newline = start == 0 ? npos : text.rfind('\n', start - 1);
        if (newline == npos)
            return text;
        start = newline;
    }
    return text.substr(start + 1);
}

}  // namespace redlock::test
