// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The cluster master's replica acknowledgements (request_mode::replicated): the answer of a
// write is held, a WAIT is sent after each turn's writes to a node, and the router says what
// its reply settles.
#include "routing/cluster_master.hpp"

#include <utility>

#include "protocol/resp_encoder.hpp"
#include "routing/cluster_master_tags.hpp"

namespace redlock::detail {

void cluster_master::hold(std::size_t index, std::span<const resp::node_view> nodes)
{
    auto& answer = requests_[index].answer;
    answer.resize(nodes.size());
    for (std::size_t k = 0; k < nodes.size(); ++k)
    {
        auto& to = answer[k];
        to.data_type = nodes[k].data_type;
        to.depth = nodes[k].depth;
        to.size = nodes[k].size;
        to.value.assign(nodes[k].value);
    }
}

void cluster_master::send_wait(std::size_t node)
{
    router_.wait_queued(node);
    request_ticket ignored;
    const auto ec = nodes_[node].conn->submit(
        this, cluster_tag::wait_bit | static_cast<std::uint32_t>(node),
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
    const auto settled = router_.on_wait_reply(node, ec, ec ? nullptr : &nodes[0]);
    if (!ec)
        read_at_ = nodes_[node].conn->read_time();  // the answers it releases are known from now
    for (const auto& s : settled)
    {
        // An owner told before may have closed the master, which failed this one already.
        if (!router_.at(s.index).live || !router_.at(s.index).held)
            continue;
        if (s.what == cluster_router::step::kind::fail)
        {
            fail(s.index, s.ec, s.detail);
            continue;
        }
        // Out of the table first: the owner may send (and grow the table) as it reads.
        const auto answer = std::move(requests_[s.index].answer);
        requests_[s.index].answer.clear();
        std::vector<resp::node_view> views;
        views.reserve(answer.size());
        for (const auto& a : answer)
            views.push_back(resp::node_view{a.data_type, a.depth, a.size, a.value});
        deliver(s.index, {}, views);
    }
}

}  // namespace redlock::detail
