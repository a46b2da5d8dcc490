// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_OP_CONTEXT_HPP
#define REDLOCK_SRC_DRIVER_OP_CONTEXT_HPP

#include <algorithm>
#include <chrono>
#include <memory>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include <redlock/events.hpp>
#include <redlock/options.hpp>

#include "algorithm/backoff.hpp"
#include "algorithm/token.hpp"
#include "driver/round_context.hpp"
#include "runtime/op_registry.hpp"

namespace redlock::detail {

/// @brief What an operation uses of its client, and nothing more: what its rounds use
/// (round_context: the strand, the masters, the deadline list, the waiting room), the
/// configuration, the token source, events, the restart quarantine's length, and the list of
/// operations in flight that keeps each alive until it lets go.
///
/// client_impl is one, over real connections (it adds their making, their callbacks and the
/// shutdown); a test makes one over scripted masters (test/unit/scripted_client.hpp) and drives
/// every operation without a socket. Operations hold a shared_ptr to it; everything runs on
/// `strand`.
class op_context : public round_context, public std::enable_shared_from_this<op_context>
{
public:
    op_context(asio::any_io_executor ex, client_config c)
        : round_context(std::move(ex)),
          cfg(std::move(c)),
          longest_ttl_(cfg.defaults.ttl)
    {}

    /// No new operation starts; the masters close (what they sent is still written); operations
    /// waiting for a deadline (a retry delay) complete now, with connection_closed.
    void close()
    {
        if (closed)
            return;
        closed = true;
        for (auto& m : masters)
            m->close();
        deadlines.expire_all();
    }

    /// `op` keeps itself alive through `self` until untrack(op) (op_registry.hpp). On the strand.
    void track(tracked_op& op, std::shared_ptr<void> self) noexcept
    {
        ops_.track(op, std::move(self));
    }
    /// Drops the self-reference taken by track(): `op` (and this context) may be destroyed by
    /// the time it returns. On the strand.
    void untrack(tracked_op& op) noexcept { ops_.untrack(op); }

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

protected:
    /// Every operation in flight is abandoned and let go (the execution context shuts down).
    void abandon_all() noexcept { ops_.abandon_all(); }

private:
    std::chrono::milliseconds longest_ttl_;
    op_list ops_;  // the operations in flight
};

}  // namespace redlock::detail

#endif
