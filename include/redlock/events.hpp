// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_EVENTS_HPP
#define REDLOCK_EVENTS_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>

namespace redlock {

/// @brief What happened, as reported to `client_config::on_event`.
enum class event_kind : std::uint8_t
{
    master_up,       ///< A master's connection became ready (`master`).
    master_down,     ///< A master became unreachable: a ready connection dropped, or the first
                     ///< attempt after start or after a drop failed (`master`, `ec`).
    acquired,        ///< async_lock / async_try_lock / async_lock_all succeeded.
    acquire_failed,  ///< They failed (`ec`; error::contended for a contended try_lock too).
    extended,        ///< An extension succeeded: async_extend, or a lock_holder's.
    extend_failed,   ///< An extension failed (`ec`).
    released,        ///< async_unlock (or a holder's release) succeeded.
    release_failed,  ///< It failed (`ec`: lock_lost, no_quorum, ...).
    degraded,        ///< A lock_holder's extension was granted by fewer than every master
                     ///< (`granted` of `masters`): one master fewer may lose it. Reported
                     ///< each time the count changes, and when it is back to every master.
    lost,            ///< A lock_holder lost its lock (`ec` says why, as lock_holder::status()).
    master_warning,  ///< A master's handshake found a deployment that can lose lock keys
                     ///< (`master`, `ec`: error::eviction_can_drop_locks, persistence_off,
                     ///< master_has_replicas or master_is_replica), one event per warning
                     ///< that the master's previous handshake did not find.
    // New kinds go last: code that sizes a table by kind counts up to the last one.
};

/// A short name ("acquire_failed").
std::string_view to_string(event_kind k) noexcept;

/// @brief One event. Valid only during the call: copy what you keep.
struct event
{
    event_kind kind = event_kind::acquired;  ///< What happened; it says which fields below are set.
    std::size_t master = 0;     ///< master_up, master_down, master_warning: the master's index.
    std::string_view resource;  ///< Lock events: the (first) resource.
    /// Lock events: the holder's identity the lock publishes (lock_options::identity; for
    /// acquire_failed, the one asked for), empty when none. Never the token.
    std::string_view identity;
    error_code ec;  ///< The failures' cause; master_down's; master_warning's warning.
    std::chrono::microseconds elapsed{0};  ///< acquired, acquire_failed: from the call to the
                                           ///< completion (retries and backoff included).
    std::uint32_t attempts = 0;            ///< acquired, acquire_failed: attempts made.
    bool handed_over = false;  ///< acquired: the lock was handed over by a holder of this
                               ///< client that released it (lock_options::handoff), not
                               ///< taken by an attempt; `attempts` are those made before
                               ///< (0 when it was queued behind another waiter).
    std::size_t granted = 0;   ///< degraded: masters that hold the lock after the extension.
    std::size_t masters = 0;   ///< The number of masters.
    /// master_down: what the connection saw, e.g. "redis://10.0.0.2:6379: server closed the
    /// connection (idle: no request in flight)" or "...: no reply for 3000 ms (health check)
    /// (2 requests in flight)"; its password masked. Empty when there is nothing to add to `ec`.
    std::string_view detail;
};

/// @brief Receives the client's events (client_config::on_event).
///
/// Called on the client's strand, synchronously, in the order things happen: it must be quick
/// and must not block (count, or post elsewhere). It may call the client's operations. An
/// empty function (the default) costs one test per event.
using event_handler = std::function<void(const event&)>;

/// A master connection's state, as client::master_states() reports it.
enum class master_state : std::uint8_t
{
    connecting,  ///< Connecting (first time, or again after a drop).
    ready,       ///< Connected and handshaken: takes requests.
    down,        ///< The last attempt failed; the next one waits for its backoff.
    closed,      ///< The client was closed.
};

/// A short name ("ready").
std::string_view to_string(master_state s) noexcept;

/// @brief One master's connection state and counters (client::master_states()).
struct master_info
{
    std::size_t index = 0;  ///< The master's position in configuration order.
    std::string endpoint;   ///< The master's URI, its password masked.
    master_state state = master_state::connecting;  ///< The connection's state.
    error_code last_error;       ///< The cause of the last failure (cleared on connect).
    std::uint64_t requests = 0;  ///< Requests accepted (health PINGs included).
    std::uint64_t replies = 0;   ///< Replies read.
    std::uint64_t connects = 0;  ///< Successful connections.
    std::uint64_t drops = 0;     ///< Connections lost after being ready.
    /// The deployment warnings of the last successful handshake (client_config::deployment_checks),
    /// in the order of redlock::error; empty when none, when the master did not say
    /// (INFO refused), or before the first connection.
    std::vector<error_code> warnings;
};

}  // namespace redlock

#endif
