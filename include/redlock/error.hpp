// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_ERROR_HPP
#define REDLOCK_ERROR_HPP

#include <string_view>
#include <system_error>
#include <type_traits>

#include <boost/system/error_code.hpp>

namespace redlock {

/// The error code type used by every redlock operation (Asio's).
using error_code = boost::system::error_code;

/// @brief Every error redlock reports itself. Values start at 1; 0 is success.
///
/// Cancellation is reported with `boost::asio::error::operation_aborted`, as every Asio
/// operation does, not with a value of this enum.
enum class error
{
    // --- configuration -----------------------------------------------------------------------
    invalid_uri = 1,   ///< A master URI could not be parsed (the diagnostics name the part).
    invalid_option,    ///< An option has a value outside its allowed range.
    invalid_argument,  ///< An argument of an operation is not acceptable (empty resource...).

    // --- protocol ----------------------------------------------------------------------------
    protocol_error,    ///< The server sent bytes that are not valid RESP, or that exceed a limit.
    unexpected_reply,  ///< A well-formed reply of a type the command cannot return.

    // --- transport ---------------------------------------------------------------------------
    resolve_failed,        ///< The master's host name could not be resolved.
    connect_failed,        ///< TCP / Unix socket connection could not be established.
    tls_handshake_failed,  ///< The TLS handshake failed (e.g. the peer certificate did not verify).
    handshake_failed,      ///< The Redis handshake (HELLO/AUTH/SELECT/SETNAME) failed.
    not_connected,         ///< The connection is down (reconnecting); the request was not sent.
    connection_lost,       ///< The connection dropped (an operation's request was in flight, or, in
                           ///< a master_down event, the connection was idle).
    request_timeout,       ///< No reply within the request's deadline.
    connection_closed,     ///< The connection object was closed by its owner.

    // --- server error replies (the prefix of the reply, so callers can act on it) -------------
    server_error,  ///< `-ERR ...` or any error reply with a prefix not listed below.
    noscript,      ///< `-NOSCRIPT`: the script is not in the server's cache.
    noauth,        ///< `-NOAUTH`: authentication required.
    wrongpass,     ///< `-WRONGPASS`: wrong user name or password.
    noperm,        ///< `-NOPERM`: the ACL user may not run this command or key.
    readonly,      ///< `-READONLY`: the server is a read-only replica.
    oom,           ///< `-OOM`: the server is out of memory (maxmemory reached).
    busy,          ///< `-BUSY`: a script is running too long.
    loading,       ///< `-LOADING`: the server is loading its dataset.
    masterdown,    ///< `-MASTERDOWN`: link with the master is down.
    wrongtype,     ///< `-WRONGTYPE`: the key holds a value of another type.

    // --- lock outcomes -----------------------------------------------------------------------
    contended,         ///< Another owner holds the resource on enough masters.
    no_quorum,         ///< Too many masters failed or timed out to reach a majority.
    validity_expired,  ///< A majority agreed, but too late: no validity time was left.
    lock_lost,         ///< The lock's keys hold another token or are gone on enough masters while
                       ///< its validity had not ended (taken over, or dropped by a master).
    // 29 was not_owner, which no operation produced (lock_lost says it).
    lock_expired = 30,  ///< The lock's validity had ended (before an extension, a release, or
                        ///< while a holder's extensions kept failing).
    extension_limit,    ///< The extension limit was reached; the lock was left to expire.
    released,           ///< The lock was released by its holder.
    master_restarted,   ///< The master restarted less than client_config::restart_quarantine ago.

    // --- deployment warnings: a master that can lose a lock key (event_kind::master_warning,
    // master_info::warnings; docs/algorithm.md, "Deployment checks"). They never fail an
    // operation nor refuse a connection.
    eviction_can_drop_locks,  ///< maxmemory is set with an eviction policy other than noeviction.
    persistence_off,          ///< Neither AOF nor RDB save points: a restart forgets every key.
    master_has_replicas,  ///< The master has replicas: a failover may promote one without the key.
    master_is_replica,    ///< The master is a replica (`role:slave`).

    // --- added after the warnings (the values above stay as they were)
    /// A cluster master's answer was not acknowledged by client_config::cluster_replica_acks
    /// replicas of its shard within cluster_replica_ack_timeout: it does not count.
    not_replicated,
    /// The resource is held as another kind of lock than the one asked for: a semaphore
    /// acquisition found a mutex's or a writer's lock, a read-write lock's readers, or a
    /// semaphore of another number of permits (docs/algorithm.md, "One kind per resource").
    kind_mismatch,
};

/// @brief The category of redlock::error; its name is "redlock".
const boost::system::error_category& category() noexcept;

/// Makes an error_code from a redlock::error.
inline error_code make_error_code(error e) noexcept { return {static_cast<int>(e), category()}; }

/// @brief Maps the prefix of a server error reply (e.g. "NOSCRIPT No matching script") to an
/// error value. Unknown prefixes map to error::server_error.
error error_from_server_reply(std::string_view message) noexcept;

}  // namespace redlock

namespace boost::system {
template <>
struct is_error_code_enum<::redlock::error> : std::true_type
{};
}  // namespace boost::system

#endif
