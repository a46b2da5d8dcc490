// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The command-line convention of the project's programs (redlock-bench, redlock-torture): CLI11
// parses; --help prints to stdout and exits 0; a bad argument prints "NAME: why" and a pointer
// to --help on stderr and exits 2. redlock-run follows its own (sysexits) statuses.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace redlock::cli {

[[noreturn]] inline void usage_error(const std::string& name, const std::string& why)
{
    std::fprintf(stderr, "%s: %s\n(see %s --help)\n", name.c_str(), why.c_str(), name.c_str());
    std::exit(2);
}

inline void parse_or_exit(CLI::App& app, int argc, char** argv)
{
    try
    {
        app.parse(argc, argv);
    }
    catch (const CLI::CallForHelp&)
    {
        std::fputs(app.help().c_str(), stdout);
        std::exit(0);
    }
    catch (const CLI::ParseError& e)
    {
        usage_error(app.get_name(), e.what());
    }
}

}  // namespace redlock::cli
