// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_LOCK_KIND_HPP
#define REDLOCK_SRC_PROTOCOL_LOCK_KIND_HPP

// The kinds of lock, one row each: which command each step of a kind's life sends, and the
// rules the layers above apply to it (fencing, sharing, hand-off within a process). An
// acquisition names its kind once (kind_of); a held lock keeps it (lock_state::kind), and its
// release, extension and check are the row's. Adding a kind means adding a row here (and its
// commands to lock_command_table.hpp): a static_assert fails on a kind without one.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <redlock/options.hpp>

#include "protocol/lock_commands.hpp"

namespace redlock::detail {

/// What is taken: every kind of lock the client can acquire.
enum class lock_kind : std::uint8_t
{
    mutex,          ///< one resource, one key
    multi,          ///< several resources at once (async_lock_all), all or nothing
    fenced,         ///< a mutex (or multi) with a fencing token per resource
    permit,         ///< one of a semaphore's N permit keys (lock_options::permits)
    reader,         ///< a read-write lock's reader: a member of the readers' set
    writer,         ///< a read-write lock's writer: the resource's key, as a mutex's
    fenced_writer,  ///< a writer with the resource's fencing token
    /// Not a kind: the number of kinds.
    count_,
};

/// One kind's commands and rules.
struct lock_kind_row
{
    lock_kind kind;
    std::string_view name;
    /// Each attempt.
    lock_command acquire;
    /// The release of a held lock, and after a failed attempt; its extension and check.
    lock_command release, extend, check;
    /// Fenced: the attempt's replies carry the fence counters, and commit_fence (round 2, or
    /// the commit after a one-round grant) records the tokens.
    bool fenced;
    /// Several holders at once (permits, readers): taking one leaves room for the next waiter
    /// of this client, which attempts at once rather than after this one's release.
    bool shared;
    /// A release may hand the keys to a waiter of this client for the same key, in one
    /// command (hand_over) instead of a release and an acquisition.
    bool handoff;
    /// A writer: marks its intent where readers hold, and clears the mark after a failed
    /// acquisition.
    bool marks_intent;
    /// Only over one resource (async_lock_all refuses it).
    bool one_resource;
};

namespace lock_kind_rows {
using c = lock_command;
using k = lock_kind;
// clang-format off
//             kind              name             acquire                   release            extend            check             fenced shared handoff intent one
constexpr std::array rows{
    lock_kind_row{k::mutex,         "mutex",         c::acquire,               c::release,        c::extend,        c::check,         false, false, true,   false, false},
    lock_kind_row{k::multi,         "multi",         c::acquire,               c::release,        c::extend,        c::check,         false, false, false,  false, false},
    lock_kind_row{k::fenced,        "fenced",        c::acquire_fenced,        c::release,        c::extend,        c::check,         true,  false, false,  false, false},
    lock_kind_row{k::permit,        "permit",        c::acquire_permit,        c::release_permit, c::extend_permit, c::check,         false, true,  false,  false, true},
    lock_kind_row{k::reader,        "reader",        c::acquire_reader,        c::release_reader, c::extend_reader, c::check_reader,  false, true,  false,  false, true},
    lock_kind_row{k::writer,        "writer",        c::acquire_writer,        c::release,        c::extend,        c::check,         false, false, false,  true,  true},
    lock_kind_row{k::fenced_writer, "fenced writer", c::acquire_writer_fenced, c::release,        c::extend,        c::check,         true,  false, false,  true,  true},
};
// clang-format on

constexpr bool rows_in_order() noexcept
{
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (static_cast<std::size_t>(rows[i].kind) != i)
            return false;
    return true;
}
static_assert(rows.size() == static_cast<std::size_t>(lock_kind::count_),
              "every lock_kind needs its row in lock_kind.hpp");
static_assert(rows_in_order(), "each row of lock_kind.hpp sits at its kind's index");
}  // namespace lock_kind_rows

/// The row of kind `k`.
constexpr const lock_kind_row& row_of(lock_kind k) noexcept
{
    return lock_kind_rows::rows[static_cast<std::size_t>(k)];
}

/// The kind an acquisition with these options takes over `resources` resources (the options
/// already validated: no permits with a role, no fencing with permits or a reader).
constexpr lock_kind kind_of(std::uint32_t permits, lock_role role, bool fencing,
                            std::size_t resources) noexcept
{
    if (permits > 1)
        return lock_kind::permit;
    switch (role)
    {
    case lock_role::reader: return lock_kind::reader;
    case lock_role::writer: return fencing ? lock_kind::fenced_writer : lock_kind::writer;
    case lock_role::mutex: break;
    }
    if (fencing)
        return lock_kind::fenced;
    return resources > 1 ? lock_kind::multi : lock_kind::mutex;
}

constexpr lock_kind kind_of(const lock_options& o, std::size_t resources) noexcept
{
    return kind_of(o.permits, o.role, o.fencing, resources);
}

}  // namespace redlock::detail

#endif
