// Acceptance: fencing tokens across a quorum (lock_options::fencing), against real masters.
// The decisions themselves are stepped by hand in test/unit/acquire_fsm_fencing_test.cpp.
#include "client_fixture.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

using namespace redlock;
using namespace redlock::test;

namespace {

lock_options fencing_on()
{
    lock_options o;
    o.fencing = true;
    return o;
}

/// Takes `resource` with `holder` (`held_as`) and, while it is held, tries it with `other`
/// (`tried_as`): the try completes without an error and without a lock. Returns the lock, released.
asio::awaitable<lock> excludes(client& holder, lock_options held_as, client& other,
                               lock_options tried_as, std::string resource)
{
    lock held = co_await holder.async_lock(resource, held_as);
    auto [ec, refused] = co_await other.async_try_lock(resource, tried_as, tuple_awaitable);
    CHECK_FALSE(ec);
    CHECK_FALSE(refused.has_value());
    co_await holder.async_unlock(held);
    co_return held;
}

}  // namespace

TEST_CASE("client: fencing: each holder's token is one more, committed on a majority",
          "[live][client][fencing]")
{
    live_client live({.count = 5}, fencing_on());
    auto& c = live.c;
    auto& m = live.m;
    live.run(
        [&]() -> asio::awaitable<void> {
            for (std::uint64_t expected = 1; expected <= 4; ++expected)
            {
                lock l = co_await c.async_lock("fence-seq");
                REQUIRE(l.held());
                CHECK(l.fencing_token() == expected);
                CHECK(l.describe().find("fencing token " + std::to_string(expected)) !=
                      std::string::npos);
                // The lock completes at a majority of commits; the rest follow.
                CHECK(counters_at(m, "fence-seq", expected) >= 3);
                CHECK(co_await eventually(
                    [&] { return counters_at(m, "fence-seq", expected) == 5; }));
                // An extension keeps the token: it is the holder's, not the keys' TTL's.
                lock e = co_await c.async_extend(l, 5000ms);
                CHECK(e.fencing_token() == expected);
                // A lock rebuilt from its parts carries the token it is given, through an extension.
                lock rebuilt =
                    c.lock_from_parts("fence-seq", l.token(), l.ttl(), l.fencing_token());
                CHECK(rebuilt.fencing_token() == expected);
                e = co_await c.async_extend(rebuilt, 5000ms);
                CHECK(e.fencing_token() == expected);
                co_await c.async_unlock(e);
            }
            // The lock keys are gone; the counters stay (that is what orders the next holder),
            // and beside each the record of whose term it is.
            CHECK(co_await eventually([&] { return lock_keys(m) == 0; }));
            CHECK(total_keys(m) == 2 * 5);
            CHECK(counters_at(m, "fence-seq", 4) == 5);

            // Without fencing, a lock of the same client has no token and no commit round.
            const lock_options defaults;  // named: a braced temporary here trips GCC 12
            lock plain = co_await c.async_lock("fence-plain", defaults);
            CHECK(plain.fencing_token() == 0);
            co_await c.async_unlock(plain);
            CHECK(counters_at(m, "fence-plain", 1) == 0);
        },
        20s);
}

TEST_CASE("client: fencing: a quorum that read the same counters takes their next value, one "
          "that read them apart commits its token on a majority first, and the term is readable "
          "once committed",
          "[live][client][fencing]")
{
    live_client live({.count = 5}, fencing_on());
    auto& c = live.c;
    auto& m = live.m;
    const std::string res = "fence-rounds";
    const std::string counter = "{" + res + "}:fence";
    live.run(
        [&]() -> asio::awaitable<void> {
            // No counter anywhere: every master reads 0, and round 1 moves the quorum's to 1.
            lock first = co_await c.async_lock(res);
            REQUIRE(first.held());
            CHECK(first.fencing_token() == 1);
            CHECK(counters_at(m, res, 1) >= 3);
            CHECK(co_await eventually([&] { return counters_at(m, res, 1) == 5; }, 5s));
            // The commit that follows the one round records the term: readers see it.
            std::uint64_t read_term = 0;
            for (int tries = 0; tries < 1000 && read_term != 1; ++tries)  // 5 s at most
            {
                auto [ec, r] = co_await c.async_holders(res, tuple_awaitable);
                read_term = !ec && r.holders.size() == 1 ? r.holders[0].fencing_token : 0;
                if (read_term != 1)
                    co_await sleep_for(5ms);
            }
            CHECK(read_term == 1);
            co_await c.async_unlock(first);
            CHECK(co_await eventually([&] { return lock_keys(m) == 0; }, 5s));

            // Counters apart on three masters (7, 5, 3; the others 1): every quorum of three
            // meets one of them and reads different values. The token is its largest + 1 (4,
            // 6 or 8, by which masters answered first). Round 1 alone would leave it on one
            // master (the one that read the largest): at the lock's completion it is on a
            // majority, so a commit round came first.
            const std::uint64_t apart[] = {7, 5, 3, 1, 1};
            for (std::size_t i = 0; i < 3; ++i)
                REQUIRE(m.command(i, {"SET", counter, std::to_string(apart[i])}) == "+OK\r\n");
            lock second = co_await c.async_lock(res);
            REQUIRE(second.held());
            const auto t = second.fencing_token();
            CHECK((t == 4 || t == 6 || t == 8));
            CHECK(counters_at(m, res, t) >= 3);
            // The commit goes to every master that granted, and takes each one whose counter
            // (moved on by round 1) is not above t: those that read less than t, all at t then.
            const auto below = static_cast<std::size_t>(
                std::count_if(std::begin(apart), std::end(apart), [&](auto v) { return v < t; }));
            CHECK(co_await eventually([&] { return counters_at(m, res, t) == below; }, 5s));
            co_await c.async_unlock(second);
        },
        20s);
}

TEST_CASE("client: fencing: a holder on another quorum still gets a larger token",
          "[live][client][fencing]")
{
    // Holders A, then B, whose quorums share one master only (2): A on {0, 1, 2} while 3 and 4
    // are down, B on {2, 3, 4} with 3 and 4 restarted empty and 0, 1 down. B's token must
    // exceed A's although 3 and 4 never saw A: master 2 carries A's commit into B's count.
    local_masters m({.count = 5});
    asio::io_context io;
    std::uint64_t last_a = 0;
    {
        client a(io.get_executor(), config_for(m, fencing_on()));
        m.kill(3);
        m.kill(4);
        run_bounded(
            io,
            [&]() -> asio::awaitable<void> {
                for (int k = 0; k < 3; ++k)
                {
                    lock l = co_await a.async_lock("fence-quorums");
                    REQUIRE(l.held());
                    CHECK(l.fencing_token() > last_a);
                    last_a = l.fencing_token();
                    co_await a.async_unlock(l);
                }
            }(),
            20s);
        drain(io, a);
    }
    REQUIRE(last_a == 3);
    CHECK(counters_at(m, "fence-quorums", 3) == 3);

    m.restart(3);
    m.restart(4);
    m.kill(0);
    m.kill(1);
    io.restart();
    client b(io.get_executor(), config_for(m, fencing_on()));
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            lock l = co_await b.async_lock("fence-quorums");
            REQUIRE(l.held());
            CHECK(l.fencing_token() == last_a + 1);
            CHECK(count_status(l, master_status::granted) == 3);
            co_await b.async_unlock(l);
        }(),
        20s);
    drain(io, b);
    CHECK(counters_at(m, "fence-quorums", last_a + 1) == 3);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: fencing: contending clients see tokens grow in the order they held",
                 "[live][client][fencing]")
{
    client b(io.get_executor(), config_for(m));
    client d(io.get_executor(), config_for(m));
    auto o = fencing_on();
    o.max_attempts = 1000;
    o.retry_delay = 1ms;
    o.retry_jitter = 5ms;
    std::vector<std::uint64_t> in_hold_order;
    int holding = 0;
    bool overlapped = false;
    auto worker = [&](client& who) -> asio::awaitable<void> {
        for (int k = 0; k < 15; ++k)
        {
            lock l = co_await who.async_lock("fence-race", o);
            overlapped = overlapped || holding > 0;
            ++holding;
            in_hold_order.push_back(l.fencing_token());
            co_await sleep_for(1ms);
            --holding;
            co_await who.async_unlock(l);
        }
    };
    run(
        [&]() -> asio::awaitable<void> {
            co_await require_connected(b);
            co_await require_connected(d);
            auto ex = co_await asio::this_coro::executor;
            int finished = 0;
            for (client* each : {&c, &b, &d})
                asio::co_spawn(ex, worker(*each), [&](std::exception_ptr e) {
                    ++finished;
                    if (e)
                        std::rethrow_exception(e);
                });
            while (finished < 3)
                co_await sleep_for(5ms);
        },
        60s);
    b.close();
    d.close();
    CHECK_FALSE(overlapped);
    REQUIRE(in_hold_order.size() == 45);
    CHECK(std::adjacent_find(in_hold_order.begin(), in_hold_order.end(),
                             [](std::uint64_t x, std::uint64_t y) { return y <= x; }) ==
          in_hold_order.end());
}

TEST_CASE("client: fencing: one token per resource of a multi-resource lock",
          "[live][client][fencing]")
{
    live_client live({.count = 3}, fencing_on());
    auto& c = live.c;
    auto& m = live.m;
    const std::vector<std::string> two{"fence-x", "fence-y"};  // (outside: GCC 12 coroutines)
    live.run(
        [&]() -> asio::awaitable<void> {
            // Each resource has its own sequence; a lock of both takes the next of each.
            lock both = co_await c.async_lock_all(two, fencing_on());
            REQUIRE(both.fencing_tokens().size() == 2);
            CHECK(both.fencing_tokens()[0] == 1);
            CHECK(both.fencing_tokens()[1] == 1);
            CHECK(both.fencing_token() == 1);
            co_await c.async_unlock(both);
            lock x = co_await c.async_lock("fence-x");
            CHECK(x.fencing_token() == 2);
            co_await c.async_unlock(x);
            both = co_await c.async_lock_all(two, fencing_on());
            REQUIRE(both.fencing_tokens().size() == 2);
            CHECK(both.fencing_tokens()[0] == 3);
            CHECK(both.fencing_tokens()[1] == 2);
            CHECK(co_await eventually([&] { return counters_at(m, "fence-y", 2) == 3; }));
            // An extension keeps every resource's token.
            lock extended = co_await c.async_extend(both, 5000ms);
            REQUIRE(extended.fencing_tokens().size() == 2);
            CHECK(extended.fencing_tokens()[0] == 3);
            CHECK(extended.fencing_tokens()[1] == 2);
            co_await c.async_unlock(extended);
            CHECK(co_await eventually([&] { return lock_keys(m) == 0; }));
            // The counters and their records stay, the lock keys are gone ...
            CHECK(total_keys(m) == 4 * 3);
            // ... for ever: the counters and records have no expiry (PTTL -1), on every master.
            for (std::size_t i = 0; i < m.size(); ++i)
                for (const char* counter : {"{fence-x}:fence", "{fence-y}:fence",
                                            "{fence-x}:fence:holder", "{fence-y}:fence:holder"})
                {
                    INFO("master " << i << " " << counter);
                    CHECK(m.command(i, {"PTTL", counter}) == ":-1\r\n");
                }
            // Each resource's record names the last lock of both: the same holder, committed
            // for every resource.
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                INFO("master " << i);
                const auto x_record = get_on(m, i, "{fence-x}:fence:holder");
                REQUIRE(x_record.has_value());
                CHECK(x_record->size() == 16);
                CHECK(get_on(m, i, "{fence-y}:fence:holder") == x_record);
            }
        },
        20s);
}

TEST_CASE("client: fencing: a broken counter fails its master", "[live][client][fencing]")
{
    live_client live({.count = 3}, fencing_on());
    auto& c = live.c;
    auto& m = live.m;
    // (Outside the coroutine: GCC 12 cannot hold an initializer_list of literals across one.)
    m.command(0, {"SET", "{fence-broken}:fence", "not-a-number"});
    live.run(
        [&]() -> asio::awaitable<void> {
            // A counter another program broke: that master refuses with an error and our key is
            // not left on it; the other two make the quorum. The acquisition completes at the
            // quorum, so master 0's answer is in its diagnostics only when it came before the other
            // two's (sent at once, the three race): until it does, each lock is taken again, and
            // master 0 is never granted meanwhile.
            bool error_seen = false;
            for (std::uint64_t round = 1; round <= 20 && !error_seen; ++round)
            {
                lock b = co_await c.async_lock("fence-broken");
                REQUIRE(b.held());
                CHECK(b.fencing_token() == round);
                const auto& d0 = b.masters()[0];
                INFO(b.describe());
                CHECK(
                    (d0.status == master_status::error || d0.status == master_status::not_needed));
                if (d0.status == master_status::error)
                {
                    error_seen = true;
                    CHECK(d0.message.find("not an integer") != std::string::npos);
                }
                CHECK_FALSE(get_on(m, 0, "fence-broken").has_value());
                co_await c.async_unlock(b);
            }
            CHECK(error_seen);
        },
        20s);
}

TEST_CASE("fenced_set: the store takes a token at least the highest it has seen", "[live][fencing]")
{
    local_masters m({.count = 1});
    asio::io_context io;
    connection store(io.get_executor(), m.uri(0));
    std::vector<bool> accepted;
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            for (const std::uint64_t token : {5, 5, 4, 6, 1})
            {
                auto [ec, reply] = co_await store.async_exec(
                    fenced_set("data", "v" + std::to_string(token), token), tuple_awaitable);
                REQUIRE_FALSE(ec);
                error_code read_ec;
                accepted.push_back(fenced_write_accepted(reply, read_ec));
                CHECK_FALSE(read_ec);
            }
            store.close();
        }(),
        10s);
    // The same holder writes again (5, 5); an older one is refused (4, 1); a newer one writes (6).
    CHECK(accepted == std::vector<bool>{true, true, false, true, false});
    CHECK(get_on(m, 0, "data") == "v6");
    CHECK(get_on(m, 0, "{data}:token") == "6");

    // Any other reply is an error of the caller's, not a refusal.
    error_code ec;
    CHECK_FALSE(fenced_write_accepted(resp::reply{{resp::type::simple_string, 0, 0, "OK"}}, ec));
    CHECK(ec == error::unexpected_reply);
}

TEST_CASE_METHOD(rivals_rig<3>,
                 "client: fencing: fenced and unfenced locks of one resource exclude each other",
                 "[live][client][fencing]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto once = fencing_on();
            once.max_attempts = 1;
            lock_options plain_once;
            plain_once.max_attempts = 1;
            // Fenced first: an unfenced acquisition finds the same key taken, and vice versa.
            const lock fenced = co_await excludes(ours, once, theirs, plain_once, "fence-mixed");
            co_await excludes(theirs, plain_once, ours, once, "fence-mixed");

            // An unfenced holder in between does not disturb the fenced ones' order.
            lock next = co_await ours.async_lock("fence-mixed", once);
            CHECK(next.fencing_token() > fenced.fencing_token());
            co_await ours.async_unlock(next);
        },
        20s);
}

TEST_CASE(
    "client: fencing: a key with a '}' but no hash tag is refused when a master is a Redis Cluster",
    "[live][client][fencing]")
{
    // The refusal comes before anything is sent: the cluster master's seed need not answer.
    local_masters m({.count = 2});
    asio::io_context io;
    auto cfg = config_for(m, fencing_on());
    cfg.masters.push_back("redis-cluster://127.0.0.1:1");
    cfg.defaults.max_attempts = 1;
    client c(io.get_executor(), cfg);
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.async_lock("order}7", fencing_on(), tuple_awaitable);
            INFO(l.describe());
            CHECK(ec == error::invalid_argument);
            CHECK(contains(l.reason(), "has a '}' and no hash tag"));
            // With a hash tag of its own, the key and its counter share a slot: not refused (the
            // unreachable cluster then fails the attempt in another way).
            auto [tec, tl] = co_await c.async_lock("{order}7", fencing_on(), tuple_awaitable);
            INFO(tl.describe());
            CHECK(tec != error::invalid_argument);
            CHECK(tl.reason().empty());
        }(),
        10s);
    c.close();
    io.run_for(200ms);
}
