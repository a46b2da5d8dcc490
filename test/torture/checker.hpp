// The mutual-exclusion checker of the torture test: no two holds of one resource may overlap
// within their validity windows.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "ledger.hpp"

namespace redlock::torture {

/**
 * @brief What the checker found in the ledgers.
 *
 * **The interval asserted.** Redlock guarantees that a lock acquired by `async_lock` is
 * exclusive until `lock.valid_until()` = t0 + ttl − drift on the holder's monotonic clock,
 * where t0 was taken before the first request was sent. A hold is therefore the window
 *
 *     [t_acquired, min(valid_until, t_release)]
 *
 * - it starts when `async_lock` *completed* (`t_acquired`): not at `t_start`, because a caller
 *   that waits behind a holder legitimately calls `async_lock` before that holder releases;
 *   and not at t0, which is inside the library — the holder cannot act before it knows.
 * - it ends at the validity deadline the holder computed (after it, the keys may expire and
 *   the lock is free by design — a holder that sleeps past it is the Kleppmann case, which
 *   no client can prevent and the checker does not count), or when the holder initiated the
 *   release (`t_release`, taken just before `async_unlock`: the holder has stopped using the
 *   resource, and the next holder may be granted as soon as the keys are deleted).
 *
 * An extension changes the end: a successful `async_extend` started at `t_extend` makes the
 * lock exclusive until its new `valid_until_ext`. When it started before the first validity
 * ended, the hold is one window up to min(valid_until_ext, t_release) (the keys were ours on a
 * majority throughout). When it started later, the lock may have been free in between (a late
 * SET can re-create a key with our token), so the hold is two windows: up to `valid_until`,
 * and from the extension's completion up to min(valid_until_ext, t_release). A *failed*
 * extension releases the keys before it completes (the library's contract: the lock is lost),
 * so the hold ends at min(valid_until, t_extend) — `overlaps_if_failed_extend_kept` counts
 * what a holder that kept working until the failure was reported would have met.
 *
 * Two windows of different tokens on one resource that intersect are an overlap, unless both
 * are a read-write lock's readers, or both permits of a semaphore: then a window that starts
 * while as many others as the semaphore has permits are open is an excess permit.
 *
 * **Fencing tokens** (fenced holds: `fence` > 0) are checked apart from the windows, as the
 * design promises them (docs/algorithm.md): a holder B whose acquisition started after a
 * holder A's completed (A.t_acquired < B.t_start, so A's commit majority was in place before
 * B's first round) has a larger token than A — whatever the pauses and expiries in between —
 * and no two fenced holds of one resource share a token.
 */
struct check_result
{
    std::size_t holds = 0;        ///< Hold records.
    std::size_t failures = 0;     ///< Failure records.
    std::size_t empty_holds = 0;  ///< Completed after their own validity had ended (never usable).
    std::size_t overlaps = 0;     ///< Pairs of overlapping windows: must be 0.
    std::size_t excess_permits = 0;  ///< Permits held beyond a semaphore's number: must be 0.
    /// Overlaps and excess permits by the kinds of the holds involved (held_kind): a pair of
    /// two kinds counts for both, an excess permit for `permit`.
    std::array<std::size_t, static_cast<std::size_t>(held_kind::count_)> overlaps_by_kind{};
    /// Acquisitions by kind (held_kind), a multi-resource lock counted once.
    std::array<std::size_t, static_cast<std::size_t>(held_kind::count_)> holds_by_kind{};
    std::size_t overlaps_if_failed_extend_kept = 0;  ///< Informative, see above.
    std::size_t validity_errors = 0;  ///< valid_until outside [t_start, t_acquired] + ttl − drift.
    std::size_t order_errors = 0;     ///< Times out of order within one record.
    std::size_t expiry_takeovers = 0;  ///< Holds that began after the previous holder's validity
        ///< ended but before it released: the expiry path, exercised.
    std::size_t fenced_holds = 0;  ///< Holds with a fencing token.
    std::size_t fencing_order_errors =
        0;                            ///< A later holder with a token not above an earlier one's.
    std::size_t fencing_repeats = 0;  ///< Two fenced holds of one resource with the same token.
    nanos min_gap = -1;               ///< Smallest gap between the end of a window and the start of
                                      ///< the next one on the same resource (−1: no pair).
    std::vector<std::string> details;  ///< The first problems found, described.

    bool ok() const noexcept
    {
        return overlaps == 0 && excess_permits == 0 && validity_errors == 0 && order_errors == 0 &&
               fencing_order_errors == 0 && fencing_repeats == 0;
    }
};

/// The drift allowance the library subtracts: ttl × drift_factor + 2 ms (ttl in milliseconds).
nanos drift_ns(std::int32_t ttl_ms, double drift_factor);

/// Checks every record (of every process) against the rules above.
check_result check(const std::vector<record>& records, double drift_factor = 0.01);

/// Runs the checker on synthetic ledgers with known answers; returns the failures (empty: ok).
std::vector<std::string> self_test();

}  // namespace redlock::torture
