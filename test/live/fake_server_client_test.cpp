// redlock::client with some masters replaced by the scripted fake server: a master that sends
// garbage, a wrong reply type, an error or nothing counts as a failed master in the lock's
// diagnostics (with the error that says why), the quorum of the other masters decides, and
// the bad master's connection comes back by itself.
#include "client_fixture.hpp"
#include "fake_server.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace redlock;
using namespace redlock::test;

namespace {

/// Options that decide within milliseconds: one attempt, short deadlines.
lock_options quick()
{
    auto o = lasting(5000ms);
    o.attempt_timeout = 200ms;
    o.release_timeout = 200ms;
    o.max_attempts = 1;
    return o;
}

client_config config_of(const std::vector<std::string>& uris)
{
    client_config cfg;
    cfg.masters = uris;
    cfg.defaults = quick();
    cfg.connection.reconnect_min_delay = 5ms;
    cfg.connection.reconnect_max_delay = 20ms;
    cfg.connection.health_check_timeout = 300ms;
    cfg.connection.connect_timeout = 1000ms;
    return cfg;
}

/// Three fake masters; the first follows `bad` on its first connection. The other two answer
/// their first `slow` command 30 ms late, so that the bad master's answer is in before the
/// quorum is reached (else the round decides without it and its status stays `pending`).
struct three_fakes
{
    explicit three_fakes(std::optional<fake_script> bad = std::nullopt,
                         std::string_view slow = "SET")
    {
        if (bad)
            m[0].push(*bad);
        for (int i : {1, 2})
        {
            fake_script s;
            s.at(slow).normal().after(30ms);
            m[i].push(std::move(s));
        }
    }
    std::vector<std::string> uris() const { return {m[0].uri(), m[1].uri(), m[2].uri()}; }
    fake_server m[3];
};

/// Runs `body(c)`, bounded, with a client of the masters at `uris` (connected first unless
/// `connect_first` is false), then closes the client.
template <class Body>
void with_client(const std::vector<std::string>& uris, Body body, bool connect_first = true)
{
    asio::io_context io;
    client c(io.get_executor(), config_of(uris));
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            if (connect_first)
                co_await require_connected(c);
            co_await body(c);
        }(),
        30s);
    c.close();
    io.run_for(20ms);
}

fake_script on_first(std::string_view command, std::string bytes)
{
    fake_script s;
    s.at(command).reply(std::move(bytes));
    return s;
}

/// Locks and unlocks `resource` until each of the first `bad` masters has granted at least once (it has
/// recovered), or `limit` passes. A success is decided at the quorum, so a slower master may
/// still be `pending` in any one lock: the grants are gathered over the attempts. The limit
/// bounds an end-to-end outcome (the reconnection's delays are 5-20 ms): with a CPU hog beside
/// the suite, 5 s once did not suffice, so it is far from what any load reaches.
asio::awaitable<bool> recovers_eventually(client& c, std::string resource, std::size_t bad = 1,
                                          steady::duration limit = 15s)
{
    std::vector<bool> seen(c.size(), false);
    const auto deadline = steady::now() + limit;
    while (steady::now() < deadline)
    {
        auto [ec, l] = co_await c.async_lock(resource, quick(), tuple_awaitable);
        if (!ec)
        {
            for (std::size_t i = 0; i < l.masters().size(); ++i)
                if (l.masters()[i].status == master_status::granted)
                    seen[i] = true;
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            if (std::all_of(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(bad),
                            [](bool b) { return b; }))
                co_return true;
        }
        co_await sleep_for(20ms);
    }
    co_return false;
}

struct master_fault
{
    const char* name;
    fake_script script;
    master_status status;
    error_code ec;
};

std::vector<master_fault> set_faults()
{
    std::vector<master_fault> v;
    auto add = [&](const char* name, fake_script s, master_status st, error_code ec) {
        v.push_back({name, std::move(s), st, ec});
    };
    // A master that answers SET with `reply` fails with `ec`.
    auto set_reply = [&](const char* name, std::string reply, error_code ec) {
        add(name, on_first("SET", std::move(reply)), master_status::error, ec);
    };
    // Well-formed replies that SET NX cannot return.
    set_reply("integer to SET", ":1\r\n", error::unexpected_reply);
    set_reply("bulk string to SET", "$2\r\nOK\r\n", error::unexpected_reply);
    set_reply("array to SET", "*1\r\n+OK\r\n", error::unexpected_reply);
    set_reply("other status to SET", "+QUEUED\r\n", error::unexpected_reply);
    set_reply("boolean to SET", "#t\r\n", error::unexpected_reply);
    // Server errors.
    set_reply("-READONLY to SET", "-READONLY You can't write against a read only replica.\r\n",
              error::readonly);
    set_reply("-OOM to SET", "-OOM command not allowed\r\n", error::oom);
    set_reply("-WRONGTYPE to SET", "-WRONGTYPE wrong kind\r\n", error::wrongtype);
    set_reply("-ERR to SET", "-ERR oops\r\n", error::server_error);
    // Broken streams.
    set_reply("garbage to SET", "<html>\r\n", error::protocol_error);
    set_reply("huge length to SET", "$99999999999\r\n", error::protocol_error);
    set_reply("huge array to SET", "*4294967295\r\n", error::protocol_error);
    add("half a reply, then close", fake_script().at("SET").reply("+O").close(),
        master_status::error, error::connection_lost);
    add("reset instead of a reply", fake_script().at("SET").reset(), master_status::error,
        error::connection_lost);
    // Decided by the other two before the deadline: this master was not needed.
    add("silence", fake_script().at("SET").silent().stall(), master_status::not_needed, {});
    return v;
}

}  // namespace

TEST_CASE("fake server: a master that answers SET badly counts as failed and the others decide",
          "[live][fake][client]")
{
    for (auto& f : set_faults())
    {
        INFO("fault: " << f.name);
        three_fakes fakes(f.script);
        asio::io_context io;
        client c(io.get_executor(), config_of(fakes.uris()));
        run_connected(
            io, c,
            [&]() -> asio::awaitable<void> {
                auto [ec, l] = co_await c.async_lock("res", tuple_awaitable);
                INFO("lock: " << ec.message() << " " << l.describe());
                REQUIRE_FALSE(ec);
                REQUIRE(l.held());
                const redlock::master_diagnostic bad = l.masters()[0];
                CHECK(bad.status == f.status);
                CHECK(bad.ec == f.ec);
                if (f.status == master_status::error)
                    CHECK_FALSE(bad.message.empty());
                CHECK(l.masters()[1].status == master_status::granted);
                CHECK(l.masters()[2].status == master_status::granted);
                CHECK(fakes.m[1].value_of("res") == std::string(l.token()));
                CHECK(fakes.m[2].value_of("res") == std::string(l.token()));

                auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                CHECK_FALSE(uec);
                CHECK_FALSE(fakes.m[1].value_of("res"));
                CHECK_FALSE(fakes.m[2].value_of("res"));

                // The bad master comes back by itself: soon every master grants.
                CHECK(co_await recovers_eventually(c, "res2"));
            },
            30s);
        for (auto& m : fakes.m)
            CHECK(m.errors().empty());
        c.close();
        io.run_for(20ms);
    }
}

TEST_CASE(
    "fake server: two bad masters of three: no quorum with both causes, keys released, recovery",
    "[live][fake][client]")
{
    fake_server fakes_m[3];
    fakes_m[0].push(on_first("SET", ":1\r\n"));
    fakes_m[1].push(on_first("SET", "garbage\r\n"));
    struct
    {
        fake_server* m;
        std::vector<std::string> uris() const { return {m[0].uri(), m[1].uri(), m[2].uri()}; }
    } fakes{fakes_m};
    with_client(fakes.uris(), [&](client& c) -> asio::awaitable<void> {
        auto [ec, l] = co_await c.async_lock("res", tuple_awaitable);
        INFO(l.describe());
        CHECK(ec == error::no_quorum);
        CHECK_FALSE(l.held());
        REQUIRE(l.masters().size() == 3);
        CHECK(l.masters()[0].ec == error::unexpected_reply);
        CHECK(l.masters()[1].ec == error::protocol_error);
        // The failed attempt's release runs on every master: no key is left behind.
        CHECK(co_await eventually([&] { return !fakes.m[2].value_of("res"); }));
        CHECK(co_await recovers_eventually(c, "res", 2));
    });
}

TEST_CASE("fake server: bad replies to the release and the extension count as failed masters",
          "[live][fake][client]")
{
    struct release_case
    {
        const char* name;
        fake_script script;
        error_code ec;  // of master 0 in the unlock's outcome; unlock itself succeeds
    };
    // The release is the client's first on each connection: it goes as EVAL (an EVALSHA would
    // need the script to be known there), so that is where the faults are placed.
    std::vector<release_case> cases;
    cases.push_back({"+OK to the release", on_first("EVAL", "+OK\r\n"), error::unexpected_reply});
    cases.push_back(
        {"garbage to the release", on_first("EVAL", "\x7f\x7f\r\n"), error::protocol_error});
    cases.push_back({"-ERR to the release", on_first("EVAL", "-ERR Error running script\r\n"),
                     error::server_error});
    {
        fake_script s;
        s.at("EVAL").close();
        cases.push_back({"close at the release", std::move(s), error::connection_lost});
    }

    for (auto& rc : cases)
    {
        INFO("release fault: " << rc.name);
        three_fakes fakes(rc.script);
        with_client(fakes.uris(), [&](client& c) -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock("res", tuple_awaitable);
            REQUIRE_FALSE(ec);
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);  // two of three deleted
            CHECK_FALSE(fakes.m[1].value_of("res"));
            CHECK_FALSE(fakes.m[2].value_of("res"));
            CHECK(co_await recovers_eventually(c, "res2"));
        });
    }

    SECTION("-NOSCRIPT to EVALSHA is answered with EVAL, which deletes the key")
    {
        three_fakes fakes(
            on_first("EVALSHA", "-NOSCRIPT No matching script. Please use EVAL.\r\n"));
        with_client(fakes.uris(), [&](client& c) -> asio::awaitable<void> {
            // The first release on a connection goes as EVAL (the script is not known to be
            // there yet); the second as EVALSHA, which master 0 answers NOSCRIPT: EVAL follows.
            for (int k = 0; k < 2; ++k)
            {
                auto [ec, l] = co_await c.async_lock("res", tuple_awaitable);
                REQUIRE_FALSE(ec);
                auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                CHECK_FALSE(uec);
                CHECK(co_await eventually([&] { return !fakes.m[0].value_of("res"); }));
                // The unlock may complete at the quorum before the client has read master 0's
                // answer, which is what tells the connection the script is there.
                co_await sleep_for(50ms);
            }
            const auto names = fakes.m[0].command_names(0);
            const auto first_eval = std::find(names.begin(), names.end(), "EVAL");
            const auto sha = std::find(names.begin(), names.end(), "EVALSHA");
            REQUIRE(sha != names.end());
            CHECK(first_eval < sha);
            CHECK(std::find(sha, names.end(), "EVAL") != names.end());
        });
    }

    SECTION("garbage to one master's extension: extended on the other two")
    {
        three_fakes fakes(on_first("EVAL", "@@@\r\n"), "EVAL");
        with_client(fakes.uris(), [&](client& c) -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock("res", tuple_awaitable);
            REQUIRE_FALSE(ec);
            auto [eec, l2] = co_await c.async_extend(l, 8000ms, tuple_awaitable);
            INFO(l2.describe());
            REQUIRE_FALSE(eec);
            CHECK(l2.held());
            CHECK(l2.masters()[0].ec == error::protocol_error);
            auto [uec] = co_await c.async_unlock(l2, tuple_awaitable);
            CHECK_FALSE(uec);
        });
    }
}

TEST_CASE("fake server: a master whose handshake breaks fails the first lock with its cause",
          "[live][fake][client]")
{
    for (int variant = 0; variant < 3; ++variant)
    {
        fake_script s;
        if (variant == 0)
            s.expect("CLIENT").close();
        else if (variant == 1)
            s.expect("CLIENT").reply("-ERR unknown subcommand\r\n");
        else
            s.close_on_accept();
        const error_code expected =
            variant == 1 ? error_code(error::server_error) : error_code(error::handshake_failed);
        INFO("variant " << variant);
        three_fakes fakes(s);
        with_client(
            fakes.uris(),
            [&](client& c) -> asio::awaitable<void> {
                // Started at once: the request is queued while the first attempt runs.
                auto [ec, l] = co_await c.async_lock("res", tuple_awaitable);
                INFO(l.describe());
                REQUIRE_FALSE(ec);
                CHECK(l.masters()[0].status == master_status::error);
                CHECK(l.masters()[0].ec == expected);
                auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                CHECK_FALSE(uec);
                CHECK(co_await recovers_eventually(c, "res2"));
            },
            false);
    }
}

TEST_CASE("fake server: a fake master that answers SET with :1 beside two real masters",
          "[live][fake][client]")
{
    local_masters real({.count = 2});
    fake_server fake;
    fake.push(on_first("SET", ":1\r\n"));
    asio::io_context io;
    client c(io.get_executor(), config_of({real.uri(0), fake.uri(), real.uri(1)}));
    run_connected(
        io, c,
        [&]() -> asio::awaitable<void> {
            // The first real master is paused for 50 ms, so that the quorum needs it and the
            // fake's answer is in before the round is decided (else it could stay `pending`).
            real.pause(0);
            asio::steady_timer resume(io, 50ms);
            resume.async_wait([&](error_code) { real.resume(0); });
            auto [ec, l] = co_await c.async_lock("mixed", tuple_awaitable);
            INFO(l.describe());
            REQUIRE_FALSE(ec);
            CHECK(l.masters()[1].status == master_status::error);
            CHECK(l.masters()[1].ec == error::unexpected_reply);
            CHECK(get_on(real, 0, "mixed") == std::string(l.token()));
            CHECK(get_on(real, 1, "mixed") == std::string(l.token()));
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            CHECK_FALSE(uec);
            CHECK(co_await settled_keys(real) == 0);
        },
        20s);
    c.close();
    io.run_for(20ms);
}
