// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-status's command line: which resource, how it is read, and the exit statuses.
// Parsing is separate from running so that tests check every rule without a process.
#pragma once

#include <redlock/options.hpp>

#include "masters_options.hpp"
#include "parse_args.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace redlock::status {

/// The statuses redlock-status exits with (sysexits.h where one fits, as redlock-run).
namespace exit_status {
inline constexpr int held = 0;  ///< A majority agrees on a holder.
inline constexpr int free = 1;  ///< A majority answered, and agrees on none.
inline constexpr int usage = cli::exit_status::usage;
inline constexpr int unavailable = cli::exit_status::unavailable;  ///< No majority answered.
inline constexpr int internal = cli::exit_status::internal;
inline constexpr int config = cli::exit_status::config;
}  // namespace exit_status

struct status_options : cli::masters_options
{
    std::string resource;
    std::uint32_t permits = 1;  ///< Read a semaphore of N permits (as redlock-run --permits N).
    std::chrono::milliseconds timeout{500};  ///< The read's deadline.
    /// The TTL the holders take the lock with (redlock-run's default): its drift allowance is
    /// subtracted from the validity reported.
    std::chrono::milliseconds ttl{30000};
    bool watch = false;                       ///< Print each change until interrupted.
    std::chrono::milliseconds interval{200};  ///< --watch: how often the masters are read.
};

using parse_result = cli::parse_result<status_options>;

/// Parses `redlock-status [OPTIONS] RESOURCE`. A message never contains a password.
parse_result parse_status_options(const std::vector<std::string>& args,
                                  const cli::environment& env);

/// The read's options: what async_holders is given.
lock_options read_options(const status_options& o);

}  // namespace redlock::status
