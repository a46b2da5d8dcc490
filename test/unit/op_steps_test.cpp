// The failure-at-every-step tier: every operation of every kind, made over the scripted client
// (scripted_client.hpp) as the client makes it, with one failure injected at one step of a
// lock's life (acquire, extend, check, census, unlock): the k-th command submitted, for every k, is
// refused at submission, dropped, answered with an error, a NOSCRIPT, a reply of the wrong
// type or another holder's refusal, left silent until its deadline, or its operation is
// cancelled or the client closed just before it is answered. Everything else is granted, in
// submission order (one master's commands last).
//
// After each run, stepped until nothing is left to answer and no deadline is pending:
// - each operation completed exactly once, none inside its own start();
// - an acquisition granted only on a quorum of masters, outside their restart quarantine,
//   whose last answer to it before the grant granted the same thing (one permit, one fencing
//   counter or its commit);
// - an extension, a check and a release said `ok` only on a quorum that said so, and a
//   release or an extension said `lock_lost` only on a quorum that said the token was gone;
// - every master that may hold a key this lock set (it was sent a command that sets one and
//   did not refuse it) was sent a release of it afterwards: after a failed attempt, after a
//   cancellation or a close, after the unlock (but for a lock granted before the client was
//   closed: it stays until its TTL, as client::close() says);
// - an operation started on a closed client says connection_closed;
// - every operation let go of itself (no operation left alive), and every command read as a
//   lock command of the table.
// Covered kinds: mutex, multi-resource, fenced, permit, reader, writer, fenced writer; over
// three masters and over five; with and without a quarantined master; with masters that agree on the fencing counter and permit, one
// that differs, and all differing.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <redlock/error.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>

#include "driver/acquire_op.hpp"
#include "driver/check_op.hpp"
#include "driver/extend_op.hpp"
#include "driver/holders_op.hpp"
#include "driver/unlock_op.hpp"
#include "scripted_client.hpp"

// (One namespace of its own: the CI builds every test file in one unit.)
namespace {
namespace op_steps {

namespace rd = redlock::detail;
using redlock::error_code;
using redlock::resp::node_view;
using redlock::resp::type;
using redlock::test::logged_request;
using redlock::test::scripted_client;
using namespace std::chrono_literals;

// ---- what is injected -------------------------------------------------------------------------

enum class fault
{
    refuse_submit,  // the submission fails (not connected)
    drop,           // the connection drops before the reply (the command may have run)
    error_reply,    // ERR
    noscript,       // NOSCRIPT (the command did not run)
    garbage,        // a reply of the wrong type
    held,           // another holder's refusal
    silence,        // never answered: the round's deadline ends it
    cancel,         // the operation in flight is cancelled, then the command answered
    close,          // the client is closed, then the command answered
    gone,           // from this step on, every master says another holds (or not ours)
    gone_half,      // from this step on, every other command says so, the rest are silent
};
constexpr std::array all_faults{fault::refuse_submit, fault::drop,     fault::error_reply,
                                fault::noscript,      fault::garbage,  fault::held,
                                fault::silence,       fault::cancel,   fault::close,
                                fault::gone,          fault::gone_half};
const char* name_of(fault f)
{
    switch (f)
    {
    case fault::refuse_submit: return "refused submission";
    case fault::drop: return "dropped connection";
    case fault::error_reply: return "error reply";
    case fault::noscript: return "NOSCRIPT";
    case fault::garbage: return "wrong reply type";
    case fault::held: return "held by another";
    case fault::silence: return "silence";
    case fault::cancel: return "cancellation";
    case fault::close: return "client closed";
    case fault::gone: return "refused from then on";
    case fault::gone_half: return "refused or silent from then on";
    }
    return "?";
}

/// Whether the masters' fencing counters and chosen permits agree.
enum class spread
{
    agree,     // every master the same
    odd_one,   // the last master differs
    all_apart  // every master differs
};

struct kind_case
{
    const char* name;
    redlock::lock_options o;
    std::vector<std::string> resources;  // more than one: async_lock_all
};

std::vector<kind_case> all_kinds()
{
    redlock::lock_options base;
    base.ttl = 30s;
    base.max_attempts = 3;
    std::vector<kind_case> out;
    out.push_back({"mutex", base, {"res"}});
    out.push_back({"multi-resource", base, {"res-a", "res-b"}});
    auto o = base;
    o.fencing = true;
    out.push_back({"fenced", o, {"res"}});
    o = base;
    o.permits = 3;
    out.push_back({"permit", o, {"res"}});
    o = base;
    o.role = redlock::lock_role::reader;
    out.push_back({"reader", o, {"res"}});
    o.role = redlock::lock_role::writer;
    out.push_back({"writer", o, {"res"}});
    o.fencing = true;
    out.push_back({"fenced writer", o, {"res"}});
    return out;
}

// ---- how each command was answered -----------------------------------------------------------

enum class answered
{
    not_yet,
    granted,  // what the row's reply reads as ours
    refused,  // another holder's (or, to a release, "not ours")
    failed,   // an error, a drop, garbage: it may have run
    not_run,  // refused at submission, or NOSCRIPT to an EVALSHA
};

struct entry_fate
{
    answered how = answered::not_yet;
    std::int64_t value = 0;  // a granted permit's index or fencing counter
    std::uint64_t at = 0;    // the step of the answer (rig::clock_)
};

constexpr std::size_t none = static_cast<std::size_t>(-1);

/// What the completions of one operation saw (shared with its handler, which may outlive the
/// test's frame if it is wrongly called late).
struct completion
{
    int count = 0;
    bool starting = false;      // inside the operation's start()
    bool inside_start = false;  // a completion came then
    error_code ec;
    std::uint64_t at = 0;  // the step after which it came
    std::optional<redlock::lock> lock;

    void note(error_code e, std::optional<redlock::lock> l, std::uint64_t now)
    {
        ++count;
        inside_start = inside_start || starting;
        ec = e;
        at = now + 1;
        lock = std::move(l);
    }
};

/// One run: a lock's life over `masters` scripted masters, one fault at one step.
class rig
{
public:
    rig(std::size_t masters, fault f, std::size_t step, std::size_t quarantined, spread s,
        std::size_t late)
        : c_(std::make_shared<scripted_client>(io_, masters)),
          fault_(f),
          step_(step),
          spread_(s),
          late_(late)
    {
        c_->refuse_step = [this](std::size_t k) -> error_code {
            if (fault_ != fault::refuse_submit || k != step_)
                return {};
            injected = true;
            return redlock::error::not_connected;
        };
        if (quarantined != none)
        {
            // Seen restarted a moment ago: its grants are out of acquisitions' quorums.
            auto& m = c_->master(quarantined);
            const auto now = std::chrono::steady_clock::now();
            m.observe_restart(0, "run-a", std::chrono::hours(1), now, std::chrono::hours(1), false);
            m.observe_restart(0, "run-b", std::chrono::seconds(1), now, std::chrono::hours(1),
                              false);
            quarantined_ = quarantined;
        }
    }

    scripted_client& client() { return *c_; }
    bool quarantined(std::size_t i) const { return i == quarantined_; }

    /// Answers, fails or fires deadlines until nothing is left. False: no end in sight.
    bool settle()
    {
        for (int guard = 0; guard < 20000; ++guard)
        {
            io_.restart();
            io_.poll();
            if (answer_next())
                continue;
            if (c_->deadlines.expire_first())
                continue;
            io_.restart();
            if (io_.poll() == 0)
                return true;
        }
        return false;
    }

    /// Runs `start` on the client's executor, as the client starts an operation (from inside
    /// asio::dispatch), with `record` told that it is inside start() meanwhile.
    template <class Start>
    void start(Start start, completion& record)
    {
        boost::asio::post(io_, [&] {
            record.starting = true;
            start();
            record.starting = false;
        });
        io_.restart();
        io_.run_one();
    }

    /// The operation to cancel when the fault is a cancellation.
    std::function<void()> cancel_current;
    /// What became of each submission, by its index in the log.
    std::vector<entry_fate> fates;
    bool injected = false;
    std::uint64_t now() const { return clock_; }

private:
    // Answers the oldest command still awaited, the late master's only when no other master's
    // is left.
    bool answer_next()
    {
        auto& log = c_->log;
        fates.resize(log.size());
        for (const bool late_ones : {false, true})
            for (std::size_t k = 0; k < log.size(); ++k)
            {
                if (fates[k].how != answered::not_yet || silent_.count(k) ||
                    (log[k].master == late_) != late_ones)
                    continue;
                if (log[k].refused)
                {
                    fates[k] = {answered::not_run, 0, ++clock_};
                    return true;
                }
                auto& req = c_->request(log[k]);
                if (req.answered || req.abandoned)
                    continue;
                respond(k);
                return true;
            }
        return false;
    }

    void respond(std::size_t k)
    {
        const auto e = c_->log[k];  // a copy: an answer may add to the log
        auto& m = c_->master(e.master);
        auto* fate = &fates[k];
        const bool from_here = k >= step_ && (fault_ == fault::gone || fault_ == fault::gone_half);
        const bool here = (k == step_ && fault_ != fault::refuse_submit) || from_here;
        if (here)
            injected = true;
        if (here && (fault_ == fault::silence || (fault_ == fault::gone_half && (k - step_) % 2)))
        {
            silent_.insert(k);
            return;
        }
        if (here && fault_ == fault::cancel && cancel_current)
            cancel_current();
        if (here && fault_ == fault::close)
            c_->close();
        // (The cancellation may have made the round abandon the command: still, it was sent.)
        fate = &fates[k];  // (the cancellation may have added to the log)
        fate->at = ++clock_;
        if (m.sent.at(e.index).answered || m.sent.at(e.index).abandoned)
        {
            fate->how = answered::failed;  // unanswered: it may have run
            return;
        }
        if (here && fault_ == fault::drop)
        {
            fate->how = answered::failed;
            m.fail(e.index, redlock::error::connection_closed);
            return;
        }
        if (here &&
            (fault_ == fault::error_reply || fault_ == fault::noscript || fault_ == fault::garbage))
        {
            fate->how =
                fault_ == fault::noscript && e.by_sha ? answered::not_run : answered::failed;
            static const node_view err{type::simple_error, 0, 0, "ERR scripted failure"};
            static const node_view noscript{type::simple_error, 0, 0,
                                            "NOSCRIPT No matching script."};
            static const node_view garbage{type::bulk_string, 0, 0, "surprise"};
            m.answer(e.index, fault_ == fault::error_reply ? err
                              : fault_ == fault::noscript  ? noscript
                                                           : garbage);
            return;
        }
        const bool grant = !(here && (fault_ == fault::held || from_here));
        fate->how = grant ? answered::granted : answered::refused;
        fate->value = grant ? choice(e) : 0;
        const auto nodes = reply(e.command, grant, fate->value);
        m.answer(e.index, nodes);
    }

    // The permit index or fencing counter master i grants.
    std::int64_t choice(const logged_request& e) const
    {
        const auto& row = e.command.row();
        const auto i = static_cast<std::int64_t>(e.master);
        const std::int64_t differs = spread_ == spread::agree     ? 0
                                     : spread_ == spread::odd_one ? (e.master + 1 == c_->size())
                                                                  : i;
        if (row.values == rd::reply_values::permit)
            return differs;
        if (row.fenced_attempt())
            return 5 + differs;
        return 0;
    }

    // What the row's command answers when it grants (or refuses): the reply shapes of
    // lock_replies.cpp, per the row's reply_values.
    std::vector<node_view> reply(const redlock::test::wire_command& w, bool grant,
                                 std::int64_t value)
    {
        const auto& row = w.row();
        const auto text = [&](std::string s) -> std::string_view {
            return store_.emplace_back(std::move(s));
        };
        const auto integer = [&](std::int64_t v, std::uint32_t depth = 0) {
            return node_view{type::integer, depth, 0, text(std::to_string(v))};
        };
        const node_view nil{type::null, 0, 0, {}};
        using rv = rd::reply_values;
        if (row.policy(w.keys.size()) == rd::eval_policy::plain)
            return {grant ? node_view{type::simple_string, 0, 0, "OK"} : nil};
        switch (row.values)
        {
        case rv::counter_per_resource:
        case rv::one_counter:
        {
            if (!grant)
                return {row.values == rv::one_counter ? integer(0) : nil};
            const auto n = row.values == rv::one_counter ? 1 : w.keys.size() / 2;
            std::vector<node_view> out{{type::array, 0, n, {}}};
            for (std::size_t r = 0; r < n; ++r)
                out.push_back(integer(value, 1));
            return out;
        }
        case rv::permit: return {integer(grant ? value : -1)};
        case rv::pttl: return {integer(grant ? 20000 : -3)};
        case rv::holdings:
        {
            // Nothing held: no counter, no record, each string key absent, no reader.
            const auto strings = w.keys.size() - 3;
            std::vector<node_view> out{{type::array, 0, 2 + 2 * strings, {}}};
            out.push_back({type::null, 1, 0, {}});
            out.push_back({type::null, 1, 0, {}});
            for (std::size_t s = 0; s < strings; ++s)
            {
                out.push_back({type::null, 1, 0, {}});
                out.push_back(integer(-2, 1));
            }
            return out;
        }
        case rv::none: break;
        }
        return {integer(grant ? 1 : 0)};
    }

    boost::asio::io_context io_;
    std::shared_ptr<scripted_client> c_;
    fault fault_;
    std::size_t step_;
    spread spread_;
    std::size_t late_;  // the master that answers last
    std::size_t quarantined_ = none;
    std::set<std::size_t> silent_;
    std::deque<std::string> store_;
    std::uint64_t clock_ = 0;
};

// ---- the rules -------------------------------------------------------------------------------

// What each command does, as this test reads it: its own oracle, kept apart from the table's
// flags so that a wrong flag there is caught here (a command without a case here does not
// compile: -Wswitch).
enum class does
{
    sets,       // sets a lock key (and a writer's, its intent mark where it is refused)
    commits,    // a fenced acquisition's commit: counts toward it, sets no key
    releases,   // deletes our keys
    extends,    // moves our keys' expiry
    reads,      // changes nothing
    hands_over  // gives our key to another token of this client
};
does what_it_does(rd::lock_command k)
{
    using enum rd::lock_command;
    switch (k)
    {
    case acquire:
    case acquire_fenced:
    case acquire_permit:
    case acquire_reader:
    case acquire_writer:
    case acquire_writer_fenced: return does::sets;
    case commit_fence: return does::commits;
    case release:
    case release_reader:
    case release_permit: return does::releases;
    case extend:
    case extend_reader:
    case extend_permit: return does::extends;
    case check:
    case check_reader:
    case read_holders: return does::reads;
    case hand_over: return does::hands_over;
    case count_: break;
    }
    return does::reads;
}
bool sets_a_key(const logged_request& e) { return what_it_does(e.command.command) == does::sets; }
bool marks_intent(const logged_request& e)
{
    return e.command.command == rd::lock_command::acquire_writer ||
           e.command.command == rd::lock_command::acquire_writer_fenced;
}

/// The tokens (a lock's, a writer's intent id) that a master may still hold: set by a command
/// it did not refuse, with no release of them sent afterwards; but for `kept`, a lock that the
/// client was closed while holding.
std::vector<std::string> leftovers(rig& r, const std::optional<std::string>& kept)
{
    std::vector<std::string> out;
    auto& log = r.client().log;
    for (std::size_t i = 0; i < r.client().size(); ++i)
    {
        std::map<std::string, bool> may_hold;
        for (std::size_t k = 0; k < log.size(); ++k)
        {
            const auto& e = log[k];
            if (e.master != i || e.command.argv.empty())
                continue;
            const auto how = r.fates.at(k).how;
            const auto& token = e.command.token();
            if (what_it_does(e.command.command) == does::releases)
                may_hold[token] = false;  // sent (or tried): what it can do, it does
            else if (sets_a_key(e) && how != answered::not_run)
            {
                if (how != answered::refused)
                    may_hold[token] = true;
                if (marks_intent(e) && e.command.argv.size() > 2)
                    may_hold[e.command.argv[2]] = how != answered::granted;
            }
        }
        for (const auto& [token, held] : may_hold)
            if (held && token != kept)
                out.push_back("master " + std::to_string(i) + " may still hold " + token);
    }
    return out;
}

/// Whether a quorum of masters (outside their quarantine, when `acquisition`) last answered
/// the commands of `which` carrying `token` that an operation sent (from log entry `from` on),
/// before step `by`, with `how`, and the same value.
bool quorum_said(rig& r, std::size_t from, std::string_view token, std::uint64_t by, answered how,
                 bool acquisition, bool (*which)(const logged_request&))
{
    auto& log = r.client().log;
    std::map<std::int64_t, std::size_t> votes;
    for (std::size_t i = 0; i < r.client().size(); ++i)
    {
        if (acquisition && r.quarantined(i))
            continue;
        std::optional<entry_fate> last;
        for (std::size_t k = from; k < log.size(); ++k)
        {
            const auto& e = log[k];
            const auto& f = r.fates.at(k);
            if (e.master == i && which(e) && !e.command.argv.empty() &&
                e.command.token() == token && f.how != answered::not_yet && f.at < by)
                last = f;
        }
        if (last && last->how == how)
            ++votes[how == answered::granted ? last->value : 0];
    }
    for (const auto& [value, n] : votes)
        if (n >= r.client().quorum())
            return true;
    return false;
}

bool acquires(const logged_request& e)
{
    const auto d = what_it_does(e.command.command);
    return d == does::sets || d == does::commits;
}
bool extends(const logged_request& e) { return what_it_does(e.command.command) == does::extends; }
bool releases(const logged_request& e) { return what_it_does(e.command.command) == does::releases; }

/// A lock's life, but for the step of its fault.
struct life
{
    kind_case kind;
    std::size_t masters = 3;
    bool try_mode = false;           // async_try_lock, else async_lock (with retries)
    std::size_t quarantined = none;  // the master in its restart quarantine
    std::size_t late = 0;            // the master that answers last
    spread s = spread::agree;
    fault f = fault::refuse_submit;
};

std::vector<life> all_lives()
{
    std::vector<life> out;
    for (const auto& kind : all_kinds())
        for (const std::size_t n : {3, 5})
            for (const bool try_mode : {false, true})
                for (const auto quarantined : {none, n - 1})
                    for (const auto late : {n - 1, std::size_t{0}})
                        for (const auto s : {spread::agree, spread::odd_one, spread::all_apart})
                            for (const auto f : all_faults)
                                out.push_back({kind, n, try_mode, quarantined, late, s, f});
    return out;
}

std::string describe(const life& l, std::size_t step)
{
    static constexpr const char* spreads[] = {"agreeing", "one differing", "all differing"};
    return std::string(l.kind.name) + ", " + std::to_string(l.masters) + " masters" +
           (l.try_mode ? ", try_lock" : ", lock") +
           (l.quarantined != none ? ", master " + std::to_string(l.quarantined) + " quarantined"
                                  : "") +
           ", master " + std::to_string(l.late) + " late, " + spreads[static_cast<int>(l.s)] +
           " masters, " + name_of(l.f) + " at step " + std::to_string(step);
}

struct life_result
{
    std::vector<std::string> problems;  // what went against the rules
    std::size_t steps = 0;              // the commands it submitted
    bool injected = false;              // whether the fault found its step
};

/// Runs a lock's life: acquire (lock or try_lock), then with a lock extend, check, census and unlock.
life_result run_life(const life& lf, std::size_t step)
{
    const auto& kind = lf.kind;
    const bool try_mode = lf.try_mode;
    rig r(lf.masters, lf.f, step, lf.quarantined, lf.s, lf.late);
    auto& c = r.client();
    std::vector<std::string> problems;
    const auto say = [&](std::string what) { problems.push_back(std::move(what)); };

    // Acquire.
    const auto acq = std::make_shared<completion>();
    std::weak_ptr<void> acquire_alive;
    {
        auto op =
            kind.resources.size() > 1
                ? std::make_shared<rd::acquire_op>(c.shared_from_this(), kind.resources, kind.o)
                : std::make_shared<rd::acquire_op>(c.shared_from_this(), kind.resources.front(),
                                                   kind.o);
        acquire_alive = op;
        r.cancel_current = [w = std::weak_ptr<rd::acquire_op>(op)] {
            if (auto p = w.lock())
                p->cancel();
        };
        r.start(
            [&] {
                if (try_mode)
                    op->start(rd::acquire_op::try_handler(
                        [acq, &r](error_code ec, std::optional<redlock::lock> l) {
                            acq->note(ec, std::move(l), r.now());
                        }));
                else
                    op->start(rd::acquire_op::lock_handler([acq, &r](error_code ec,
                                                                     redlock::lock l) {
                        acq->note(ec,
                                  ec ? std::nullopt : std::optional<redlock::lock>(std::move(l)),
                                  r.now());
                    }));
            },
            *acq);
    }
    if (!r.settle())
        say("the acquisition never settled");
    if (acq->count != 1)
        say("the acquisition completed " + std::to_string(acq->count) + " times");
    if (acq->inside_start)
        say("the acquisition completed inside start()");
    const auto& held = acq->lock;
    if (held && !quorum_said(r, 0, held->token(), acq->at, answered::granted, true, acquires))
        say("granted without a quorum of countable grants of one value");

    // Then extend, check and unlock what was granted.
    const auto lock_op = [&](const char* what, auto make, bool (*which)(const logged_request&)) {
        const auto record = std::make_shared<completion>();
        auto& done = *record;
        const bool closed_before = c.closed;
        const auto first = c.log.size();  // its commands are those logged from here on
        auto op = make([record, &r](error_code ec) { record->note(ec, std::nullopt, r.now()); });
        std::weak_ptr<void> alive = op;
        r.cancel_current = [w = std::weak_ptr(op)] {
            if (auto p = w.lock())
                p->cancel();
        };
        r.start([&] { op->start(); }, done);
        op.reset();
        if (!r.settle())
            say(std::string(what) + " never settled");
        if (done.count != 1)
            say(std::string(what) + " completed " + std::to_string(done.count) + " times");
        if (done.inside_start)
            say(std::string(what) + " completed inside start()");
        if (which && !done.ec &&
            !quorum_said(r, first, held->token(), done.at, answered::granted, false, which))
            say(std::string(what) + " said ok without a quorum that said so");
        const bool gone =
            which && quorum_said(r, first, held->token(), done.at, answered::refused, false, which);
        if (which && done.ec == redlock::error::lock_lost && !gone)
            say(std::string(what) + " said lock_lost without a quorum that said so");
        if (gone && done.ec != redlock::error::lock_lost)
            say(std::string(what) + " said " + done.ec.message() +
                " although a quorum said the token was not there");
        if (closed_before && done.ec != redlock::error::connection_closed)
            say(std::string(what) + " on a closed client said " + done.ec.message());
        if (!alive.expired())
            say(std::string(what) + " is still alive after it settled");
        return done.ec;
    };
    // A lock granted stays held until its TTL when the client is closed before its unlock
    // (client::close()): its keys are not leftovers.
    std::optional<std::string> kept;
    if (held)
    {
        auto sp = c.shared_from_this();
        lock_op(
            "the extension",
            [&](auto on_done) {
                return std::make_shared<rd::extend_op>(
                    sp, *held, kind.o.ttl,
                    rd::extend_op::handler(
                        [on_done](error_code ec, redlock::lock) { on_done(ec); }));
            },
            extends);
        lock_op(
            "the check",
            [&](auto on_done) {
                return std::make_shared<rd::check_op>(
                    sp, *held,
                    rd::check_op::handler(
                        [on_done](error_code ec, redlock::check_result) { on_done(ec); }));
            },
            nullptr);
        lock_op(
            "the census",
            [&](auto on_done) {
                return std::make_shared<rd::holders_op>(
                    sp, kind.resources.front(), kind.o,
                    rd::holders_op::handler(
                        [on_done](error_code ec, redlock::holders_result) { on_done(ec); }));
            },
            nullptr);
        const auto unlocked = lock_op(
            "the unlock",
            [&](auto on_done) {
                return std::make_shared<rd::unlock_op>(
                    sp, *held, rd::unlock_op::handler([on_done](error_code ec) { on_done(ec); }));
            },
            releases);
        if (c.closed && unlocked == redlock::error::connection_closed)
            kept = std::string(held->token());
    }
    if (!acquire_alive.expired())
        say("the acquisition is still alive after it settled");
    for (auto& l : leftovers(r, kept))
        say(l);
    if (c.unreadable)
        say(std::to_string(c.unreadable) + " commands read as no lock command");
    return {std::move(problems), c.log.size(), r.injected};
}

}  // namespace op_steps
}  // namespace

TEST_CASE("steps: every operation of every kind, one failure at every step, keeps the rules",
          "[steps]")
{
    namespace os = op_steps;
    std::size_t runs = 0;
    std::array<std::size_t, os::all_faults.size()> injected_by_fault{};
    std::map<std::string, std::size_t> steps_by_kind;  // the steps of all runs, by kind
    std::vector<std::string> problems;
    for (const auto& life : os::all_lives())
        // Every step up to the longest life seen with the fault at an earlier step.
        for (std::size_t step = 0, longest = 1; step < longest; ++step)
        {
            const auto run = os::run_life(life, step);
            ++runs;
            injected_by_fault[static_cast<std::size_t>(life.f)] += run.injected;
            steps_by_kind[life.kind.name] += run.steps;
            longest = std::max(longest, run.steps);
            for (const auto& p : run.problems)
                problems.push_back(os::describe(life, step) + ": " + p);
        }
    for (std::size_t i = 0; i < problems.size() && i < 30; ++i)
        UNSCOPED_INFO(problems[i]);
    INFO(runs << " runs, " << problems.size() << " problems");
    if (std::getenv("REDLOCK_STEPS_REPORT"))
    {
        for (const auto& p : problems)
            std::fprintf(stderr, "%s\n", p.c_str());
        std::string by_fault;
        for (const auto f : os::all_faults)
            by_fault += std::string(" ") + os::name_of(f) + " " +
                        std::to_string(injected_by_fault[static_cast<std::size_t>(f)]) + ";";
        WARN(runs << " runs; injected:" << by_fault);
    }
    CHECK(problems.empty());
    // Every kind's lives had steps: acquire, extend, check, census and unlock on three and five masters.
    for (const auto& kind : os::all_kinds())
    {
        INFO(kind.name);
        CHECK(steps_by_kind[kind.name] > 12 * os::all_faults.size());
    }
    // And every fault was injected, in many runs.
    for (const auto f : os::all_faults)
    {
        INFO(os::name_of(f));
        CHECK(injected_by_fault[static_cast<std::size_t>(f)] > 100);
    }
}
