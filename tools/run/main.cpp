// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-run [OPTIONS] RESOURCE -- COMMAND [ARG...]: flock(1) across machines. See
// docs/cli.md.
#include "run_options.hpp"
#include "runner.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv)
{
    using namespace redlock::run;
    try
    {
        std::vector<std::string> args(argv + 1, argv + argc);
        auto parsed = parse_run_options(args, run_environment::system());
        if (!parsed.options)
        {
            std::fputs(parsed.message.c_str(), parsed.to_stdout ? stdout : stderr);
            if (!parsed.message.empty() && parsed.message.back() != '\n')
                std::fputc('\n', parsed.to_stdout ? stdout : stderr);
            return parsed.exit_code;
        }
        return run(*parsed.options);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "redlock-run: %s\n", e.what());
        return exit_status::internal;
    }
}
