// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_FSM_LEADER_FSM_HPP
#define REDLOCK_SRC_FSM_LEADER_FSM_HPP

#include <chrono>
#include <cstdint>
#include <optional>

#include <redlock/election.hpp>
#include <redlock/error.hpp>
#include <redlock/holders.hpp>

namespace redlock::detail {

/// The leader in a census read at `now`: the holder of the resource's key with a committed
/// term. A holder without one (its term's commit has not reached a majority of the masters
/// read, or it took no fencing: not a campaign's) leads nothing yet.
std::optional<leader_info> leader_of(const holders_result& r,
                                     std::chrono::steady_clock::time_point now);

/// A holder of the resource's key without a term: usually a candidate that has just taken the
/// lead, whose term's commit (sent after its one round) has not reached the masters yet.
bool term_pending(const holders_result& r);

/// What leader_fsm asks its driver to do.
struct leader_action
{
    enum class kind : std::uint8_t
    {
        /// A census (async_holders).
        first_read,
        /// Wait for the holders to differ from the last read (async_next_holders, from the
        /// read just answered, or from "no holder" at the start), re-reading every
        /// `reread_every` at least.
        next_read,
        /// Nothing until `until` (a timer), then wait_ended().
        wait_until,
        /// Complete with `ec` and `leader`.
        finish
    };
    kind type = kind::finish;
    std::chrono::milliseconds reread_every{0};
    std::chrono::steady_clock::time_point until{};
    error_code ec;
    std::optional<leader_info> leader;
};

/// @brief The decisions of election::async_leader (`once`: the first read's answer, whatever it
/// is) and election::async_observe (the first leader other than `seen`), as a sans-io machine
/// driven in src/api/election.cpp.
///
/// - async_leader starts with a census; async_observe waits for a change from "no holder", so
///   that anyone holding the lead answers at once and no one makes it wait.
/// - A read whose holder has no committed term yet: async_leader waits once for the term (a
///   change within the read's timeout) rather than answer "none" while a leader that knows it
///   leads stands on the masters; an observer reads again within the read's timeout (the
///   leader's own client is never pushed its own writes, and a push can be lost).
/// - An observer whose read has no majority: with no leader seen, it waits for a change; a
///   leader it saw leads, as far as it can tell, until that leader's validity ends (a timer),
///   then it reads again; past that end it answers "no leader".
/// - Any other error finishes with it (async_leader: no_quorum too).
class leader_fsm
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// @param every The observer's re-read interval. @param read_timeout A read's attempt
    /// timeout, which bounds the waits for a pending term.
    leader_fsm(std::optional<leader_info> seen, bool once, std::chrono::milliseconds every,
               std::chrono::milliseconds read_timeout);

    leader_action start() const;
    /// A read's answer at `now`.
    leader_action read_answered(error_code ec, const holders_result& r, time_point now);
    /// The wait of a wait_until action ended (`ec`: cancelled).
    leader_action wait_ended(error_code ec) const;

private:
    leader_action next_read(std::chrono::milliseconds every) const;
    static leader_action finish(error_code ec, std::optional<leader_info> leader = std::nullopt);

    std::optional<leader_info> seen_;
    std::chrono::milliseconds every_;
    std::chrono::milliseconds read_timeout_;
    bool once_;
    bool waited_ = false;  // async_leader: waited once for a holder's term
};

}  // namespace redlock::detail

#endif
