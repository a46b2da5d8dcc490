// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUTING_DIRECT_LINK_HPP
#define REDLOCK_SRC_ROUTING_DIRECT_LINK_HPP

#include <chrono>
#include <cstdint>
#include <string_view>
#include <utility>

#include "routing/master_link.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

// A master_link's members on a round's hot path, for every command and reply: a standalone
// master's (master_link::standalone()) are called on its node_connection directly, inline and
// with the caller's encoder as it is (no virtual call, no function_ref); any other master
// (a cluster master, a test's scripted one) through the interface. Each does what the
// interface's member does for a standalone master (routing/standalone_link.cpp).

/// master_link::submit.
template <class Encode>
error_code submit_to(master_link& m, reply_sink* sink, std::uint32_t tag, std::string_view key,
                     Encode&& encode, request_ticket& ticket,
                     request_mode mode = request_mode::plain, bool lazy = false)
{
    if (auto* nc = m.standalone())
        return nc->submit(sink, tag, encode, ticket, lazy);
    return m.submit(sink, tag, key, std::forward<Encode>(encode), ticket, mode, lazy);
}

/// master_link::abandon.
inline void abandon_at(master_link& m, request_ticket ticket) noexcept
{
    if (auto* nc = m.standalone())
        return nc->abandon(ticket);
    m.abandon(ticket);
}

/// master_link::written.
inline bool written_at(const master_link& m, request_ticket ticket) noexcept
{
    const auto* nc = m.standalone();
    return nc ? nc->written(ticket) : m.written(ticket);
}

/// master_link::generation.
inline std::uint64_t generation_of(const master_link& m) noexcept
{
    const auto* nc = m.standalone();
    return nc ? nc->generation() : m.generation();
}

/// master_link::read_time.
inline std::chrono::steady_clock::time_point read_time_of(const master_link& m) noexcept
{
    const auto* nc = m.standalone();
    return nc ? nc->read_time() : m.read_time();
}

}  // namespace redlock::detail

#endif
