// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_RELEASE_WATCH_HPP
#define REDLOCK_SRC_RELEASE_WATCH_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithm/quorum.hpp"
#include "fsm/master_set.hpp"
#include "protocol/reply_sink.hpp"

namespace redlock::detail {

class round_context;

/// The owner of a release_watch: told what each master answered.
class watch_listener
{
public:
    /// Master `master` answered: `o` granted (the watch is armed; `pttl` is the smallest PTTL
    /// of the keys there in ms, -1 for a key without expiry, -2 when no key is left) or failed
    /// (an error, the connection lost). `tracked`: the master will push an invalidation when
    /// a key changes.
    virtual void on_watched(std::size_t master, master_outcome o, std::int64_t pttl,
                            bool tracked) = 0;
    virtual std::shared_ptr<void> hold() = 0;

protected:
    ~watch_listener() = default;
};

/// @brief Asks some masters to tell this client when the lock's keys change (RESP3 client
/// tracking), and how long the keys have left.
///
/// To each master: once per connection, `HELLO 3` and `CLIENT TRACKING on OPTIN NOLOOP` (the
/// connection then speaks RESP3; our replies read the same); then per key
/// `CLIENT CACHING yes` + `PTTL key`, which makes the master track the key for us from that
/// read on (the read comes after the refusal: a release between the two shows as -2, never as
/// a lost wake-up). The invalidations themselves arrive as push messages on the connection
/// (waiting_room). NOLOOP: the connection's own writes are not reported; this client's
/// releases reach its waiters directly (waiting_room::released_here).
///
/// A cluster master asks its nodes for tracking itself (cluster_master, request_mode::
/// tracked_read): the watch sends it one `PTTL key` per key, which the cluster master sends
/// after `CLIENT CACHING yes` on the node that serves the key.
class release_watch final : public reply_sink
{
public:
    release_watch() = default;
    release_watch(const release_watch&) = delete;
    release_watch& operator=(const release_watch&) = delete;
    ~release_watch() { stop(); }

    /// Sends to the masters of `masters`; `keys` must stay valid while the watch is active.
    /// May call the listener before returning (a master down).
    /// @param any_frees A semaphore's: one key gone frees the master (a permit is free there),
    /// and its answer is -2 as soon as one is; otherwise -2 only when none is left.
    void start(round_context& c, const master_set& masters, std::span<const std::string> keys,
               watch_listener* l, bool any_frees = false);
    /// No more callbacks; outstanding requests are abandoned (their replies dropped).
    void stop() noexcept;

private:
    void on_reply(std::uint32_t tag, const error_code& ec,
                  std::span<const resp::node_view> nodes) override;
    void send(std::size_t i);
    void finish(std::size_t i, master_outcome o);

    struct per_master
    {
        std::vector<request_ticket> tickets;
        std::uint32_t expected = 0;
        std::uint32_t received = 0;
        std::int64_t pttl = -2;
        bool asked_tracking = false;
        bool cluster = false;  // a cluster master: one tracked PTTL per key, nothing else
        bool tracked = true;
        bool failed = false;
        bool active = false;
        bool one_gone = false;  // a key answered -2
    };

    round_context* c_ = nullptr;
    watch_listener* l_ = nullptr;
    std::span<const std::string> keys_;
    std::vector<per_master> m_;
    bool any_frees_ = false;
    bool active_ = false;
};

}  // namespace redlock::detail

#endif
