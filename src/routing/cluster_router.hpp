// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUTING_CLUSTER_ROUTER_HPP
#define REDLOCK_SRC_ROUTING_CLUSTER_ROUTER_HPP

// The decisions of a cluster master, sans-io: which node a command goes to, what a node's
// reply means for it (deliver, follow MOVED or ASK, send the EVAL after a NOSCRIPT, hold it
// for its WAIT), when the slot map is read again and from which node, what a WAIT's answer
// settles. Events in (a command, a reply, a sending refused, a map reply, a timer, close),
// decisions out; the time comes with the events. cluster_master carries the decisions out
// over its node connections.

#include "routing/endpoint.hpp"
#include "routing/replica_acks.hpp"
#include "routing/request_mode.hpp"
#include "routing/slot_map.hpp"

#include <redlock/error.hpp>
#include <redlock/events.hpp>
#include <redlock/resp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// `host:port`, brackets around an IPv6 host: a node as messages name it.
std::string node_name(const std::string& host, std::uint16_t port);

/// @brief The routing state of a Redis Cluster master: the slot map, the nodes reached so
/// far (numbered in the order they were first named, never removed), the commands in flight
/// and where each was sent, the reading of the slot map, the WAITs of replicated commands.
///
/// Each event returns what to do; the caller carries it out in order (a map step first, then
/// the command step), and reports back what the transport did (sent(), route_refused(), the
/// replies). A decision never waits: nothing re-enters the router while it decides.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class cluster_router
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    static constexpr std::uint8_t no_script = 0xff;

    struct options
    {
        std::string name;  ///< The master, for messages (master_config::to_string()).
        std::vector<cluster_endpoint> seeds;  ///< Asked for the map in turn; not empty.
        unsigned replicas = 0;                ///< Replica acknowledgements of replicated writes.
        std::chrono::milliseconds refresh_interval{100};  ///< Between two reads of the map.
        std::chrono::milliseconds retry_min{100};    ///< After the seeds all failed, doubling ...
        std::chrono::milliseconds retry_max{10000};  ///< ... up to this.
    };

    /// The master's state as the slot map makes it: connecting (no map yet: commands wait
    /// for it), ready (a map is known), down (every seed failed; asked again after a delay),
    /// closed. The values a master reports (master_info::state).
    using map_state = master_state;

    /// What the router keeps of a command.
    struct request
    {
        std::uint16_t slot = 0;
        std::uint8_t hops = 0;  // redirections followed
        bool live = false;
        bool queued = false;    // waiting for the first slot map
        bool held = false;      // answered; the answer waits for the WAIT that covers it
        std::uint32_t use = 0;  // bumped when abandoned or released: stale tickets miss
        request_mode mode = request_mode::plain;
        std::uint8_t script = no_script;  // submit_script's id
        bool by_sha = false;              // sent last as EVALSHA
        bool eval_only = false;           // a node said NOSCRIPT: EVAL from now on
        bool asking = false;              // sent last behind ASKING
        std::uint32_t sending = 0;        // bumped at every send: names the send a WAIT covers
        std::size_t node = 0;             // where it was sent last
        // The WAIT covering this sending answered before the command did (it was refused
        // at once): what it decided waits for the command's answer.
        bool wait_early = false;
        error_code wait_verdict;
        std::string wait_detail;
    };

    /// Where a failure's detail (last_error_detail) comes from.
    enum class detail_from : std::uint8_t
    {
        given,  ///< step::detail.
        node,   ///< The node connection's last error (the reply event's node).
        keep,   ///< Unchanged: it says why the seeds gave no map.
    };

    /// What to do with one command.
    struct step
    {
        enum class kind : std::uint8_t
        {
            none,     ///< Nothing (it waits for a WAIT, or was not live).
            send,     ///< Send it to `node`, after ASKING when `asking`; report sent() or
                      ///< send_refused(); refused: fail it with the connection's detail.
            queued,   ///< It waits for the first map (submit accepted it).
            refuse,   ///< submit refuses it with `ec` (release it, tell nobody); when `node` is
                      ///< set, send it there anyway first (a release caused by close()).
            hold,     ///< Keep the reply (a replicated write's): a WAIT decides on it.
            deliver,  ///< Hand the reply to its owner (`held`: the answer kept for the WAIT).
            fail,     ///< Hand `ec` to its owner.
        };
        kind what = kind::none;
        std::size_t index = 0;
        std::optional<std::size_t> node;
        bool asking = false;
        /// A WAIT's verdict: carry it out only if the command still is held (an owner told
        /// before it may have closed the master).
        bool held = false;
        error_code ec;
        detail_from source = detail_from::given;
        std::string detail;

        /// A step that carries no error.
        static step to(kind what, std::size_t index, std::optional<std::size_t> node = {},
                       bool asking = false)
        {
            step s;
            s.what = what;
            s.index = index;
            s.node = node;
            s.asking = asking;
            return s;
        }

        friend bool operator==(const step&, const step&) = default;
    };

    /// What to do about the slot map.
    struct map_step
    {
        enum class kind : std::uint8_t
        {
            none,
            fetch,  ///< Send CLUSTER SLOTS to the first of `ask` whose connection is ready,
                    ///< else to the last; report on_map_reply().
            arm,    ///< Call on_timer() at `at` (the refresh is rate-limited, or the seeds
                    ///< are asked again after a delay).
        };
        kind what = kind::none;
        std::vector<std::size_t> ask;
        time_point at{};

        friend bool operator==(const map_step&, const map_step&) = default;
    };

    /// The decision on a command event.
    struct decision
    {
        map_step map;  ///< First.
        step command;
        /// A script reply: the node (command.node's, before any resend) ran it (`ran`), or
        /// lost it (`lost`: NOSCRIPT to an EVALSHA).
        enum class script_news : std::uint8_t
        {
            none,
            ran,
            lost
        } script = script_news::none;
    };

    /// The decision on a slot-map event.
    struct map_decision
    {
        enum class change : std::uint8_t
        {
            none,
            up,    ///< A map is known where there was none (or the seeds failed): ready.
            down,  ///< Every seed failed and no map is known: `ec`, `detail`.
        };
        change news = change::none;
        error_code ec;
        std::string detail;
        std::vector<step> commands;  ///< The commands that waited for the map.
        map_step next;
    };

    explicit cluster_router(options opts);

    // ---- Commands ----

    /// A new command for `slot` (all its keys hash there); `script` for submit_script. Its
    /// index names it in every later event.
    std::size_t take(std::uint16_t slot, request_mode mode, unsigned script = no_script);
    /// Forgets the command (delivered, failed, refused); its index may be taken again.
    void release(std::size_t index) noexcept;
    /// The ticket naming this use of the index.
    std::uint64_t ticket(std::size_t index) const noexcept;
    /// The ticket's command if it still is that use: its index (the ticket is then spent).
    std::optional<std::size_t> abandon(std::uint64_t ticket) noexcept;
    const request& at(std::size_t index) const noexcept { return requests_[index]; }
    std::size_t capacity() const noexcept { return requests_.size(); }

    /// Where a new command goes.
    decision route(std::size_t index, time_point now);
    /// The sending route() asked for was refused by the connection: submit refuses the
    /// command (release it); the map may be read again (a failover may have replaced the node).
    map_step route_refused(time_point now);
    /// The command left for `node` (as EVALSHA when `by_sha`). True when a WAIT must be
    /// scheduled there (after the other writes of this turn): call wait_queued() then.
    bool sent(std::size_t index, std::size_t node, bool asking, bool by_sha);
    /// A reply (or `ec`: the connection failed) to the command, from its node. Nothing to do
    /// for a command released meanwhile (refused by close() after it was sent anyway).
    decision on_reply(std::size_t index, const error_code& ec, const resp::node_view* head,
                      time_point now);

    // ---- Replica acknowledgements ----

    /// The scheduled WAIT was handed to `node`'s connection (or refused: on_wait_reply next).
    void wait_queued(std::size_t node);
    /// The oldest WAIT of `node` answered `head`, or failed with `ec`: what happens to the
    /// commands it covered (deliver the held answer, or fail with error::not_replicated).
    std::vector<step> on_wait_reply(std::size_t node, const error_code& ec,
                                    const resp::node_view* head);

    // ---- The slot map ----

    /// Starts reading the map from the seeds.
    map_step start(time_point now);
    /// A reply to CLUSTER SLOTS from `node`, or `ec` (then `ec_detail` says why).
    map_decision on_map_reply(std::size_t node, const error_code& ec, std::string ec_detail,
                              std::span<const resp::node_view> nodes, time_point now);
    /// The time a map_step::arm named has come.
    map_step on_timer(time_point now);
    /// Closed: the commands waiting for the map (fail them with connection_closed).
    std::vector<step> close();

    // ---- What the driver reads ----

    map_state state() const noexcept { return state_; }
    bool has_map() const noexcept { return map_.has_value(); }
    const error_code& last_error() const noexcept { return last_error_; }
    /// The nodes named so far: the driver reaches a new one (index = its number) before it
    /// carries out the decision that named it.
    const std::vector<cluster_endpoint>& nodes() const noexcept { return nodes_; }
    /// The node serving each shard of the map, in shard order (a node may serve several).
    const std::vector<std::size_t>& primaries() const noexcept { return node_of_shard_; }
    /// Whether a map_step::arm is pending.
    bool timer_armed() const noexcept { return timer_ != timer_use::none; }

private:
    enum class timer_use : std::uint8_t
    {
        none,
        refresh,
        retry
    };

    std::size_t node_at(const std::string& host, std::uint16_t port);
    void extend_primaries();
    map_step fetch(time_point now);
    map_step refresh(time_point now);
    step send_to(std::size_t index, std::size_t node, bool asking);
    step refuse(std::size_t index, error_code ec, detail_from source, std::string detail = {});
    // The commands that waited for the first map, no longer waiting (the list emptied).
    std::vector<std::size_t> take_queued();
    map_decision adopt(slot_map map);
    map_decision map_failed(const error_code& ec, std::string detail, time_point now);
    std::string slot_unserved(std::uint16_t slot) const;

    options opts_;
    std::vector<cluster_endpoint> nodes_;
    std::vector<replica_ack_queue> acks_;  // per node
    std::optional<slot_map> map_;
    std::vector<std::size_t> node_of_shard_;  // map_'s shard index -> nodes_ index
    std::vector<request> requests_;
    std::vector<std::size_t> free_;
    std::vector<std::size_t> queued_;  // requests waiting for the first map (they stay live)
    map_state state_ = map_state::connecting;
    bool fetching_ = false;
    std::size_t next_seed_ = 0;    // the seed asked next while no map is known
    std::size_t seeds_tried_ = 0;  // in the current round of seeds
    std::size_t next_node_ = 0;    // the primary asked next once a map is known
    time_point last_fetch_{};
    timer_use timer_ = timer_use::none;
    std::chrono::milliseconds retry_delay_{0};
    error_code last_error_;
};

}  // namespace redlock::detail

#endif
