// The driver-level tier: a round (src/driver/round.cpp) over scripted masters
// (test/unit/scripted_master.hpp). Every reply, error, refusal, drop and silence comes from
// the test, in every order it scripts; the deadline is fired by hand (deadline_list::
// expire_all). No socket, no redis-server, no clock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "driver/round.hpp"
#include "driver/round_context.hpp"
#include "fsm/aside_targets.hpp"
#include "fsm/fsm_vocabulary.hpp"
#include "protocol/scripts.hpp"
#include "scripted_master.hpp"

using namespace std::chrono_literals;
using redlock::error;
using redlock::error_code;
using redlock::master_status;
using redlock::detail::master_outcome;
using redlock::detail::quorum_state;
namespace rd = redlock::detail;
using redlock::resp::node_view;
using redlock::resp::type;
using redlock::test::scripted_master;

namespace {

/// A round's client, with `n` scripted masters.
struct scripted_client : redlock::detail::round_context
{
    explicit scripted_client(boost::asio::io_context& io, std::size_t n, bool cluster = false)
        : round_context(io.get_executor())
    {
        for (std::size_t i = 0; i < n; ++i)
        {
            auto m = std::make_unique<scripted_master>(cluster);
            masters_.push_back(m.get());
            add_master(std::move(m));
        }
    }
    scripted_master& master(std::size_t i) { return *masters_.at(i); }

private:
    std::vector<scripted_master*> masters_;
};

/// Stands in for an operation's machine: counts the round's outcomes into its own quorum (a
/// semaphore's grants by the permit each set), as the machines do, and its callbacks.
struct listener : redlock::detail::round_listener
{
    bool permits = false;  // the rounds are a semaphore's attempts: a grant names its permit
    int decided = 0;
    int finished = 0;
    rd::quorum_tracker q{1};
    const rd::round* counting = nullptr;  // the round q counts
    quorum_state at_decision = quorum_state::undecided;
    std::function<void(rd::round&)> on_decided;
    void on_round_outcome(rd::round& r, std::size_t i) override
    {
        if (&r != counting || q.outcome(i) != master_outcome::pending)  // another round
        {
            q.reset(r.masters());
            counting = &r;
        }
        const auto values = r.values_of(i);
        const auto before = q.state();
        if (permits && r.outcome(i) == master_outcome::granted && values.size() == 1)
            q.record(i, r.outcome(i), static_cast<std::uint32_t>(values[0]));  // its permit
        else
            q.record(i, r.outcome(i));
        if (before != quorum_state::undecided || q.state() == quorum_state::undecided)
            return;
        ++decided;
        at_decision = q.state();
        if (on_decided)
            on_decided(r);
    }
    void on_round_finished(rd::round&) override { ++finished; }
    std::shared_ptr<void> hold() override { return nullptr; }
};

/// A round over three scripted masters (five with masters_rig<5>), its listener and its client.
template <std::size_t N = 3, bool Cluster = false>
struct masters_rig
{
    boost::asio::io_context io;
    scripted_client c{io, N, Cluster};
    listener l;
    rd::round r;
    /// Every master's connection has run script `id` (a release goes as EVALSHA).
    void scripts_known(unsigned id = 0)
    {
        for (std::size_t i = 0; i < N; ++i)
            c.master(i).scripts.note(id, true, c.master(i).gen);
    }
};
using three_masters = masters_rig<3>;
using three_cluster_masters = masters_rig<3, true>;

const node_view ok{type::simple_string, 0, 0, "OK"};
const node_view nil{type::null, 0, 0, {}};
const node_view one{type::integer, 0, 0, "1"};
const node_view zero{type::integer, 0, 0, "0"};
const node_view server_error{type::simple_error, 0, 0, "ERR scripted failure"};
const node_view wrong_type{type::bulk_string, 0, 0, "surprise"};
const node_view noscript{type::simple_error, 0, 0, "NOSCRIPT No matching script."};

const std::vector<std::string> one_key{"resource"};
const std::string token = "0123456789abcdef0123456789abcdef";

// What a master does with its request in the scripted runs.
enum class act
{
    grant,    // +OK
    refuse,   // nil: another owner's
    error,    // -ERR
    garbage,  // a reply of a type SET cannot return
    drop,     // the connection fails the request
    silent,   // no answer: the deadline decides
    reject,   // the submission itself is refused (not connected)
};
constexpr std::array all_acts{act::grant, act::refuse, act::error, act::garbage,
                              act::drop,  act::silent, act::reject};

master_status expected_status(act a)
{
    switch (a)
    {
    case act::grant: return master_status::granted;
    case act::refuse: return master_status::held_by_other;
    case act::silent: return master_status::timed_out;
    default: return master_status::error;
    }
}

error_code expected_ec(act a)
{
    switch (a)
    {
    case act::error: return redlock::error_from_server_reply(server_error.value);
    case act::garbage: return error::unexpected_reply;
    case act::drop: return error::connection_lost;
    case act::silent: return error::request_timeout;
    case act::reject: return error::not_connected;
    default: return {};
    }
}

}  // namespace

TEST_CASE_METHOD(three_masters,
                 "round: an acquisition sends SET NX PX to every master at once, and decides at "
                 "the quorum",
                 "[round]")
{
    r.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &l);
    for (std::size_t i = 0; i < 3; ++i)
    {
        REQUIRE(c.master(i).sent.size() == 1);
        const auto& q = c.master(i).sent[0];
        CHECK(q.bytes == "*6\r\n$3\r\nSET\r\n$8\r\nresource\r\n$32\r\n" + token +
                             "\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n");
        CHECK(q.key == "resource");
        CHECK(q.mode == redlock::detail::request_mode::replicated);
    }
    CHECK(c.master(0).answer(0, ok));
    CHECK(l.decided == 0);
    CHECK(c.master(2).answer(0, ok));
    CHECK(l.decided == 1);
    CHECK(l.at_decision == quorum_state::reached);
    CHECK(l.finished == 0);  // master 1 is still awaited
    CHECK(r.diagnostics()[1].status == master_status::not_needed);
    CHECK(c.master(1).answer(0, nil));
    CHECK(l.finished == 1);
    CHECK_FALSE(r.active());
}

namespace {

/// Records what a round tells its listener, in order; optionally restarts the round from its
/// first outcome, as a driver whose machine starts the next attempt at once would.
struct recording_listener : redlock::detail::round_listener
{
    std::vector<std::pair<std::size_t, master_outcome>> told;
    int finished = 0;
    std::function<void(rd::round&)> on_first;
    void on_round_outcome(rd::round& r, std::size_t i) override
    {
        told.emplace_back(i, r.outcome(i));
        if (told.size() == 1 && on_first)
            on_first(r);
    }
    void on_round_finished(rd::round&) override { ++finished; }
    std::shared_ptr<void> hold() override { return nullptr; }
};

}  // namespace

TEST_CASE_METHOD(three_masters,
                 "round: the round decides nothing: each awaited master's outcome is told once, "
                 "in the order they came, also after a majority granted, and then the end",
                 "[round]")
{
    recording_listener rl;
    r.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &rl);
    CHECK(c.master(2).answer(0, ok));
    CHECK(c.master(0).answer(0, ok));
    CHECK(c.master(1).answer(0, nil));  // after the majority: told all the same
    const std::vector<std::pair<std::size_t, master_outcome>> expected{
        {2, master_outcome::granted},
        {0, master_outcome::granted},
        {1, master_outcome::held_by_other}};
    CHECK(rl.told == expected);
    CHECK(rl.finished == 1);
    CHECK(r.outcome(1) == master_outcome::held_by_other);
    CHECK(r.outcome(7) == master_outcome::pending);  // out of range
}

TEST_CASE_METHOD(three_masters,
                 "round: a listener that restarts the round from an outcome at the deadline "
                 "hears nothing more of the old round",
                 "[round]")
{
    recording_listener rl;
    rl.on_first = [&](rd::round& again) {
        again.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &rl);
    };
    r.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &rl);
    // Three masters silent: three outcomes, and the first restarts the round. expire_all
    // then fires the new round's deadline too: its three outcomes and its end.
    c.deadlines.expire_all();
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(c.master(i).sent.size() == 2);
    // One outcome of the old round, three of the new one: not the old round's other two.
    REQUIRE(rl.told.size() == 4);
    for (const auto& [master, outcome] : rl.told)
        CHECK(outcome == master_outcome::timed_out);
    CHECK(rl.finished == 1);  // the new round's end only
    CHECK_FALSE(r.active());
}

TEST_CASE("round: every combination of seven answers over three masters, delivered in "
          "every order, decides as the quorum says, once, and finishes once",
          "[round]")
{
    int runs = 0;
    for (const auto a0 : all_acts)
        for (const auto a1 : all_acts)
            for (const auto a2 : all_acts)
            {
                const std::array acts{a0, a1, a2};
                std::array<std::size_t, 3> order{0, 1, 2};
                do
                {
                    ++runs;
                    boost::asio::io_context io;
                    scripted_client c(io, 3);
                    for (std::size_t i = 0; i < 3; ++i)
                        if (acts[i] == act::reject)
                            c.master(i).refuse = error::not_connected;
                    listener l;
                    rd::round r;
                    r.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &l);
                    for (const auto i : order)
                    {
                        auto& m = c.master(i);
                        switch (acts[i])
                        {
                        case act::grant: CHECK(m.answer(0, ok)); break;
                        case act::refuse: CHECK(m.answer(0, nil)); break;
                        case act::error: CHECK(m.answer(0, server_error)); break;
                        case act::garbage: CHECK(m.answer(0, wrong_type)); break;
                        case act::drop: CHECK(m.fail(0, error::connection_lost)); break;
                        case act::silent:
                        case act::reject:
                            CHECK(m.sent.size() == (acts[i] == act::silent ? 1u : 0u));
                        }
                    }
                    const bool any_silent = std::count(acts.begin(), acts.end(), act::silent) > 0;
                    CHECK(l.finished == (any_silent ? 0 : 1));
                    c.deadlines.expire_all();  // the deadline: whoever is silent timed out
                    INFO("acts " << int(a0) << int(a1) << int(a2));
                    const auto grants = std::count(acts.begin(), acts.end(), act::grant);
                    REQUIRE(l.decided == 1);
                    CHECK(l.at_decision ==
                          (grants >= 2 ? quorum_state::reached : quorum_state::failed));
                    CHECK(l.finished == 1);
                    CHECK_FALSE(r.active());
                    for (std::size_t i = 0; i < 3; ++i)
                    {
                        const auto& d = r.diagnostics()[i];
                        // An answer that came after the decision still counts in diagnostics;
                        // none is left pending once the round finished.
                        CHECK(d.status == expected_status(acts[i]));
                        CHECK(d.ec == expected_ec(acts[i]));
                        CHECK(c.master(i).awaited() == 0);
                    }
                } while (std::next_permutation(order.begin(), order.end()));
            }
    CHECK(runs == 7 * 7 * 7 * 6);
}

TEST_CASE("round: a failure injected at each step of a release (a refused submission, a "
          "dropped request, a server error, silence) costs only that master",
          "[round]")
{
    // The script: submit to masters 0, 1, 2, then their answers (1: deleted) in order.
    // Each run injects one failure at one of those six steps.
    const std::array failures{act::reject, act::drop, act::error, act::silent, act::garbage};
    int injected = 0;
    for (std::size_t step = 0; step < 6; ++step)
        for (const auto f : failures)
        {
            const std::size_t victim = step % 3;
            const bool at_submit = step < 3;
            if (at_submit != (f == act::reject))
                continue;  // a submission can only be refused; an answer only go wrong
            ++injected;
            boost::asio::io_context io;
            scripted_client c(io, 3);
            c.master(victim).refuse =
                f == act::reject ? error_code(error::not_connected) : error_code();
            listener l;
            rd::round r;
            r.start(c, rd::round::kind::release, one_key, token, 0, 1s, &l);
            // A release goes as EVAL to a connection that has not run the script yet.
            for (std::size_t i = 0; i < 3; ++i)
                if (i != victim || f != act::reject)
                    CHECK(c.master(i).sent.at(0).bytes.find(
                              redlock::detail::release_script().body) != std::string::npos);
            for (std::size_t i = 0; i < 3; ++i)
            {
                auto& m = c.master(i);
                if (i != victim)
                    CHECK(m.answer(0, one));
                else if (f == act::drop)
                    CHECK(m.fail(0, error::connection_lost));
                else if (f == act::error)
                    CHECK(m.answer(0, server_error));
                else if (f == act::garbage)
                    CHECK(m.answer(0, wrong_type));
            }
            c.deadlines.expire_all();
            INFO("step " << step << ", failure " << int(f));
            CHECK(l.decided == 1);
            CHECK(l.at_decision == quorum_state::reached);
            CHECK(l.finished == 1);
            for (std::size_t i = 0; i < 3; ++i)
            {
                const auto& d = r.diagnostics()[i];
                if (i != victim)
                    CHECK(d.status == master_status::granted);
                else
                {
                    CHECK(d.status == expected_status(f));
                    CHECK(d.ec == expected_ec(f));
                    if (f == act::reject || f == act::drop)
                        CHECK(d.message == "scripted master");  // the transport's detail
                }
                CHECK(c.master(i).awaited() == 0);
            }
        }
    CHECK(injected == 3 + 3 * 4);
}

TEST_CASE_METHOD(three_masters,
                 "round: a release answered NOSCRIPT is sent again as EVAL, once, and the cache "
                 "forgets the script",
                 "[round]")
{
    scripts_known();  // run there before: EVALSHA
    r.start(c, rd::round::kind::release, one_key, token, 0, 1s, &l);
    const auto& sha1 = redlock::detail::release_script().sha1;
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(c.master(i).sent.at(0).bytes.find(sha1) != std::string::npos);
    CHECK(c.master(0).answer(0, noscript));
    REQUIRE(c.master(0).sent.size() == 2);
    CHECK(c.master(0).sent[1].bytes.find(redlock::detail::release_script().body) !=
          std::string::npos);
    CHECK_FALSE(c.master(0).scripts.known(0, c.master(0).gen));
    CHECK(c.master(0).answer(1, noscript));  // a second NOSCRIPT is a failure, not a loop
    CHECK(c.master(0).sent.size() == 2);
    CHECK(r.diagnostics()[0].status == master_status::error);
    CHECK(r.diagnostics()[0].ec == error::noscript);
    CHECK(c.master(1).answer(0, one));
    CHECK(c.master(2).answer(0, one));
    CHECK(l.at_decision == quorum_state::reached);
    CHECK(l.finished == 1);
}

TEST_CASE_METHOD(three_masters,
                 "round: a release's EVALSHA still silent at the deadline gets an EVAL queued "
                 "behind it, answered by no one",
                 "[round]")
{
    scripts_known();
    r.start(c, rd::round::kind::release, one_key, token, 0, 1s, &l);
    CHECK(c.master(0).answer(0, one));
    CHECK(c.master(1).answer(0, one));
    CHECK(l.decided == 1);
    c.deadlines.expire_all();
    REQUIRE(c.master(2).sent.size() == 2);
    CHECK(c.master(2).sent[0].abandoned);
    CHECK(c.master(2).sent[1].sink == nullptr);
    CHECK(c.master(2).sent[1].bytes.find(redlock::detail::release_script().body) !=
          std::string::npos);
    CHECK(r.diagnostics()[2].status == master_status::timed_out);
    CHECK(l.finished == 1);
}

TEST_CASE_METHOD(three_masters,
                 "round: a grant from a master that restarted within the quarantine does not "
                 "count toward an acquisition",
                 "[round]")
{
    const auto now = std::chrono::steady_clock::now();
    c.master(0).observe_restart(0, "run-a", 3600s, now, 10000ms, false);
    c.master(0).observe_restart(0, "run-b", 1s, now, 10000ms, false);  // restarted
    c.master(0).read_at = now;
    REQUIRE(c.quarantined(0, now));
    r.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &l, nullptr, nullptr,
            rd::round::time_point::max(), now);
    CHECK(c.master(0).answer(0, ok));
    CHECK(r.diagnostics()[0].status == master_status::error);
    CHECK(r.diagnostics()[0].ec == error::master_restarted);
    CHECK(c.master(1).answer(0, nil));
    CHECK(l.at_decision == quorum_state::failed);  // one grant counted of the two needed
    CHECK(c.master(2).answer(0, ok));
    CHECK(l.finished == 1);
}

namespace {

/// One acquisition command of a kind, with the keys it goes over and a granting master's reply.
struct acquisition_case
{
    const char* kind;
    rd::round::kind command;
    std::vector<std::string> keys;
    std::vector<node_view> granted;
};

/// Every command whose grant is (a part of) taking a lock, for each kind of lock that can be
/// taken: mutex, multi-resource, fenced (both rounds), permit, reader, writer, fenced writer.
/// Listed by hand, not read from the command table: the table is what this checks.
std::vector<acquisition_case> acquisition_cases()
{
    const node_view counter[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "6"}};
    const node_view permit{type::integer, 0, 0, "1"};
    using k = rd::round::kind;
    return {
        {"mutex", k::acquire, {"r"}, {ok}},
        {"multi-resource", k::acquire, {"r", "s"}, {one}},
        {"fenced (round 1)", k::acquire_fenced, {"r", "{r}:fence"}, {counter[0], counter[1]}},
        {"fenced (commit)", k::commit_fence, {"r", "{r}:fence", "{r}:fence:holder"}, {one}},
        {"permit", k::acquire_permit, {"r", "{r}:permit:0", "{r}:permit:1"}, {permit}},
        {"reader", k::acquire_reader, {"r", "{r}:readers", "{r}:intent"}, {one}},
        {"writer", k::acquire_writer, {"r", "{r}:readers", "{r}:intent"}, {one}},
        {"fenced writer",
         k::acquire_writer_fenced,
         {"r", "{r}:readers", "{r}:intent", "{r}:fence"},
         {counter[0], counter[1]}},
    };
}

}  // namespace

TEST_CASE("round: for every kind of lock, a grant from a master that restarted within the "
          "quarantine does not count toward the acquisition",
          "[round][quarantine][kinds]")
{
    for (const auto& a : acquisition_cases())
    {
        CAPTURE(a.kind);
        three_masters t;
        auto& c = t.c;
        const auto now = std::chrono::steady_clock::now();
        c.master(0).observe_restart(0, "run-a", 3600s, now, 10000ms, false);
        c.master(0).observe_restart(0, "run-b", 1s, now, 10000ms, false);  // restarted
        c.master(0).read_at = now;
        c.master(1).read_at = now;
        REQUIRE(c.quarantined(0, now));
        const std::array<std::uint64_t, 1> fences{6};
        t.r.set_fences(fences);
        t.l.permits = a.command == rd::round::kind::acquire_permit;
        t.r.start(c, a.command, a.keys, token, 30000, 1s, &t.l, nullptr, nullptr,
                  rd::round::time_point::max(), now);
        CHECK(c.master(0).answer(0, a.granted));
        CHECK(t.r.diagnostics()[0].status == master_status::error);
        CHECK(t.r.diagnostics()[0].ec == error::master_restarted);
        CHECK(c.master(1).answer(0, a.granted));
        CHECK(t.r.diagnostics()[1].status == master_status::granted);
        CHECK(t.l.decided == 0);  // one grant counted of the two needed
        CHECK(c.master(2).answer(0, nil));
        CHECK(t.l.at_decision == quorum_state::failed);
        CHECK(t.l.finished == 1);
    }
}

TEST_CASE("round: a semaphore's attempt goes as EVAL to a connection that has not seen its "
          "script run, as EVALSHA once it has, and as EVAL again after a NOSCRIPT",
          "[round][semaphore]")
{
    const std::vector<std::string> keys{"r", "{r}:permit:0", "{r}:permit:1"};
    const node_view permit{type::integer, 0, 0, "0"};
    const auto& script = rd::permit_acquire_script();
    three_masters t;
    auto& c = t.c;
    t.l.permits = true;
    t.r.start(c, rd::round::kind::acquire_permit, keys, token, 30000, 1s, &t.l);
    for (std::size_t i = 0; i < 3; ++i)
    {
        CHECK(c.master(i).sent.at(0).bytes.find(script.body) != std::string::npos);
        CHECK(c.master(i).answer(0, permit));
    }
    CHECK(t.l.at_decision == quorum_state::reached);
    rd::round again;
    again.start(c, rd::round::kind::acquire_permit, keys, token, 30000, 1s, &t.l);
    for (std::size_t i = 0; i < 3; ++i)
    {
        const auto& bytes = c.master(i).sent.at(1).bytes;
        CHECK(bytes.find("EVALSHA") != std::string::npos);
        CHECK(bytes.find(script.sha1) != std::string::npos);
        CHECK(bytes.find(script.body) == std::string::npos);
    }
    CHECK(c.master(0).answer(1, noscript));  // flushed there: the body, while the round listens
    REQUIRE(c.master(0).sent.size() == 3);
    CHECK(c.master(0).sent[2].bytes.find(script.body) != std::string::npos);
    CHECK(c.master(0).answer(2, permit));
    CHECK(again.diagnostics()[0].status == master_status::granted);
}

TEST_CASE("round: a semaphore's attempt that finds the resource held as another kind of lock "
          "counts the master as refused, with kind_mismatch saying what holds it (never a token)",
          "[round][semaphore][kinds]")
{
    const std::vector<std::string> keys{"r", "{r}:permit:0", "{r}:permit:1"};
    const node_view other_size{type::bulk_string, 0, 0, "redlock:permits:4"};
    const node_view owned{type::bulk_string, 0, 0, "redlock:owned"};
    const node_view readers{type::bulk_string, 0, 0, "redlock:readers"};
    three_masters t;
    auto& c = t.c;
    t.r.set_text("redlock:permits:2");
    t.l.permits = true;
    t.r.start(c, rd::round::kind::acquire_permit, keys, token, 30000, 1s, &t.l);
    CHECK(c.master(0).sent.at(0).bytes.ends_with("$17\r\nredlock:permits:2\r\n"));
    CHECK(c.master(0).answer(0, other_size));
    CHECK(c.master(1).answer(0, owned));
    CHECK(t.l.at_decision == quorum_state::failed);
    CHECK(c.master(2).answer(0, readers));
    const auto& d = t.r.diagnostics();
    for (std::size_t i = 0; i < 3; ++i)
    {
        CHECK(d[i].status == master_status::held_by_other);
        CHECK(d[i].ec == error::kind_mismatch);
    }
    CHECK(d[0].message == "held as a semaphore of 4 permits");
    CHECK(d[1].message == "held as a mutex (or a read-write lock's writer)");
    CHECK(d[2].message == "held by a read-write lock's readers");
    CHECK(t.l.q.failure_reason() == error::contended);
}

TEST_CASE("round: a reader's, a writer's and a fenced writer's attempt refused by a semaphore's "
          "permits counts the master as refused, with kind_mismatch naming the semaphore",
          "[round][semaphore][kinds]")
{
    const node_view mark{type::bulk_string, 0, 0, "redlock:permits:3"};
    for (const auto& a : acquisition_cases())
    {
        const std::string_view kind = a.kind;
        if (kind != "reader" && kind != "writer" && kind != "fenced writer")
            continue;
        CAPTURE(a.kind);
        three_masters t;
        auto& c = t.c;
        const std::array<std::uint64_t, 1> fences{6};
        t.r.set_fences(fences);
        t.r.start(c, a.command, a.keys, token, 30000, 1s, &t.l);
        CHECK(c.master(0).answer(0, mark));
        CHECK(c.master(1).answer(0, mark));
        CHECK(t.l.at_decision == quorum_state::failed);
        CHECK(c.master(2).answer(0, a.granted));
        const auto& d = t.r.diagnostics();
        for (std::size_t i = 0; i < 2; ++i)
        {
            CHECK(d[i].status == master_status::held_by_other);
            CHECK(d[i].ec == error::kind_mismatch);
            CHECK(d[i].message == "held as a semaphore of 3 permits");
        }
        CHECK(d[2].status == master_status::granted);
        CHECK(t.l.q.failure_reason() == error::contended);
    }
}

TEST_CASE_METHOD(three_masters,
                 "round: stop() abandons what is in flight: a late answer reaches no one",
                 "[round]")
{
    r.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &l);
    CHECK(c.master(0).answer(0, ok));
    r.stop();
    CHECK_FALSE(r.active());
    for (std::size_t i = 1; i < 3; ++i)
    {
        CHECK(c.master(i).sent[0].abandoned);
        CHECK_FALSE(c.master(i).answer(0, ok));
    }
    c.deadlines.expire_all();  // the deadline was cancelled with the round
    CHECK(l.decided == 0);
    CHECK(l.finished == 0);
}

TEST_CASE_METHOD(three_masters,
                 "round: a fenced acquisition reads each granting master's counters, and "
                 "refuses a reply that is not one non-negative counter per resource",
                 "[round]")
{
    const std::vector<std::string> keys{"resource", "resource:fence"};
    r.start(c, rd::round::kind::acquire_fenced, keys, token, 30000, 1s, &l);
    const node_view counters[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "41"}};
    const node_view negative[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "-1"}};
    CHECK(c.master(0).answer(0, counters));
    CHECK(c.master(1).answer(0, negative));
    CHECK(c.master(2).answer(0, nil));
    CHECK(r.diagnostics()[0].status == master_status::granted);
    CHECK(r.values()[0] == 41);
    CHECK(r.diagnostics()[1].status == master_status::error);
    CHECK(r.diagnostics()[1].ec == error::unexpected_reply);
    CHECK(r.diagnostics()[2].status == master_status::held_by_other);
    CHECK(l.at_decision == quorum_state::failed);
}

TEST_CASE_METHOD(three_masters,
                 "round: a fenced writer's attempt sends its script with the intent id, reads "
                 "each granting master's one counter and counts a refusal (0) as held",
                 "[round][rwlock][fencing]")
{
    const std::vector<std::string> keys{"doc", "{doc}:readers", "{doc}:intent", "{doc}:fence"};
    const std::string intent(rd::token_source::token_chars, 'i');
    r.set_intent(
        std::span<const char, rd::token_source::token_chars>(intent.data(), intent.size()));
    r.start(c, rd::round::kind::acquire_writer_fenced, keys, token, 30000, 1s, &l);
    // Not seen to run yet: EVAL, with the body, the four keys and the intent id last.
    const auto& bytes_sent = c.master(0).sent[0].bytes;
    CHECK(bytes_sent.find(rd::fenced_writer_acquire_script().body) != std::string::npos);
    CHECK(bytes_sent.find("$1\r\n4\r\n$3\r\ndoc\r\n") != std::string::npos);
    CHECK(bytes_sent.ends_with("$5\r\n30000\r\n$" + std::to_string(intent.size()) + "\r\n" +
                               intent + "\r\n"));
    const node_view counter[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "6"}};
    const node_view more[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "7"}};
    CHECK(c.master(0).answer(0, counter));
    CHECK(c.master(1).answer(0, zero));  // readers there: refused, its intent marked
    CHECK(l.decided == 0);
    CHECK(c.master(2).answer(0, more));
    CHECK(l.at_decision == quorum_state::reached);
    CHECK(r.values_per_master() == 1);
    CHECK(r.values()[0] == 6);
    CHECK(r.values()[2] == 7);
    CHECK(r.diagnostics()[1].status == master_status::held_by_other);
    // Once it ran there, the connection gets EVALSHA of the script next time.
    CHECK(c.master(0).scripts.known(
        rd::cached_script_for(rd::round::kind::acquire_writer_fenced, keys.size()),
        c.master(0).gen));
}

namespace {

/// A waiter of the client, first in its resource's queue and watching: counts what it hears.
struct queued_waiter final : rd::release_listener
{
    std::size_t heard = 0;
    void on_invalidated(std::size_t) override { ++heard; }
    void on_turn(bool) override {}
    bool take_over(const rd::lock_state&, std::chrono::steady_clock::time_point,
                   std::span<char, rd::token_source::token_chars>) override
    {
        return false;
    }
    std::shared_ptr<void> hold() override { return nullptr; }
};

}  // namespace

TEST_CASE_METHOD(three_masters,
                 "round: a failed attempt's release is no turn in a row of local hand-offs "
                 "(neither counted toward the yield nor a yield), and tells the waiters of the "
                 "masters it frees",
                 "[round][waiting]")
{
    // Each holder of a row queues its successor while it holds: the successor's first attempt,
    // refused by that holder's keys, is released. Counted as a hand-off, two such releases per
    // turn made the yield fall on an attempt's release, where nothing is freed, and another
    // process's waiter never got its turn (live:wait "an endless row ... yields").
    queued_waiter w;
    CHECK(c.waiting.enqueue(one_key[0], &w));
    c.waiting.watch(one_key, &w);
    c.waiting.handed_over(one_key[0]);  // a row is live: one hand-off so far
    for (unsigned i = 0; i < 2 * rd::waiting_room::yield_every; ++i)
    {
        listener attempt_listener;
        rd::round attempt;
        attempt.start(c, rd::round::kind::acquire, one_key, token, 30000, 1s, &attempt_listener);
        CHECK(c.master(0).answer(c.master(0).sent.size() - 1, ok));  // one master granted
        CHECK(c.master(1).answer(c.master(1).sent.size() - 1, nil));
        CHECK(c.master(2).answer(c.master(2).sent.size() - 1, nil));
        REQUIRE(attempt_listener.at_decision == quorum_state::failed);
        const auto sent_before = c.master(1).sent.size();
        const auto to = rd::release_targets(attempt_listener.q);
        const auto awaited = rd::release_awaited(attempt_listener.q);
        r.start(c, rd::round::kind::release, one_key, token, 0, 1s, &l, &to, &awaited);
        CHECK(c.master(1).sent.size() == sent_before);  // a master that refused holds nothing
        CHECK(c.master(0).answer(c.master(0).sent.size() - 1, one));
        CHECK_FALSE(r.active());
        const auto heard_before = w.heard;
        io.poll();
        io.restart();
        CHECK(w.heard == heard_before + 1);  // master 0 was freed: told, at once
        // The row still has its one hand-off: the next holder's release offers `w` the lock.
        CHECK(c.waiting.successor(one_key[0]) == &w);
    }
    c.waiting.unwatch(one_key, &w);
    c.waiting.leave(one_key[0], &w);
}

TEST_CASE_METHOD(three_cluster_masters,
                 "round: keys of several hash slots on a cluster master go as one part per slot, "
                 "and the parts' answers combine",
                 "[round]")
{
    // "{a}x" and "{a}y" share a slot; "{b}z" is in another.
    const std::vector<std::string> keys{"{a}x", "{b}z", "{a}y"};
    r.start(c, rd::round::kind::acquire, keys, token, 30000, 1s, &l);
    for (std::size_t i = 0; i < 3; ++i)
        REQUIRE(c.master(i).sent.size() == 2);
    auto part_of = [&](std::size_t i, std::string_view key) {
        const auto& s = c.master(i).sent;
        return s[0].key == key ? std::size_t{0} : std::size_t{1};
    };
    // Master 0: both parts granted. Master 1: one part another owner's (held in part).
    // Master 2: one part failed.
    CHECK(c.master(0).answer(part_of(0, "{a}x"), one));
    CHECK(c.master(0).answer(part_of(0, "{b}z"), ok));
    CHECK(c.master(1).answer(part_of(1, "{a}x"), one));
    CHECK(c.master(1).answer(part_of(1, "{b}z"), nil));
    CHECK(c.master(2).answer(part_of(2, "{a}x"), one));
    CHECK(c.master(2).fail(part_of(2, "{b}z"), error::connection_lost));
    CHECK(r.diagnostics()[0].status == master_status::granted);
    CHECK(r.outcome(1) == master_outcome::held_in_part);
    CHECK(r.diagnostics()[2].status == master_status::error);
    CHECK(r.diagnostics()[2].ec == error::connection_lost);
    CHECK(l.at_decision == quorum_state::failed);
    CHECK(l.finished == 1);
}

TEST_CASE("round: an acquisition's unawaited rounds go where their targets say: a semaphore's "
          "stray permits (kinds: permit), a one-round fenced grant's trailing commit (kinds: "
          "fenced), a writer's intent mark (kinds: writer, fenced writer), and none awaited but "
          "the commit's quorum",
          "[round][aside_targets]")
{
    const node_view permit0{type::integer, 0, 0, "0"};
    const node_view permit1{type::integer, 0, 0, "1"};
    const node_view all_held{type::integer, 0, 0, "-1"};
    SECTION("stray permits")
    {
        // Five masters: 0-2 set permit 1 (the majority's), 3 set permit 0, 4 refused.
        masters_rig<5> t;
        const std::vector<std::string> keys{"r", "{r}:permit:0", "{r}:permit:1"};
        t.l.permits = true;
        t.r.start(t.c, rd::round::kind::acquire_permit, keys, token, 30000, 1s, &t.l);
        for (std::size_t i = 0; i < 3; ++i)
            CHECK(t.c.master(i).answer(0, permit1));
        CHECK(t.c.master(3).answer(0, permit0));
        CHECK(t.c.master(4).answer(0, all_held));
        REQUIRE(t.l.q.state() == quorum_state::reached);
        REQUIRE(t.l.q.outcome(4) == master_outcome::held_by_other);
        REQUIRE(t.l.q.winner() == 1);
        const auto to = rd::stray_permit_targets(t.l.q);
        rd::round strays;
        listener l;
        // The resource's key, the permit to release, then the won one, only looked at.
        const std::vector<std::string> release{"r", "{r}:permit:0", "{r}:permit:1"};
        strays.start(t.c, rd::round::kind::release_permit, release, token, 1, 1s, &l, &to.to,
                     &to.awaited);
        for (std::size_t i = 0; i < 5; ++i)
        {
            INFO("master " << i);
            CHECK(t.c.master(i).sent.size() == (i == 3 ? 2u : 1u));
        }
        CHECK(t.c.master(3).sent[1].abandoned);  // sent, not awaited
        CHECK(t.c.master(3).sent[1].bytes.find(rd::permit_release_script().body) !=
              std::string::npos);  // EVAL: nobody would see a NOSCRIPT
        CHECK(l.finished == 1);    // over within start()
    }
    SECTION("trailing fence commit")
    {
        masters_rig<5> t;
        rd::quorum_tracker votes(5);
        votes.record(0, master_outcome::granted);
        votes.record(1, master_outcome::granted);
        votes.record(2, master_outcome::granted);
        votes.record(3, master_outcome::held_by_other);  // 4 has not answered
        const auto to = rd::trailing_commit_targets(votes);
        const std::vector<std::string> keys{"r", "{r}:fence", "{r}:fence:holder"};
        const std::array<std::uint64_t, 1> fences{7};
        rd::round commit;
        commit.set_fences(fences);
        commit.start(t.c, rd::round::kind::commit_fence, keys, token, 0, 1s, &t.l, &to.to,
                     &to.awaited);
        for (std::size_t i = 0; i < 5; ++i)
        {
            INFO("master " << i);
            CHECK(t.c.master(i).sent.size() == (i == 3 ? 0u : 1u));
        }
        CHECK(t.l.finished == 0);  // awaited until its quorum answers, as a release
        for (const std::size_t i : {0u, 1u, 2u})
            CHECK(t.c.master(i).answer(0, one));
        CHECK(t.l.at_decision == quorum_state::reached);
    }
    SECTION("intent mark")
    {
        masters_rig<3> t;
        const auto to = rd::unawaited_everywhere(3);
        const std::vector<std::string> mark{"{r}:intent"};
        t.r.start(t.c, rd::round::kind::release, mark, token, 0, 1s, &t.l, &to.to, &to.awaited);
        for (std::size_t i = 0; i < 3; ++i)
        {
            REQUIRE(t.c.master(i).sent.size() == 1);
            CHECK(t.c.master(i).sent[0].abandoned);
        }
        CHECK(t.l.finished == 1);
    }
}
