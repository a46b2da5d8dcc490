// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's commands: each goes where cluster_router says, and its replies go
// back to the router, whose decision this carries out (deliver, resend, hold for a WAIT).
#include "routing/cluster_master.hpp"

#include <utility>

#include <boost/asio/post.hpp>

#include "protocol/resp_encoder.hpp"
#include "routing/cluster_master_tags.hpp"

namespace redlock::detail {

namespace {

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

cluster_router::options router_options(const master_config& cfg, const connection_options& opts,
                                       const cluster_master::write_acks& acks)
{
    cluster_router::options o;
    o.name = cfg.to_string();
    for (const auto& seed : cfg.cluster_seeds)
        o.seeds.push_back({seed.host, seed.port, {}});
    o.replicas = acks.replicas;
    o.refresh_interval = cluster_master::refresh_interval;
    // The seeds are asked again after a delay that doubles up to the connections' longest.
    o.retry_min = opts.reconnect_min_delay;
    o.retry_max = opts.reconnect_max_delay;
    return o;
}

}  // namespace

cluster_master::cluster_master(asio::any_io_executor ex, master_config cfg, connection_options opts,
                               write_acks acks)
    : ex_(std::move(ex)),
      cfg_(std::move(cfg)),
      opts_(std::move(opts)),
      acks_(acks),
      router_(router_options(cfg_, opts_, acks_)),
      refresh_timer_(ex_)
{}

cluster_master::~cluster_master() = default;

void cluster_master::start()
{
    const auto m = router_.start(std::chrono::steady_clock::now());
    sync_router();
    run(m);
}

void cluster_master::close()
{
    if (router_.state() == map_state::closed)
        return;
    const auto waiting = router_.close();
    sync_router();
    refresh_timer_.cancel();
    for (auto& n : nodes_)
        n.conn->close();
    last_error_detail_ = cfg_.to_string() + ": closed";
    for (const auto& s : waiting)
        carry_out(s, {});
    settle(error::connection_closed, true);
}

// ---- Commands -------------------------------------------------------------------------------

std::size_t cluster_master::take_request(reply_sink* sink, std::uint32_t tag, std::uint16_t slot,
                                         request_mode mode, unsigned script)
{
    const auto index = router_.take(slot, mode, script);
    if (index >= requests_.size())
        requests_.resize(router_.capacity());
    auto& r = requests_[index];
    r.sink = sink;
    r.tag = tag;
    r.bytes.clear();
    r.sha_bytes.clear();
    return index;
}

error_code cluster_master::route(std::size_t index, request_ticket& ticket)
{
    ticket.seq = router_.ticket(index);
    const auto d = router_.route(index, std::chrono::steady_clock::now());
    sync_router();
    run(d.map);
    const auto& s = d.command;
    using kind = cluster_router::step::kind;
    if (s.what == kind::queued)
        return {};
    error_code ec;
    if (s.what == kind::send)
    {
        ec = send_to(index, *s.node, s.asking);
        if (!ec)
            return {};
        const auto m = router_.route_refused(std::chrono::steady_clock::now());
        sync_router();
        run(m);
    }
    else
    {
        ec = s.ec;
        if (s.source == cluster_router::detail_from::given)
            last_error_detail_ = s.detail;
        if (s.node)
            (void)send_to(index, *s.node, false);
    }
    router_.release(index);
    requests_[index].sink = nullptr;
    return ec;
}

error_code cluster_master::send_to(std::size_t index, std::size_t node, bool asking)
{
    auto& n = nodes_[node];
    auto& conn = *n.conn;
    auto& r = requests_[index];
    const auto& routed = router_.at(index);
    error_code ec;
    if (routed.mode == request_mode::tracked_read)
        ec = ensure_tracking(node);
    // ASKING, and CLIENT CACHING, apply to the next command on the connection: each leaves
    // with its command (an ASK of a tracked read is not followed: see cluster_router).
    const std::string* prefix = asking ? &asking_command()
                                : routed.mode == request_mode::tracked_read
                                    ? &client_caching_command()
                                    : nullptr;
    if (!ec && prefix)
    {
        request_ticket ignored;
        ec = conn.submit(
            nullptr, 0, [&](std::string& out) { out.append(*prefix); }, ignored);
    }
    // A script the node has run over this connection goes as EVALSHA (see submit_script).
    const bool by_sha = routed.script != cluster_router::no_script && !routed.eval_only &&
                        n.scripts.known(routed.script, conn.generation());
    if (!ec)
        ec = conn.submit(
            this, static_cast<std::uint32_t>(index),
            [&](std::string& out) { out.append(by_sha ? r.sha_bytes : r.bytes); }, r.ticket);
    if (ec)
    {
        last_error_detail_ =
            conn.last_error_detail().empty()
                ? cfg_.to_string() + ": node " + node_name(n.host, n.port) + " is not connected"
                : conn.last_error_detail();
        return ec;
    }
    if (router_.sent(index, node, asking, by_sha))
        // After whatever else this turn sends there: one WAIT covers them all.
        asio::post(ex_, [weak = weak_from_this(), node] {
            if (auto self = weak.lock())
                self->send_wait(node);
        });
    return {};
}

void cluster_master::abandon(request_ticket ticket) noexcept
{
    // As on a standalone connection, the command still runs (a round stops listening once its
    // quorum is decided; a release not awaited is abandoned as soon as it is queued): only its
    // answer is dropped. So it keeps following redirections, with nobody to tell at the end.
    if (const auto index = router_.abandon(ticket.seq))
        requests_[*index].sink = nullptr;
}

void cluster_master::carry_out(const cluster_router::step& s,
                               std::span<const resp::node_view> nodes)
{
    using kind = cluster_router::step::kind;
    switch (s.what)
    {
    case kind::send:
        if (const auto ec = send_to(s.index, *s.node, s.asking))
            fail(s.index, ec, last_error_detail_);
        break;
    case kind::hold: hold(s.index, nodes); break;
    case kind::deliver: deliver(s.index, {}, nodes); break;
    case kind::fail:
        if (s.source == cluster_router::detail_from::node)
            fail(s.index, s.ec, nodes_[*s.node].conn->last_error_detail());
        else if (s.source == cluster_router::detail_from::given)
            fail(s.index, s.ec, s.detail);
        else
            deliver(s.index, s.ec, {});
        break;
    case kind::none:
    case kind::queued:
    case kind::refuse: break;  // route() carries out the refusals
    }
}

void cluster_master::deliver(std::size_t index, const error_code& ec,
                             std::span<const resp::node_view> nodes)
{
    auto* sink = requests_[index].sink;
    const auto tag = requests_[index].tag;
    requests_[index].sink = nullptr;
    router_.release(index);
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
    if (tag & cluster_tag::map_bit)
        return on_map_reply(tag & ~cluster_tag::kind_bits, ec, nodes);
    if (tag & cluster_tag::wait_bit)
        return on_wait_reply(tag & ~cluster_tag::kind_bits, ec, nodes);
    if (tag & cluster_tag::tracking_bit)
        return on_tracking_reply(ec, nodes);
    const std::size_t index = tag;
    const auto node = router_.at(index).node;
    const auto script = router_.at(index).script;
    if (!ec)
        read_at_ = nodes_[node].conn->read_time();
    const auto d =
        router_.on_reply(index, ec, ec ? nullptr : &nodes[0], std::chrono::steady_clock::now());
    sync_router();  // may reach new nodes: no reference into nodes_ is held across it
    using news = cluster_router::decision::script_news;
    if (d.script != news::none)
    {
        auto& from = nodes_[node];
        from.scripts.note(script, d.script == news::ran, from.conn->generation());
    }
    run(d.map);
    carry_out(d.command, nodes);
}

}  // namespace redlock::detail
