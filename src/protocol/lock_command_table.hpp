// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_LOCK_COMMAND_TABLE_HPP
#define REDLOCK_SRC_PROTOCOL_LOCK_COMMAND_TABLE_HPP

// What each lock command is, in one row: the one place that says which commands count toward
// an acquisition, how each goes (EVAL, EVALSHA, a plain command), what its reply carries, and
// whether a cluster master may split it by hash slot. The round, the encoder and the reply
// reader read these rows; none of them keeps a list of commands of its own. A command added to
// lock_command without a row fails to compile (the static_asserts at the end).

#include <array>
#include <cstddef>
#include <cstdint>

#include "protocol/lock_commands.hpp"
#include "protocol/scripts.hpp"

namespace redlock::detail {

/// How a command goes to a standalone master.
enum class eval_policy : std::uint8_t
{
    /// Always the body (EVAL): a NOSCRIPT that came after the round stopped listening would
    /// reach nobody, and its master would miss the command (an extension, a hand-over, a
    /// multi-key acquisition), or the read is rare enough not to care (read_holders).
    always_eval,
    /// EVALSHA where the connection has seen the script run (script_cache), EVAL otherwise,
    /// and EVAL again after a NOSCRIPT while the round listens; one that comes later leaves
    /// that master without the command: a master less, as if it had been slow.
    cached,
    /// EVALSHA first, EVAL after a NOSCRIPT (a check: it changes nothing).
    sha_first,
    /// Not a script (a lone key's SET NX PX, encoded by encode_lock_command).
    plain,
};

/// The second argument a command carries after the token (`next` of encode_lock_command).
enum class next_arg : std::uint8_t
{
    no_arg,
    token,  ///< a token: a hand-over's new owner, a writer's intent id (round::set_intent)
    text,   ///< a text the caller keeps: a semaphore's mark (round::set_text)
};

/// What a command's replies leave in round::values().
enum class reply_values : std::uint8_t
{
    none,
    pttl,                  ///< check: each master's smallest PTTL (-3 until known)
    permit,                ///< acquire_permit: the permit key each master set (-1 until known)
    counter_per_resource,  ///< acquire_fenced: each resource's fence counter (0 until known)
    one_counter,           ///< acquire_writer_fenced: the resource's fence counter
    holdings,              ///< read_holders: what each master holds (master_holdings)
};

/// One lock command's facts.
struct lock_command_row
{
    lock_command command;
    /// A grant of it is a grant of a lock (or of its fencing token), so a master in its
    /// restart quarantine must not count it (client_config::restart_quarantine).
    bool counts_for_acquisition;
    /// A write whose answer a cluster master counts once its replicas have it (request_mode::
    /// replicated): what a failover must not lose. A release or a read loses nothing there.
    bool replicated;
    /// Deletes our keys (a release round: the waiting room is told, runs_without_us, the EVAL
    /// behind a silent EVALSHA).
    bool releases;
    /// Every key is a lock key: a cluster master given keys of several slots gets one command
    /// per slot (round_parts.cpp).
    bool splittable;
    /// What it carries after the token (and the TTL).
    next_arg next;
    /// Carries `arg` after the token: the TTL in ms, or release_permit's count.
    bool with_ttl;
    /// May wait to share a write (client_config::handover_write_delay): a hand-over, which
    /// nobody but the holder's release waits for, and behind which the new holder's commands
    /// queue.
    bool shares_write;
    eval_policy one_key, many_keys;
    /// The script_cache ids of the one-key and the many-key script on a standalone master's
    /// connection (eval_policy::cached), no_script otherwise.
    std::uint8_t cached_one, cached_many;
    /// The script_cache ids a cluster master sends as EVALSHA per node (cluster_master::
    /// submit_script, which answers NOSCRIPT itself, also after the round stopped listening),
    /// or no_script: never an acquisition's, whose body sent again after the round gave up
    /// could land after the release of its failed attempt.
    std::uint8_t cluster_one, cluster_many;
    reply_values values;
    /// The scripts over one key and over several (nullptr: not a script).
    const lua_script& (*script_one)();
    const lua_script& (*script_many)();

    constexpr eval_policy policy(std::size_t keys) const noexcept
    {
        return keys > 1 ? many_keys : one_key;
    }
    constexpr unsigned cached_id(std::size_t keys) const noexcept
    {
        return keys > 1 ? cached_many : cached_one;
    }
    constexpr unsigned cluster_id(std::size_t keys) const noexcept
    {
        return keys > 1 ? cluster_many : cluster_one;
    }
    constexpr bool fenced_attempt() const noexcept
    {
        return values == reply_values::counter_per_resource || values == reply_values::one_counter;
    }
};

namespace lock_command_rows {
using enum eval_policy;
using enum reply_values;
using enum next_arg;
using k = lock_command;
constexpr std::uint8_t none_ = no_script;
// clang-format off
//                   command                  counts repl.  rel.   split  next    ttl    shares  one key      many keys    cached      cluster     values               scripts (one key, many keys)
constexpr std::array rows{
    lock_command_row{k::acquire,               true,  true,  false, true,  no_arg,true,  false,  plain,        always_eval, none_, none_, none_, none_, none,                 nullptr,                       &acquire_multi_script},
    lock_command_row{k::release,               false, false, true,  true,  no_arg,false, false,  cached,       cached,      0,     1,     0,     1,     none,                 &release_script,               &release_multi_script},
    lock_command_row{k::extend,                false, true,  false, true,  no_arg,true,  false,  always_eval,  always_eval, none_, none_, 5,     6,     none,                 &extend_script,                &extend_multi_script},
    lock_command_row{k::check,                 false, false, false, true,  no_arg,false, false,  sha_first,    sha_first,   none_, none_, 7,     7,     pttl,                 &check_script,                 &check_script},
    lock_command_row{k::acquire_fenced,        true,  true,  false, false, no_arg,true,  false,  cached,       cached,      2,     2,     none_, none_, counter_per_resource, &fenced_acquire_script,        &fenced_acquire_script},
    lock_command_row{k::commit_fence,          true,  true,  false, false, no_arg,false, false,  cached,       cached,      3,     3,     3,     3,     none,                 &fence_commit_script,          &fence_commit_script},
    lock_command_row{k::hand_over,             false, false, false, false, token, false, true,   always_eval,  always_eval, none_, none_, none_, none_, none,                 &handover_script,              &handover_script},
    lock_command_row{k::acquire_permit,        true,  true,  false, false, text,  true,  false,  cached,       cached,      14,    14,    none_, none_, permit,               &permit_acquire_script,        &permit_acquire_script},
    lock_command_row{k::acquire_reader,        true,  true,  false, false, no_arg,true,  false,  cached,       cached,      11,    11,    none_, none_, none,                 &reader_acquire_script,        &reader_acquire_script},
    lock_command_row{k::acquire_writer,        true,  true,  false, false, token, true,  false,  cached,       cached,      12,    12,    none_, none_, none,                 &writer_acquire_script,        &writer_acquire_script},
    lock_command_row{k::acquire_writer_fenced, true,  true,  false, false, token, true,  false,  cached,       cached,      13,    13,    none_, none_, one_counter,          &fenced_writer_acquire_script, &fenced_writer_acquire_script},
    lock_command_row{k::release_reader,        false, false, true,  false, no_arg,false, false,  cached,       cached,      8,     8,     8,     8,     none,                 &reader_release_script,        &reader_release_script},
    lock_command_row{k::extend_reader,         false, true,  false, false, no_arg,true,  false,  always_eval,  always_eval, none_, none_, 9,     9,     none,                 &reader_extend_script,         &reader_extend_script},
    lock_command_row{k::check_reader,          false, false, false, false, no_arg,false, false,  sha_first,    sha_first,   none_, none_, 10,    10,    pttl,                 &reader_check_script,          &reader_check_script},
    lock_command_row{k::extend_permit,         false, true,  false, false, no_arg,true,  false,  always_eval,  always_eval, none_, none_, 15,    15,    none,                 &permit_extend_script,         &permit_extend_script},
    lock_command_row{k::release_permit,        false, false, true,  false, no_arg, true, false,  cached,       cached,      16,    16,    16,    16,    none,                 &permit_release_script,        &permit_release_script},
    lock_command_row{k::read_holders,          false, false, false, false, no_arg,false, false,  always_eval,  always_eval, none_, none_, none_, none_, holdings,             &holders_read_script,          &holders_read_script},
};
// clang-format on
}  // namespace lock_command_rows

inline constexpr std::size_t lock_command_count = static_cast<std::size_t>(lock_command::count_);

static_assert(lock_command_rows::rows.size() == lock_command_count,
              "every lock_command needs its row in lock_command_table.hpp");

/// The row of command `k`.
constexpr const lock_command_row& row_of(lock_command k) noexcept
{
    return lock_command_rows::rows[static_cast<std::size_t>(k)];
}

/// The script a cluster master sends command `k` over `keys` keys as by id (lock_command_row::
/// cluster_one / cluster_many), or no_script.
constexpr unsigned cluster_script_for(lock_command k, std::size_t keys) noexcept
{
    return row_of(k).cluster_id(keys);
}

/// The script a standalone master's connection may get command `k` over `keys` keys as
/// EVALSHA once it has seen it run (eval_policy::cached), or no_script.
constexpr unsigned cached_script_for(lock_command k, std::size_t keys) noexcept
{
    return row_of(k).cached_id(keys);
}

namespace lock_command_rows {
// Each row sits at its command's index, a cached script has its ids, and a release is never a
// replicated write.
constexpr bool rows_consistent() noexcept
{
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        const auto& r = rows[i];
        if (static_cast<std::size_t>(r.command) != i)
            return false;
        if ((r.one_key == cached) != (r.cached_one != none_) ||
            (r.many_keys == cached) != (r.cached_many != none_))
            return false;
        if (r.releases && r.replicated)
            return false;
    }
    return true;
}
static_assert(rows_consistent(), "a row of lock_command_table.hpp contradicts itself");
}  // namespace lock_command_rows

}  // namespace redlock::detail

#endif
