// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_HOLDERS_HPP
#define REDLOCK_SRC_ALGORITHM_HOLDERS_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/holders_reply.hpp"

namespace redlock::detail {

/// The value a key of ours holds while readers hold (the readers' mark): no holder by itself.
inline constexpr std::string_view readers_mark = "redlock:readers";

/// The opaque name of a key's value (holder_info::id): the first 16 hex characters of its
/// SHA-1, which is also what a fenced acquisition records beside a counter (fence_holder_key),
/// so that a read can tell whose term a counter is.
std::string holder_id(std::string_view value);

/// One holder that a quorum of the masters agrees on.
struct quorum_holder
{
    std::string value;  ///< Its value (token and identity): compared, never shown.
    std::string id;     ///< holder_id(value).
    bool reader = false;
    std::uint32_t key = 0;  ///< Which of the string keys it holds (a semaphore's permit).
    /// Its own fencing token (term): the largest fence counter among the masters that hold it
    /// and whose counter's record names it (master_holdings::fence_holder == id), when at
    /// least a quorum of them has that counter; 0 otherwise (it took no fencing, or its token
    /// is not committed on a quorum yet: between the two rounds of a fenced acquisition whose
    /// first round found the counters apart, each counter is one past what it read there).
    std::uint64_t fence = 0;
    /// How long a quorum still holds it at most, counted from the read's end: the quorum-th
    /// longest time left, minus the read's duration and the drift allowance of the TTL the
    /// holders take it with.
    std::chrono::steady_clock::duration valid_for{};
    bool expires = true;      ///< False when a quorum holds it without expiry (not a lock of ours).
    std::size_t masters = 0;  ///< How many masters hold it (with time left).
};

/// @brief The holders that at least `quorum` masters agree on, from each master's read
/// (nullptr: no answer), the read taking `elapsed` from its first send to its last answer;
/// those whose validity is over are left out, as the readers' mark is. The Redlock rule, read
/// back: a value held on one key of a quorum with time left is a lock held, until the time
/// the quorum-th master lets it go, less the drift allowance of `ttl` (the TTL the holders
/// take it with; their own validity subtracts the same). Each master's PTTL runs from its
/// SET, which reached it after the holder's t0: the end reported is later than the holder's
/// own by at most that SET's one-way time. A semaphore's value counts per permit key, as its
/// acquisition does. A holder's fence is taken only from the masters whose counter was
/// moved for its value (the record beside the counter), and only once a quorum of them agree:
/// never another holder's term, nor one not committed yet. In the order of their first
/// appearance.
std::vector<quorum_holder> holders_on_quorum(std::span<const master_holdings* const> reads,
                                             std::size_t quorum,
                                             std::chrono::steady_clock::duration elapsed,
                                             std::chrono::milliseconds ttl, double drift_factor);

}  // namespace redlock::detail

#endif
