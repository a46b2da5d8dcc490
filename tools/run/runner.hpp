// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The driver of redlock-run: acquires the lock, starts COMMAND, keeps the lock alive, routes
// what happens (COMMAND's exit, signals, the lock's loss, the kill timer) through the
// supervisor and carries out its actions, then releases the lock and closes the client.
#pragma once

#include "run_options.hpp"

namespace redlock::run {

/// Runs everything on an io_context of its own; returns the status to exit with.
int run(const run_options& options);

}  // namespace redlock::run
