// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The argv and envp arrays that posix_spawn and exec take, made from strings: redlock-run's
// COMMAND, and the tool tests' redlock-run. The strings must outlive the arrays.
#pragma once

#include <unistd.h>  // environ (with _GNU_SOURCE, which g++ defines)

#include <string>
#include <string_view>
#include <vector>

namespace redlock::run {

/// The strings' c_str() pointers, then nullptr.
inline std::vector<char*> exec_argv(const std::vector<std::string>& args)
{
    std::vector<char*> out;
    for (const auto& a : args)
        out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

/// This process's environment with `extra` ("NAME=value") added, replacing a variable of the
/// same name; then nullptr.
inline std::vector<char*> exec_envp(const std::vector<std::string>& extra)
{
    std::vector<char*> out;
    for (char** e = environ; *e != nullptr; ++e)
    {
        const std::string_view entry(*e);
        bool replaced = false;
        for (const auto& x : extra)
        {
            const auto name = std::string_view(x).substr(0, x.find('=') + 1);
            replaced = replaced || entry.substr(0, name.size()) == name;
        }
        if (!replaced)
            out.push_back(*e);
    }
    for (const auto& x : extra)
        out.push_back(const_cast<char*>(x.c_str()));
    out.push_back(nullptr);
    return out;
}

}  // namespace redlock::run
