// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ROUTING_FORWARDING_LINK_HPP
#define REDLOCK_SRC_ROUTING_FORWARDING_LINK_HPP

#include <memory>
#include <utility>

#include "routing/master_link.hpp"

namespace redlock::detail {

/// @brief The part of a master_link that both kinds of master pass on unchanged to what
/// reaches them (a node_connection, a cluster_master). Included by the two implementations
/// only (standalone_link.cpp, cluster_link.cpp), where `Target` is complete.
template <class Target>
class forwarding_link : public master_link
{
public:
    forwarding_link(std::shared_ptr<Target> target, bool cluster,
                    node_connection* standalone = nullptr)
        : master_link(cluster, standalone),
          target_(std::move(target))
    {}

    void abandon(request_ticket ticket) noexcept override { target_->abandon(ticket); }
    time_point read_time() const noexcept override { return target_->read_time(); }
    const std::string& last_error_detail() const noexcept override
    {
        return target_->last_error_detail();
    }
    master_info info() const override { return target_->info(); }
    void start() override { target_->start(); }
    void close() override { target_->close(); }
    void wait_settled(std::function<void(error_code)> fn) override
    {
        target_->wait_settled(std::move(fn));
    }
    void abandon_waiters() noexcept override { target_->abandon_waiters(); }
    void on_availability(std::function<void(bool up, error_code ec)> fn) override
    {
        target_->on_availability(std::move(fn));
    }
    void on_deployment_warnings(std::function<void(deployment_warnings)> fn) override
    {
        target_->on_deployment_warnings(std::move(fn));
    }
    void on_push(std::function<void(const resp::reply&)> fn) override
    {
        target_->on_push(std::move(fn));
    }

protected:
    std::shared_ptr<Target> target_;
};

}  // namespace redlock::detail

#endif
