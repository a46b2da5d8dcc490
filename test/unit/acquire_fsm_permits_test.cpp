// A semaphore's acquisition decisions stepped by hand (lock_options::permits): the permit each
// master set is the grant's choice, and the lock is held only when a majority set the same one.
#include "fsm/acquire_fsm.hpp"

#include <catch2/catch.hpp>

#include <chrono>

#include "acquire_test_words.hpp"
#include "fsm_test_words.hpp"

using namespace redlock_test::acquire;
using redlock::detail::quorum_state;
using redlock_test::fsm::fsm_action, redlock_test::fsm::fsm_event;

namespace {

// Three permits, two attempts with no jitter, the defaults otherwise (ttl 10 s).
lock_options three_permits()
{
    lock_options o;
    o.permits = 3;
    o.max_attempts = 2;
    o.retry_jitter = 0ms;
    return o;
}

// Master `master` set permit `permit` (its index in the attempt's order).
fsm_action set_permit(acquire_fsm& f, std::uint64_t round, std::size_t master, std::int64_t permit,
                      time_point now)
{
    const std::int64_t which[] = {permit};
    return f.resume(fsm_event::reply(round, master, granted, now, which));
}

}  // namespace

TEST_CASE("acquire_fsm permits: a majority that set one permit holds it", "[acquire_fsm][permits]")
{
    acquire_fsm f(three_permits(), 5, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    REQUIRE(a.type == kind::send_attempt);
    CHECK(set_permit(f, a.round_id, 0, 2, at(1ms)).type == kind::none);
    CHECK(set_permit(f, a.round_id, 1, 0, at(1ms)).type == kind::none);  // a racer took 2 there
    CHECK(set_permit(f, a.round_id, 2, 2, at(2ms)).type == kind::none);
    // Three grants, but not three of one permit: not yet.
    CHECK(f.last_attempt().granted() == 3);
    const auto done = set_permit(f, a.round_id, 3, 2, at(3ms));
    REQUIRE(done.type == kind::complete);
    CHECK(!done.ec);
    CHECK(f.last_attempt().winner() == 2);
    CHECK(f.last_attempt().choice(1) == 0u);  // the stray the driver releases
    CHECK(done.valid_until == at(0ms) + 10s - 102ms);
}

TEST_CASE("acquire_fsm permits: votes split so that no permit can reach a majority fail the "
          "attempt as contended, and it is released everywhere before the retry",
          "[acquire_fsm][permits]")
{
    acquire_fsm f(three_permits(), 5, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    CHECK(set_permit(f, a.round_id, 0, 0, at(1ms)).type == kind::none);
    CHECK(set_permit(f, a.round_id, 1, 1, at(1ms)).type == kind::none);
    CHECK(set_permit(f, a.round_id, 2, 1, at(1ms)).type == kind::none);
    CHECK(answer(f, a.round_id, 3, held, at(2ms)).type == kind::none);  // all held there
    // Permit 1 has 2 and one master is left: 3 is still possible.
    CHECK(f.last_attempt().state() == quorum_state::undecided);
    const auto r = set_permit(f, a.round_id, 4, 0, at(3ms));
    REQUIRE(r.type == kind::send_release);
    CHECK(f.last_attempt().state() == quorum_state::failed);
    CHECK(f.last_attempt().failure_reason() == redlock::error::contended);
    const auto retry = f.resume(fsm_event::deadline(r.round_id, at(10ms)));
    CHECK(retry.type == kind::wait_until);
}

TEST_CASE("acquire_fsm permits: a mutex (one permit) ignores what a grant carries",
          "[acquire_fsm][permits]")
{
    lock_options o = three_permits();
    o.permits = 1;
    acquire_fsm f(o, 3, 1, false);
    const auto a = f.resume(fsm_event::start(at(0ms)));
    CHECK(set_permit(f, a.round_id, 0, 5, at(1ms)).type == kind::none);
    const auto done = set_permit(f, a.round_id, 1, 7, at(2ms));
    CHECK(done.type == kind::complete);
    CHECK_FALSE(f.last_attempt().choice(0).has_value());
}
