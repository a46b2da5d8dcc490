// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Who holds a resource (client::async_holders) against real masters: a mutex's holder, a fenced
// holder's own token (never an earlier holder's: not a plain holder's after a fenced one, nor a
// fenced one's whose token is not on a majority yet), a semaphore's and a read-write lock's
// holders, an identity published in a value, no holder once released or when no majority
// agrees, no_quorum when masters are down; and never a token in what it reports.
#include "client_fixture.hpp"
#include "io_helpers.hpp"

using namespace redlock;
using namespace redlock::test;

namespace {

// A value of this library's layout with an identity: a 40-hex token, a space, the identity.
const std::string published = "00112233445566778899aabbccddeeff00112233 web-3:8080";

}  // namespace

TEST_CASE_METHOD(masters_rig<5>,
                 "holders: a mutex's holder is read from a majority with the validity it has "
                 "left, and none once it is released",
                 "[live][holders]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock_options o = c.default_options();
            o.ttl = 10000ms;
            auto l = co_await acquired(c, "who", o);
            // What the holder has left before the read starts: the read's valid_for counts from
            // its end, so it can only be shorter (a bound taken after the read would shrink by
            // however late this coroutine resumes).
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                l.valid_until() - lock::clock::now());
            auto [ec, r] = co_await c.async_holders("who", tuple_awaitable);
            REQUIRE_FALSE(ec);
            REQUIRE(r.holders.size() == 1);
            const auto h = r.holders[0];
            CHECK(h.identity.empty());  // a bare token publishes none
            CHECK_FALSE(h.reader);
            CHECK(h.masters >= 3);
            CHECK(h.fencing_token == 0);
            CHECK(h.valid_for > 0ms);
            // Never longer than the lock's own validity as its holder counts it.
            CHECK(h.valid_for <= left + 5ms);
            REQUIRE(r.masters.size() == 5);
            std::size_t holding = 0;
            for (const auto& mh : r.masters)
            {
                CHECK(mh.diagnostic.status == master_status::granted);
                holding += mh.entries.size();
                for (const auto& e : mh.entries)
                    CHECK(e.ttl > 0ms);
            }
            CHECK(holding >= 3);
            co_await c.async_unlock(l, asio::use_awaitable);
            auto [ec2, after] = co_await c.async_holders("who", tuple_awaitable);
            CHECK_FALSE(ec2);
            CHECK_FALSE(after.held());

            // A holder that publishes its identity is named by it, and has another id.
            o.identity = "node-a:9000";
            auto named = co_await acquired(c, "who", o);
            auto [ec3, r3] = co_await c.async_holders("who", tuple_awaitable);
            REQUIRE_FALSE(ec3);
            REQUIRE(r3.holders.size() == 1);
            CHECK(r3.holders[0].identity == "node-a:9000");
            CHECK(r3.holders[0].id.size() == 16);
            CHECK(r3.holders[0].id != h.id);
            CHECK(r3.holders[0].id.find(std::string(named.token()).substr(0, 16)) ==
                  std::string::npos);
            co_await c.async_unlock(named, asio::use_awaitable);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "holders: a fenced holder's token, and the identity a value publishes, read "
                 "back from the masters",
                 "[live][holders]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock_options o = c.default_options();
            o.fencing = true;
            auto first = co_await acquired(c, "fenced", o);
            co_await c.async_unlock(first, asio::use_awaitable);
            auto l = co_await acquired(c, "fenced", o);
            REQUIRE(l.fencing_token() > first.fencing_token());
            auto [ec, r] = co_await c.async_holders("fenced", tuple_awaitable);
            REQUIRE_FALSE(ec);
            REQUIRE(r.holders.size() == 1);
            // Its own term: its commit reached a majority, which meets the majority read.
            CHECK(r.holders[0].fencing_token == l.fencing_token());
            // Where its commit landed, the record beside the counter names it by its id.
            std::size_t recorded = 0;
            for (std::size_t i = 0; i < 5; ++i)
                recorded += get_on(m, i, "{fenced}:fence:holder") == r.holders[0].id ? 1 : 0;
            CHECK(recorded >= 3);
            co_await c.async_unlock(l, asio::use_awaitable);

            // A value of the published layout, set by hand on three masters of five.
            for (std::size_t i = 0; i < 3; ++i)
                REQUIRE(m.command(i, {"SET", "named", published, "PX", "10000"}) == "+OK\r\n");
            auto [ec2, named] = co_await c.async_holders("named", tuple_awaitable);
            REQUIRE_FALSE(ec2);
            REQUIRE(named.holders.size() == 1);
            CHECK(named.holders[0].identity == "web-3:8080");
            CHECK(named.masters[0].entries.at(0).identity == "web-3:8080");
            CHECK(named.masters[4].entries.empty());
            // On two only: no majority agrees, no holder (each master still says what it has).
            for (std::size_t i = 0; i < 1; ++i)
                m.command(i, {"DEL", "named"});
            m.command(2, {"SET", "named", "another client's value", "PX", "10000"});
            auto [ec3, split] = co_await c.async_holders("named", tuple_awaitable);
            CHECK_FALSE(ec3);
            CHECK_FALSE(split.held());
            CHECK(split.masters[1].entries.size() == 1);
            CHECK(split.masters[2].entries.at(0).identity.empty());
            for (std::size_t i = 0; i < 5; ++i)
                m.command(i, {"DEL", "named"});
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "holders: a plain holder after a fenced one, and a fenced one whose token is "
                 "not on a majority yet, have fencing_token 0, never the earlier holder's term "
                 "nor one not committed",
                 "[live][holders][fencing]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock_options fenced = c.default_options();
            fenced.fencing = true;
            auto first = co_await acquired(c, "term", fenced);
            const auto term = first.fencing_token();
            REQUIRE(term >= 1);
            co_await c.async_unlock(first, asio::use_awaitable);

            // A plain lock of the same resource: the counters are the fenced holder's term,
            // which is no term of this holder's (the old rule reported it).
            const lock_options plain = c.default_options();
            auto unfenced = co_await acquired(c, "term", plain);
            auto [ec, r] = co_await c.async_holders("term", tuple_awaitable);
            REQUIRE_FALSE(ec);
            REQUIRE(r.holders.size() == 1);
            CHECK(r.holders[0].fencing_token == 0);
            std::size_t with_counter = 0;
            for (const auto& mh : r.masters)
                with_counter += mh.fence_counter == term ? 1 : 0;
            CHECK(with_counter >= 3);  // the raw counter is still there, per master
            co_await c.async_unlock(unfenced, asio::use_awaitable);

            // The key set by hand on three masters of five, the counter and its record still
            // the earlier holder's. Its holder is seen, without a term.
            for (std::size_t i = 0; i < 3; ++i)
                REQUIRE(m.command(i, {"SET", "term", published, "PX", "10000"}) == "+OK\r\n");
            auto [ec1, set_only] = co_await c.async_holders("term", tuple_awaitable);
            REQUIRE_FALSE(ec1);
            REQUIRE(set_only.holders.size() == 1);
            CHECK(set_only.holders[0].identity == "web-3:8080");
            CHECK(set_only.holders[0].fencing_token == 0);
            CHECK(set_only.masters[0].fence_counter == term);

            // A fenced round 1 that found the counters apart, by hand: master 0 read term + 1
            // (an earlier failed attempt raised it), masters 1 and 2 read term; each moved on by
            // one, its record still the earlier holder's. No term.
            const auto id = set_only.holders[0].id;
            const auto token = std::to_string(term + 2);
            const auto moved = std::to_string(term + 1);
            const std::string* counters[] = {&token, &moved, &moved};
            for (std::size_t i = 0; i < 3; ++i)
                REQUIRE(m.command(i, {"SET", "{term}:fence", *counters[i]}) == "+OK\r\n");
            auto [ec2, apart] = co_await c.async_holders("term", tuple_awaitable);
            REQUIRE_FALSE(ec2);
            REQUIRE(apart.holders.size() == 1);
            CHECK(apart.holders[0].fencing_token == 0);
            // Its round 2 commits term + 2 and records its id (the same 16 hex characters of the
            // value's SHA-1) on masters 0 and 1: two of the three. Then on master 2: a
            // majority, its term.
            for (std::size_t i = 0; i < 2; ++i)
                REQUIRE(m.command(i, {"SET", "{term}:fence:holder", id}) == "+OK\r\n");
            REQUIRE(m.command(1, {"SET", "{term}:fence", token}) == "+OK\r\n");
            auto [ec4, two] = co_await c.async_holders("term", tuple_awaitable);
            REQUIRE_FALSE(ec4);
            REQUIRE(two.holders.size() == 1);
            CHECK(two.holders[0].fencing_token == 0);
            REQUIRE(m.command(2, {"SET", "{term}:fence", token}) == "+OK\r\n");
            REQUIRE(m.command(2, {"SET", "{term}:fence:holder", id}) == "+OK\r\n");
            auto [ec5, committed] = co_await c.async_holders("term", tuple_awaitable);
            REQUIRE_FALSE(ec5);
            REQUIRE(committed.holders.size() == 1);
            CHECK(committed.holders[0].fencing_token == term + 2);
            // The same commit where the key is not held (master 4): no term from there.
            for (std::size_t i = 0; i < 5; ++i)
                m.command(i, {"SET", "{term}:fence:holder", "0000000000000000"});
            m.command(4, {"SET", "{term}:fence", std::to_string(term + 5)});
            m.command(4, {"SET", "{term}:fence:holder", id});
            auto [ec3, elsewhere] = co_await c.async_holders("term", tuple_awaitable);
            REQUIRE_FALSE(ec3);
            REQUIRE(elsewhere.holders.size() == 1);
            CHECK(elsewhere.holders[0].fencing_token == 0);
            for (std::size_t i = 0; i < 5; ++i)
                m.command(i, {"DEL", "term", "{term}:fence", "{term}:fence:holder"});
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "holders: a semaphore's permit holders and a read-write lock's readers are "
                 "each a holder",
                 "[live][holders]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock_options sem = c.default_options();
            sem.permits = 3;
            auto p1 = co_await acquired(c, "pool", sem);
            auto p2 = co_await acquired(c, "pool", sem);
            auto [ec, permits] = co_await c.async_holders("pool", sem, tuple_awaitable);
            REQUIRE_FALSE(ec);
            CHECK(permits.holders.size() == 2);
            // Read as a mutex, the resource's own key holds the semaphore's mark: the census
            // reads its permits and names the same two holders.
            auto [ec1, as_mutex] = co_await c.async_holders("pool", tuple_awaitable);
            CHECK_FALSE(ec1);
            CHECK(as_mutex.holders.size() == 2);
            co_await c.async_unlock(p1, asio::use_awaitable);
            co_await c.async_unlock(p2, asio::use_awaitable);

            lock_options reader = c.default_options();
            reader.role = lock_role::reader;
            auto r1 = co_await acquired(c, "doc", reader);
            auto r2 = co_await acquired(c, "doc", reader);
            auto [ec2, readers] = co_await c.async_holders("doc", tuple_awaitable);
            REQUIRE_FALSE(ec2);
            REQUIRE(readers.holders.size() == 2);  // the readers' mark is no holder
            CHECK(readers.holders[0].reader);
            CHECK(readers.holders[1].reader);
            co_await c.async_unlock(r1, asio::use_awaitable);
            co_await c.async_unlock(r2, asio::use_awaitable);
            auto [ec3, none] = co_await c.async_holders("doc", tuple_awaitable);
            CHECK_FALSE(ec3);
            CHECK_FALSE(none.held());
            CHECK(co_await settled_keys(m) == 0);  // the read wrote nothing
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "holders: with three masters of five stopped the read ends in no_quorum at its "
                 "deadline, with what the others said, and bad requests are refused with why",
                 "[live][holders]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto l = co_await acquired(c, "down");
            for (std::size_t i = 0; i < 3; ++i)
                m.pause(i);
            lock_options o = c.default_options();
            o.attempt_timeout = 100ms;
            auto [ec, r] = co_await c.async_holders("down", o, tuple_awaitable);
            for (std::size_t i = 0; i < 3; ++i)
                m.resume(i);
            CHECK(ec == error::no_quorum);
            CHECK_FALSE(r.held());
            REQUIRE(r.masters.size() == 5);
            CHECK(r.masters[0].diagnostic.status == master_status::timed_out);
            CHECK(r.masters[4].diagnostic.status == master_status::granted);

            auto [eec, empty] = co_await c.async_holders("", tuple_awaitable);
            CHECK(eec == error::invalid_argument);
            CHECK(empty.message.find("empty") != std::string::npos);
            lock_options bad = c.default_options();
            bad.permits = 0;
            auto [oec, opt] = co_await c.async_holders("x", bad, tuple_awaitable);
            CHECK(oec == error::invalid_option);
            CHECK_FALSE(opt.message.empty());
            co_await c.async_unlock(l, asio::use_awaitable);
        },
        20s);
}
