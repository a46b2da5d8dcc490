// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's slot map: CLUSTER SLOTS sent where the router says, its replies and
// the refresh timer fed back to it; what a map known (or every seed failed) means for the
// commands waiting, wait_settled() and on_availability().
#include "routing/cluster_master.hpp"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

#include "protocol/resp_encoder.hpp"
#include "routing/cluster_master_tags.hpp"

namespace redlock::detail {

namespace {

const std::string& cluster_slots_command()
{
    static const std::string bytes = [] {
        std::string out;
        resp::append_command(out, "CLUSTER", "SLOTS");
        return out;
    }();
    return bytes;
}

}  // namespace

void cluster_master::run(const cluster_router::map_step& m)
{
    using kind = cluster_router::map_step::kind;
    if (m.what == kind::arm)
    {
        refresh_timer_.expires_at(m.at);
        refresh_timer_.async_wait([weak = weak_from_this()](const error_code& ec) {
            auto self = weak.lock();
            if (!self || ec)
                return;
            const auto next = self->router_.on_timer(std::chrono::steady_clock::now());
            self->sync_router();
            self->run(next);
        });
        return;
    }
    if (m.what != kind::fetch)
        return;
    // The first node asked whose connection is ready, else the last.
    std::size_t node = m.ask.back();
    for (const auto n : m.ask)
        if (nodes_[n].conn->current_state() == node_connection::state::ready)
        {
            node = n;
            break;
        }
    request_ticket ignored;
    const auto ec = nodes_[node].conn->submit(
        this, cluster_tag::map_bit | static_cast<std::uint32_t>(node),
        [](std::string& out) { out.append(cluster_slots_command()); }, ignored);
    if (ec)
        on_map_reply(node, ec, {});
}

void cluster_master::on_map_reply(std::size_t node, const error_code& ec,
                                  std::span<const resp::node_view> nodes)
{
    auto d = router_.on_map_reply(node, ec, ec ? nodes_[node].conn->last_error_detail() : "", nodes,
                                  std::chrono::steady_clock::now());
    sync_router();
    apply(std::move(d));
}

void cluster_master::apply(cluster_router::map_decision d)
{
    using change = cluster_router::map_decision::change;
    if (d.news == change::down)
        last_error_detail_ = d.detail;
    for (const auto& s : d.commands)
        carry_out(s, {});
    if (d.news == change::up && !settled_)
        settle_when_nodes_settle();
    else if (d.news == change::down)
        settle(d.ec, true);
    if (d.news != change::none && availability_)
        asio::post(ex_, [weak = weak_from_this(), up = d.news == change::up, ec = d.ec] {
            if (auto self = weak.lock(); self && self->availability_)
                self->availability_(up, ec);
        });
    run(d.next);
}

void cluster_master::settle(const error_code& ec, bool posted)
{
    if (settled_)
        return;
    settled_ = true;
    auto waiters = std::move(settle_waiters_);
    settle_waiters_.clear();
    for (auto& w : waiters)
        if (posted)
            asio::post(ex_, [w = std::move(w), ec] { w(ec); });
        else
            w(ec);
}

void cluster_master::settle_when_nodes_settle()
{
    auto shards = router_.primaries();
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
        if (auto self = weak.lock())
            self->settle(ec, false);
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
    const error_code ec = router_.state() == map_state::closed
                              ? error_code(error::connection_closed)
                          : router_.has_map() ? error_code()
                                              : router_.last_error();
    asio::post(ex_, [fn = std::move(fn), ec] { fn(ec); });
}

void cluster_master::abandon_waiters() noexcept
{
    settle_waiters_.clear();
    for (auto& n : nodes_)
        n.conn->abandon_waiters();
}

}  // namespace redlock::detail
