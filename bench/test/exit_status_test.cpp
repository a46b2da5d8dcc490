// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The exit status of a run (exit_status.hpp), as the --help footer and docs/performance.md
// state it: 0 ok; 1 counts that do not add up, a fencing violation, an output not written;
// 130 interrupted (guarantees.md B2, B5, B6).
#include <catch2/catch.hpp>

#include "../exit_status.hpp"

using redlock::bench::exit_status;

TEST_CASE("exit status: 0, 1 for counts, fencing or outputs, 130 when interrupted")
{
    //                 counts_ok  violations  outputs  interrupted
    CHECK(exit_status(true, 0, true, false) == 0);
    CHECK(exit_status(false, 0, true, false) == 1);
    CHECK(exit_status(true, 1, true, false) == 1);
    CHECK(exit_status(true, 0, false, false) == 1);
    CHECK(exit_status(true, 0, true, true) == 130);
    // A failed check outweighs the interruption: the results so far are wrong, not just short.
    CHECK(exit_status(false, 0, true, true) == 1);
    CHECK(exit_status(true, 3, true, true) == 1);
}
