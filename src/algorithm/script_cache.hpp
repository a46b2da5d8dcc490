// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_SCRIPT_CACHE_HPP
#define REDLOCK_SRC_SCRIPT_CACHE_HPP

#include <cstdint>

namespace redlock::detail {

/// @brief Which of our scripts a master has been seen to run over its current connection, so
/// that the round can send EVALSHA (no body) rather than EVAL. Policy, not transport: the
/// round decides the command; the connection only carries it.
///
/// What is known is tied to one connection (node_connection::generation()): after a drop the master
/// may be another server, or one that restarted without its script cache, so it starts unknown.
class script_cache
{
public:
    /// Whether script `id` (0-31) ran over connection generation `connection`.
    bool known(unsigned id, std::uint64_t connection) const noexcept
    {
        return connection == connection_ && ((bits_ >> id) & 1u);
    }

    /// Records that script `id` ran (a reply to EVAL, or to EVALSHA that was not NOSCRIPT), or
    /// that the master does not have it (NOSCRIPT), over connection generation `connection`.
    void note(unsigned id, bool known, std::uint64_t connection) noexcept
    {
        if (connection != connection_)
        {
            connection_ = connection;
            bits_ = 0;
        }
        bits_ = known ? (bits_ | (1u << id)) : (bits_ & ~(1u << id));
    }

private:
    std::uint64_t connection_ = 0;
    std::uint32_t bits_ = 0;
};

}  // namespace redlock::detail

#endif
