// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLUSTER_REPLICA_ACKS_HPP
#define REDLOCK_SRC_CLUSTER_REPLICA_ACKS_HPP

// The group commit of replica acknowledgements on one node connection of a cluster master
// (client_config::cluster_replica_acks). Sans-io: which commands a `WAIT` covers, and what its
// reply says; cluster_master sends the WAITs and holds the answers.

#include <redlock/error.hpp>
#include <redlock/resp.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace redlock::detail {

/// @brief Which written commands each `WAIT` on one connection covers.
///
/// `WAIT n timeout` answers once n replicas acknowledged every write the connection made
/// before it, so one WAIT after a batch of commands covers them all: the first command sent
/// after a WAIT schedules the next one, and the commands sent until it is queued share it.
/// WAITs answer in the order they were sent, as every reply on the connection does.
class replica_ack_queue
{
public:
    /// A command, as its owner names it: its slot in a request table, and which sending of it
    /// (a redirected command is sent again, elsewhere; the earlier sending is then stale).
    struct sent_command
    {
        std::uint32_t index = 0;
        std::uint32_t sending = 0;
        friend bool operator==(const sent_command&, const sent_command&) = default;
    };

    /// A command that needs acknowledgement was handed to the connection. True when a WAIT
    /// must be scheduled for it: none is scheduled since the last one was queued.
    bool sent(sent_command c);
    /// The scheduled WAIT was handed to the connection: it covers every command sent since
    /// the previous one.
    void wait_queued();
    /// The oldest WAIT in flight answered (or failed): the commands it covered, oldest first.
    /// Empty when no WAIT is in flight.
    std::vector<sent_command> wait_answered();

    /// WAITs handed to the connection and not answered yet.
    std::size_t waits_in_flight() const noexcept { return covers_.size(); }

private:
    std::vector<sent_command> pending_;             // sent since the last WAIT was queued
    std::deque<std::vector<sent_command>> covers_;  // per WAIT in flight, oldest first
    bool scheduled_ = false;
};

/// @brief What a WAIT's reply means for the commands it covers: nothing (they count) when
/// it reports at least `required` replicas; else error::not_replicated, with `detail` saying
/// what came back (a count, an error reply, something unreadable).
error_code read_wait_reply(const resp::node_view& head, unsigned required, std::string& detail);

}  // namespace redlock::detail

#endif
