// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_ROUND_CONTEXT_HPP
#define REDLOCK_SRC_DRIVER_ROUND_CONTEXT_HPP

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "driver/waiting_room.hpp"
#include "routing/master_link.hpp"
#include "runtime/deadline_list.hpp"

namespace redlock::detail {

/// @brief What rounds and release watches use of their client, and nothing more: the masters,
/// the deadline list, the waiting room's hooks, a scratch buffer, whether it is closing.
///
/// op_context is one (it adds the operations in flight, the configuration and events, and
/// client_impl the connections and the shutdown); a test makes one over scripted masters (test/unit/round_test.cpp) and steps a
/// round without a socket or a clock. Everything here is used on `strand`.
class round_context
{
public:
    explicit round_context(asio::any_io_executor ex)
        : strand(std::move(ex)),
          waiting(0, strand),
          deadlines(strand)
    {}
    round_context(const round_context&) = delete;
    round_context& operator=(const round_context&) = delete;

    std::size_t size() const noexcept { return masters.size(); }
    std::size_t quorum() const noexcept { return masters.size() / 2 + 1; }
    /// Whether master i's answers are out of acquisitions' quorums at `now` (restart_watch).
    bool quarantined(std::size_t i, std::chrono::steady_clock::time_point now) const noexcept
    {
        return masters[i]->quarantined(now);
    }
    /// Adds a master (before any round starts); the waiting room grows with the masters.
    void add_master(std::unique_ptr<master_link> m)
    {
        has_cluster_master = has_cluster_master || m->is_cluster();
        masters.push_back(std::move(m));
        waiting = waiting_room(masters.size(), strand);
    }

    asio::any_io_executor strand;
    std::vector<std::unique_ptr<master_link>> masters;  // per master: its link (master_link)
    bool has_cluster_master = false;                    // whether any master is a Redis Cluster
    waiting_room waiting;  // acquisitions waiting for a release (lock_options::wait)
    deadline_list deadlines;
    // A round's command, encoded once per form (EVALSHA, EVAL) while it is sent to every
    // master: kept here so that its capacity is reused (see round::start).
    std::array<std::string, 2> command_scratch;
    bool closed = false;

protected:
    ~round_context() = default;
};

}  // namespace redlock::detail

#endif
