// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_HOLD_HPP
#define REDLOCK_HOLD_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>

#include <redlock/error.hpp>
#include <redlock/lock.hpp>

namespace redlock {

class client;

namespace detail {
class hold_state;
}

/// @brief How a held lock is kept alive by automatic extension. See docs/usage.md.
struct hold_options
{
    /// Extend when this much validity is left. Zero: derived from the lock, max(ttl / 3,
    /// 3 x attempt_timeout) — early enough that a failed extension round can be retried before
    /// the validity runs out.
    std::chrono::milliseconds extend_before{0};

    /// At most this many extensions (zero: no limit on the count).
    std::uint32_t max_extensions = 0;

    /// No extension is started once the holder has held the lock this long, counted from the
    /// holder's construction (zero: no limit). The
    /// lock then expires at its current validity and the holder is told (extension_limit). The
    /// spec asks for a bound: a holder that never lets go would make the resource unavailable
    /// to everyone else forever.
    std::chrono::milliseconds max_hold{std::chrono::minutes(10)};

    /// Told, on the holder's work executor, each time an extension finds the lock held by a
    /// different number of masters than before (all of them, at first): `holding` below
    /// `masters` means degraded — still held, but one failure closer to lost (on a bare
    /// majority, the next failing master loses it); `holding == masters` again means
    /// recovered. Counted once every master answered the extension or its deadline passed.
    std::function<void(std::size_t holding, std::size_t masters)> on_degraded;
};

/// What async_check found on the masters.
struct check_result
{
    std::size_t holding = 0;                 ///< Masters on which every key holds the token.
    std::chrono::milliseconds min_pttl{-1};  ///< Smallest PTTL among those (-1: none holds it).
    std::vector<master_diagnostic> masters;  ///< Per-master outcome of the check.
};

/// @brief A held lock kept alive by automatic extension, and a guard that releases it.
///
/// While it lives, an extension coroutine on the client's io_context extends the lock on all
/// masters (compare-and-PEXPIRE; same quorum and validity rule as acquisition) before its
/// validity runs out. When the lock is lost — an extension fails, the validity runs out before
/// an extension succeeds, the extension limit is reached — the holder is told through Asio's
/// cancellation machinery: a terminal cancellation is emitted on loss_slot(), to which the
/// holder binds its work; status() then says why.
///
/// Destroying it (or release()) releases the lock without blocking and without throwing: the
/// release runs asynchronously on the client's executor. The client must outlive the holder's
/// release (destroy holders first, or keep running the io_context until releases complete).
///
/// @par Thread safety
/// The accessors may be called from any thread. loss_slot() is emitted on the executor given
/// at construction: bind to it only work that runs on that executor (a strand when the
/// io_context runs on several threads).
class lock_holder
{
public:
    /// The type of the executor on which the loss signal is emitted.
    using executor_type = boost::asio::any_io_executor;

    /// An empty holder (holds nothing).
    lock_holder() = default;

    // Overloads, not a defaulted `hold_options` argument: GCC 12 destroys a defaulted or
    // braced temporary twice when the argument list also holds a `co_await` (docs/usage.md
    // §17), as in `lock_holder h(locks, l, {}, co_await asio::this_coro::executor)`.

    /// Starts keeping `l` (which must be held) alive with default hold_options; the loss
    /// signal is emitted on the client's executor.
    lock_holder(client& c, lock l);
    /// As above, with the options `o`.
    lock_holder(client& c, lock l, hold_options o);
    /// As above with default hold_options, the loss signal emitted on `work_executor` (where
    /// the work bound to loss_slot() runs): `lock_holder h(locks, l, co_await
    /// asio::this_coro::executor)` is safe on GCC 12.
    lock_holder(client& c, lock l, executor_type work_executor);
    /// As above, with the options `o` and the loss signal emitted on `work_executor`.
    lock_holder(client& c, lock l, hold_options o, executor_type work_executor);

    /// Takes over the lock of the holder moved from, which is left empty.
    lock_holder(lock_holder&&) noexcept;
    /// Releases the lock this holder kept (as release()), then takes over the lock of the
    /// holder moved from, which is left empty.
    lock_holder& operator=(lock_holder&&) noexcept;
    lock_holder(const lock_holder&) = delete;
    lock_holder& operator=(const lock_holder&) = delete;

    /// Releases the lock if it is still held (asynchronously; never blocks or throws).
    ~lock_holder();

    /// The lock as last extended (valid_until moves forward with each extension).
    lock current() const;

    /// True while the lock is held: not lost, not released, validity left.
    bool held() const;

    /// Empty while held; otherwise why not (docs/usage.md, "Which error when"):
    /// error::released, error::lock_expired (the validity ended before an extension
    /// succeeded), error::extension_limit, error::lock_lost (the keys hold another token or
    /// are gone on enough masters: taken over, or dropped by a master), error::no_quorum (too
    /// many masters failed to extend), error::validity_expired (a majority extended it, but
    /// too late, and no further round fitted), error::connection_closed.
    error_code status() const;

    /// Successful extensions so far.
    std::uint32_t extensions() const;

    /// How many masters held the lock at the last extension that heard from all of them (every
    /// master until then); fewer than all means degraded (see hold_options::on_degraded).
    std::size_t masters_holding() const;

    /// A slot that receives a terminal cancellation when the lock is lost (not when it is
    /// released). Bind the holder's work to it, e.g. with boost::asio::bind_cancellation_slot.
    boost::asio::cancellation_slot loss_slot();

    /// Stops extending and releases on every master, asynchronously. Idempotent.
    void release() noexcept;

    /// @brief Stops extending, releases, and completes with the release's outcome (as
    /// client::async_unlock; error::lock_lost if the lock had already been lost;
    /// error::invalid_argument for a holder that holds nothing, e.g. moved from).
    ///
    /// @par Handler signature
    /// `void(error_code)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total: completes at once with operation_aborted; the release
    /// goes on (it is what frees the lock for others), and other waiters still hear its outcome.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_release(CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code)>(
            [this](auto handler) { async_release_impl(std::move(handler)); }, token);
    }

private:
    void async_release_impl(boost::asio::any_completion_handler<void(error_code)> handler);

    std::shared_ptr<detail::hold_state> s_;
};

}  // namespace redlock

#endif
