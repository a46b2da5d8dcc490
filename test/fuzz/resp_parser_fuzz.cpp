// libFuzzer target: the RESP parser, fed whole, in chunks and byte by byte (see
// resp_parser_check.hpp for the invariants). Run: see docs/reliability.md.
#include "resp_parser_check.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string problem = redlock::fuzz::check_resp_input(data, size);
    if (!problem.empty())
    {
        std::fprintf(stderr, "resp_parser invariant violated: %s\n", problem.c_str());
        std::abort();
    }
    return 0;
}
