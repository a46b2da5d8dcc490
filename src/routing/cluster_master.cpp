// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/cluster_master.hpp"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

#include "protocol/resp_encoder.hpp"
#include "routing/reply_route.hpp"

namespace redlock::detail {

namespace {

using clock = std::chrono::steady_clock;

// A routed command's tag is its index. Replies to CLUSTER SLOTS carry map_bit and the node
// asked; to WAIT, wait_bit and the node; to HELLO 3 and CLIENT TRACKING, tracking_bit.
constexpr std::uint32_t map_bit = 1u << 31;
constexpr std::uint32_t wait_bit = 1u << 30;
constexpr std::uint32_t tracking_bit = 1u << 29;
constexpr std::uint32_t kind_bits = map_bit | wait_bit | tracking_bit;

const std::string& client_caching_command()
{
    static const std::string bytes = [] {
        std::string out;
        resp::append_command(out, "CLIENT", "CACHING", "yes");
        return out;
    }();
    return bytes;
}

const std::string& asking_command()
{
    static const std::string bytes = [] {
        std::string out;
        resp::append_command(out, "ASKING");
        return out;
    }();
    return bytes;
}

const std::string& cluster_slots_command()
{
    static const std::string bytes = [] {
        std::string out;
        resp::append_command(out, "CLUSTER", "SLOTS");
        return out;
    }();
    return bytes;
}

std::string node_name(const std::string& host, std::uint16_t port)
{
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
}

// What a node's warning means for a cluster master: replicas are how a shard fails over, and
// a node that is a replica (a seed, or an old primary back after a failover) gets no lock key:
// commands go to the primaries the slot map names.
bool applies_to_cluster(const error_code& warning)
{
    return warning != error::master_has_replicas && warning != error::master_is_replica;
}

deployment_warnings for_cluster(const deployment_warnings& w)
{
    deployment_warnings out;
    for (const auto& ec : w.codes())
        if (applies_to_cluster(ec))
            out.add(static_cast<error>(ec.value()));
    return out;
}

}  // namespace

cluster_master::cluster_master(asio::any_io_executor ex, master_config cfg, connection_options opts,
                               write_acks acks)
    : ex_(std::move(ex)),
      cfg_(std::move(cfg)),
      opts_(std::move(opts)),
      acks_(acks),
      refresh_timer_(ex_)
{}

cluster_master::~cluster_master() = default;

void cluster_master::start() { fetch_map(); }

void cluster_master::close()
{
    if (state_ == map_state::closed)
        return;
    set_map_state(map_state::closed);
    refresh_timer_.cancel();
    for (auto& n : nodes_)
        n.conn->close();
    last_error_detail_ = cfg_.to_string() + ": closed";
    auto queued = std::move(queued_);
    queued_.clear();
    for (const auto index : queued)
        if (requests_[index].live && requests_[index].queued)
            deliver(index, error::connection_closed, {});
    if (!settled_)
    {
        settled_ = true;
        auto waiters = std::move(settle_waiters_);
        settle_waiters_.clear();
        for (auto& w : waiters)
            asio::post(ex_, [w = std::move(w)] { w(error::connection_closed); });
    }
}

// ---- Commands -------------------------------------------------------------------------------

std::size_t cluster_master::take_request(reply_sink* sink, std::uint32_t tag, std::uint16_t slot,
                                         request_mode mode)
{
    std::size_t index;
    if (!free_requests_.empty())
    {
        index = free_requests_.back();
        free_requests_.pop_back();
    }
    else
    {
        index = requests_.size();
        requests_.emplace_back();
        // release_request() pushes without allocating: it is called where nothing may throw.
        free_requests_.reserve(requests_.size());
    }
    auto& r = requests_[index];
    r.sink = sink;
    r.tag = tag;
    r.slot = slot;
    r.hops = 0;
    r.live = true;
    r.queued = false;
    // Replicated only when acknowledgements are asked for: otherwise a plain write.
    r.mode = mode == request_mode::replicated && acks_.replicas == 0 ? request_mode::plain : mode;
    r.held = false;
    r.script = no_script;
    r.by_sha = false;
    r.eval_only = false;
    r.bytes.clear();
    r.sha_bytes.clear();
    return index;
}

void cluster_master::release_request(std::size_t index) noexcept
{
    auto& r = requests_[index];
    r.live = false;
    r.queued = false;
    r.held = false;
    r.sink = nullptr;
    ++r.use;
    free_requests_.push_back(index);
}

error_code cluster_master::route(std::size_t index, request_ticket& ticket)
{
    auto& r = requests_[index];
    ticket.seq = (std::uint64_t{r.use} << 32) | index;
    error_code ec;
    if (state_ == map_state::closed)
    {
        last_error_detail_ = cfg_.to_string() + ": closed";
        ec = error::connection_closed;
        // A release that close() itself caused (an attempt fails once a majority of its masters
        // closed, after this one) still goes to the node serving its key: while that node's
        // connection drains, it writes the command before its shutdown (node_connection::close).
        if (map_)
            if (const auto shard = map_->shard_of(r.slot))
                (void)send_to(index, node_of_shard_[*shard], false);
    }
    else if (!map_ && state_ == map_state::connecting)
    {
        // Sent once the first map is known.
        r.queued = true;
        queued_.push_back(index);
        return {};
    }
    else if (!map_)
    {
        ec = error::not_connected;  // last_error_detail_ says why the seeds gave no map
    }
    else if (const auto shard = map_->shard_of(r.slot))
    {
        // A node that cannot be reached may have been replaced (a failover): read the map again.
        ec = send_to(index, node_of_shard_[*shard], false);
        if (ec)
            request_refresh();
    }
    else
    {
        last_error_detail_ =
            cfg_.to_string() + ": slot " + std::to_string(r.slot) + " is served by no node";
        ec = error::not_connected;
        request_refresh();
    }
    if (ec)
        release_request(index);
    return ec;
}

error_code cluster_master::send_to(std::size_t index, std::size_t node, bool asking)
{
    auto& conn = *nodes_[node].conn;
    auto& r = requests_[index];
    error_code ec;
    if (r.mode == request_mode::tracked_read)
        ec = ensure_tracking(node);
    // ASKING, and CLIENT CACHING, apply to the next command on the connection: each leaves
    // with its command (an ASK of a tracked read is not followed: see on_reply).
    const std::string* prefix = asking                                 ? &asking_command()
                                : r.mode == request_mode::tracked_read ? &client_caching_command()
                                                                       : nullptr;
    if (!ec && prefix)
    {
        request_ticket ignored;
        ec = conn.submit(
            nullptr, 0, [&](std::string& out) { out.append(*prefix); }, ignored);
    }
    // A script the node has run over this connection goes as EVALSHA (see submit_script).
    const bool by_sha = r.script != no_script && !r.eval_only &&
                        nodes_[node].scripts.known(r.script, conn.generation());
    if (!ec)
        ec = conn.submit(
            this, static_cast<std::uint32_t>(index),
            [&](std::string& out) { out.append(by_sha ? r.sha_bytes : r.bytes); }, r.ticket);
    if (ec)
    {
        last_error_detail_ = conn.last_error_detail().empty()
                                 ? cfg_.to_string() + ": node " +
                                       node_name(nodes_[node].host, nodes_[node].port) +
                                       " is not connected"
                                 : conn.last_error_detail();
        return ec;
    }
    r.node = node;
    r.by_sha = by_sha;
    r.asking = asking;
    ++r.sending;
    if (r.mode == request_mode::replicated &&
        nodes_[node].acks.sent({static_cast<std::uint32_t>(index), r.sending}))
        // After whatever else this turn sends there: one WAIT covers them all.
        asio::post(ex_, [weak = weak_from_this(), node] {
            if (auto self = weak.lock())
                self->send_wait(node);
        });
    return {};
}

void cluster_master::abandon(request_ticket ticket) noexcept
{
    const auto index = static_cast<std::size_t>(ticket.seq & 0xffffffffu);
    const auto use = static_cast<std::uint32_t>(ticket.seq >> 32);
    if (index >= requests_.size())
        return;
    auto& r = requests_[index];
    if (!r.live || r.use != use)
        return;
    // As on a standalone connection, the command still runs (a round stops listening once its
    // quorum is decided; a release not awaited is abandoned as soon as it is queued): only its
    // answer is dropped. So it keeps following redirections, with nobody to tell at the end.
    r.sink = nullptr;
    ++r.use;  // the ticket is spent
}

void cluster_master::deliver(std::size_t index, const error_code& ec,
                             std::span<const resp::node_view> nodes)
{
    auto* sink = requests_[index].sink;
    const auto tag = requests_[index].tag;
    release_request(index);
    if (sink)
        sink->on_reply(tag, ec, nodes);
}

void cluster_master::fail(std::size_t index, const error_code& ec, std::string detail)
{
    last_error_detail_ = std::move(detail);
    deliver(index, ec, {});
}

void cluster_master::on_reply(std::uint32_t tag, const error_code& ec,
                              std::span<const resp::node_view> nodes)
{
    if (tag & map_bit)
        return on_map_reply(tag & ~kind_bits, ec, nodes);
    if (tag & wait_bit)
        return on_wait_reply(tag & ~kind_bits, ec, nodes);
    if (tag & tracking_bit)
        return on_tracking_reply(ec, nodes);
    const std::size_t index = tag;
    auto& r = requests_[index];
    const auto& from = nodes_[r.node];
    if (ec)
    {
        request_refresh();  // the node dropped: it may have been replaced (a failover)
        return fail(index, ec, from.conn->last_error_detail());
    }
    read_at_ = from.conn->read_time();
    if (r.script != no_script && on_script_reply(index, nodes[0]))
        return;
    const auto decision = route_reply(nodes[0], from.host, r.hops);
    if (decision.refresh)
        request_refresh();
    // An ASK of a tracked read is not followed (see the class comment): its reader does
    // without tracking.
    const bool follow = decision.follow && !(decision.follow->kind == redirect_kind::ask &&
                                             r.mode == request_mode::tracked_read);
    if (!follow)
    {
        if (r.mode == request_mode::replicated && !resp::is_error(nodes[0].data_type))
            return hold(index, nodes);
        return deliver(index, ec, nodes);
    }
    ++r.hops;
    const auto& to = decision.follow->to;
    std::size_t target = 0;
    if (decision.follow->kind == redirect_kind::moved)
    {
        const auto shard = map_->moved(r.slot, to);
        if (!shard)
            return deliver(index, ec, nodes);  // the map is past repair: the refresh mends it
        extend_node_of_shard();
        target = node_of_shard_[*shard];
    }
    else
    {
        target = node_at(to.host, to.port);
    }
    if (const auto e = send_to(index, target, decision.follow->kind == redirect_kind::ask))
        fail(index, e, last_error_detail_);
}

// ---- Scripts (submit_script) ----------------------------------------------------------------

bool cluster_master::on_script_reply(std::size_t index, const resp::node_view& head)
{
    auto& r = requests_[index];
    auto& node = nodes_[r.node];
    const auto gen = node.conn->generation();
    if (!resp::is_error(head.data_type))
    {
        node.scripts.note(r.script, true, gen);  // it ran there
        return false;
    }
    if (!r.by_sha || error_from_server_reply(head.value) != error::noscript)
        return false;
    // The node lost the script (a restart, SCRIPT FLUSH, a promoted replica): the body goes
    // to the same node, behind ASKING again if the EVALSHA was, owner listening or not.
    node.scripts.note(r.script, false, gen);
    r.eval_only = true;
    if (const auto ec = send_to(index, r.node, r.asking))
        fail(index, ec, last_error_detail_);
    return true;
}

// ---- Replica acknowledgements (request_mode::replicated) -----------------------------------

void cluster_master::hold(std::size_t index, std::span<const resp::node_view> nodes)
{
    auto& r = requests_[index];
    r.held = true;
    r.answer.resize(nodes.size());
    for (std::size_t k = 0; k < nodes.size(); ++k)
    {
        auto& to = r.answer[k];
        to.data_type = nodes[k].data_type;
        to.depth = nodes[k].depth;
        to.size = nodes[k].size;
        to.value.assign(nodes[k].value);
    }
}

void cluster_master::send_wait(std::size_t node)
{
    auto& n = nodes_[node];
    n.acks.wait_queued();
    request_ticket ignored;
    const auto ec = n.conn->submit(
        this, wait_bit | static_cast<std::uint32_t>(node),
        [&](std::string& out) {
            resp::append_command(out, "WAIT", static_cast<std::int64_t>(acks_.replicas),
                                 static_cast<std::int64_t>(acks_.timeout.count()));
        },
        ignored);
    if (ec)
        on_wait_reply(node, ec, {});
}

void cluster_master::on_wait_reply(std::size_t node, const error_code& ec,
                                   std::span<const resp::node_view> nodes)
{
    const auto& n = nodes_[node];
    std::string why;
    error_code verdict = ec;
    if (!ec)
        verdict = read_wait_reply(nodes[0], acks_.replicas, why);
    else
        why = ec.message();
    const auto covered = nodes_[node].acks.wait_answered();
    if (!ec)
        read_at_ = n.conn->read_time();  // the answers it releases are known from now
    std::string detail;
    if (verdict)
        detail = cfg_.to_string() + ": node " + node_name(n.host, n.port) + ": " + why;
    for (const auto c : covered)
    {
        auto& r = requests_[c.index];
        // A command redirected elsewhere since (another sending), or failed with the
        // connection (no longer live), is not this WAIT's to settle.
        if (!r.live || r.sending != c.sending || !r.held || r.node != node)
            continue;
        if (verdict)
        {
            fail(c.index, verdict, detail);
            continue;
        }
        // Out of the table first: the owner may send (and grow the table) as it reads.
        const auto answer = std::move(r.answer);
        r.answer.clear();
        std::vector<resp::node_view> views;
        views.reserve(answer.size());
        for (const auto& a : answer)
            views.push_back(resp::node_view{a.data_type, a.depth, a.size, a.value});
        deliver(c.index, {}, views);
    }
}

// ---- Client tracking (request_mode::tracked_read) --------------------------------------------

error_code cluster_master::ensure_tracking(std::size_t node)
{
    auto& n = nodes_[node];
    const auto gen = n.conn->generation();
    if (n.tracking_asked && n.tracking_gen == gen)
        return {};
    request_ticket ignored;
    auto ec = n.conn->submit(
        this, tracking_bit, [](std::string& out) { resp::append_command(out, "HELLO", "3"); },
        ignored);
    if (!ec)
        ec = n.conn->submit(
            this, tracking_bit,
            [](std::string& out) {
                resp::append_command(out, "CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP");
            },
            ignored);
    if (!ec)
    {
        n.tracking_asked = true;
        n.tracking_gen = gen;
    }
    return ec;
}

void cluster_master::on_tracking_reply(const error_code& ec, std::span<const resp::node_view> nodes)
{
    // A connection that failed reports itself (on_availability); a refusal (a server before
    // 6.0, an ACL rule) means no pushes will come from that node.
    if (ec || !resp::is_error(nodes[0].data_type) || tracking_refused_)
        return;
    tracking_refused_ = true;
    tracking_lost();
}

void cluster_master::tracking_lost()
{
    if (tracking_lost_fn_)
        asio::post(ex_, [weak = weak_from_this()] {
            if (auto self = weak.lock(); self && self->tracking_lost_fn_)
                self->tracking_lost_fn_();
        });
}

// ---- The slot map ---------------------------------------------------------------------------

std::size_t cluster_master::node_at(const std::string& host, std::uint16_t port)
{
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].port == port && nodes_[i].host == host)
            return i;
    master_config c = cfg_;
    c.host = host;
    c.port = port;
    c.cluster_seeds.clear();
    auto conn = std::make_shared<node_connection>(ex_, std::move(c), opts_);
    const auto n = nodes_.size();
    if (identity_fn_)
        conn->on_identity([weak = weak_from_this(), n](const server_identity& id) {
            if (auto self = weak.lock())
                self->identity_fn_(n, id);
        });
    if (push_fn_)
        conn->on_push([weak = weak_from_this()](const resp::reply& push) {
            if (auto self = weak.lock())
                self->push_fn_(push);
        });
    conn->on_availability([weak = weak_from_this(), n](bool up, error_code) {
        auto self = weak.lock();
        if (!self || up)
            return;
        // The drop took the connection's client tracking with it.
        auto& node = self->nodes_[n];
        if (node.tracking_asked)
        {
            node.tracking_asked = false;
            self->tracking_lost();
        }
    });
    if (deployment_fn_)
        conn->on_deployment_warnings([weak = weak_from_this()](deployment_warnings added) {
            auto self = weak.lock();
            if (!self)
                return;
            // Each warning once per cluster master, whichever node shows it first.
            const auto w = for_cluster(added).new_since(self->warned_);
            if (w.empty())
                return;
            for (const auto& ec : w.codes())
                self->warned_.add(static_cast<error>(ec.value()));
            self->deployment_fn_(w);
        });
    {
        const std::lock_guard<std::mutex> guard(nodes_mutex_);
        node_entry entry;
        entry.host = host;
        entry.port = port;
        entry.conn = conn;
        nodes_.push_back(std::move(entry));
    }
    if (state_ != map_state::closed)
        conn->start();
    return n;
}

void cluster_master::fetch_map()
{
    if (fetching_ || state_ == map_state::closed)
        return;
    std::size_t node = 0;
    if (map_ && !node_of_shard_.empty())
    {
        // Any primary knows the map: ask them in turn, a ready one first.
        for (std::size_t k = 0; k < node_of_shard_.size(); ++k)
        {
            node = node_of_shard_[(next_node_ + k) % node_of_shard_.size()];
            if (nodes_[node].conn->current_state() == node_connection::state::ready)
                break;
        }
        ++next_node_;
    }
    else
    {
        const auto& seed = cfg_.cluster_seeds[next_seed_ % cfg_.cluster_seeds.size()];
        node = node_at(seed.host, seed.port);
    }
    fetching_ = true;
    last_fetch_ = clock::now();
    request_ticket ignored;
    const auto ec = nodes_[node].conn->submit(
        this, map_bit | static_cast<std::uint32_t>(node),
        [](std::string& out) { out.append(cluster_slots_command()); }, ignored);
    if (ec)
        on_map_reply(node, ec, {});
}

void cluster_master::request_refresh()
{
    if (!map_ || fetching_ || refresh_armed_ || state_ == map_state::closed)
        return;
    const auto due = last_fetch_ + refresh_interval;
    if (clock::now() >= due)
        return fetch_map();
    refresh_armed_ = true;
    refresh_timer_.expires_at(due);
    refresh_timer_.async_wait([weak = weak_from_this()](const error_code& ec) {
        auto self = weak.lock();
        if (!self)
            return;
        self->refresh_armed_ = false;
        if (!ec)
            self->fetch_map();
    });
}

void cluster_master::on_map_reply(std::size_t node, const error_code& ec,
                                  std::span<const resp::node_view> nodes)
{
    fetching_ = false;
    if (state_ == map_state::closed)
        return;
    const auto& from = nodes_[node];
    const auto name = node_name(from.host, from.port);
    error_code why = ec;
    std::string detail;
    if (ec)
    {
        detail = from.conn->last_error_detail().empty()
                     ? cfg_.to_string() + ": node " + name + ": " + ec.message()
                     : from.conn->last_error_detail();
    }
    else if (resp::is_error(nodes[0].data_type))
    {
        why = error_from_server_reply(nodes[0].value);
        detail = cfg_.to_string() + ": node " + name +
                 " refused CLUSTER SLOTS: " + std::string(nodes[0].value);
    }
    else
    {
        auto parsed = slot_map::parse(nodes, from.host);
        if (parsed)
            return adopt_map(std::move(*parsed.map));
        why = error::unexpected_reply;
        detail = cfg_.to_string() + ": node " + name +
                 " sent an unreadable CLUSTER SLOTS reply: " + parsed.error;
    }
    if (map_)
        return;  // the map known so far stays; a later redirection asks again
    ++next_seed_;
    if (++seeds_tried_ < cfg_.cluster_seeds.size())
        return fetch_map();
    map_failed(why, std::move(detail));
}

void cluster_master::extend_node_of_shard()
{
    while (node_of_shard_.size() < map_->shards())
    {
        const auto& shard = map_->shard(node_of_shard_.size());
        node_of_shard_.push_back(node_at(shard.host, shard.port));
    }
}

void cluster_master::adopt_map(slot_map map)
{
    map_ = std::move(map);
    node_of_shard_.clear();
    extend_node_of_shard();
    seeds_tried_ = 0;
    retry_delay_ = std::chrono::milliseconds(0);
    if (state_ == map_state::ready)
        return;
    set_map_state(map_state::ready);
    last_error_ = {};
    send_queued();
    if (!settled_)
        settle_when_nodes_settle();
    if (availability_)
        asio::post(ex_, [weak = weak_from_this()] {
            if (auto self = weak.lock(); self && self->availability_)
                self->availability_(true, {});
        });
}

void cluster_master::map_failed(const error_code& ec, std::string detail)
{
    last_error_ = ec;
    last_error_detail_ = std::move(detail);
    set_map_state(map_state::down);
    auto queued = std::move(queued_);
    queued_.clear();
    for (const auto index : queued)
        if (requests_[index].live && requests_[index].queued)
            fail(index, ec, last_error_detail_);
    if (!settled_)
    {
        settled_ = true;
        auto waiters = std::move(settle_waiters_);
        settle_waiters_.clear();
        for (auto& w : waiters)
            asio::post(ex_, [w = std::move(w), ec] { w(ec); });
    }
    if (availability_)
        asio::post(ex_, [weak = weak_from_this(), ec] {
            if (auto self = weak.lock(); self && self->availability_)
                self->availability_(false, ec);
        });
    // Every seed again, after a delay that doubles up to the connections' longest.
    retry_delay_ =
        std::clamp(retry_delay_ * 2, opts_.reconnect_min_delay, opts_.reconnect_max_delay);
    seeds_tried_ = 0;
    refresh_armed_ = true;
    refresh_timer_.expires_after(retry_delay_);
    refresh_timer_.async_wait([weak = weak_from_this()](const error_code& e) {
        auto self = weak.lock();
        if (!self)
            return;
        self->refresh_armed_ = false;
        if (e || self->state_ != map_state::down)
            return;
        self->set_map_state(map_state::connecting);
        self->fetch_map();
    });
}

void cluster_master::send_queued()
{
    auto queued = std::move(queued_);
    queued_.clear();
    for (const auto index : queued)
    {
        auto& r = requests_[index];
        if (!r.live || !r.queued)
            continue;
        r.queued = false;
        const auto shard = map_->shard_of(r.slot);
        if (!shard)
            fail(index, error::not_connected,
                 cfg_.to_string() + ": slot " + std::to_string(r.slot) + " is served by no node");
        else if (const auto ec = send_to(index, node_of_shard_[*shard], false))
            fail(index, ec, last_error_detail_);
    }
}

void cluster_master::settle_when_nodes_settle()
{
    auto shards = node_of_shard_;
    std::sort(shards.begin(), shards.end());
    shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
    struct progress
    {
        std::size_t left = 0;
        error_code first;
    };
    auto p = std::make_shared<progress>();
    p->left = shards.size();
    const auto done = [weak = weak_from_this()](const error_code& ec) {
        auto self = weak.lock();
        if (!self || self->settled_)
            return;
        self->settled_ = true;
        auto waiters = std::move(self->settle_waiters_);
        self->settle_waiters_.clear();
        for (auto& w : waiters)
            w(ec);
    };
    if (shards.empty())
        return asio::post(ex_, [done] { done({}); });
    for (const auto n : shards)
        nodes_[n].conn->wait_settled([p, done](error_code ec) {
            if (ec && !p->first)
                p->first = ec;
            if (--p->left == 0)
                done(p->first);
        });
}

void cluster_master::wait_settled(std::function<void(error_code)> fn)
{
    if (!settled_)
    {
        settle_waiters_.push_back(std::move(fn));
        return;
    }
    const error_code ec = state_ == map_state::closed ? error_code(error::connection_closed)
                          : map_                      ? error_code()
                                                      : last_error_;
    asio::post(ex_, [fn = std::move(fn), ec] { fn(ec); });
}

void cluster_master::abandon_waiters() noexcept
{
    settle_waiters_.clear();
    for (auto& n : nodes_)
        n.conn->abandon_waiters();
}

void cluster_master::set_map_state(map_state s)
{
    state_ = s;
    published_state_.store(s, std::memory_order_relaxed);
}

// ---- What the client reads ------------------------------------------------------------------

void cluster_master::append_connections(std::vector<std::shared_ptr<node_connection>>& out) const
{
    for (const auto& n : nodes_)
        out.push_back(n.conn);
}

master_info cluster_master::info() const
{
    master_info m;
    m.endpoint = cfg_.to_string();
    switch (published_state_.load(std::memory_order_relaxed))
    {
    case map_state::connecting: m.state = master_state::connecting; break;
    case map_state::ready: m.state = master_state::ready; break;
    case map_state::down: m.state = master_state::down; break;
    case map_state::closed: m.state = master_state::closed; break;
    }
    deployment_warnings warnings;
    const std::lock_guard<std::mutex> guard(nodes_mutex_);
    for (const auto& n : nodes_)
    {
        const auto ni = n.conn->info();
        m.requests += ni.requests;
        m.replies += ni.replies;
        m.connects += ni.connects;
        m.drops += ni.drops;
        if (!m.last_error && ni.last_error)
            m.last_error = ni.last_error;
        for (const auto& w : ni.warnings)
            if (applies_to_cluster(w))
                warnings.add(static_cast<error>(w.value()));
    }
    m.warnings = warnings.codes();
    return m;
}

}  // namespace redlock::detail
