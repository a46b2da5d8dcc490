// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: the exit status of a run that started its workers (docs/performance.md,
// "redlock-bench"; the --help footer). Bad arguments and unreachable masters exit 2 before that.
#ifndef REDLOCK_BENCH_EXIT_STATUS_HPP
#define REDLOCK_BENCH_EXIT_STATUS_HPP

#include <cstdint>

namespace redlock::bench {

/// 1 when the counts do not add up (totals::add_up, or a worker did not finish its last
/// cycle), a fencing token did not grow (--fencing), or the JSON or the plot was not written;
/// else 130 when the run was interrupted (SIGINT, SIGTERM); else 0.
constexpr int exit_status(bool counts_ok, std::uint64_t fence_violations, bool outputs_written,
                          bool interrupted) noexcept
{
    if (!counts_ok || fence_violations != 0 || !outputs_written)
        return 1;
    return interrupted ? 130 : 0;
}

}  // namespace redlock::bench

#endif
