// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "temp_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace redlock::test {

temp_dir::temp_dir(std::string_view prefix)
{
    const char* base = std::getenv("TMPDIR");
    std::string pattern = (base != nullptr && *base != '\0') ? base : "/tmp";
    pattern += '/';
    pattern += prefix;
    pattern += "XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::system_error(errno, std::generic_category(), "mkdtemp(" + pattern + ")");
    path_ = pattern;
}

temp_dir::~temp_dir()
{
    if (keep_)
        return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

bool temp_dir::exists(std::string_view name) const
{
    std::error_code ignored;
    return std::filesystem::exists(path_ / name, ignored);
}

}  // namespace redlock::test
