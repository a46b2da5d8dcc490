// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench: small formatting and system helpers of its output.
#ifndef REDLOCK_BENCH_BENCH_FORMAT_HPP
#define REDLOCK_BENCH_BENCH_FORMAT_HPP

#include <string>
#include <string_view>

namespace redlock::bench {

/// 1234567.8 -> "1,234,568" (or with `decimals` digits after the point).
std::string with_commas(double v, int decimals = 0);
/// Peak resident set size of this process, in KiB.
long peak_rss_kib();
/// Whether `exe` is found in PATH.
bool on_path(const std::string& exe);
/// A URI as it may be printed: the password replaced by ***.
std::string printable_uri(const std::string& uri);

}  // namespace redlock::bench

#endif
