// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-run's command line: what it means, where the masters and the password come from, and
// the exit statuses. Parsing is separate from running so that tests can check every rule
// without starting a process.
#pragma once

#include <redlock/config.hpp>
#include <redlock/hold.hpp>
#include <redlock/options.hpp>

#include "masters_options.hpp"
#include "parse_args.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace redlock::run {

/// The statuses redlock-run exits with when COMMAND's own status is not passed through. Those
/// of sysexits.h where one fits, so that cron wrappers and CI scripts read them as usual.
namespace exit_status {
inline constexpr int usage = cli::exit_status::usage;              ///< Bad arguments.
inline constexpr int unavailable = cli::exit_status::unavailable;  ///< No quorum answered.
inline constexpr int internal = cli::exit_status::internal;        ///< A failure of redlock-run.
inline constexpr int conflict = 75;  ///< EX_TEMPFAIL: the lock is held (--conflict-exit-code).
inline constexpr int config = cli::exit_status::config;  ///< Bad masters, unreadable files.
inline constexpr int lock_lost = 79;        ///< The lock was lost while COMMAND ran (ours).
inline constexpr int cannot_execute = 126;  ///< COMMAND found but not executable (as sh).
inline constexpr int not_found = 127;       ///< COMMAND not found (as sh).
}  // namespace exit_status

/// What redlock-run was asked to do; the masters (cli::masters_options) as redlock-status
/// reads them too.
struct run_options : cli::masters_options
{
    std::string resource;
    std::vector<std::string> command;  ///< COMMAND and its arguments.

    std::chrono::milliseconds ttl{30000};
    std::chrono::milliseconds wait{0};
    std::chrono::milliseconds kill_after{5000};
    std::chrono::milliseconds max_hold{0};  ///< 0: kept as long as COMMAND runs.
    int conflict_exit_code = exit_status::conflict;
    unsigned cluster_replica_acks = 0;  ///< client_config::cluster_replica_acks
    bool fencing = false;
    std::uint32_t permits = 1;  ///< lock_options::permits: more than 1, a counting semaphore
    bool shared = false;        ///< lock_options::role = lock_role::reader (as flock -s)
    std::string identity;       ///< lock_options::identity (--identity); empty: none
    bool verbose = false;
    bool quiet = false;  ///< No deployment warnings (--verbose still shows them).
};

/// Where parse_run_options() reads the environment and files; tests give their own.
using run_environment = cli::environment;

using parse_result = cli::parse_result<run_options>;

/// Parses `redlock-run [options] RESOURCE -- COMMAND [ARG...]`. A message never contains a
/// password, whatever the input.
parse_result parse_run_options(const std::vector<std::string>& args, const run_environment& env);

using cli::parse_duration;

/// The client configuration for these options (masters, password, TLS, timeouts).
client_config make_client_config(const run_options& o);

/// How the lock is kept alive while COMMAND runs: extended when two thirds of the TTL are left
/// (every third of it), for --max-hold (0: as long as COMMAND runs, hold_options' "no limit").
hold_options make_hold_options(const run_options& o);

}  // namespace redlock::run
