// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The words the cluster router's tests are written in: a router of two seeds, maps of three
// shards, replies parsed from their RESP bytes, the steps expected.
#ifndef REDLOCK_TEST_UNIT_CLUSTER_ROUTER_WORDS_HPP
#define REDLOCK_TEST_UNIT_CLUSTER_ROUTER_WORDS_HPP

#include "protocol/resp_parser.hpp"
#include "routing/cluster_router.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <tuple>
#include <utility>

namespace redlock_test::router {

using namespace std::chrono_literals;
namespace resp = redlock::resp;
using redlock::error;
using redlock::error_code;
using redlock::detail::cluster_router;
using redlock::detail::request_mode;
using step = cluster_router::step;
using kind = step::kind;
using map_kind = cluster_router::map_step::kind;
using change = cluster_router::map_decision::change;
using news = cluster_router::decision::script_news;
using detail_from = cluster_router::detail_from;
using map_state = cluster_router::map_state;
using time_point = cluster_router::time_point;

/// Any time: the router only compares the times it is given.
inline const time_point t0 = time_point{} + std::chrono::hours(1);

/// One reply, parsed from its RESP bytes; its nodes view the bytes it keeps (it does not move).
class wire
{
public:
    explicit wire(std::string bytes) : bytes_(std::move(bytes))
    {
        REQUIRE(parser_.parse(bytes_) == resp::parse_status::done);
    }
    wire(const wire&) = delete;
    wire& operator=(const wire&) = delete;

    std::span<const resp::node_view> nodes() const noexcept { return parser_.nodes(); }
    const resp::node_view* head() const noexcept { return &parser_.nodes()[0]; }

private:
    std::string bytes_;
    resp::parser parser_;
};

inline wire ok() { return wire("+OK\r\n"); }

/// A CLUSTER SLOTS reply: each range {start, end, port} served by the primary at h:port.
inline std::string slots(std::initializer_list<std::tuple<int, int, int>> ranges)
{
    std::string out = "*" + std::to_string(ranges.size()) + "\r\n";
    for (const auto& [start, end, port] : ranges)
        out += "*3\r\n:" + std::to_string(start) + "\r\n:" + std::to_string(end) +
               "\r\n*2\r\n$1\r\nh\r\n:" + std::to_string(port) + "\r\n";
    return out;
}

/// Three shards as redis-cli makes them: h:7001, h:7002, h:7003.
inline std::string three_shards()
{
    return slots({{0, 5460, 7001}, {5461, 10922, 7002}, {10923, 16383, 7003}});
}

/// Seeds h:7000 (node 0) and h:7001; the seeds are asked again after 100 ms, doubling to 400.
inline cluster_router make_router(unsigned replicas = 0)
{
    cluster_router::options o;
    o.name = "cluster h:7000";
    o.seeds = {{"h", 7000, {}}, {"h", 7001, {}}};
    o.replicas = replicas;
    o.refresh_interval = 100ms;
    o.retry_min = 100ms;
    o.retry_max = 400ms;
    return cluster_router(std::move(o));
}

/// A router that read three_shards() from the first seed at t0: nodes 1, 2, 3 are h:7001,
/// h:7002, h:7003.
inline cluster_router ready_router(unsigned replicas = 0)
{
    auto r = make_router(replicas);
    const auto fetch = r.start(t0);
    REQUIRE(fetch.what == map_kind::fetch);
    const wire map(three_shards());
    REQUIRE(r.on_map_reply(fetch.ask.front(), {}, "", map.nodes(), t0).news == change::up);
    return r;
}

inline step send(std::size_t index, std::size_t node, bool asking = false)
{
    return step::to(kind::send, index, node, asking);
}

inline step deliver(std::size_t index, std::size_t node)
{
    return step::to(kind::deliver, index, node);
}

/// Checks a decision: its command is `command`, and its step on the map of kind `map`.
inline void check_decision(const cluster_router::decision& d, const step& command, map_kind map)
{
    CHECK(d.command == command);
    CHECK(d.map.what == map);
}

/// The router's decision on `text` (RESP bytes), the reply to command `index`.
inline cluster_router::decision reply(cluster_router& r, std::size_t index, std::string text,
                                      time_point now)
{
    const wire w(std::move(text));
    return r.on_reply(index, {}, w.head(), now);
}

/// A command for `slot` (plain, slot 100 by default) that route() sends to `node`, sent there:
/// its index.
inline std::size_t sent_command(cluster_router& r, std::size_t node, time_point now,
                                std::uint16_t slot = 100, request_mode mode = request_mode::plain,
                                unsigned script = cluster_router::no_script)
{
    const auto index = r.take(slot, mode, script);
    REQUIRE(r.route(index, now).command == send(index, node));
    r.sent(index, node, false, false);
    return index;
}

/// A replicated write to slot 100 sent to node 1 at t0 + 200 ms, the WAIT covering it queued
/// there: its index.
inline std::size_t write_awaiting_wait(cluster_router& r)
{
    const auto index = r.take(100, request_mode::replicated);
    REQUIRE(r.route(index, t0 + 200ms).command == send(index, 1));
    REQUIRE(r.sent(index, 1, false, false));
    r.wait_queued(1);
    return index;
}

}  // namespace redlock_test::router

#endif
