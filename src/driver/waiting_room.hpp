// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_WAITING_ROOM_HPP
#define REDLOCK_SRC_WAITING_ROOM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "algorithm/token.hpp"
#include "fsm/master_set.hpp"
#include "protocol/invalidation.hpp"

namespace redlock::detail {

struct lock_state;

/// An acquisition that waits for a release (lock_options::wait): told when a master says
/// that one of its keys changed, and when its turn in its resource's queue comes.
class release_listener
{
public:
    /// Master `master` invalidated one of the keys, or lost its connection (and the watch).
    virtual void on_invalidated(std::size_t master) = 0;
    /// The acquisitions queued before this one on its resource are gone; `taken_before`: the
    /// one just before took the lock.
    virtual void on_turn(bool taken_before) = 0;
    /// A holder of this client releases `from` (valid until `valid_until`), whose one key this
    /// listener waits for first in line, and offers it (waiting_room::successor). Returns true
    /// when the listener takes it, having written its own new token into `token`: the caller
    /// then hands the keys over to that token before anything else is sent to the masters.
    /// The listener's completion is posted, never run inside the call.
    virtual bool take_over(const lock_state& from,
                           std::chrono::steady_clock::time_point valid_until,
                           std::span<char, token_source::token_chars> token) = 0;
    /// Keeps the listener alive while one of its callbacks runs.
    virtual std::shared_ptr<void> hold() = 0;

protected:
    ~release_listener() = default;
};

/// An observer of some keys (client::async_next_holders): told when one may have changed, by
/// a master's invalidation or by this client's own acquisitions and releases (which the
/// masters do not report to it: NOLOOP).
class key_observer
{
public:
    /// One of the keys may have changed (on any master).
    virtual void on_key_changed() = 0;
    /// Keeps the observer alive while its callback runs.
    virtual std::shared_ptr<void> hold() = 0;

protected:
    ~key_observer() = default;
};

/// @brief A client's waiting acquisitions: the queue of each resource (first come, first
/// served: only the head competes), who watches which key, and whether each master's
/// connection has client tracking on.
///
/// On the client's strand. Listeners are not owned: each leaves (leave(), unwatch()) before it
/// goes.
class waiting_room
{
public:
    waiting_room() = default;
    /// `ex`: the client's strand, where released_here() posts.
    waiting_room(std::size_t masters, boost::asio::any_io_executor ex)
        : tracking_(masters),
          ex_(std::move(ex))
    {}

    /// Queues `l` for `key`; true when it is first (its turn at once).
    bool enqueue(const std::string& key, release_listener* l);
    /// The acquisition first in `key`'s queue, to be offered the lock of a holder that releases
    /// `key` (release_listener::take_over); none when the queue is empty, or when this would be
    /// the row's yield_every-th local hand-off (see released_here): that release yields.
    release_listener* successor(const std::string& key) const;
    /// The lock of `key` was handed to this client's next waiter: a local hand-off in the row.
    void handed_over(const std::string& key);
    /// Takes `l` out of `key`'s queue; when it was first, the next one (if any) is told its
    /// turn — posted by the caller: returned here.
    release_listener* leave(const std::string& key, release_listener* l);

    /// `l` hears of invalidations of `keys` from now on (until unwatch).
    void watch(std::span<const std::string> keys, release_listener* l);
    void unwatch(std::span<const std::string> keys, release_listener* l) noexcept;

    /// `o` hears of changes of `keys` from now on (until unobserve).
    void observe(std::span<const std::string> keys, key_observer* o);
    void unobserve(std::span<const std::string> keys, key_observer* o) noexcept;
    /// An acquisition of this client took `keys`: their observers are told (posted).
    void changed_here(std::span<const std::string> keys);
    /// Whether anyone observes a key (an acquisition then calls changed_here()).
    bool observed() const noexcept { return !observers_.empty(); }

    /// Master `master` pushed `inv`: the listeners watching its keys (all, for `inv.all`) hear
    /// of it.
    void invalidate(std::size_t master, const invalidation& inv);
    /// Master `master`'s connection dropped: its tracking is gone with it.
    void invalidate_all(std::size_t master);
    /// @brief A holder of this client queued the release of `keys` on `masters` (a failed
    /// attempt's release only calls notify_released(): it is no turn of a row): what a waiter
    /// of this client sends there from now on runs after it (one connection per master), so it
    /// need not wait for the master's invalidation. Posted to the listeners (they are told outside
    /// the release's own start), so that their attempt leaves in the same write as the release.
    ///
    /// That head start would hand a resource from one local waiter to the next for as long as
    /// this process has waiters, while another process's waiter, woken by the masters'
    /// invalidation, always arrives after our next SET. So every `yield_every`-th local
    /// hand-off of the same resource in a row yields: nothing is posted, and the function
    /// returns true. The caller then calls notify_released() once the release is decided,
    /// when other processes' waiters have been woken too, and the next holder is whoever
    /// reaches a majority first.
    ///
    /// A row of hand-offs (counted by the releases' first key) ends with a release that finds
    /// no local waiter, with a yield, and with refused_elsewhere(); a waiter that completes
    /// does not end it (the next one of the process may watch again only after that).
    bool released_here(const master_set& masters, std::span<const std::string> keys);
    /// An acquisition of this client was refused by a holder of `keys` that it did not get
    /// them from (it watches the masters): the row of local hand-offs is over. Not when
    /// `first_attempt` and a row is live: the last hand-off of the row went to a holder of
    /// this client, which still holds (its release would have ended or continued the row), so
    /// the refusal is by this client's own keys. (Without this, a holder that asks for the
    /// next lock while it holds, the only waiter each time, would end the row at every turn
    /// and never yield.)
    void refused_elsewhere(std::span<const std::string> keys, bool first_attempt = false) noexcept;
    /// Tells the waiters of `keys` that the release on `masters` is queued: what
    /// released_here() does when it does not yield.
    void notify_released(const master_set& masters, std::span<const std::string> keys);
    /// How many local hand-offs of one resource in a row go before one yields. Measured in
    /// docs/performance.md ("Fairness across processes").
    static constexpr unsigned yield_every = 8;
    /// Whether a release must call released_here(): someone watches a key, or a row of
    /// hand-offs is being counted (the release that ends it must say so).
    bool wants_releases() const noexcept
    {
        return !watchers_.empty() || !handoffs_.empty() || !observers_.empty();
    }

    /// Client tracking on master i's connection generation `gen`: whether it was asked for
    /// (then the watch does not ask again), and whether the master refused it.
    enum class tracking : std::uint8_t
    {
        unknown,
        asked,
        refused
    };
    tracking tracking_of(std::size_t i, std::uint64_t gen) const noexcept
    {
        return tracking_[i].gen == gen ? tracking_[i].state : tracking::unknown;
    }
    void set_tracking(std::size_t i, std::uint64_t gen, tracking t) noexcept
    {
        tracking_[i] = {gen, t};
    }

private:
    void tell(std::size_t master, std::vector<release_listener*>& whom);
    // Posts on_key_changed() to the observers of `keys` (of any key, for `all`).
    void tell_observers(std::span<const std::string> keys, bool all = false);
    void tell_observers(const invalidation& inv);

    struct per_master
    {
        std::uint64_t gen = 0;
        tracking state = tracking::unknown;
    };
    std::unordered_map<std::string, std::deque<release_listener*>> queues_;
    std::unordered_map<std::string, std::vector<release_listener*>> watchers_;
    std::unordered_map<std::string, std::vector<key_observer*>> observers_;
    // Local hand-offs in a row, by the first key of the releases. An entry lives until its row
    // ends (released_here); a row left open (its holder's lock expired unreleased) is
    // forgotten when the map reaches max_rows, which at worst postpones a yield.
    static constexpr std::size_t max_rows = 4096;
    std::unordered_map<std::string, unsigned> handoffs_;
    std::vector<per_master> tracking_;
    std::vector<release_listener*> scratch_;
    boost::asio::any_io_executor ex_;
};

}  // namespace redlock::detail

#endif
