// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_HOLDERS_HPP
#define REDLOCK_HOLDERS_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <redlock/lock.hpp>

namespace redlock {

/// @brief One holder of a resource that a majority of the masters agree on
/// (client::async_holders). Never its token.
struct holder_info
{
    /// What the holder published as lock_options::identity; empty when it published none, or
    /// when the key holds another client's value.
    std::string identity;
    /// An opaque name of the value the holder's keys hold (16 hex characters of its SHA-1):
    /// the same while the same acquisition holds, another for the next holder, so that two
    /// holders without an identity can be told apart. It reveals nothing usable of the token.
    std::string id;
    /// A member of a read-write lock's readers' set; else the holder of the resource's key (a
    /// mutex's, a writer's) or of one of its permits.
    bool reader = false;
    /// The holder's own fencing token (its term) when it took the lock with
    /// lock_options::fencing: the resource's fence counter on the masters that hold it and
    /// whose counter its commit set (each records whose value the counter was committed
    /// for), once a majority of them agree on it. 0 when it took none, or while its commit
    /// has not reached a majority of the masters read (the commit follows the acquisition's
    /// one round, about one round trip after the holder has its lock). Never another holder's
    /// term, nor a term it may not get.
    std::uint64_t fencing_token = 0;
    /// How long a majority still holds it at most, from the moment the read completed: the
    /// majority's shortest time left, less the time the read took and the drift allowance of
    /// the TTL given to async_holders (the holders' own: lock_options::ttl and drift_factor).
    /// It ends no later than the holder's own validity, but for the time the holder's SET took
    /// to reach the masters (their TTLs start then; the holder counts from before it sent).
    /// Negative (-1 ms) when a majority holds the key without expiry, which no lock of this
    /// library does.
    std::chrono::milliseconds valid_for{0};
    std::size_t masters = 0;  ///< How many masters hold it, with time left.
};

/// What one thing a master holds of the resource (never a token).
struct held_entry
{
    std::string identity;  ///< As holder_info::identity.
    bool reader = false;   ///< As holder_info::reader.
    /// The key holds something that is no lock value (not a string): another program's.
    bool foreign = false;
    std::chrono::milliseconds ttl{0};  ///< Time left on that master (-1: no expiry).
};

/// What one master answered: its outcome (granted: it answered; error, timed_out) and what it
/// holds of the resource.
struct master_holdings_info
{
    master_diagnostic diagnostic;  ///< Its outcome: granted (it answered), error, timed_out.
    /// The resource's fence counter there (0: none), whoever's term it is.
    std::uint64_t fence_counter = 0;
    std::vector<held_entry> entries;  ///< What it holds of the resource (granted only).
};

/// What async_holders found: the holders a majority agrees on (a mutex has at most one; a
/// semaphore up to its permits; a read-write lock one writer or its readers) and what each
/// master holds.
struct holders_result
{
    std::vector<holder_info> holders;           ///< Those a majority agrees on; empty: free.
    std::vector<master_holdings_info> masters;  ///< What each master answered, in order.
    /// Why the read was refused before anything was sent (invalid_argument, invalid_option).
    std::string message;
    /// A semaphore's number of permits, when a master's copy of the resource's key holds the
    /// semaphore's mark (docs/algorithm.md, "One kind per resource"), whatever
    /// lock_options::permits the read was given; 0 when no master showed a mark. The free
    /// permits are then `permits - holders.size()`, as far as this read can tell.
    std::uint32_t permits = 0;
    /// Whether anyone holds the resource (as far as a majority says).
    bool held() const noexcept { return !holders.empty(); }
};

}  // namespace redlock

#endif
