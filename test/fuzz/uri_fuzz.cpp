// libFuzzer target: parse_master_uri, master_config::to_string and connection_options::validate
// (see uri_check.hpp for the invariants). Run: see docs/reliability.md.
#include "uri_check.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string problem = redlock::fuzz::check_uri_input(data, size);
    if (!problem.empty())
    {
        std::fprintf(stderr, "uri invariant violated: %s\n", problem.c_str());
        std::abort();
    }
    return 0;
}
