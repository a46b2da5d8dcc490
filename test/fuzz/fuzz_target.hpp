// What the libFuzzer targets share: how a broken invariant ends the run.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace redlock::fuzz {

/// Aborts (a crash, to libFuzzer) after printing "`what` invariant violated: `problem`", unless
/// `problem` is empty.
inline void abort_if_violated(const char* what, const std::string& problem)
{
    if (problem.empty())
        return;
    std::fprintf(stderr, "%s invariant violated: %s\n", what, problem.c_str());
    std::abort();
}

}  // namespace redlock::fuzz
