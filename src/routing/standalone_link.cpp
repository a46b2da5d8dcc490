// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// A standalone Redis as a Redlock master: every command on its one node_connection.
#include <utility>

#include "routing/forwarding_link.hpp"
#include "routing/make_link.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

namespace {

class standalone_link final : public forwarding_link<node_connection>
{
public:
    explicit standalone_link(std::shared_ptr<node_connection> target)
        : forwarding_link(target, false, target.get())
    {}

    error_code submit(reply_sink* sink, std::uint32_t tag, std::string_view, encoder encode,
                      request_ticket& ticket, request_mode, bool lazy) override
    {
        return target_->submit(sink, tag, encode, ticket, lazy);
    }
    // A standalone master's scripts go as its rounds encode them (submit), never through
    // here; should one come, its body goes along.
    error_code submit_script(reply_sink* sink, std::uint32_t tag, std::string_view, unsigned,
                             script_encoder encode, request_ticket& ticket, request_mode) override
    {
        return target_->submit(
            sink, tag, [&](std::string& out) { encode(out, true); }, ticket);
    }
    bool written(request_ticket ticket) const noexcept override { return target_->written(ticket); }
    std::uint64_t generation() const noexcept override { return target_->generation(); }
    // The watch learns of a refusal over the connection.
    bool tracks_keys() const noexcept override { return true; }
    void on_identity(std::function<void(std::size_t, const server_identity&)> fn) override
    {
        target_->on_identity([fn = std::move(fn)](const server_identity& id) { fn(0, id); });
    }
    // A drop says so through on_availability.
    void on_tracking_lost(std::function<void()>) override {}
    void append_connections(std::vector<std::shared_ptr<node_connection>>& out) const override
    {
        out.push_back(target_);
    }
};

}  // namespace

std::unique_ptr<master_link> make_standalone_link(std::shared_ptr<node_connection> node)
{
    return std::make_unique<standalone_link>(std::move(node));
}

}  // namespace redlock::detail
