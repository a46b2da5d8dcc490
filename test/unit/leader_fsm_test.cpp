// The decisions of election::async_leader and election::async_observe (src/fsm/leader_fsm.hpp),
// stepped on synthetic time: which read comes next, when a pending term is waited for, what
// an observer does without a majority, and what each answers.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>

#include <boost/asio/error.hpp>

#include "fsm/leader_fsm.hpp"

using namespace std::chrono_literals;
using redlock::error;
using redlock::holder_info;
using redlock::holders_result;
using redlock::leader_info;
using redlock::detail::leader_action;
using redlock::detail::leader_fsm;
using leader_step = leader_action::kind;  // (named apart from other tests': one unity unit)

namespace {

leader_fsm::time_point clock_at(std::chrono::milliseconds d)
{
    return leader_fsm::time_point{} + 1h + d;
}

// A read whose key holder is `id` with `term` (0: not committed yet), valid for 5 s.
holders_result read_of(const std::string& id, std::uint64_t term)
{
    holders_result r;
    holder_info h;
    h.id = id;
    h.identity = "cand-" + id;
    h.fencing_token = term;
    h.valid_for = 5000ms;
    h.masters = 3;
    r.holders.push_back(h);
    return r;
}

// The leader an observer saw: `id` in `term`, valid until `until`.
leader_info seen_leader(const std::string& id, std::uint64_t term, leader_fsm::time_point until)
{
    leader_info l;
    l.id = id;
    l.term = term;
    l.identity = "cand-" + id;
    l.valid_until = until;
    return l;
}

constexpr auto every = 1000ms;
constexpr auto read_timeout = 200ms;

}  // namespace

TEST_CASE("leader_fsm: leader_of takes the key holder with a committed term, never a reader, "
          "and dates its validity from the read",
          "[leader_fsm][election]")
{
    auto r = read_of("a", 0);
    CHECK_FALSE(redlock::detail::leader_of(r, clock_at(0ms)));
    CHECK(redlock::detail::term_pending(r));
    r.holders.front().fencing_token = 7;
    holder_info reader;
    reader.reader = true;
    reader.fencing_token = 9;
    r.holders.insert(r.holders.begin(), reader);
    const auto l = redlock::detail::leader_of(r, clock_at(10ms));
    REQUIRE(l);
    CHECK(l->term == 7);
    CHECK(l->id == "a");
    CHECK(l->identity == "cand-a");
    CHECK(l->masters == 3);
    CHECK(l->valid_until == clock_at(5010ms));
    CHECK_FALSE(redlock::detail::term_pending(r));
    r.holders.back().valid_for = -1ms;  // no expiry known
    CHECK(redlock::detail::leader_of(r, clock_at(0ms))->valid_until ==
          leader_fsm::time_point::max());
}

TEST_CASE("leader_fsm: async_leader answers its first read, except that a holder whose term is "
          "pending is waited for once, within the read's timeout",
          "[leader_fsm][election]")
{
    SECTION("a leader, or nobody: answered at once")
    {
        for (const bool held : {true, false})
        {
            leader_fsm f(std::nullopt, true, every, read_timeout);
            CHECK(f.start().type == leader_step::first_read);
            const auto a =
                f.read_answered({}, held ? read_of("a", 3) : holders_result{}, clock_at(0ms));
            CHECK(a.type == leader_step::finish);
            CHECK_FALSE(a.ec);
            CHECK(a.leader.has_value() == held);
        }
    }
    SECTION("a term pending: one wait, then the answer, whatever it is")
    {
        leader_fsm f(std::nullopt, true, every, read_timeout);
        const auto w = f.read_answered({}, read_of("a", 0), clock_at(0ms));
        CHECK(w.type == leader_step::next_read);
        CHECK(w.reread_every == read_timeout);
        const auto a = f.read_answered({}, read_of("a", 0), clock_at(200ms));
        CHECK(a.type == leader_step::finish);
        CHECK_FALSE(a.leader);
    }
    SECTION("its term committed meanwhile")
    {
        leader_fsm f(std::nullopt, true, every, read_timeout);
        (void)f.read_answered({}, read_of("a", 0), clock_at(0ms));
        const auto a = f.read_answered({}, read_of("a", 4), clock_at(3ms));
        REQUIRE(a.leader);
        CHECK(a.leader->term == 4);
    }
    SECTION("no majority is an answer for async_leader: no_quorum")
    {
        leader_fsm f(std::nullopt, true, every, read_timeout);
        const auto a = f.read_answered(error::no_quorum, {}, clock_at(0ms));
        CHECK(a.type == leader_step::finish);
        CHECK(a.ec == error::no_quorum);
    }
}

TEST_CASE("leader_fsm: async_observe answers the first leader other than the one seen, and "
          "reads again sooner while a holder's term is pending",
          "[leader_fsm][election]")
{
    const auto seen = seen_leader("a", 3, clock_at(5000ms));
    leader_fsm f(seen, false, every, read_timeout);
    const auto s = f.start();
    CHECK(s.type == leader_step::next_read);  // from "no holder": anyone leading answers at once
    CHECK(s.reread_every == every);

    auto same = f.read_answered({}, read_of("a", 3), clock_at(1ms));
    CHECK(same.type == leader_step::next_read);
    CHECK(same.reread_every == every);
    // A holder without a term beside the same leader's read (another candidate's lead just
    // taken, as the census reads it): read again within the read's timeout.
    auto r = read_of("a", 3);
    r.holders.push_back(read_of("b", 0).holders.front());
    const auto sooner = f.read_answered({}, r, clock_at(2ms));
    CHECK(sooner.type == leader_step::next_read);
    CHECK(sooner.reread_every == read_timeout);

    SECTION("another leader")
    {
        const auto a = f.read_answered({}, read_of("b", 4), clock_at(3ms));
        CHECK(a.type == leader_step::finish);
        REQUIRE(a.leader);
        CHECK(a.leader->id == "b");
    }
    SECTION("the same candidate in a new term is another leader")
    {
        const auto a = f.read_answered({}, read_of("a", 5), clock_at(3ms));
        CHECK(a.type == leader_step::finish);
        REQUIRE(a.leader);
        CHECK(a.leader->term == 5);
    }
    SECTION("nobody: the leader seen is gone")
    {
        const auto a = f.read_answered({}, holders_result{}, clock_at(3ms));
        CHECK(a.type == leader_step::finish);
        CHECK_FALSE(a.ec);
        CHECK_FALSE(a.leader);
    }
    SECTION("an error other than no_quorum finishes with it")
    {
        const auto a =
            f.read_answered(boost::asio::error::operation_aborted, holders_result{}, clock_at(3ms));
        CHECK(a.type == leader_step::finish);
        CHECK(a.ec == boost::asio::error::operation_aborted);
    }
}

TEST_CASE("leader_fsm: an observer without a majority waits for one, the leader it saw leads "
          "until its validity ends, then no longer",
          "[leader_fsm][election]")
{
    SECTION("no leader seen: waits for a change")
    {
        leader_fsm f(std::nullopt, false, every, read_timeout);
        const auto a = f.read_answered(error::no_quorum, {}, clock_at(0ms));
        CHECK(a.type == leader_step::next_read);
        CHECK(a.reread_every == every);
    }
    SECTION("a leader seen, still valid: a timer to its end, then a census")
    {
        leader_fsm f(seen_leader("a", 3, clock_at(800ms)), false, every, read_timeout);
        const auto w = f.read_answered(error::no_quorum, {}, clock_at(100ms));
        CHECK(w.type == leader_step::wait_until);
        CHECK(w.until == clock_at(800ms));
        CHECK(f.wait_ended({}).type == leader_step::first_read);
        const auto cancelled = f.wait_ended(boost::asio::error::operation_aborted);
        CHECK(cancelled.type == leader_step::finish);
        CHECK(cancelled.ec == boost::asio::error::operation_aborted);
    }
    SECTION("a leader seen whose validity has ended: no leader")
    {
        leader_fsm f(seen_leader("a", 3, clock_at(800ms)), false, every, read_timeout);
        const auto a = f.read_answered(error::no_quorum, {}, clock_at(800ms));
        CHECK(a.type == leader_step::finish);
        CHECK_FALSE(a.ec);
        CHECK_FALSE(a.leader);
    }
}
