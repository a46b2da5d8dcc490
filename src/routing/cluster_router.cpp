// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/cluster_router.hpp"

#include "routing/reply_route.hpp"

#include <algorithm>
#include <utility>

namespace redlock::detail {

namespace {

using step = cluster_router::step;
using map_step = cluster_router::map_step;
using detail_from = cluster_router::detail_from;

step failure(std::size_t index, error_code ec, detail_from source, std::string detail = {},
             std::optional<std::size_t> node = {})
{
    auto s = step::to(step::kind::fail, index, node);
    s.ec = ec;
    s.source = source;
    s.detail = std::move(detail);
    return s;
}

map_step arm(cluster_router::time_point at)
{
    map_step m;
    m.what = map_step::kind::arm;
    m.at = at;
    return m;
}

}  // namespace

std::string node_name(const std::string& host, std::uint16_t port)
{
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
}

cluster_router::cluster_router(options opts) : opts_(std::move(opts)) {}

// ---- Commands -------------------------------------------------------------------------------

std::size_t cluster_router::take(std::uint16_t slot, request_mode mode, unsigned script)
{
    std::size_t index;
    if (!free_.empty())
    {
        index = free_.back();
        free_.pop_back();
    }
    else
    {
        index = requests_.size();
        requests_.emplace_back();
        // release() pushes without allocating: it is called where nothing may throw.
        free_.reserve(requests_.size());
    }
    auto& r = requests_[index];
    r.slot = slot;
    r.hops = 0;
    r.live = true;
    r.queued = false;
    // Replicated only when acknowledgements are asked for: otherwise a plain write.
    r.mode = mode == request_mode::replicated && opts_.replicas == 0 ? request_mode::plain : mode;
    r.held = false;
    r.script = static_cast<std::uint8_t>(script);
    r.by_sha = false;
    r.eval_only = false;
    r.wait_early = false;
    return index;
}

void cluster_router::release(std::size_t index) noexcept
{
    auto& r = requests_[index];
    r.live = false;
    r.queued = false;
    r.held = false;
    ++r.use;
    free_.push_back(index);
}

std::uint64_t cluster_router::ticket(std::size_t index) const noexcept
{
    return (std::uint64_t{requests_[index].use} << 32) | index;
}

std::optional<std::size_t> cluster_router::abandon(std::uint64_t ticket) noexcept
{
    const auto index = static_cast<std::size_t>(ticket & 0xffffffffu);
    const auto use = static_cast<std::uint32_t>(ticket >> 32);
    if (index >= requests_.size())
        return std::nullopt;
    auto& r = requests_[index];
    if (!r.live || r.use != use)
        return std::nullopt;
    ++r.use;  // the ticket is spent
    return index;
}

cluster_router::decision cluster_router::route(std::size_t index, time_point now)
{
    auto& r = requests_[index];
    decision d;
    if (state_ == map_state::closed)
    {
        d.command =
            refuse(index, error::connection_closed, detail_from::given, opts_.name + ": closed");
        // A release that close() itself caused (an attempt fails once a majority of its masters
        // closed, after this one) still goes to the node serving its key: while that node's
        // connection drains, it writes the command before its shutdown (node_connection::close).
        if (map_)
            if (const auto shard = map_->shard_of(r.slot))
                d.command.node = node_of_shard_[*shard];
    }
    else if (!map_ && state_ == map_state::connecting)
    {
        // Sent once the first map is known.
        r.queued = true;
        queued_.push_back(index);
        d.command = step::to(step::kind::queued, index);
    }
    else if (!map_)
    {
        d.command = refuse(index, error::not_connected, detail_from::keep);
    }
    else if (const auto shard = map_->shard_of(r.slot))
    {
        d.command = send_to(index, node_of_shard_[*shard], false);
    }
    else
    {
        d.map = refresh(now);
        d.command = refuse(index, error::not_connected, detail_from::given, slot_unserved(r.slot));
    }
    return d;
}

cluster_router::map_step cluster_router::route_refused(time_point now)
{
    // A node that cannot be reached may have been replaced (a failover): read the map again.
    return refresh(now);
}

bool cluster_router::sent(std::size_t index, std::size_t node, bool asking, bool by_sha)
{
    auto& r = requests_[index];
    r.node = node;
    r.by_sha = by_sha;
    r.asking = asking;
    r.wait_early = false;
    ++r.sending;
    // After whatever else this turn sends there: one WAIT covers them all.
    return r.mode == request_mode::replicated &&
           acks_[node].sent({static_cast<std::uint32_t>(index), r.sending});
}

cluster_router::decision cluster_router::on_reply(std::size_t index, const error_code& ec,
                                                  const resp::node_view* head, time_point now)
{
    auto& r = requests_[index];
    decision d;
    // A command released while it was in flight (sent anyway as close() refused it) has no
    // one to tell, and its index may name another command by now.
    if (!r.live)
        return d;
    if (ec)
    {
        d.map = refresh(now);  // the node dropped: it may have been replaced (a failover)
        d.command = failure(index, ec, detail_from::node, {}, r.node);
        return d;
    }
    if (r.script != no_script)
    {
        if (!resp::is_error(head->data_type))
        {
            d.script = decision::script_news::ran;
        }
        else if (r.by_sha && error_from_server_reply(head->value) == error::noscript)
        {
            // The node lost the script (a restart, SCRIPT FLUSH, a promoted replica): the body
            // goes to the same node, behind ASKING again if the EVALSHA was, owner listening
            // or not.
            d.script = decision::script_news::lost;
            r.eval_only = true;
            d.command = send_to(index, r.node, r.asking);
            return d;
        }
    }
    const auto route = route_reply(*head, nodes_[r.node].host, r.hops);
    if (route.refresh)
        d.map = refresh(now);
    // An ASK of a tracked read is not followed (ASKING and CLIENT CACHING both apply to the
    // next command only): its reader sees the redirection and does without tracking.
    const bool follow = route.follow && !(route.follow->kind == redirect_kind::ask &&
                                          r.mode == request_mode::tracked_read);
    if (!follow)
    {
        const bool hold = r.mode == request_mode::replicated && !resp::is_error(head->data_type);
        if (hold && r.wait_early)
        {
            // Its WAIT answered already (refused): that settles it now.
            d.command = r.wait_verdict ? failure(index, r.wait_verdict, detail_from::given,
                                                 std::move(r.wait_detail), r.node)
                                       : step::to(step::kind::deliver, index, r.node);
            return d;
        }
        if (hold)
            r.held = true;
        d.command = step::to(hold ? step::kind::hold : step::kind::deliver, index, r.node);
        return d;
    }
    ++r.hops;
    const auto& to = route.follow->to;
    std::size_t target = 0;
    if (route.follow->kind == redirect_kind::moved)
    {
        const auto shard = map_ ? map_->moved(r.slot, to) : std::nullopt;
        if (!shard)
        {
            // The map is past repair: the refresh mends it.
            d.command = step::to(step::kind::deliver, index, r.node);
            return d;
        }
        extend_primaries();
        target = node_of_shard_[*shard];
    }
    else
    {
        target = node_at(to.host, to.port);
    }
    d.command = send_to(index, target, route.follow->kind == redirect_kind::ask);
    return d;
}

cluster_router::step cluster_router::send_to(std::size_t index, std::size_t node, bool asking)
{
    return step::to(step::kind::send, index, node, asking);
}

cluster_router::step cluster_router::refuse(std::size_t index, error_code ec, detail_from source,
                                            std::string detail)
{
    auto s = failure(index, ec, source, std::move(detail));
    s.what = step::kind::refuse;
    return s;
}

std::string cluster_router::slot_unserved(std::uint16_t slot) const
{
    return opts_.name + ": slot " + std::to_string(slot) + " is served by no node";
}

// ---- Replica acknowledgements ---------------------------------------------------------------

void cluster_router::wait_queued(std::size_t node) { acks_[node].wait_queued(); }

std::vector<cluster_router::step> cluster_router::on_wait_reply(std::size_t node,
                                                                const error_code& ec,
                                                                const resp::node_view* head)
{
    std::string why;
    error_code verdict = ec;
    if (!ec)
        verdict = read_wait_reply(*head, opts_.replicas, why);
    else
        why = ec.message();
    std::string detail;
    if (verdict)
        detail =
            opts_.name + ": node " + node_name(nodes_[node].host, nodes_[node].port) + ": " + why;
    std::vector<step> out;
    for (const auto c : acks_[node].wait_answered())
    {
        auto& r = requests_[c.index];
        // A command redirected elsewhere since (another sending), or failed with the
        // connection (no longer live), is not this WAIT's to settle.
        if (!r.live || r.sending != c.sending || r.node != node)
            continue;
        if (!r.held)
        {
            // Not answered yet: the WAIT was refused before it left. Its verdict settles the
            // answer when it comes (it would otherwise be held for a WAIT that never answers).
            r.wait_early = true;
            r.wait_verdict = verdict;
            r.wait_detail = detail;
            continue;
        }
        auto s = failure(c.index, verdict, detail_from::given, detail, node);
        if (!verdict)
            s.what = step::kind::deliver;
        s.held = true;
        out.push_back(std::move(s));
    }
    return out;
}

// ---- The slot map ---------------------------------------------------------------------------

std::size_t cluster_router::node_at(const std::string& host, std::uint16_t port)
{
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].port == port && nodes_[i].host == host)
            return i;
    nodes_.push_back({host, port, {}});
    acks_.emplace_back();
    return nodes_.size() - 1;
}

void cluster_router::extend_primaries()
{
    while (node_of_shard_.size() < map_->shards())
    {
        const auto& shard = map_->shard(node_of_shard_.size());
        node_of_shard_.push_back(node_at(shard.host, shard.port));
    }
}

cluster_router::map_step cluster_router::start(time_point now) { return fetch(now); }

cluster_router::map_step cluster_router::fetch(time_point now)
{
    if (fetching_ || state_ == map_state::closed)
        return {};
    map_step m;
    m.what = map_step::kind::fetch;
    if (map_ && !node_of_shard_.empty())
    {
        // Any primary knows the map: ask them in turn, a ready one first.
        for (std::size_t k = 0; k < node_of_shard_.size(); ++k)
            m.ask.push_back(node_of_shard_[(next_node_ + k) % node_of_shard_.size()]);
        ++next_node_;
    }
    else
    {
        const auto& seed = opts_.seeds[next_seed_ % opts_.seeds.size()];
        m.ask.push_back(node_at(seed.host, seed.port));
    }
    fetching_ = true;
    last_fetch_ = now;
    return m;
}

cluster_router::map_step cluster_router::refresh(time_point now)
{
    if (!map_ || fetching_ || timer_ != timer_use::none || state_ == map_state::closed)
        return {};
    const auto due = last_fetch_ + opts_.refresh_interval;
    if (now >= due)
        return fetch(now);
    timer_ = timer_use::refresh;
    return arm(due);
}

cluster_router::map_step cluster_router::on_timer(time_point now)
{
    const auto use = timer_;
    timer_ = timer_use::none;
    if (use == timer_use::refresh)
        return fetch(now);
    if (use != timer_use::retry || state_ != map_state::down)
        return {};
    state_ = map_state::connecting;
    return fetch(now);
}

cluster_router::map_decision cluster_router::on_map_reply(std::size_t node, const error_code& ec,
                                                          std::string ec_detail,
                                                          std::span<const resp::node_view> nodes,
                                                          time_point now)
{
    fetching_ = false;
    if (state_ == map_state::closed)
        return {};
    const auto& from = nodes_[node];
    const auto where = opts_.name + ": node " + node_name(from.host, from.port);
    error_code why = ec;
    std::string detail;
    if (ec)
    {
        detail = ec_detail.empty() ? where + ": " + ec.message() : std::move(ec_detail);
    }
    else if (resp::is_error(nodes[0].data_type))
    {
        why = error_from_server_reply(nodes[0].value);
        detail = where + " refused CLUSTER SLOTS: " + std::string(nodes[0].value);
    }
    else
    {
        auto parsed = slot_map::parse(nodes, from.host);
        if (parsed)
            return adopt(std::move(*parsed.map));
        why = error::unexpected_reply;
        detail = where + " sent an unreadable CLUSTER SLOTS reply: " + parsed.error;
    }
    if (map_)
        return {};  // the map known so far stays; a later redirection asks again
    ++next_seed_;
    if (++seeds_tried_ < opts_.seeds.size())
    {
        map_decision d;
        d.next = fetch(now);
        return d;
    }
    return map_failed(why, std::move(detail), now);
}

std::vector<std::size_t> cluster_router::take_queued()
{
    auto queued = std::move(queued_);
    queued_.clear();
    std::erase_if(queued, [&](std::size_t index) {
        auto& r = requests_[index];
        const bool waiting = r.live && r.queued;
        r.queued = false;
        return !waiting;
    });
    return queued;
}

cluster_router::map_decision cluster_router::adopt(slot_map map)
{
    map_ = std::move(map);
    node_of_shard_.clear();
    extend_primaries();
    seeds_tried_ = 0;
    retry_delay_ = std::chrono::milliseconds(0);
    map_decision d;
    if (state_ == map_state::ready)
        return d;
    state_ = map_state::ready;
    last_error_ = {};
    d.news = map_decision::change::up;
    for (const auto index : take_queued())
    {
        const auto slot = requests_[index].slot;
        if (const auto shard = map_->shard_of(slot))
            d.commands.push_back(send_to(index, node_of_shard_[*shard], false));
        else
            d.commands.push_back(
                failure(index, error::not_connected, detail_from::given, slot_unserved(slot)));
    }
    return d;
}

cluster_router::map_decision cluster_router::map_failed(const error_code& ec, std::string detail,
                                                        time_point now)
{
    last_error_ = ec;
    state_ = map_state::down;
    map_decision d;
    d.news = map_decision::change::down;
    d.ec = ec;
    for (const auto index : take_queued())
        d.commands.push_back(failure(index, ec, detail_from::given, detail));
    d.detail = std::move(detail);
    // Every seed again, after a delay that doubles up to the connections' longest.
    retry_delay_ = std::clamp(retry_delay_ * 2, opts_.retry_min, opts_.retry_max);
    seeds_tried_ = 0;
    timer_ = timer_use::retry;
    d.next = arm(now + retry_delay_);
    return d;
}

std::vector<cluster_router::step> cluster_router::close()
{
    std::vector<step> out;
    if (state_ == map_state::closed)
        return out;
    state_ = map_state::closed;
    timer_ = timer_use::none;
    for (const auto index : take_queued())
        out.push_back(
            failure(index, error::connection_closed, detail_from::given, opts_.name + ": closed"));
    return out;
}

}  // namespace redlock::detail
