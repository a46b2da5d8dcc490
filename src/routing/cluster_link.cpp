// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// A Redis Cluster as one Redlock master: each command routed by its key's hash slot
// (cluster_master).
#include <utility>

#include "routing/cluster_master.hpp"
#include "routing/forwarding_link.hpp"
#include "routing/key_slot.hpp"
#include "routing/make_link.hpp"

namespace redlock::detail {

namespace {

class cluster_link final : public forwarding_link<cluster_master>
{
public:
    explicit cluster_link(std::shared_ptr<cluster_master> target)
        : forwarding_link(std::move(target), true)
    {}

    error_code submit(reply_sink* sink, std::uint32_t tag, std::string_view key, encoder encode,
                      request_ticket& ticket, request_mode mode, bool) override
    {
        return target_->submit(sink, tag, key_slot(key), encode, ticket, mode);
    }
    error_code submit_script(reply_sink* sink, std::uint32_t tag, std::string_view key,
                             unsigned script, script_encoder encode, request_ticket& ticket,
                             request_mode mode) override
    {
        return target_->submit_script(sink, tag, key_slot(key), script, encode, ticket, mode);
    }
    // A redirection would need us to send the command again.
    bool written(request_ticket) const noexcept override { return false; }
    // A cluster master does not cache scripts here, and keeps its nodes' tracking itself.
    std::uint64_t generation() const noexcept override { return 0; }
    bool tracks_keys() const noexcept override { return !target_->tracking_refused(); }
    void on_identity(std::function<void(std::size_t, const server_identity&)> fn) override
    {
        target_->on_identity(std::move(fn));
    }
    void on_tracking_lost(std::function<void()> fn) override
    {
        target_->on_tracking_lost(std::move(fn));
    }
    void append_connections(std::vector<std::shared_ptr<node_connection>>& out) const override
    {
        target_->append_connections(out);
    }
};

}  // namespace

std::unique_ptr<master_link> make_cluster_link(std::shared_ptr<cluster_master> cluster)
{
    return std::make_unique<cluster_link>(std::move(cluster));
}

}  // namespace redlock::detail
