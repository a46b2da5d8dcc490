// libFuzzer target: parse_master_uri, master_config::to_string and connection_options::validate
// (see uri_check.hpp for the invariants). Run: see docs/reliability.md.
#include "fuzz_target.hpp"
#include "uri_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    redlock::fuzz::abort_if_violated("uri", redlock::fuzz::check_uri_input(data, size));
    return 0;
}
