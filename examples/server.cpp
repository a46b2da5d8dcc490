// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-example-server: an Asio TCP server (127.0.0.1, port chosen by the kernel) whose
// requests change account balances. Each change is a read-modify-write that spans an await (as
// a database round trip would), so two requests on one account must not interleave: every
// request co_awaits a Redlock lock on its account (client::async_with_lock) before touching the
// balance, and its work is cancelled if the lock is lost.
//
// The program runs the server and its customers itself: several connections deposit into two
// accounts at once; meanwhile one slow deposit has its lock stolen behind its back (the keys are
// deleted on every master), so that other deposits get in while it still believes it holds the
// lock. Its work is cancelled before it writes, and no update is lost. An audit holds a lock
// longer than its TTL with lock_holder (kept alive by automatic extension), and a CPU-bound
// computation yields between its steps. Exits 0 only if the
// final balances are exactly the sums of the acknowledged deposits, the slow deposit was
// cancelled, the audit was extended, and no key is left on the masters.

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "example_checks.hpp"
#include "example_masters.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

using redlock_example::check;
using redlock::use_tuple;

// The shared state the locks protect.
std::map<std::string, long> balances = {{"acct:0", 1000}, {"acct:1", 1000}, {"acct:2", 1000}, {"acct:3", 1000}};

redlock::lock_options account_lock()
{
    redlock::lock_options o;
    o.ttl = 1000ms;  // extended automatically while a request holds it
    // Requests on one account queue up behind each other: retry often, for a while.
    o.max_attempts = 400;
    o.retry_delay = 2ms;
    o.retry_jitter = 8ms;
    return o;
}

asio::awaitable<void> storage_delay(std::chrono::milliseconds d)
{
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);  // throws operation_aborted when cancelled
}

// [deposit] A deposit: lock the account, then read, await, write. If the lock is lost while the
// work waits, the wait throws operation_aborted, the write never happens, and async_with_lock
// completes with error::lock_lost once the keys are released.
asio::awaitable<std::string> deposit(redlock::client& locks, std::string account, long amount,
                                     std::chrono::milliseconds work_time)
{
    // Every argument a named variable or a trivial value (GCC 12: usage.md §17).
    const std::string resource = "bank:" + account;
    auto [ec, balance] = co_await locks.async_with_lock(
        resource, account_lock(), [&](redlock::lock) -> asio::awaitable<long> {
            const long before = balances[account];
            co_await storage_delay(work_time);
            balances[account] = before + amount;
            co_return before + amount;
        });
    if (ec == redlock::error::lock_lost)
        co_return "lost";
    if (ec)
        co_return "busy " + ec.message();
    co_return "ok " + std::to_string(balance);
}
// [deposit]

// [audit] The same with an explicit guard: lock, keep alive, bind the work to the loss slot,
// release. The audit takes longer than the TTL; the holder's extensions keep it.
asio::awaitable<std::string> audit(redlock::client& locks, std::string account)
{
    const std::string resource = "bank:" + account;
    auto [ec, l] = co_await locks.async_lock(resource, account_lock(), use_tuple);
    if (ec)
        co_return "busy " + ec.message();
    // The executor first, on its own line (GCC 12: no co_await beside temporaries, usage.md §17).
    auto ex = co_await asio::this_coro::executor;
    redlock::lock_holder holder(locks, l, ex);

    asio::steady_timer work(ex, 1500ms);
    auto [wec] = co_await work.async_wait(asio::bind_cancellation_slot(holder.loss_slot(), use_tuple));
    if (wec || !holder.held())
        co_return "lost " + holder.status().message();
    const long balance = balances[account];
    const auto extensions = holder.extensions();

    auto [rec] = co_await holder.async_release(use_tuple);
    co_return "audited " + std::to_string(balance) + " extensions " + std::to_string(extensions) + " release " +
        (rec ? rec.message() : std::string("ok"));
}
// [audit]

// [cpu-bound] CPU-bound work under a lock: a computation is not cancelled by itself. Each step is
// short and followed by a yield, which lets the client's I/O (the extensions) and the loss
// signal in, and throws operation_aborted once the lock is lost.
asio::awaitable<std::string> interest(redlock::client& locks, std::string account, int days)
{
    const std::string resource = "bank:" + account;
    auto [ec, balance] = co_await locks.async_with_lock(
        resource, account_lock(), [&](redlock::lock) -> asio::awaitable<long> {
            double b = static_cast<double>(balances[account]);
            for (int day = 0; day < days; ++day)
            {
                b *= 1.0001;  // one step of the computation
                if (day % 100 == 99)
                    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
            }
            balances[account] = std::lround(b);
            co_return balances[account];
        });
    if (ec)
        co_return "lost " + ec.message();
    co_return "ok " + std::to_string(balance);
}
// [cpu-bound]

// One request line: "add ACCOUNT AMOUNT [WORK_MS]", "audit ACCOUNT" or "interest ACCOUNT DAYS".
asio::awaitable<std::string> handle(redlock::client& locks, std::string line)
{
    std::istringstream in(line);
    std::string verb, account;
    long amount = 0, work_ms = 2;
    in >> verb >> account;
    if (verb == "add" && (in >> amount))
    {
        in >> work_ms;
        co_return co_await deposit(locks, account, amount, std::chrono::milliseconds(work_ms));
    }
    if (verb == "audit")
        co_return co_await audit(locks, account);
    if (verb == "interest" && (in >> amount))
        co_return co_await interest(locks, account, static_cast<int>(amount));
    co_return "error bad request";
}

asio::awaitable<void> session(tcp::socket s, redlock::client& locks)
{
    std::string buf;
    for (;;)
    {
        auto [ec, n] = co_await asio::async_read_until(s, asio::dynamic_buffer(buf), '\n', use_tuple);
        if (ec)
            co_return;
        std::string line = buf.substr(0, n - 1);
        buf.erase(0, n);
        std::string reply = co_await handle(locks, std::move(line));
        reply += '\n';
        auto [wec, written] = co_await asio::async_write(s, asio::buffer(reply), use_tuple);
        if (wec)
            co_return;
    }
}

asio::awaitable<void> serve(tcp::acceptor& acceptor, redlock::client& locks)
{
    for (;;)
    {
        auto [ec, s] = co_await acceptor.async_accept(use_tuple);
        if (ec)
            co_return;
        asio::co_spawn(acceptor.get_executor(), session(std::move(s), locks), asio::detached);
    }
}

// ---- The customers ------------------------------------------------------------------------

// One connection, one request at a time.
class customer
{
public:
    explicit customer(tcp::socket s) : s_(std::move(s)) {}

    asio::awaitable<std::string> ask(std::string request)
    {
        request += '\n';
        co_await asio::async_write(s_, asio::buffer(request), asio::use_awaitable);
        const auto n = co_await asio::async_read_until(s_, asio::dynamic_buffer(buf_), '\n', asio::use_awaitable);
        std::string reply = buf_.substr(0, n - 1);
        buf_.erase(0, n);
        co_return reply;
    }

private:
    tcp::socket s_;
    std::string buf_;
};

asio::awaitable<customer> connect(tcp::endpoint server)
{
    tcp::socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(server, asio::use_awaitable);
    co_return customer(std::move(s));
}

std::map<std::string, long> acknowledged;  // sum of the deposits the server confirmed
int requests_done = 0;
int requests_refused = 0;

asio::awaitable<void> depositor(tcp::endpoint server, unsigned seed, int requests)
{
    auto c = co_await connect(server);
    std::minstd_rand rng(seed);
    for (int i = 0; i < requests; ++i)
    {
        const std::string account = "acct:" + std::to_string(rng() % 2);
        const long amount = 1 + static_cast<long>(rng() % 9);
        const std::string reply = co_await c.ask("add " + account + " " + std::to_string(amount));
        if (reply.rfind("ok ", 0) == 0)
        {
            acknowledged[account] += amount;
            ++requests_done;
        }
        else
        {
            ++requests_refused;
            std::printf("  refused: add %s %ld -> %s\n", account.c_str(), amount, reply.c_str());
        }
    }
}

void steal(const std::vector<std::string>& masters, const std::string& key)
{
    redlock_example::command_on_all(masters, {"DEL", key});
}

std::size_t keys_left(const std::vector<std::string>& masters)
{
    return redlock_example::keys_on(masters, "bank:*");
}

asio::awaitable<void> run(tcp::endpoint server, redlock::client& locks, const std::vector<std::string>& masters)
{
    auto [cec, connected] = co_await locks.async_wait_connected(use_tuple);
    std::printf("redlock client connected to %zu of %zu masters\n", connected, locks.size());
    auto ex = co_await asio::this_coro::executor;
    const auto initial = balances;

    // The slow deposit starts first and holds acct:0 for 800 ms of work.
    std::printf("\n1. a slow deposit of 1000000 into acct:0 (800 ms of work under the lock)\n");
    std::string slow_reply;
    bool slow_done = false;
    asio::co_spawn(ex, [&]() -> asio::awaitable<void> {
        auto c = co_await connect(server);
        slow_reply = co_await c.ask("add acct:0 1000000 800");
        slow_done = true;
    }, asio::detached);
    asio::steady_timer t(ex, 100ms);
    co_await t.async_wait(use_tuple);

    std::printf("2. four customers deposit into acct:0 and acct:1 (25 requests each); acct:2 is audited, then\n"
                "   acct:3 earns interest\n");
    int running = 5;
    for (unsigned k = 0; k < 4; ++k)
        asio::co_spawn(ex, depositor(server, 7 + k, 25), [&](std::exception_ptr e) {
            --running;
            if (e)
                check(false, "a customer failed");
        });
    std::string audit_reply, interest_reply;
    asio::co_spawn(ex, [&]() -> asio::awaitable<void> {
        auto c = co_await connect(server);
        audit_reply = co_await c.ask("audit acct:2");
        interest_reply = co_await c.ask("interest acct:3 3650");
    }, [&](std::exception_ptr) { --running; });

    std::printf("3. after 300 ms the slow deposit's keys are deleted on every master (its lock is stolen)\n");
    t.expires_after(200ms);
    co_await t.async_wait(use_tuple);
    steal(masters, "bank:acct:0");

    while (running > 0 || !slow_done)
    {
        t.expires_after(10ms);
        co_await t.async_wait(use_tuple);
    }

    double compounded = 1000;
    for (int day = 0; day < 3650; ++day)
        compounded *= 1.0001;
    acknowledged["acct:3"] = std::lround(compounded) - 1000;  // the interest, as a deposit

    std::printf("\nresults\n");
    std::printf("  slow deposit -> %s\n", slow_reply.c_str());
    std::printf("  audit        -> %s\n", audit_reply.c_str());
    std::printf("  interest     -> %s\n", interest_reply.c_str());
    std::printf("  %d deposits acknowledged, %d refused\n", requests_done, requests_refused);
    for (const auto& [account, balance] : balances)
        std::printf("  %s: %ld (initial %ld + acknowledged %ld)\n", account.c_str(), balance,
                    initial.at(account), acknowledged[account]);

    check(slow_reply == "lost", "the slow deposit was cancelled when its lock was lost, and said so");
    check(requests_done == 100 && requests_refused == 0, "every deposit was acknowledged");
    check(interest_reply == "ok " + std::to_string(std::lround(compounded)),
          "ten years of daily interest on acct:3, computed in 3650 steps under its lock");
    for (const auto& [account, balance] : balances)
        check(balance == initial.at(account) + acknowledged[account],
              account + " is exactly the initial balance plus the acknowledged deposits (no lost update)");
    check(audit_reply.rfind("audited 1000 extensions ", 0) == 0 && audit_reply.find("extensions 0") == std::string::npos &&
              audit_reply.find("release ok") != std::string::npos,
          "the audit held its lock past the TTL (extended) and released it");
    check(keys_left(masters) == 0, "no lock key is left on the masters");
}

}  // namespace

int main(int argc, char** argv)
{
    return redlock_example::run_example("redlock-example-server", [&] {
        const auto masters = redlock_example::masters_from(argc, argv, 3);

        asio::io_context io;
        redlock::client locks(io.get_executor(), redlock_example::config_of(masters));

        tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        const auto endpoint = acceptor.local_endpoint();
        std::printf("server listening on %s:%u\n", endpoint.address().to_string().c_str(), endpoint.port());
        asio::co_spawn(io, serve(acceptor, locks), asio::detached);

        bool finished = false;
        asio::co_spawn(io, run(endpoint, locks, masters), [&](std::exception_ptr e) {
            finished = true;
            if (e)
            {
                try
                {
                    std::rethrow_exception(e);
                }
                catch (const std::exception& ex)
                {
                    check(false, std::string("unexpected exception: ") + ex.what());
                }
            }
            acceptor.close();
            locks.close();
        });
        io.run_for(60s);
        if (!finished)
            check(false, "the example did not finish within 60 s");
    });
}
