// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// Where the command-line tools that talk to the masters (redlock-run, redlock-status) find them
// and how they reach them: the --master, --masters-file, REDLOCK_MASTERS and default-file
// chain, the password (never on the command line), TLS, the connect timeout; and the duration
// syntax they share. Parsing only: tests check every rule without a process or a master.
#pragma once

#include <redlock/config.hpp>
#include <redlock/options.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

/// The statuses of the tools that talk to the masters, those of sysexits.h where one fits.
namespace exit_status {
inline constexpr int usage = 64;        ///< EX_USAGE: bad arguments.
inline constexpr int unavailable = 69;  ///< EX_UNAVAILABLE: no quorum of masters answered.
inline constexpr int internal = 70;     ///< EX_SOFTWARE: an unexpected failure of the tool.
inline constexpr int config = 78;       ///< EX_CONFIG: bad masters, unreadable files.
}  // namespace exit_status

/// Where the tools read the environment and files; tests give their own.
struct environment
{
    std::function<std::optional<std::string>(const std::string& name)> getenv;
    /// Reads a whole file; nullopt when it cannot be read (errno names why).
    std::function<std::optional<std::string>(const std::string& path)> read_file;
    /// The masters file used when neither --master, --masters-file nor REDLOCK_MASTERS is
    /// given (and it exists).
    std::string default_masters_file = "/etc/redlock/masters";

    /// The process's environment and file system.
    static environment system();
};

/// The masters, resolved.
struct masters_options
{
    /// Master URIs, passwords included (never printed: master_config::to_string masks them).
    std::vector<std::string> masters;
    std::string masters_source;  ///< "--master", "--masters-file F", "REDLOCK_MASTERS", ...
    /// Applied to every master whose URI carries none (--password-file, REDLOCK_PASSWORD).
    std::string password;
    tls_options tls;
    std::chrono::milliseconds connect_timeout{2000};
    bool any_cluster = false;  ///< A redis-cluster:// or rediss-cluster:// master among them.
};

/// The masters' options as CLI11 fills them, before they are checked.
struct masters_flags
{
    std::vector<std::string> master;
    std::string masters_file;
    std::string password_file;
    std::string connect_timeout = "2s";
    bool tls_insecure = false;
};

/// Declares --master, --masters-file, --password-file, --connect-timeout and the --tls-*
/// options on `app`, filling `flags` and `tls`.
void add_masters_flags(CLI::App& app, masters_flags& flags, tls_options& tls);

/// Why a tool stops: its exit status and what it says (without the tool's name).
struct failure
{
    int exit_code = exit_status::usage;
    std::string message;
};

/// @brief Resolves `flags` into `out` (`out.tls` as add_masters_flags filled it): the password
/// (--password-file, else REDLOCK_PASSWORD), the masters (--master, else --masters-file, else
/// REDLOCK_MASTERS, else the default file), each URI checked, and never a password on the
/// command line. A message never contains a password.
std::optional<failure> resolve_masters(const masters_flags& flags, const environment& env,
                                       masters_options& out);

/// The client configuration for these masters: each URI with the password and TLS settings,
/// the connect timeout, `client_name` as the connections' CLIENT SETNAME.
client_config masters_config(const masters_options& o, std::string client_name);

/// "30s", "500ms", "1.5m", "2h", or a bare number of seconds; nullopt when malformed, negative
/// or too large.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace redlock::cli
