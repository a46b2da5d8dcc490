// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's client tracking (request_mode::tracked_read): `HELLO 3` and
// `CLIENT TRACKING on OPTIN NOLOOP` once per node connection, and the news that tracked keys
// may have changed unseen (a refusal, a drop).
#include "routing/cluster_master.hpp"

#include <boost/asio/post.hpp>

#include "protocol/resp_encoder.hpp"
#include "routing/cluster_master_tags.hpp"

namespace redlock::detail {

error_code cluster_master::ensure_tracking(std::size_t node)
{
    auto& n = nodes_[node];
    const auto gen = n.conn->generation();
    if (n.tracking_asked && n.tracking_gen == gen)
        return {};
    request_ticket ignored;
    auto ec = n.conn->submit(
        this, cluster_tag::tracking_bit,
        [](std::string& out) { resp::append_command(out, "HELLO", "3"); }, ignored);
    if (!ec)
        ec = n.conn->submit(
            this, cluster_tag::tracking_bit,
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

}  // namespace redlock::detail
