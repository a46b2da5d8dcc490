// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_NEXT_HOLDERS_OP_HPP
#define REDLOCK_SRC_DRIVER_NEXT_HOLDERS_OP_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>

#include <redlock/holders.hpp>
#include <redlock/options.hpp>

#include "driver/op_base.hpp"
#include "driver/release_watch.hpp"
#include "driver/waiting_room.hpp"
#include "fsm/observe_fsm.hpp"
#include "runtime/deadline_list.hpp"
#include "runtime/op_registry.hpp"

namespace redlock::detail {

/// Who holds a resource, as one comparable value: each holder's (id, reader, fencing token),
/// sorted. Two reads that give the same signature saw the same holders.
using holders_signature = std::vector<std::tuple<std::string, bool, std::uint64_t>>;
holders_signature signature_of(const std::vector<holder_info>& holders);

/// @brief The Asio side of client::async_next_holders: reads who holds a resource
/// (holders_op) until it differs from what the caller saw.
///
/// Before each read it arms client tracking on the resource's keys (release_watch: the
/// masters then push an invalidation when a key changes from that read on), so that a change
/// between the read and the wait is never lost; this client's own acquisitions and releases,
/// which the masters do not report to it (NOLOOP), reach it through the waiting room
/// (key_observer). It also reads again when a holder's validity runs out and at least every
/// `reread_every`, whatever the masters say (a master that refused tracking, a lost push).
///
/// Every decision (when to arm, read, wait or finish) is observe_fsm's; this driver carries
/// out its actions and turns the watch's answers, the reads, the key observers' changes and
/// the deadline into its events.
class next_holders_op final : public watch_listener,
                              public key_observer,
                              public timed_entry,
                              public op_base<next_holders_op>
{
public:
    using handler = asio::any_completion_handler<void(error_code, holders_result)>;
    using clock = std::chrono::steady_clock;

    /// `seen_decided`: whether what the caller saw came from a read that a majority answered
    /// (a read that fewer answer differs from it, and completes with no_quorum).
    next_holders_op(std::shared_ptr<op_context> c, std::string resource, const lock_options& o,
                    holders_signature seen, bool seen_decided,
                    std::chrono::milliseconds reread_every, handler h);

    void start();
    /// Per-operation cancellation, on the client's strand.
    void cancel();

    std::shared_ptr<void> hold() override { return shared_from_this(); }
    void abandon() noexcept override;

private:
    void execute(const observe_action& a);
    void arm(std::chrono::steady_clock::time_point until);
    void read(std::uint64_t id);
    void on_read(std::uint64_t read, error_code ec, holders_result r);
    void finish(error_code ec, holders_result r);
    // Out of the watch, the deadline list and the observers: nothing more is heard.
    void stop() noexcept;

    void on_watched(std::size_t master, master_outcome o, std::int64_t pttl, bool tracked) override;
    void on_key_changed() override;
    void on_deadline() override;

    std::string resource_;
    lock_options o_;
    holders_signature seen_;
    observe_fsm fsm_;
    std::optional<handler> h_;
    std::vector<std::string> keys_;  // what holders_op reads: watched and observed
    release_watch watch_;
    holders_result last_;     // the last read's answer, which a finish may carry
    bool observing_ = false;  // among the waiting room's observers
};

}  // namespace redlock::detail

#endif
