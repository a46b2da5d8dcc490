// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_process.hpp"

#include <cstdlib>
#include <stdexcept>

namespace redlock::bench::test {
namespace {

redlock::test::process_options bench_options(std::optional<std::string> path)
{
    redlock::test::process_options o;
    if (path)
        o.env.push_back("PATH=" + *path);
    o.capture_stdout = true;
    o.output_prefix = "/tmp/redlock-bench-output-";
    return o;
}

std::vector<std::string> bench_argv(const std::vector<std::string>& args)
{
    std::vector<std::string> argv{REDLOCK_BENCH_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

}  // namespace

bench_process::bench_process(const std::vector<std::string>& args, std::optional<std::string> path)
    : program_process(bench_argv(args), bench_options(std::move(path)))
{}

bool bench_process::wait_output(std::string_view text, std::chrono::milliseconds bound) const
{
    return redlock::test::eventually([&] { return output().find(text) != std::string::npos; },
                                     bound);
}

}  // namespace redlock::bench::test
