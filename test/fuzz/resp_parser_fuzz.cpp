// libFuzzer target: the RESP parser, fed whole, in chunks and byte by byte (see
// resp_parser_check.hpp for the invariants). Run: see docs/reliability.md.
#include "fuzz_target.hpp"
#include "resp_parser_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    redlock::fuzz::abort_if_violated("resp_parser", redlock::fuzz::check_resp_input(data, size));
    return 0;
}
