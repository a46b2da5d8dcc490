// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLIENT_IMPL_HPP
#define REDLOCK_SRC_CLIENT_IMPL_HPP

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include <redlock/client.hpp>
#include <redlock/options.hpp>

#include "algorithm/backoff.hpp"
#include "algorithm/restart_watch.hpp"
#include "algorithm/token.hpp"
#include "driver/round_context.hpp"
#include "runtime/op_registry.hpp"

namespace redlock::detail {

class client_impl;

/// The shared state of a client: what its rounds use (round_context: its strand, its masters,
/// the deadline list, the waiting room), its configuration, the token source and the
/// operations in flight. Operations hold a shared_ptr to it; everything runs on `strand`.
class client_impl : public std::enable_shared_from_this<client_impl>,
                    public shutdown_participant,
                    public round_context
{
public:
    client_impl(asio::any_io_executor ex, client_config cfg, std::vector<master_config> configs);
    ~client_impl();

    void start();
    void close();

    /// `op` keeps itself alive through `self` until untrack(op) (op_registry.hpp). On the strand.
    void track(tracked_op& op, std::shared_ptr<void> self) noexcept
    {
        ops_.track(op, std::move(self));
    }
    /// Drops the self-reference taken by track(): `op` (and this client) may be destroyed by
    /// the time it returns. On the strand.
    void untrack(tracked_op& op) noexcept { ops_.untrack(op); }
    /// The execution context is shutting down (shutdown_registry): every tracked operation is
    /// abandoned and let go, the client is closed for new operations, and what the connections
    /// sent is delivered.
    void on_shutdown() noexcept override;
    std::shared_ptr<void> keep_alive() noexcept override { return weak_from_this().lock(); }

    /// Whether anyone listens to events (client_config::on_event).
    bool observed() const noexcept { return static_cast<bool>(cfg.on_event); }
    /// A lock event about `resource`, held by `identity` (see report(event)).
    void report(event_kind kind, std::string_view resource, error_code ec = {},
                std::string_view identity = {}) const
    {
        report_with(kind, ec, [&](event& e) {
            e.resource = resource;
            e.identity = identity;
        });
    }
    /// An event about master `i` (master_up, master_down, master_warning).
    void report_master(event_kind kind, std::size_t i, error_code ec = {}) const
    {
        report_with(kind, ec, [&](event& e) {
            e.master = i;
            if (kind == event_kind::master_down)
                e.detail = masters[i]->last_error_detail();
        });
    }
    /// An event of `kind` with `ec`, the rest filled in by `fill(event&)`; made only when
    /// someone listens.
    template <class Fill>
    void report_with(event_kind kind, error_code ec, Fill fill) const
    {
        if (!cfg.on_event)
            return;
        event e;
        e.kind = kind;
        e.ec = ec;
        fill(e);
        report(e);
    }
    /// Tells client_config::on_event, if set; `e.masters` is filled in here.
    void report(event e) const
    {
        if (!cfg.on_event)
            return;
        e.masters = masters.size();
        cfg.on_event(e);
    }

    /// The quarantine length now: client_config::restart_quarantine, or when negative the
    /// longest TTL used so far (note_ttl).
    std::chrono::milliseconds restart_quarantine() const noexcept
    {
        return cfg.restart_quarantine.count() < 0 ? longest_ttl_ : cfg.restart_quarantine;
    }
    /// An operation sets or extends keys with `ttl`: the automatic quarantine covers it.
    void note_ttl(std::chrono::milliseconds ttl) noexcept
    {
        longest_ttl_ = std::max(longest_ttl_, ttl);
    }

    client_config cfg;
    token_source tokens;
    xoshiro256ss jitter_rng{random_seed()};  // seeds each acquisition's retry schedule

private:
    std::chrono::milliseconds longest_ttl_;
    shutdown_registry* registry_;  // of the execution context
    op_list ops_;                  // the operations in flight
};

/// The library's way into a client (the public class names it as a friend).
struct client_access
{
    static const std::shared_ptr<client_impl>& impl(const client& c) noexcept { return c.impl_; }
};

}  // namespace redlock::detail

#endif
