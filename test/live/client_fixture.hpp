// Shared helpers of the live acceptance tests of redlock::client (test/live/client_*.cpp).
#pragma once

#include "local_masters.hpp"
#include "tuple_awaitable.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <redlock/redlock.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace redlock::test {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/// Milliseconds as a double, for messages and comparisons.
inline double ms(steady::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

/// A client configuration for all of `m`'s masters; connection timeouts stay at their
/// defaults (a paused master is declared dead only after 3 s, longer than any test pause).
inline client_config config_for(const local_masters& m, lock_options defaults = {})
{
    client_config cfg;
    cfg.masters = m.uris();
    cfg.defaults = defaults;
    return cfg;
}

/// Waits `d` on the current coroutine's executor.
inline asio::awaitable<void> sleep_for(steady::duration d)
{
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(tuple_awaitable);
}

/// The cancellation types an operation honours.
inline const std::vector<asio::cancellation_type> every_cancellation_type{
    asio::cancellation_type::terminal, asio::cancellation_type::partial,
    asio::cancellation_type::total};

/// Runs the test case once per cancellation type, as the constant `name` (captured for the
/// messages of failed checks).
#define REDLOCK_EACH_CANCELLATION_TYPE(name)                                                       \
    const auto name = GENERATE(from_range(::redlock::test::every_cancellation_type));              \
    CAPTURE(static_cast<int>(name))

/// Whether `text` contains `part`.
inline bool contains(std::string_view text, std::string_view part)
{
    return text.find(part) != std::string_view::npos;
}

/// Lock options with the given ttl, the others the defaults.
inline lock_options lasting(std::chrono::milliseconds lock_ttl)
{
    lock_options o;
    o.ttl = lock_ttl;
    return o;
}

/// Lock options of a single attempt with the given attempt and release deadlines.
inline lock_options one_attempt(std::chrono::milliseconds attempt_timeout,
                                std::chrono::milliseconds release_timeout)
{
    lock_options o;
    o.attempt_timeout = attempt_timeout;
    o.release_timeout = release_timeout;
    o.max_attempts = 1;
    return o;
}

/// The outcome of a try_lock and how long it took (ms).
struct timed_try
{
    error_code ec;
    std::optional<lock> l;
    double took_ms = 0;
};

/// async_try_lock, timed.
inline asio::awaitable<timed_try> timed_try_lock(client& c, std::string resource, lock_options o)
{
    const auto t0 = steady::now();
    auto [ec, l] = co_await c.async_try_lock(resource, o, tuple_awaitable);
    co_return timed_try{ec, std::move(l), ms(steady::now() - t0)};
}

/// Lock options that retry: `attempts` in all, `delay` + up to `jitter` between them.
inline lock_options retrying(std::uint32_t attempts, std::chrono::milliseconds delay,
                             std::chrono::milliseconds jitter = std::chrono::milliseconds(0))
{
    lock_options o;
    o.max_attempts = attempts;
    o.retry_delay = delay;
    o.retry_jitter = jitter;
    return o;
}

/// Acquires `resource` with `o` (the client's defaults when not given), failing the test, with
/// the lock's diagnostics, if it cannot.
inline asio::awaitable<lock> acquired(client& c, std::string resource,
                                      std::optional<lock_options> o = {})
{
    auto [ec, l] =
        co_await c.async_lock(resource, o.value_or(c.default_options()), tuple_awaitable);
    INFO(l.describe());
    REQUIRE_FALSE(ec);
    co_return l;
}

/// An acquisition run in the background (lock_in_background): done once it completed.
struct background_lock
{
    error_code ec;
    std::optional<lock> l;
    bool done = false;
    steady::time_point finished{};
};

/// Starts async_lock(resource, o) on `c` as a coroutine of `ex`; `out` must outlive it.
inline void lock_in_background(const asio::any_io_executor& ex, client& c, std::string resource,
                               lock_options o, background_lock& out)
{
    asio::co_spawn(
        ex,
        [&c, resource = std::move(resource), o, &out]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock(resource, o, tuple_awaitable);
            out.ec = ec;
            out.l = std::move(l);
            out.finished = steady::now();
            out.done = true;
        },
        asio::detached);
}

/// async_lock of a resource with options `o` that the client must refuse: checks that it
/// completes with error::invalid_option, and returns the reason the lock gives.
inline asio::awaitable<std::string> refused_option(client& c, lock_options o)
{
    auto [ec, l] = co_await c.async_lock("r", o, tuple_awaitable);
    CHECK(ec == error::invalid_option);
    co_return std::string(l.reason());
}

/// @brief Runs the coroutine `aw` on `io` (on the calling thread) until it completes or
/// `limit` passes, so that a bug fails the test instead of hanging it.
///
/// An exception thrown by the coroutine (a failed REQUIRE included) is rethrown here.
template <class Awaitable>
void run_bounded(asio::io_context& io, Awaitable aw, steady::duration limit)
{
    bool done = false;
    std::exception_ptr ep;
    asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e) {
        done = true;
        ep = e;
    });
    const auto deadline = steady::now() + limit;
    while (!done && steady::now() < deadline)
    {
        io.run_one_until(deadline);
        if (io.stopped())
        {
            if (done)
                break;
            io.restart();
        }
    }
    if (ep)
        std::rethrow_exception(ep);
    if (!done)
        FAIL("the test body did not complete within " << ms(limit) << " ms (hang?)");
}

// ---- Looking at the masters behind the client's back -------------------------------------

/// Parses a raw RESP2 reply that is an array of bulk strings (KEYS *) into its strings.
inline std::vector<std::string> parse_bulk_array(std::string_view raw)
{
    auto fail = [&] {
        throw std::runtime_error("not an array of bulk strings: " + std::string(raw));
    };
    auto read_line = [&](std::string_view& s) {
        const auto eol = s.find("\r\n");
        if (eol == std::string_view::npos)
            fail();
        auto line = s.substr(0, eol);
        s.remove_prefix(eol + 2);
        return line;
    };
    std::string_view s = raw;
    auto head = read_line(s);
    if (head.empty() || head[0] != '*')
        fail();
    const long n = std::stol(std::string(head.substr(1)));
    std::vector<std::string> out;
    for (long k = 0; k < n; ++k)
    {
        auto len_line = read_line(s);
        if (len_line.empty() || len_line[0] != '$')
            fail();
        const auto len = static_cast<std::size_t>(std::stol(std::string(len_line.substr(1))));
        if (s.size() < len + 2)
            fail();
        out.emplace_back(s.substr(0, len));
        s.remove_prefix(len + 2);
    }
    return out;
}

/// Every key on master `i`.
inline std::vector<std::string> keys_on(const local_masters& m, std::size_t i)
{
    return parse_bulk_array(m.command(i, {"KEYS", "*"}));
}

/// Checks that each of masters `i...` of `m` holds no key.
template <class... Index>
void check_no_keys_on(const local_masters& m, Index... i)
{
    for (const std::size_t k : {static_cast<std::size_t>(i)...})
    {
        INFO("master " << k);
        CHECK(keys_on(m, k).empty());
    }
}

/// The value of `key` on master `i`; nullopt when the key does not exist.
inline std::optional<std::string> get_on(const local_masters& m, std::size_t i,
                                         std::string_view key)
{
    const std::string raw = m.command(i, {"GET", key});
    if (raw == "$-1\r\n" || raw == "_\r\n")
        return std::nullopt;
    if (raw.size() < 4 || raw[0] != '$')
        throw std::runtime_error("GET: unexpected reply " + raw);
    const auto eol = raw.find("\r\n");
    const auto len = static_cast<std::size_t>(std::stol(raw.substr(1, eol - 1)));
    return raw.substr(eol + 2, len);
}

/// Total number of keys over every master.
inline std::size_t total_keys(const local_masters& m)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += keys_on(m, i).size();
    return n;
}

/// Keys left on all masters once the releases in flight have landed, waiting up to `limit`
/// for none: async_unlock completes as soon as a quorum has deleted the key, and the slower
/// masters' deletes (queued behind a write in progress, or an EVAL after a NOSCRIPT) go out
/// just after, as long as the io_context runs: this runs `io` while it waits. In a coroutine,
/// use settled_keys.
/// The same where the clients are gone: what they sent is still executed by the masters.
inline std::size_t settled_keys_sync(const local_masters& m, steady::duration limit = 1s)
{
    const auto deadline = steady::now() + limit;
    while (total_keys(m) != 0 && steady::now() < deadline)
        std::this_thread::sleep_for(2ms);
    return total_keys(m);
}

inline std::size_t settled_keys_sync(asio::io_context& io, const local_masters& m,
                                     steady::duration limit = 1s)
{
    const auto deadline = steady::now() + limit;
    while (total_keys(m) != 0 && steady::now() < deadline)
    {
        io.restart();
        io.run_for(2ms);
    }
    return total_keys(m);
}

/// "master 0: [a b] master 1: [] ..." for failure messages.
inline std::string describe_keys(const local_masters& m)
{
    std::string out;
    for (std::size_t i = 0; i < m.size(); ++i)
    {
        out += "master " + std::to_string(i) + ": [";
        for (const auto& k : keys_on(m, i))
        {
            const auto v = get_on(m, i, k);
            out += " " + k + "=" + (v ? *v : std::string("(nil)"));
        }
        out += " ] ";
    }
    return out;
}

/// SCRIPT FLUSH on every master: the state of a master that restarted, as far as the script
/// cache goes.
inline void flush_scripts(const local_masters& m)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        REQUIRE(m.command(i, {"SCRIPT", "FLUSH"}) == "+OK\r\n");
}

/// Counts the masters of `l` whose diagnostics show status `s`.
inline std::size_t count_status(const lock& l, master_status s)
{
    std::size_t n = 0;
    for (const auto& d : l.masters())
        n += d.status == s ? 1 : 0;
    return n;
}

/// @brief Polls `pred` every 2 ms until it holds or `limit` passes; returns its last value.
///
/// A lock completes once a majority granted; the other masters' replies may still be on their
/// way, so a check of *every* master waits for them with this.
template <class Pred>
asio::awaitable<bool> eventually(Pred pred, steady::duration limit = 1s)
{
    const auto deadline = steady::now() + limit;
    for (;;)
    {
        if (pred())
            co_return true;
        if (steady::now() >= deadline)
            co_return false;
        co_await sleep_for(2ms);
    }
}

/// settled_keys_sync for coroutines: the io_context keeps running meanwhile, so that a
/// release still going on in the background (a NOSCRIPT answered by an EVAL) can finish.
inline asio::awaitable<std::size_t> settled_keys(const local_masters& m,
                                                 steady::duration limit = 1s)
{
    co_await eventually([&] { return total_keys(m) == 0; }, limit);
    co_return total_keys(m);
}

/// The running masters whose fence counter of `resource` holds `token`.
inline std::size_t counters_at(const local_masters& m, std::string_view resource,
                               std::uint64_t token)
{
    const std::string key = "{" + std::string(resource) + "}:fence";
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += m.is_running(i) && get_on(m, i, key) == std::to_string(token) ? 1 : 0;
    return n;
}

/// The keys on all masters that are not fence counters ("{resource}:fence") nor their records
/// ("{resource}:fence:holder"): the lock keys. (settled_keys() waits its whole limit for no
/// key at all, which never comes while the counters stay.)
inline std::size_t lock_keys(const local_masters& m)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        for (const auto& key : keys_on(m, i))
            n += key.ends_with(":fence") || key.ends_with(":fence:holder") ? 0 : 1;
    return n;
}

/// True when every master holds `key` with value `value`.
inline bool on_every_master(const local_masters& m, std::string_view key, std::string_view value)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        if (get_on(m, i, key) != std::string(value))
            return false;
    return true;
}

/// acquired(), then waits until the lock's keys are on every master of `m`.
inline asio::awaitable<lock> acquired_everywhere(client& c, const local_masters& m,
                                                 std::string resource,
                                                 std::optional<lock_options> o = {})
{
    lock l = co_await acquired(c, resource, o);
    REQUIRE(co_await eventually([&] { return on_every_master(m, resource, l.token()); }));
    co_return l;
}

/// How many times master i ran `command` ("pttl") since it started or its stats were last
/// reset (INFO commandstats).
inline long command_calls(const local_masters& m, std::size_t i, std::string_view command)
{
    const auto info = m.command(i, {"INFO", "commandstats"});
    const auto name = "\ncmdstat_" + std::string(command) + ":calls=";
    const auto at = info.find(name);
    return at == std::string::npos ? 0 : std::stol(info.substr(at + name.size()));
}

/// The PTTL reads every master ran: a waiting acquisition's watch sends one to each master
/// that refused it (with CLIENT CACHING yes), once its attempt and that attempt's release are
/// over.
inline long watch_reads(const local_masters& m)
{
    long n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += command_calls(m, i, "pttl");
    return n;
}

/// @brief Starts a waiting acquisition of `resource` (`o.wait` > 0) on `c`, whose outcome goes
/// to `ec` and `l`, and returns once it waits behind the holder of `c` that refuses it, between
/// rounds (where the holder's release can hand it the lock):
/// - the first waiter of `c` for the resource: once its watch reached a master (watch_reads);
/// - one queued behind another: once it has started (a post to the client's strand runs after
///   the initiation's own).
/// Fails the test if the acquisition completes meanwhile.
inline asio::awaitable<void> start_waiter(client& c, const local_masters& m, std::string resource,
                                          lock_options o, bool first, std::optional<error_code>& ec,
                                          lock& l)
{
    const auto before = first ? watch_reads(m) : 0;
    c.async_lock(std::move(resource), o, [&](error_code e, lock got) {
        l = std::move(got);
        ec = e;
    });
    if (first)
        REQUIRE(co_await eventually([&] { return ec.has_value() || watch_reads(m) > before; }, 5s));
    else
        co_await asio::post(c.get_executor(), asio::use_awaitable);
    REQUIRE_FALSE(ec);
}

/// Waits until every master of `c` is connected (the first connections are made in the
/// background); fails the test otherwise.
inline asio::awaitable<void> require_connected(client& c)
{
    auto [ec, n] = co_await c.async_wait_connected(tuple_awaitable);
    REQUIRE_FALSE(ec);
    REQUIRE(n == c.size());
}

/// Ends a test the way an application should end: close the client and run the io_context
/// until what is still in flight (a guard's release, an extension) has completed. A lock
/// holder keeps itself alive until its release is done, so an io_context that is never run
/// again would keep it, and the client's internals, allocated (LeakSanitizer reports it).
inline void drain(asio::io_context& io, redlock::client& c)
{
    c.close();
    io.restart();
    io.run_for(std::chrono::milliseconds(200));
}

/// Runs the coroutine `body()` on `io` once every master of `c` is connected, failing the test
/// if it takes longer than `limit` (run_bounded).
template <class Body>
void run_connected(asio::io_context& io, client& c, Body body, steady::duration limit)
{
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            co_await require_connected(c);
            co_await body();
        }(),
        limit);
}

/// run_connected(), then drain()s `c`.
template <class Body>
void run_and_drain(asio::io_context& io, client& c, Body body, steady::duration limit)
{
    run_connected(io, c, std::move(body), limit);
    drain(io, c);
}

/// @brief The setting of most live tests: local masters, an io_context and a client of all of
/// them. A test names the parts it uses (`auto& c = live.c;`) and runs its body with run().
struct live_client
{
    local_masters m;
    asio::io_context io;
    client c;

    explicit live_client(local_masters::options masters, lock_options defaults = {})
        : m(std::move(masters)),
          c(io.get_executor(), config_for(m, defaults))
    {}

    /// Runs the coroutine `body()` once every master is connected, failing the test if it
    /// takes longer than `limit`; then drain()s.
    template <class Body>
    void run(Body body, steady::duration limit)
    {
        run_and_drain(io, c, std::move(body), limit);
    }
};

/// Resumes every master of `m` (SIGCONT; a running one is not affected), then checks that no
/// key is left once what was queued behind the pause has run (a late SET and its release).
inline asio::awaitable<void> expect_no_keys_after_resume(local_masters& m)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        m.resume(i);
    co_await sleep_for(std::chrono::milliseconds(100));
    INFO("after resuming: " << describe_keys(m));
    CHECK(co_await settled_keys(m) == 0);
}

/// For a `resource` that someone else holds: a try_lock completes without an error and without
/// a lock, and a lock fails with error::contended. Returns the refused lock (its diagnostics).
inline asio::awaitable<lock> refused_as_contended(client& c, std::string resource, lock_options o)
{
    auto [tec, tl] = co_await c.async_try_lock(resource, o, tuple_awaitable);
    CHECK_FALSE(tec);
    CHECK_FALSE(tl.has_value());
    auto [lec, l] = co_await c.async_lock(resource, o, tuple_awaitable);
    INFO(l.describe());
    CHECK(lec == error::contended);
    co_return l;
}

/// Unlocks `l` with `c`, which must succeed, then checks that no key is left on `m`'s masters
/// once the releases in flight have landed.
inline asio::awaitable<void> unlock_and_expect_no_keys(client& c, const lock& l,
                                                       const local_masters& m)
{
    auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
    CHECK_FALSE(uec);
    CHECK(co_await settled_keys(m) == 0);
}

/// Puts every master's script cache in the state a test wants: flushed (a NOSCRIPT awaits the
/// next EVALSHA), or primed by a full lock and unlock.
inline asio::awaitable<void> flush_or_prime_scripts(client& c, const local_masters& m, bool flush)
{
    if (flush)
    {
        flush_scripts(m);
        co_return;
    }
    lock l = co_await acquired(c, "warm-up");
    auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
    REQUIRE_FALSE(uec);
}

/// @brief live_client on N masters as a Catch2 fixture (TEST_CASE_METHOD): the test's body
/// names `m`, `io`, `c` and `run()` directly.
template <std::size_t N>
struct masters_rig : live_client
{
    masters_rig() : live_client({.count = N}) {}
};

/// @brief live_client with a second client of the same masters: `theirs`, the rival that
/// holds what ours (`c`) wants. run() waits for both to connect and closes both at the end.
struct live_rivals : live_client
{
    client theirs;

    explicit live_rivals(local_masters::options masters, lock_options defaults = {})
        : live_client(std::move(masters), defaults),
          theirs(io.get_executor(), config_for(m))
    {}

    template <class Body>
    void run(Body body, steady::duration limit)
    {
        live_client::run(
            [&]() -> asio::awaitable<void> {
                co_await require_connected(theirs);
                co_await body();
            },
            limit);
        theirs.close();
    }
};

/// @brief live_rivals on N masters as a Catch2 fixture (TEST_CASE_METHOD): `m`, `io`, `c`
/// (also named `ours`), `theirs` and `run()`.
template <std::size_t N>
struct rivals_rig : live_rivals
{
    rivals_rig() : live_rivals({.count = N}) {}
    client& ours = c;
};

}  // namespace redlock::test
