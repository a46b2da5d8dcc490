// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DETAIL_OP_REGISTRY_HPP
#define REDLOCK_SRC_DETAIL_OP_REGISTRY_HPP

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution_context.hpp>

namespace redlock::detail {

/// @brief An operation in flight, in the one ownership model of the library (client and
/// connection alike): it owns itself while it runs, and its owner keeps it in a list
/// (op_list) so that the execution context's shutdown can let it go.
///
/// Asio's rule for an execution context destroyed with work outstanding is that the pending
/// handlers are destroyed without being invoked, and everything they own with them. Our
/// operations are not Asio handlers: the connections, rounds and deadline list only point at
/// them, and timers and signals hold weak references. Each keeps itself alive with a
/// shared_ptr to itself, held by its owner's op_list; the owner registers with a service of
/// its execution context (shutdown_registry), whose shutdown() calls its on_shutdown(): every
/// operation stops what it has started (abandon()) and drops its self-reference, destroying
/// its handler uncalled.
class tracked_op
{
public:
    /// Stops everything the operation has started (rounds, requests, deadline entries) without
    /// completing anything. Called on shutdown only; the reference is dropped after it.
    virtual void abandon() noexcept = 0;

protected:
    ~tracked_op() = default;

private:
    friend class op_list;
    friend class busy_scope;
    std::shared_ptr<void> self_;
    tracked_op* prev_ = nullptr;
    tracked_op* next_ = nullptr;
    std::uint32_t busy_ = 0;  // busy_scopes open on it
    bool let_go_ = false;     // untracked while busy: self_ goes when the last scope closes
};

/// @brief Keeps a tracked operation alive while a callback into it runs, without touching its
/// reference count: an untrack() meanwhile (the operation completed) keeps the self-reference
/// until the last scope closes, and that scope's end drops it.
///
/// What a round opens around each callback into its listener (round::notify, once per reply): a
/// copy of a shared_ptr there costs two atomic read-modify-writes per reply. Sound because a
/// round calls back only while its operation is tracked, or kept alive by a frame further out.
/// Not thread-safe: on the owner's strand.
class busy_scope
{
public:
    explicit busy_scope(tracked_op* op) noexcept : op_(op)
    {
        if (op_)
            ++op_->busy_;
    }
    busy_scope(const busy_scope&) = delete;
    busy_scope& operator=(const busy_scope&) = delete;
    ~busy_scope()
    {
        if (op_ && --op_->busy_ == 0 && op_->let_go_) [[unlikely]]
        {
            op_->let_go_ = false;
            auto last = std::move(op_->self_);  // may destroy the operation: the last thing here
        }
    }

private:
    tracked_op* op_;
};

/// The operations in flight of one owner: an intrusive list, O(1) both ways. Not thread-safe:
/// used on the owner's strand (and at shutdown, when no thread runs the context).
class op_list
{
public:
    /// `op` keeps itself alive through `self` until untrack(op). Tracking twice does nothing.
    void track(tracked_op& op, std::shared_ptr<void> self) noexcept;

    /// Drops the self-reference taken by track(): `op` (and whatever only it kept alive) may be
    /// destroyed by the time it returns, or, while a busy_scope is open on it, when the last
    /// one closes. Does nothing when `op` is not tracked.
    void untrack(tracked_op& op) noexcept;

    /// abandon() and untrack() every operation.
    void abandon_all() noexcept;

private:
    tracked_op* head_ = nullptr;
};

/// What registers with the shutdown_registry: an owner of operations (a client, a connection).
class shutdown_participant
{
public:
    /// The execution context is shutting down; no handler will run again. Abandon every
    /// operation, let go of what waits, deliver what was sent (synchronously, within a bound).
    virtual void on_shutdown() noexcept = 0;

    /// A strong reference for the time of on_shutdown(), or null when the owner is already
    /// being destroyed (weak_from_this().lock()).
    virtual std::shared_ptr<void> keep_alive() noexcept = 0;

protected:
    ~shutdown_participant() = default;
};

/// @brief A service of each execution context that clients and connections are made on: on the
/// context's shutdown (its destruction, with or without work outstanding), every participant
/// still alive gets on_shutdown().
class shutdown_registry final : public boost::asio::execution_context::service
{
public:
    static boost::asio::execution_context::id id;

    explicit shutdown_registry(boost::asio::execution_context& ctx) : service(ctx) {}

    /// The registry of `ex`'s execution context.
    static shutdown_registry& of(const boost::asio::any_io_executor& ex);

    void add(shutdown_participant* p);
    /// Called by the participant's destructor.
    void remove(shutdown_participant* p) noexcept;

private:
    void shutdown() override;

    std::mutex m_;
    std::vector<shutdown_participant*> participants_;
};

}  // namespace redlock::detail

#endif
