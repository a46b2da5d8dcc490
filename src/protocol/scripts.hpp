// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_SCRIPTS_HPP
#define REDLOCK_SRC_PROTOCOL_SCRIPTS_HPP

#include <string>
#include <string_view>

namespace redlock::detail {

/// A Lua script and the hex SHA1 that EVALSHA names it by.
struct lua_script
{
    std::string body;
    std::string sha1;  ///< 40 lowercase hex characters, computed once from `body`.
};

/// Compare-and-delete (the spec's release script): deletes KEYS[1] only while it holds
/// ARGV[1]. Returns 1 when deleted, 0 otherwise.
const lua_script& release_script();

/// Compare-and-swap of the owner, for a hand-off within a process (lock_options::handoff):
/// only while KEYS[1] holds ARGV[1], gives it ARGV[2] and leaves its expiry as it is. Returns
/// 1 when handed over, 0 otherwise (nothing changed).
const lua_script& handover_script();

/// Compare-and-PEXPIRE: sets the TTL of KEYS[1] to ARGV[2] ms only while it holds ARGV[1].
/// Returns 1 when extended, 0 otherwise; a missing key is never re-created.
const lua_script& extend_script();

/// Multi-key acquisition: sets every KEYS[i] to ARGV[1] with PX ARGV[2] only if none of them
/// exists (all or nothing). Returns 1 when set, 0 otherwise.
const lua_script& acquire_multi_script();

/// Multi-key compare-and-delete: deletes each KEYS[i] that holds ARGV[1]. Returns 1 when every
/// key held it, 0 otherwise (the keys that did are deleted all the same).
const lua_script& release_multi_script();

/// Multi-key compare-and-PEXPIRE: only if every KEYS[i] holds ARGV[1], sets their TTL to
/// ARGV[2] ms. Returns 1 when extended, 0 otherwise (nothing is changed then).
const lua_script& extend_multi_script();

/// Ownership check: if every KEYS[i] holds ARGV[1], returns the smallest PTTL among them;
/// otherwise -3.
const lua_script& check_script();

/// Round 1 of a fenced acquisition of n resources (docs/algorithm.md): KEYS[1..n] are the lock
/// keys, KEYS[n+1..2n] their fence counters. Only if none of the lock keys exists, sets each to
/// ARGV[1] with PX ARGV[2], moves each counter on by one (INCR), and returns the n counters as
/// they were before (0 when absent), in order; else nil. Where a quorum returned the same
/// counters, the counters moved on are the tokens, committed (acquire_fsm); the commit that
/// follows, awaited by nobody, records them as the holder's term for readers. A counter that is
/// not a decimal integer is an error reply, and nothing is set.
const lua_script& fenced_acquire_script();

/// The commit of a fenced acquisition of n resources: its round 2 when the quorum's counters
/// differed, else sent after the lock was granted and awaited by nobody. KEYS[1..3n] as round
/// 1's and, KEYS[2n+1..3n], the counters' records (fence_holder_key). Only if every lock key
/// still holds our token ARGV[1] and no counter is above its token ARGV[1 + i] (one equal to
/// it is ours: while our key stands, only our round 1 moves the counter), sets each counter
/// to its token (also one already there: the write is what observers of the counter are
/// pushed) and each record to the first 16 hex characters of SHA-1(ARGV[1])
/// (whose term the counter now is: client::async_holders reads it), and returns 1 (the master
/// commits them all); else changes nothing, returns 0.
const lua_script& fence_commit_script();

/// A semaphore's acquisition (docs/algorithm.md, "A counting semaphore"): KEYS[1] is the
/// resource's own key, which holds the semaphore's mark ARGV[3] (`redlock:permits:<N>`) while
/// permits may be held, KEYS[2..] the permit keys in the order to try. When KEYS[1] holds
/// anything but that mark (a mutex's or a writer's token, the readers' mark, another size's
/// mark), returns what kind holds it: `redlock:owned` (never the token itself), the readers'
/// mark or the other mark. Else sets the first permit key that does not exist to ARGV[1] with
/// PX ARGV[2], gives the mark at least that expiry, and returns the key's index among the
/// permit keys (0-based); or -1 when every one exists.
const lua_script& permit_acquire_script();

/// A permit's extension: KEYS[1] the resource's key, KEYS[2] the permit key. Only while
/// KEYS[2] holds ARGV[1]: sets its TTL to ARGV[2] ms, and the semaphore's mark in KEYS[1] (if
/// it is one) to at least as long, so that the mark outlives every permit on the master.
/// Returns 1 when extended, 0 otherwise.
const lua_script& permit_extend_script();

/// A semaphore's release: KEYS[1] the resource's key, KEYS[2..] permit keys, the first ARGV[2]
/// of them (1 when absent or 0) to delete where they hold ARGV[1], the others only looked at.
/// Once none of the permit keys exists, deletes the semaphore's mark in KEYS[1] (and nothing
/// else that may be there). Returns 1 when a key held ARGV[1], 0 otherwise.
///
/// When it deleted one of our permits, KEYS[1] is deleted unread: that permit stood until now,
/// and the mark outlives every permit of its semaphore (the attempt that sets a permit and the
/// extension that prolongs one raise the mark's TTL to at least the permit's), so KEYS[1] holds
/// the mark. Only a release that found none of its permits reads KEYS[1] first (a mutex may
/// have taken the resource since they expired).
const lua_script& permit_release_script();

/// The prefix of a semaphore's mark in its resource's key: `redlock:permits:<N>`.
inline constexpr std::string_view permits_mark_prefix = "redlock:permits:";

// A read-write lock (docs/algorithm.md, "A read-write lock"). Its keys on each master: the
// writer's key KEYS[1] (the resource's own, a mutex key), the readers' sorted set KEYS[2]
// (token -> expiry in ms by the master's clock, TIME) and the writer's intent mark KEYS[3] (a
// waiting writer's id, with an expiry). While readers hold, KEYS[1] holds the shared mark
// `redlock:readers` with the latest reader's expiry, so that any mutex's SET NX is refused
// beside them. A reader whose expiry has passed counts as gone, as an expired key does.

/// A reader's acquisition: KEYS as above; ARGV[1] the token, ARGV[2] the TTL in ms. Only when
/// the writer's key is absent or the shared mark and no intent mark exists, adds the token
/// with expiry now + TTL, covers the readers (the mark, both expiries), returns 1; else 0.
const lua_script& reader_acquire_script();

/// A writer's acquisition: the same keys, ARGV[3] the writer's intent id. Only when the
/// writer's key does not exist and no live reader is in the set, sets the key to ARGV[1] with
/// PX ARGV[2], deletes the intent mark if it is ours, returns 1. When readers hold, sets (or
/// renews) our intent mark with PX ARGV[2] unless another writer's is there, returns 0.
const lua_script& writer_acquire_script();

/// A fenced writer's acquisition (round 1; the commit is fence_commit_script over the
/// writer's key, its counter and the counter's record): the same keys and ARGV, KEYS[4] the
/// resource's fence counter (a fenced mutex's, `{R}:fence`). As writer_acquire_script, but
/// where it sets the writer's key it moves the counter on as fenced_acquire_script does, and
/// returns the counter as it was as a one-element array (0 when absent). A counter that is not
/// a decimal integer is an error reply, and nothing is set (nor the intent mark).
const lua_script& fenced_writer_acquire_script();

/// A reader's release: KEYS[1] the writer's key, KEYS[2] the readers' set; ARGV[1] the token.
/// Removes the member and covers the readers left (the mark deleted with the last); returns 1
/// if it was there and live, 0 otherwise.
const lua_script& reader_release_script();

/// A reader's extension: the same keys, ARGV[1] the token, ARGV[2] the TTL in ms. Only while
/// the token is a live member, sets its expiry to now + TTL and covers the readers, returns 1;
/// else 0 (a member found expired is removed).
const lua_script& reader_extend_script();

/// A reader's check: the same keys, ARGV[1] the token: the ms left before the member's expiry,
/// or -3 when it is not a live member.
const lua_script& reader_check_script();

/// Who holds a resource, read on one master (client::async_holders): KEYS[1..n] the string
/// keys (a mutex's or a writer's key, or a semaphore's permit keys), KEYS[n+1] the readers'
/// set, KEYS[n+2] the fence counter, KEYS[n+3] its record (fence_holder_key). Returns a flat
/// array: the counter and the record (each nil when absent or not a string), then for each
/// string key its value (nil when absent or not a string) and its PTTL, then for each live
/// reader its member and the ms left before its expiry (by the master's TIME). Writes nothing.
const lua_script& holders_read_script();

/// Hex SHA1 of `data` (OpenSSL).
std::string sha1_hex(std::string_view data);

}  // namespace redlock::detail

#endif
