// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace redlock::test {

/// @brief A fresh directory (mkdtemp, under $TMPDIR or else /tmp), removed with everything in
/// it when this goes away, unless kept.
class temp_dir
{
public:
    /// Makes `<$TMPDIR or /tmp>/<prefix>XXXXXX`.
    /// @throws std::system_error if mkdtemp fails.
    explicit temp_dir(std::string_view prefix = "redlock-test-");
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    /// The path of `name` in the directory.
    std::string file(std::string_view name) const { return (path_ / name).string(); }
    /// Whether `name` exists in the directory.
    bool exists(std::string_view name) const;
    /// Leaves the directory in place (`keep` true) or removes it (false) when this goes away.
    void keep(bool keep = true) noexcept { keep_ = keep; }

private:
    std::filesystem::path path_;
    bool keep_ = false;
};

}  // namespace redlock::test
