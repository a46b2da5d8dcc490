// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
/// @file
/// The umbrella header: the whole public API of redlock.
#ifndef REDLOCK_REDLOCK_HPP
#define REDLOCK_REDLOCK_HPP

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/connection.hpp>
#include <redlock/election.hpp>
#include <redlock/error.hpp>
#include <redlock/events.hpp>
#include <redlock/fencing.hpp>
#include <redlock/hold.hpp>
#include <redlock/holders.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>
#include <redlock/resp.hpp>
#include <redlock/use_tuple.hpp>
#include <redlock/with_diagnostics.hpp>

#endif
