// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// What every example shares: it checks what it shows. check() prints "ok" or "FAIL" and a
// sentence; run_example() runs the example's body,
// prints the verdict, and exits 0 when every check passed, 1 when one failed, 2 when the
// example could not run (an exception).
#pragma once

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

namespace redlock_example {

inline int failures = 0;

inline void check(bool ok, const std::string& what)
{
    std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    failures += ok ? 0 : 1;
}

template <class Body>
int run_example(const char* name, Body&& body)
{
    try
    {
        body();
    }
    catch (const std::exception& e)
    {
        std::cerr << name << ": " << e.what() << "\n";
        return 2;
    }
    std::printf("\n%s: %d check(s) failed.\n", failures ? "FAILED" : "done", failures);
    return failures ? 1 : 0;
}

}  // namespace redlock_example
