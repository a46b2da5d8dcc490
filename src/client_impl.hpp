// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLIENT_IMPL_HPP
#define REDLOCK_SRC_CLIENT_IMPL_HPP

#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include <redlock/client.hpp>
#include <redlock/options.hpp>

#include "algorithm/backoff.hpp"
#include "algorithm/token.hpp"
#include "detail/deadline_list.hpp"
#include "script_cache.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

class client_impl;

/// @brief An operation in flight: it owns itself while it runs, and its client keeps it in a
/// list so that the execution context's shutdown can let it go.
///
/// Asio's rule for an execution context that is destroyed with work outstanding is that the
/// pending handlers are destroyed without being invoked, and everything they own with them.
/// Our operations are not Asio handlers: each keeps itself alive with a shared_ptr to itself
/// (the connections and the deadline list only point at it), which would never be released if
/// the io_context is not run again. So every client registers with a service of its execution
/// context (client_registry), whose shutdown() calls abandon_all() on it: each operation stops
/// its rounds and deadline entries and drops its self-reference, destroying its handler.
class tracked_op
{
public:
    /// Stops everything the operation has in the client (rounds, deadline entries) without
    /// completing anything. Called on shutdown only; the reference is dropped after it.
    virtual void abandon() noexcept = 0;

protected:
    ~tracked_op() = default;

private:
    friend class client_impl;
    std::shared_ptr<void> self_;
    tracked_op* prev_ = nullptr;
    tracked_op* next_ = nullptr;
};

/// The shared state of a client: its strand, one connection per master, the deadline list
/// and the token source. Operations hold a shared_ptr to it; everything runs on `strand`.
class client_impl : public std::enable_shared_from_this<client_impl>
{
public:
    client_impl(asio::any_io_executor ex, client_config cfg, std::vector<master_config> masters);
    ~client_impl();

    void start();
    void close();

    /// `op` keeps itself alive through `self` until untrack(op); O(1). On the strand.
    void track(tracked_op& op, std::shared_ptr<void> self) noexcept;
    /// Drops the self-reference taken by track(): `op` (and this client) may be destroyed by
    /// the time it returns. Does nothing when `op` is not tracked. On the strand.
    void untrack(tracked_op& op) noexcept;
    /// The execution context is shutting down (client_registry): every tracked operation is
    /// abandoned and let go, the client is closed for new operations.
    void abandon_all() noexcept;

    std::size_t size() const noexcept { return conns.size(); }
    std::size_t quorum() const noexcept { return conns.size() / 2 + 1; }

    /// Whether anyone listens to events (client_config::on_event).
    bool observed() const noexcept { return static_cast<bool>(cfg.on_event); }
    /// A lock event about `resource` (see report(event)).
    void report(event_kind kind, std::string_view resource, error_code ec = {}) const
    {
        if (!cfg.on_event)
            return;
        event e;
        e.kind = kind;
        e.resource = resource;
        e.ec = ec;
        report(e);
    }
    /// Tells client_config::on_event, if set; `e.masters` is filled in here.
    void report(event e) const
    {
        if (!cfg.on_event)
            return;
        e.masters = conns.size();
        cfg.on_event(e);
    }

    asio::any_io_executor strand;
    client_config cfg;
    std::vector<std::shared_ptr<node_connection>> conns;
    std::vector<script_cache> scripts;  // per master: which scripts its connection has run
    deadline_list deadlines;
    token_source tokens;
    xoshiro256ss jitter_rng{random_seed()};  // seeds each acquisition's retry schedule
    bool closed = false;

private:
    class client_registry* registry_;  // of the execution context, for shutdown()
    tracked_op* ops_ = nullptr;        // the operations in flight (an intrusive list)
};

/// The library's way into a client (the public class names it as a friend).
struct client_access
{
    static const std::shared_ptr<client_impl>& impl(const client& c) noexcept { return c.impl_; }
};

}  // namespace redlock::detail

#endif
