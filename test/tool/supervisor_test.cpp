// redlock-run's decisions while COMMAND runs, stepped by hand (tools/run/supervisor.hpp).
#include "supervisor.hpp"

#include <catch2/catch.hpp>

#include <csignal>

using namespace redlock::run;
using namespace std::chrono_literals;

namespace {

constexpr int lost_status = 79;

// wait(2) statuses as the kernel encodes them.
int exited(int code) { return (code & 0xff) << 8; }
int killed_by(int signo) { return signo; }

}  // namespace

TEST_CASE("supervisor: COMMAND's status is passed through, as a shell reports it", "[tool]")
{
    supervisor s(5s, lost_status);
    auto a = s.child_exited(exited(7));
    CHECK(a.exit_with == 7);
    CHECK(a.signal == 0);
    CHECK_FALSE(s.child_running());

    supervisor k(5s, lost_status);
    CHECK(k.child_exited(killed_by(SIGSEGV)).exit_with == 128 + SIGSEGV);

    // Reaped once: a second report is ignored.
    CHECK_FALSE(s.child_exited(exited(0)).exit_with);
}

TEST_CASE("supervisor: a lost lock stops COMMAND: SIGTERM and SIGCONT now, SIGKILL before the keys "
          "expire",
          "[tool]")
{
    supervisor s(5s, lost_status);
    auto a = s.lock_lost(2000ms);
    CHECK(a.signal == SIGTERM);
    CHECK(a.and_continue);
    REQUIRE(a.kill_in);
    CHECK(*a.kill_in == 2000ms);  // the keys' expiry comes before --kill-after
    CHECK_FALSE(a.exit_with);

    // Lost twice (the extension and the validity both report it): acted on once.
    CHECK(s.lock_lost(1000ms).signal == 0);

    auto k = s.kill_timer_fired();
    CHECK(k.signal == SIGKILL);
    CHECK(s.kill_timer_fired().signal == 0);

    // Whatever COMMAND then returns, the status says the lock was lost.
    CHECK(s.child_exited(exited(0)).exit_with == lost_status);
}

TEST_CASE("supervisor: --kill-after bounds the grace when the keys have longer", "[tool]")
{
    supervisor s(3s, lost_status);
    CHECK(s.lock_lost(20000ms).kill_in == 3000ms);
    supervisor z(3s, lost_status);
    CHECK(z.lock_lost(0ms).kill_in == 0ms);  // no validity left: no grace
    supervisor n(3s, lost_status);
    CHECK(n.lock_lost(-5ms).kill_in == 0ms);
}

TEST_CASE("supervisor: COMMAND that stops on SIGTERM exits with the lost status, no SIGKILL",
          "[tool]")
{
    supervisor s(5s, lost_status);
    s.lock_lost(1000ms);
    CHECK(s.child_exited(killed_by(SIGTERM)).exit_with == lost_status);
    CHECK(s.kill_timer_fired().signal == 0);  // the timer fires late: nothing left to kill
}

TEST_CASE("supervisor: signals are passed to COMMAND while it runs, and nothing after", "[tool]")
{
    supervisor s(5s, lost_status);
    for (int signo : {SIGINT, SIGTERM, SIGHUP})
        CHECK(s.signal_received(signo).signal == signo);
    CHECK_FALSE(s.signal_received(SIGINT).exit_with);  // COMMAND decides when to end
    CHECK(s.child_exited(killed_by(SIGINT)).exit_with == 128 + SIGINT);
    CHECK(s.signal_received(SIGTERM).signal == 0);
    CHECK(s.lock_lost(1000ms).signal == 0);  // gone already: nothing to stop
}

TEST_CASE("supervisor: the kill timer does nothing unless the lock was lost", "[tool]")
{
    supervisor s(5s, lost_status);
    CHECK(s.kill_timer_fired().signal == 0);
    CHECK(s.child_exited(exited(0)).exit_with == 0);
}
