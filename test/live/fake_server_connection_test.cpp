// redlock::connection against the scripted fake server (test/support/fake_server.hpp): garbage,
// truncated replies, huge lengths, error replies, silence and closes at every step of a
// conversation. Each must give the request a clear error, and the connection must come back
// by itself: the fake server's next connection answers normally and a later request succeeds.
// No case may crash, hang (every wait is bounded) or leak (the sanitizer stage runs LSan).
#include <redlock/config.hpp>
#include <redlock/connection.hpp>
#include <redlock/error.hpp>
#include <redlock/resp.hpp>

#include "connection_helpers.hpp"
#include "fake_server.hpp"
#include "io_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace redlock;
using namespace redlock::test;
using clock_type = std::chrono::steady_clock;

namespace {

/// async_exec with a request deadline (2 s unless given), run to completion on this thread;
/// the test fails if it has not completed within 10 s.
outcome exec_with_deadline(asio::io_context& io, connection& conn, command cmd,
                           std::chrono::milliseconds timeout = 2s)
{
    return exec(io, conn, std::move(cmd), timeout, 10s);
}

/// Retries PING until it answers PONG (each try bounded) or `limit` passes: the connection
/// came back by itself.
bool ping_until_recovered(asio::io_context& io, connection& conn,
                          std::chrono::milliseconds limit = 5s)
{
    const auto deadline = clock_type::now() + limit;
    while (clock_type::now() < deadline)
    {
        auto o = exec_with_deadline(io, conn, command("PING"), 500ms);
        if (!o.ec && o.reply.size() == 1 && o.reply[0].value == "PONG")
            return true;
        run_for(io, 10ms);
    }
    return false;
}

/// The end of a case: the connection comes back by itself (ping_until_recovered), the fake
/// server saw nothing its scripts did not expect, and the connection is shut.
void expect_recovered(asio::io_context& io, connection& conn, const fake_server& srv)
{
    CHECK(ping_until_recovered(io, conn));
    CHECK(srv.errors().empty());
    shut(io, conn);
}

redlock::connection_stats stats_of(asio::io_context& io, connection& conn)
{
    std::optional<redlock::connection_stats> s;
    asio::post(conn.get_executor(), [&] { s = conn.stats(); });
    REQUIRE(run_until(
        io, [&] { return s.has_value(); }, 2s));
    return *s;
}

/// Short reconnect delays and a quick health check, so that each case takes milliseconds.
connection_options fast_options()
{
    connection_options o;
    o.connect_timeout = 1000ms;
    o.reconnect_min_delay = 5ms;
    o.reconnect_max_delay = 20ms;
    o.health_check_timeout = 300ms;
    return o;
}

std::string first_value(const outcome& o)
{
    return o.reply.empty() ? std::string("(no reply: ") + o.ec.message() + ")" : o.reply[0].value;
}

std::string escaped(std::string_view s)
{
    std::string out;
    for (char c : s.substr(0, 60))
    {
        if (c == '\r')
            out += "\\r";
        else if (c == '\n')
            out += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            out += "\\x" + std::to_string(static_cast<unsigned char>(c));
        else
            out += c;
    }
    return s.size() > 60 ? out + "..." : out;
}

}  // namespace

// ---- 1. One bad reply to a request -------------------------------------------------------------

namespace {

struct bad_reply
{
    const char* name;
    fake_script script;   // the first connection's; later ones answer normally
    error_code expected;  // what the PING gets
    bool drops;           // the connection must drop and come back
    std::chrono::milliseconds timeout = 2s;
};

fake_script ping_answer(std::string bytes)
{
    fake_script s;
    s.at("PING").reply(std::move(bytes));
    return s;
}

std::vector<bad_reply> bad_replies()
{
    std::vector<bad_reply> v;
    auto add = [&](const char* name, fake_script s, error_code e, bool drops) {
        v.push_back({name, std::move(s), e, drops});
    };
    // Not RESP at all.
    add("garbage text", ping_answer("hello world\r\n"), error::protocol_error, true);
    add("garbage bytes", ping_answer(std::string("\x16\x03\x01\x00\xff\r\n", 7)),
        error::protocol_error, true);
    add("LF without CR", ping_answer("+PONG\n"), error::protocol_error, true);
    add("CR without LF", ping_answer("+PONG\rX"), error::protocol_error, true);
    add("bulk payload longer than its length", ping_answer("$3\r\nabcde\r\n"),
        error::protocol_error, true);
    add("integer that is not one", ping_answer(":12abc\r\n"), error::protocol_error, true);
    add("streamed string", ping_answer("$?\r\n;4\r\nPONG\r\n;0\r\n"), error::protocol_error, true);
    add("negative length", ping_answer("$-5\r\n"), error::protocol_error, true);
    // Lengths and sizes past the limits: refused at the header, nothing is allocated.
    add("huge bulk length", ping_answer("$99999999999\r\n"), error::protocol_error, true);
    add("huge array size", ping_answer("*4294967295\r\n"), error::protocol_error, true);
    add("length past 64 bits", ping_answer("$99999999999999999999999\r\n"), error::protocol_error,
        true);
    add("huge map size", ping_answer("%2147483648\r\n"), error::protocol_error, true);
    {
        std::string deep;
        for (int i = 0; i < 100; ++i)
            deep += "*1\r\n";
        add("nesting past the limit", ping_answer(deep + ":1\r\n"), error::protocol_error, true);
    }
    add("line without end past 64 KiB", ping_answer("+" + std::string(70000, 'a')),
        error::protocol_error, true);
    // Truncated replies, then the server closes (FIN) or resets (RST).
    {
        fake_script s;
        s.at("PING").reply("$10\r\nabc").close();
        add("truncated bulk, then close", std::move(s), error::connection_lost, true);
    }
    {
        fake_script s;
        s.at("PING").reply("*3\r\n:1\r\n").close();
        add("truncated array, then close", std::move(s), error::connection_lost, true);
    }
    {
        fake_script s;
        s.at("PING").reply("+PO").reset();
        add("half a status line, then reset", std::move(s), error::connection_lost, true);
    }
    {
        fake_script s;
        s.at("PING").close();
        add("close instead of a reply", std::move(s), error::connection_lost, true);
    }
    {
        fake_script s;
        s.at("PING").reset();
        add("reset instead of a reply", std::move(s), error::connection_lost, true);
    }
    {
        fake_script s;
        s.at("PING").reply("$4\r\nPONG\r\n").slowly(2, 5ms).close();
        add("a reply in pieces, then close", std::move(s), {}, true);
    }
    // Well-formed but unexpected.
    add("a reply with no request pending", ping_answer("+PONG\r\n+EXTRA\r\n"), {}, true);
    add("push frame before the reply", ping_answer(">2\r\n+message\r\n+x\r\n+PONG\r\n"), {}, false);
    add("attribute before the reply", ping_answer("|1\r\n+key\r\n+value\r\n+PONG\r\n"), {}, false);
    {
        fake_script s;
        s.at("PING").reply("+PONG\r\n").slowly(1, 2ms);
        add("a reply one byte at a time", std::move(s), {}, false);
    }
    // Server errors: the error of their prefix, and the connection stays up.
    add("-ERR", ping_answer("-ERR something went wrong\r\n"), error::server_error, false);
    add("-NOSCRIPT", ping_answer("-NOSCRIPT No matching script\r\n"), error::noscript, false);
    add("-WRONGTYPE",
        ping_answer("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        error::wrongtype, false);
    add("-READONLY", ping_answer("-READONLY You can't write against a read only replica.\r\n"),
        error::readonly, false);
    add("-OOM", ping_answer("-OOM command not allowed when used memory > 'maxmemory'.\r\n"),
        error::oom, false);
    add("-BUSY", ping_answer("-BUSY Redis is busy running a script.\r\n"), error::busy, false);
    add("-LOADING", ping_answer("-LOADING Redis is loading the dataset in memory\r\n"),
        error::loading, false);
    add("-MASTERDOWN", ping_answer("-MASTERDOWN Link with MASTER is down\r\n"), error::masterdown,
        false);
    add("-NOPERM", ping_answer("-NOPERM this user has no permissions\r\n"), error::noperm, false);
    add("-NOAUTH", ping_answer("-NOAUTH Authentication required.\r\n"), error::noauth, false);
    add("bulk error", ping_answer("!20\r\nWRONGTYPE wrong kind\r\n"), error::wrongtype, false);
    add("empty error", ping_answer("-\r\n"), error::server_error, false);
    // Silence: the request's deadline, then the health check drops the stalled connection.
    {
        fake_script s;
        s.at("PING").silent().stall();
        v.push_back({"silence", std::move(s), error::request_timeout, true, 200ms});
    }
    return v;
}

}  // namespace

TEST_CASE("fake server: a bad reply gives the request a clear error and the connection recovers",
          "[live][fake][connection]")
{
    // One run of the test case per bad reply (a failed REQUIRE ends that case only).
    const bad_reply c = GENERATE(from_range(bad_replies()));
    INFO("case: " << c.name);
    fake_server srv;
    srv.push(c.script);
    asio::io_context io;
    connection conn(io.get_executor(), srv.uri(), fast_options());
    REQUIRE_FALSE(wait_connected(io, conn, 10s));

    const auto o = exec_with_deadline(io, conn, command("PING"), c.timeout);
    INFO("got: " << o.ec.message());
    CHECK(o.ec == c.expected);
    if (!o.ec)
    {
        // An attribute, if any, comes first (resp.hpp): the value is the last top-level node.
        REQUIRE_FALSE(o.reply.empty());
        CHECK(o.reply.back().value == "PONG");
        CHECK(o.reply.back().depth == 0);
    }
    else if (o.ec.category() == redlock::category() &&
             o.ec.value() >= static_cast<int>(error::server_error))
    {
        // A server error comes with the server's message.
        REQUIRE(o.reply.size() == 1);
        CHECK(resp::is_error(o.reply[0].data_type));
    }
    else
    {
        CHECK(o.reply.empty());
    }

    if (c.drops)
    {
        // The drop is seen, the next connection answers normally.
        CHECK(run_until(
            io, [&] { return srv.connections() >= 2; }, 5s));
        CHECK(ping_until_recovered(io, conn));
        CHECK(stats_of(io, conn).drops >= 1);
    }
    else
    {
        // Same connection, still in sync.
        const auto next = exec_with_deadline(io, conn, command("ECHO", "in sync"));
        CHECK_FALSE(next.ec);
        CHECK((next.reply.size() == 1 && next.reply[0].value == "in sync"));
        CHECK(srv.connections() == 1);
        CHECK(stats_of(io, conn).drops == 0);
    }
    CHECK(srv.errors().empty());
    shut(io, conn);
}

// ---- 2. A fault at every step of a conversation --------------------------------------------------

namespace {

enum class fault
{
    close,      // FIN instead of the reply
    reset,      // RST instead of the reply
    truncated,  // half a reply, then FIN
    garbage,    // bytes that are not RESP
};

const char* name_of(fault f)
{
    switch (f)
    {
    case fault::close: return "close";
    case fault::reset: return "reset";
    case fault::truncated: return "truncated reply";
    default: return "garbage";
    }
}

void apply(fake_script& s, fault f)
{
    switch (f)
    {
    case fault::close: s.close(); break;
    case fault::reset: s.reset(); break;
    case fault::truncated: s.reply("$20\r\nonly part of").close(); break;
    case fault::garbage: s.reply("\x15not resp at all\r\n"); break;
    }
}

}  // namespace

TEST_CASE("fake server: a fault at every step of a conversation, handshake included, then recovery",
          "[live][fake][connection]")
{
    // The conversation: the handshake (AUTH, SELECT, CLIENT SETNAME, pipelined in one write),
    // then three requests.
    const std::vector<std::string> steps = {"AUTH", "SELECT", "CLIENT", "SET", "GET", "PING"};
    constexpr std::size_t handshake_steps = 3;

    for (std::size_t k = 0; k < steps.size(); ++k)
    {
        for (fault f : {fault::close, fault::reset, fault::truncated, fault::garbage})
        {
            INFO("fault '" << name_of(f) << "' at " << steps[k]);
            fake_server srv;
            fake_script s;
            for (std::size_t j = 0; j < k; ++j)
                s.expect(steps[j]).normal();
            s.expect(steps[k]);
            apply(s, f);
            srv.push(std::move(s));

            asio::io_context io;
            connection conn(io.get_executor(), srv.uri(":s3cret", 3), fast_options());
            const error_code connected = wait_connected(io, conn, 10s);
            if (k < handshake_steps)
            {
                // The attempt fails with a cause that says what happened; the password is
                // never in what the user sees.
                const error_code expected = f == fault::garbage
                                                ? error_code(error::protocol_error)
                                                : error_code(error::handshake_failed);
                INFO("got: " << connected.message() << " / " << conn.last_error_detail());
                CHECK(connected == expected);
                CHECK_THAT(conn.last_error_detail(), !Catch::Matchers::Contains("s3cret"));
                CHECK_THAT(conn.last_error_detail(), Catch::Matchers::Contains("***"));
            }
            else
            {
                REQUIRE_FALSE(connected);
                const std::vector<command> requests = {command("SET", "k", "v"),
                                                       command("GET", "k"), command("PING")};
                for (std::size_t j = handshake_steps; j <= k; ++j)
                {
                    const auto o = exec_with_deadline(io, conn, requests[j - handshake_steps]);
                    if (j < k)
                    {
                        CHECK_FALSE(o.ec);
                        continue;
                    }
                    const error_code expected = f == fault::garbage
                                                    ? error_code(error::protocol_error)
                                                    : error_code(error::connection_lost);
                    INFO("got: " << o.ec.message());
                    CHECK(o.ec == expected);
                }
            }

            // Recovery: the next connection is normal and the whole conversation works.
            REQUIRE(ping_until_recovered(io, conn));
            CHECK(srv.connections() >= 2);
            const auto set = exec_with_deadline(io, conn, command("SET", "k", "v2"));
            CHECK_FALSE(set.ec);
            const auto get = exec_with_deadline(io, conn, command("GET", "k"));
            CHECK_FALSE(get.ec);
            CHECK((get.reply.size() == 1 && get.reply[0].value == "v2"));
            // The handshake sent what the configuration asks for, in order.
            const auto first = srv.commands(srv.connections() - 1);
            REQUIRE(first.size() >= 3);
            CHECK(first[0] == std::vector<std::string>{"AUTH", "s3cret"});
            CHECK(first[1] == std::vector<std::string>{"SELECT", "3"});
            CHECK(first[2] == std::vector<std::string>{"CLIENT", "SETNAME", "redlock"});
            CHECK(srv.errors().empty());
            shut(io, conn);
        }
    }
}

// ---- 3. Handshake rejections and odd servers ----------------------------------------------------

TEST_CASE("fake server: handshake rejections and odd servers give the cause, then recovery",
          "[live][fake][connection]")
{
    struct handshake_case
    {
        const char* name;
        fake_script script;
        error_code expected;
        error_code also = {};  ///< Another outcome the timing may give.
    };
    std::vector<handshake_case> cases;
    auto add = [&](const char* name, fake_script s, error_code e, error_code also = {}) {
        cases.push_back({name, std::move(s), e, also});
    };
    {
        fake_script s;
        s.expect("AUTH").reply(
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
        add("wrong password", std::move(s), error::wrongpass);
    }
    {
        fake_script s;
        s.expect("AUTH").normal().expect("SELECT").reply("-ERR DB index is out of range\r\n");
        add("SELECT refused", std::move(s), error::server_error);
    }
    {
        fake_script s;
        s.expect("AUTH").normal().expect("SELECT").normal().expect("CLIENT").reply(
            "-NOPERM no permission\r\n");
        add("CLIENT SETNAME refused", std::move(s), error::noperm);
    }
    {
        fake_script s;
        s.close_on_accept();
        add("closed on accept", std::move(s), error::handshake_failed);
    }
    {
        fake_script s;
        s.reset_on_accept();
        // The RST may reach the socket before the kernel reports the connect as complete.
        add("reset on accept", std::move(s), error::handshake_failed, error::connect_failed);
    }
    {
        fake_script s;
        s.on_accept("SSH-2.0-OpenSSH_9.2\r\n");
        add("another protocol greets first", std::move(s), error::protocol_error);
    }
    {
        fake_script s;
        s.expect("AUTH").silent().stall();
        add("silent during the handshake", std::move(s), error::connect_failed);
    }
    {
        fake_script s;
        s.expect("AUTH").reply("$99999999999\r\n");
        add("huge length in the handshake", std::move(s), error::protocol_error);
    }
    {
        // A push frame in the handshake is skipped; the handshake succeeds.
        fake_script s;
        s.expect("AUTH").reply(">2\r\n+message\r\n+x\r\n+OK\r\n");
        add("push frame during the handshake", std::move(s), {});
    }

    for (auto& c : cases)
    {
        INFO("case: " << c.name);
        fake_server srv;
        srv.push(c.script);
        asio::io_context io;
        auto opts = fast_options();
        opts.connect_timeout = 300ms;
        connection conn(io.get_executor(), srv.uri(":s3cret", 1), opts);
        // Queued while connecting: it fails with the attempt's cause, or succeeds.
        auto queued = std::make_shared<outcome>();
        conn.async_exec(command("PING"), 5s, record(queued));
        const error_code connected = wait_connected(io, conn, 10s);
        INFO("got: " << connected.message() << " / " << conn.last_error_detail());
        const bool also = c.also && connected == c.also;
        CHECK((connected == c.expected || also));
        REQUIRE(run_until(
            io, [&] { return queued->done; }, 5s));
        CHECK(queued->ec == (also ? c.also : c.expected));
        CHECK_THAT(conn.last_error_detail(), !Catch::Matchers::Contains("s3cret"));
        expect_recovered(io, conn, srv);
    }
}

// ---- 4. Pipelines and batches cut by a fault ----------------------------------------------------

TEST_CASE("fake server: garbage in the middle of a pipeline fails exactly the requests after it",
          "[live][fake][connection]")
{
    fake_server srv;
    fake_script s;
    s.expect("CLIENT").normal();
    for (int i = 0; i < 10; ++i)
        s.expect("ECHO").normal();
    s.expect("ECHO").reply("?garbage\r\n");
    srv.push(std::move(s));

    asio::io_context io;
    connection conn(io.get_executor(), srv.uri(), fast_options());
    REQUIRE_FALSE(wait_connected(io, conn, 10s));
    std::vector<std::shared_ptr<outcome>> outs;
    for (int i = 0; i < 50; ++i)
    {
        outs.push_back(std::make_shared<outcome>());
        conn.async_exec(command("ECHO", "m" + std::to_string(i)), 5s, record(outs.back()));
    }
    REQUIRE(run_until(
        io, [&] { return std::all_of(outs.begin(), outs.end(), [](auto& o) { return o->done; }); },
        10s));
    for (int i = 0; i < 50; ++i)
    {
        INFO("request " << i << ": " << outs[i]->ec.message());
        if (i < 10)
        {
            CHECK_FALSE(outs[i]->ec);
            CHECK(
                (outs[i]->reply.size() == 1 && outs[i]->reply[0].value == "m" + std::to_string(i)));
        }
        else
        {
            CHECK(outs[i]->ec == error::protocol_error);
        }
    }
    expect_recovered(io, conn, srv);
}

TEST_CASE("fake server: a batch whose second reply is garbage fails as a whole, then recovery",
          "[live][fake][connection]")
{
    fake_server srv;
    fake_script s;
    s.at("SET").normal().expect("GET").reply("\x01\x02\x03\r\n");
    srv.push(std::move(s));

    asio::io_context io;
    connection conn(io.get_executor(), srv.uri(), fast_options());
    REQUIRE_FALSE(wait_connected(io, conn, 10s));
    redlock::request req;
    req.push("SET", "k", "v").push("GET", "k").push("PING");
    bool done = false;
    error_code ec;
    std::vector<resp::reply> replies;
    conn.async_exec(std::move(req), 2s, [&](error_code e, std::vector<resp::reply> r) {
        done = true;
        ec = e;
        replies = std::move(r);
    });
    REQUIRE(run_until(
        io, [&] { return done; }, 5s));
    CHECK(ec == error::protocol_error);
    CHECK(replies.empty());
    expect_recovered(io, conn, srv);
}

// ---- 5. Size limits --------------------------------------------------------------------------

TEST_CASE(
    "fake server: a large valid reply arrives whole, one over the configured limit is refused",
    "[live][fake][connection]")
{
    asio::io_context io;
    {
        const std::string big(1 << 20, 'x');
        fake_server srv;
        srv.push(ping_answer("$" + std::to_string(big.size()) + "\r\n" + big + "\r\n"));
        connection conn(io.get_executor(), srv.uri(), fast_options());
        const auto o = exec_with_deadline(io, conn, command("PING"), 5s);
        REQUIRE_FALSE(o.ec);
        REQUIRE(o.reply.size() == 1);
        CHECK(o.reply[0].value == big);
        shut(io, conn);
    }
    auto opts = fast_options();
    opts.max_bulk_length = 1024;
    opts.max_aggregate_size = 4;
    opts.max_nesting_depth = 2;
    for (const std::string& reply :
         {"$2048\r\n" + std::string(2048, 'y') + "\r\n",
          std::string("*5\r\n:1\r\n:2\r\n:3\r\n:4\r\n:5\r\n"), std::string("%3\r\n"),
          std::string("*1\r\n*1\r\n*1\r\n:1\r\n")})
    {
        INFO("reply: " << escaped(reply));
        fake_server srv;
        srv.push(ping_answer(reply));
        connection conn(io.get_executor(), srv.uri(), opts);
        const auto o = exec_with_deadline(io, conn, command("PING"));
        CHECK(o.ec == error::protocol_error);
        expect_recovered(io, conn, srv);
    }
}

// ---- 6. The fake server itself ---------------------------------------------------------------

TEST_CASE("fake server: answers normally like a small Redis", "[live][fake]")
{
    fake_server srv;
    asio::io_context io;
    connection conn(io.get_executor(), srv.uri(), fast_options());
    CHECK(first_value(exec_with_deadline(io, conn, command("SET", "k", "t1", "NX", "PX", 10000))) ==
          "OK");
    CHECK(exec_with_deadline(io, conn, command("SET", "k", "t2", "NX", "PX", 10000))
              .reply.at(0)
              .data_type == resp::type::null);
    CHECK(exec_with_deadline(io, conn, command("GET", "k")).reply.at(0).value == "t1");
    CHECK(srv.value_of("k") == "t1");
    // redlock's scripts, told apart by their argument count.
    CHECK(
        exec_with_deadline(io, conn, command("EVALSHA", "sha", "1", "k", "t2")).reply.at(0).value ==
        "0");
    CHECK(exec_with_deadline(io, conn, command("EVAL", "body", "1", "k", "t1", "5000"))
              .reply.at(0)
              .value == "1");
    CHECK(
        exec_with_deadline(io, conn, command("EVALSHA", "sha", "1", "k", "t1")).reply.at(0).value ==
        "1");
    CHECK_FALSE(srv.value_of("k"));
    CHECK(exec_with_deadline(io, conn, command("NOSUCH")).ec == error::server_error);
    // Expiry.
    CHECK_FALSE(exec_with_deadline(io, conn, command("SET", "e", "v", "PX", 20)).ec);
    run_for(io, 50ms);
    CHECK_FALSE(srv.value_of("e"));
    CHECK(srv.command_names(0).front() == "CLIENT");
    CHECK(srv.errors().empty());
    shut(io, conn);
}
