// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What a master's reply to a lock command says: the lock protocol's side of a round.
#include "protocol/lock_replies.hpp"

#include <cstdlib>

#include "protocol/lock_command_table.hpp"
#include "protocol/scripts.hpp"

namespace redlock::detail {

namespace {

// acquire_fenced, acquire_writer_fenced: an array of one non-negative integer per resource,
// read into `out`.
bool read_counters(std::span<const resp::node_view> nodes, std::span<std::int64_t> out)
{
    const auto& head = nodes[0];
    if (head.data_type != resp::type::array || head.size != out.size() ||
        nodes.size() != out.size() + 1)
        return false;
    for (std::size_t r = 0; r < out.size(); ++r)
    {
        const auto& v = nodes[1 + r];
        if (v.data_type != resp::type::integer || v.value.empty() || v.value[0] == '-')
            return false;
        out[r] = std::strtoll(std::string(v.value).c_str(), nullptr, 10);
    }
    return true;
}

}  // namespace

lock_reply read_any_lock_reply(lock_command k, std::span<const resp::node_view> nodes,
                               std::size_t key_count, std::span<std::int64_t> counters)
{
    using resp::type;
    const auto& v = nodes[0];
    lock_reply r;
    const auto unexpected = [&](std::string_view what) {
        r.answer = lock_answer::unexpected;
        r.what = what;
        r.type = v.data_type;
    };
    // The reply's shape follows from the command's row (lock_command_table.hpp).
    const auto& row = row_of(k);
    // A reader's or a writer's script refused by a semaphore's permits answers the semaphore's
    // mark (scripts.cpp); a semaphore's, also the readers' mark or `redlock:owned` (below).
    if (v.data_type == type::bulk_string && v.value.starts_with(permits_mark_prefix) &&
        row.values != reply_values::permit) [[unlikely]]
    {
        r.answer = lock_answer::other_kind;
        r.what = v.value;
        return r;
    }
    const bool plain = row.policy(key_count) == eval_policy::plain;
    if (row.fenced_attempt() || plain)
    {
        // SET NX answers OK or nil; the fenced scripts, an array of the n counters, or nil (a
        // mutex's) or 0 (a writer's, as the unfenced writer's script).
        const bool fenced = !plain;
        const bool writer = row.values == reply_values::one_counter;
        const bool set = fenced ? read_counters(nodes, counters)
                                : v.data_type == type::simple_string && v.value == "OK";
        if (set)
            r.answer = lock_answer::ours;
        // A script's `false` reads as a null in RESP2 and as `#f` on a connection that
        // switched to RESP3 (a waiting acquisition's watch).
        else if (writer ? v.data_type == type::integer && v.value == "0"
                        : v.data_type == type::null ||
                              (v.data_type == type::boolean && v.value == "f"))
            r.answer = lock_answer::other_owner;
        else
            unexpected(writer   ? "fenced writer script returned "
                       : fenced ? "fenced SET returned "
                                : "SET returned ");
    }
    else if (row.values == reply_values::permit)
    {
        // The index of the permit key set (the keys after the resource's own), -1 when all of
        // them are held, or what other kind of lock holds the resource.
        const auto index = v.data_type == type::integer
                               ? std::strtoll(std::string(v.value).c_str(), nullptr, 10)
                               : -2;
        if (v.data_type == type::bulk_string && v.value.starts_with("redlock:"))
        {
            r.answer = lock_answer::other_kind;
            r.what = v.value;
        }
        else if (index == -1)
            r.answer = lock_answer::other_owner;
        else if (index >= 0 && static_cast<std::size_t>(index) + 1 < key_count)
        {
            r.answer = lock_answer::ours;
            r.permit = static_cast<std::uint32_t>(index);
        }
        else
            unexpected("permit script returned ");
    }
    else if (row.values == reply_values::pttl)
    {
        if (v.data_type != type::integer)
            unexpected("script returned ");
        else if ((r.pttl = std::strtoll(std::string(v.value).c_str(), nullptr, 10)) == -3)
            r.answer = lock_answer::other_owner;
        else
            r.answer = lock_answer::ours;
    }
    else if (v.data_type == type::integer && v.value == "1")
        r.answer = lock_answer::ours;
    else if (v.data_type == type::integer && v.value == "0")
        r.answer = lock_answer::other_owner;
    else
        unexpected("script returned ");
    return r;
}

}  // namespace redlock::detail
