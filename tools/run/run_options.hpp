// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-run's command line: what it means, where the masters and the password come from, and
// the exit statuses. Parsing is separate from running so that tests can check every rule
// without starting a process.
#pragma once

#include <redlock/config.hpp>
#include <redlock/hold.hpp>
#include <redlock/options.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace redlock::run {

/// The statuses redlock-run exits with when COMMAND's own status is not passed through. Those
/// of sysexits.h where one fits, so that cron wrappers and CI scripts read them as usual.
namespace exit_status {
inline constexpr int usage = 64;        ///< EX_USAGE: bad arguments.
inline constexpr int unavailable = 69;  ///< EX_UNAVAILABLE: no quorum of masters answered.
inline constexpr int internal = 70;     ///< EX_SOFTWARE: an unexpected failure of redlock-run.
inline constexpr int conflict = 75;     ///< EX_TEMPFAIL: the lock is held (--conflict-exit-code).
inline constexpr int config = 78;       ///< EX_CONFIG: bad masters, unreadable files.
inline constexpr int lock_lost = 79;    ///< The lock was lost while COMMAND ran (ours).
inline constexpr int cannot_execute = 126;  ///< COMMAND found but not executable (as sh).
inline constexpr int not_found = 127;       ///< COMMAND not found (as sh).
}  // namespace exit_status

struct run_options
{
    std::string resource;
    std::vector<std::string> command;  ///< COMMAND and its arguments.

    /// Master URIs, passwords included (never printed: see masked_masters()).
    std::vector<std::string> masters;
    std::string masters_source;  ///< "--master", "--masters-file F", "REDLOCK_MASTERS", ...
    /// Applied to every master whose URI carries none (--password-file, REDLOCK_PASSWORD).
    std::string password;
    tls_options tls;

    std::chrono::milliseconds ttl{30000};
    std::chrono::milliseconds wait{0};
    std::chrono::milliseconds kill_after{5000};
    std::chrono::milliseconds max_hold{0};  ///< 0: kept as long as COMMAND runs.
    std::chrono::milliseconds connect_timeout{2000};
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
struct run_environment
{
    std::function<std::optional<std::string>(const std::string& name)> getenv;
    /// Reads a whole file; nullopt when it cannot be read (errno names why).
    std::function<std::optional<std::string>(const std::string& path)> read_file;
    /// The masters file used when neither --master, --masters-file nor REDLOCK_MASTERS is
    /// given (and it exists).
    std::string default_masters_file = "/etc/redlock/masters";

    /// The process's environment and file system.
    static run_environment system();
};

/// What parsing decided: run with these options, or exit with this status after printing
/// `message` (to stdout for --help / --version, stderr otherwise).
struct parse_result
{
    std::optional<run_options> options;
    int exit_code = 0;
    std::string message;
    bool to_stdout = false;
};

/// Parses `redlock-run [options] RESOURCE -- COMMAND [ARG...]`. A message never contains a
/// password, whatever the input.
parse_result parse_run_options(const std::vector<std::string>& args, const run_environment& env);

/// "30s", "500ms", "1.5m", "2h", or a bare number of seconds; nullopt when malformed, negative
/// or too large.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// The client configuration for these options (masters, password, TLS, timeouts).
client_config make_client_config(const run_options& o);

/// How the lock is kept alive while COMMAND runs: extended when two thirds of the TTL are left
/// (every third of it), for --max-hold (0: as long as COMMAND runs, hold_options' "no limit").
hold_options make_hold_options(const run_options& o);

}  // namespace redlock::run
