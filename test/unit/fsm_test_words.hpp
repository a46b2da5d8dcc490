// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_UNIT_FSM_TEST_WORDS_HPP
#define REDLOCK_TEST_UNIT_FSM_TEST_WORDS_HPP

// The names every operation machine's test speaks in: the vocabulary's events and actions, a
// start time (the machines only ever subtract times), and the error codes they complete with.

#include <chrono>

#include <boost/asio/error.hpp>

#include <redlock/error.hpp>

#include "operation/fsm_vocabulary.hpp"

namespace redlock_test::fsm {

using namespace std::chrono_literals;
using redlock::error;
using redlock::error_code;
using redlock::detail::fsm_action;
using redlock::detail::fsm_event;
using redlock::detail::master_outcome;
using time_point = std::chrono::steady_clock::time_point;
using ak = fsm_action::kind;
using ek = fsm_event::kind;

inline const time_point t_start{std::chrono::seconds(1000)};
inline const error_code aborted = boost::asio::error::operation_aborted;

}  // namespace redlock_test::fsm

#endif
