// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What redlock-status prints for one read of the masters: a summary line, the masters' lines,
// and the exit status. Text only, from the read's result: tests check it without a master.
#pragma once

#include <redlock/error.hpp>
#include <redlock/holders.hpp>

#include <span>
#include <string>
#include <string_view>

namespace redlock::status {

/// "RESOURCE: held by web-3:8080 (holder 1a2b3c4d5e6f7081, fencing token 17, valid for 8123
/// ms, on 5 masters)" (the holder's own fencing token, holder_info::fencing_token, left out
/// when 0), "RESOURCE: free", "RESOURCE: unknown: ..." (the refusal's reason when there is
/// one); no newline. Never a token.
std::string summary(std::string_view resource, error_code ec, const holders_result& r);

/// The summary, then one line per master ("  master 0 (ENDPOINT): ..."), each ending in a
/// newline. `endpoints`: the masters' endpoints as printed (passwords masked).
std::string report(std::string_view resource, error_code ec, const holders_result& r,
                   std::span<const std::string> endpoints);

/// What the read says, for --watch to print a line only when it changes: the state and each
/// holder's id (its value's), role and fencing token (not the time left, which always
/// changes).
std::string fingerprint(error_code ec, const holders_result& r);

/// 0 held, 1 free, 69 when no majority answered (no_quorum, connection errors), 64 when the
/// read was refused (invalid_argument, invalid_option), 70 otherwise.
int exit_code_of(error_code ec, const holders_result& r);

}  // namespace redlock::status
