// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_LOCK_COMMANDS_HPP
#define REDLOCK_SRC_PROTOCOL_LOCK_COMMANDS_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

/// The commands of the Redlock algorithm, as one round sends one of them to every master.
enum class lock_command : std::uint8_t
{
    acquire,  ///< SET NX PX (one key), or a script over several.
    release,  ///< Compare-and-delete.
    extend,   ///< Compare-and-PEXPIRE.
    check,    ///< Does every key hold the token? Each master's answer is its smallest PTTL.
    /// A fenced acquisition's first round (keys: the lock key, its fence counter): SET NX
    /// PX, and each granting master's counter as its value().
    acquire_fenced,
    /// A fenced acquisition's second round (the same keys, then each counter's record,
    /// fence_holder_key): commit the fencing tokens `fences`, and record whose they are.
    commit_fence,
    /// A release that hands the lock to a waiter of this client (round::start_release): where
    /// the key holds `token`, it takes the waiter's token and keeps its expiry. Answers as a
    /// release does (granted: handed over there).
    hand_over,
    /// A semaphore's attempt (keys: the resource's key, then its permit keys in the order to
    /// try; `next` the semaphore's mark): each master sets the first free one and answers
    /// which, or what other kind of lock holds the resource (docs/algorithm.md, "A counting
    /// semaphore").
    acquire_permit,
    /// A read-write lock's reader (keys: the writer's key, the readers' set, the intent mark):
    /// joins the readers unless a writer holds or waits there. Answers as acquire.
    acquire_reader,
    /// A read-write lock's writer (the same keys; `next` carries the writer's intent id): sets
    /// the writer's key unless anyone holds it, and marks its intent where readers do.
    acquire_writer,
    /// A fenced writer's first round (keys: the writer's key, the readers' set, the intent
    /// mark, the fence counter; `next` the intent id): acquire_writer, and each granting
    /// master's counter as its value(), as acquire_fenced. Its second round is commit_fence
    /// over the writer's key, the counter and its record.
    acquire_writer_fenced,
    /// A reader's release, extension and check (keys: the readers' set): as release, extend
    /// and check, on the token's member of the set.
    release_reader,
    extend_reader,
    check_reader,
    /// A permit's extension (keys: the resource's key, the permit key): as extend, and the
    /// semaphore's mark in the resource's key kept at least as long.
    extend_permit,
    /// A semaphore's release (keys: the resource's key, the permit keys to release, then the
    /// semaphore's other permit keys; `arg` how many to release, 0 for 1): deletes our token
    /// from them, and the semaphore's mark once no permit is held there.
    release_permit,
    /// Who holds a resource (keys: its string keys, then its readers' set, its fence counter
    /// and the counter's record): each master answers with what they hold
    /// (holders_read_script). Reads only.
    read_holders,
    /// Not a command: the number of commands. A new command goes above it, with its row in
    /// lock_command_table.hpp (a static_assert there counts them).
    count_,
};

/// @brief Appends command `k` over `keys` for `token` as RESP.
/// @param eval Send a script's body (EVAL) rather than its SHA1 (EVALSHA).
/// @param arg The TTL in ms (acquire, extend, acquire_fenced); unused otherwise.
/// @param fences commit_fence's tokens, one per resource.
/// @param next hand_over's new token; acquire_writer's (and acquire_writer_fenced's) intent id;
/// acquire_permit's semaphore mark.
void encode_lock_command(std::string& out, lock_command k, bool eval,
                         std::span<const std::string> keys, std::string_view token,
                         std::int64_t arg, std::span<const std::uint64_t> fences,
                         std::string_view next);

/// No script (lock_command_row's script ids).
constexpr unsigned no_script = 32;

}  // namespace redlock::detail

#endif
