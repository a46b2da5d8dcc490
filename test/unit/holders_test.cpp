// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Who holds a resource, decided without a clock: one master's reply to the read
// (protocol/holders_reply.cpp), the holders a majority agrees on (algorithm/holders.cpp), a
// holder's own term (the fence counter only where its record names the holder), and the
// identity a value publishes.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "algorithm/holders.hpp"
#include "algorithm/lock_value.hpp"
#include "protocol/holders_reply.hpp"
#include "protocol/scripts.hpp"

using namespace std::chrono_literals;
namespace rd = redlock::detail;
using redlock::resp::node_view;
using redlock::resp::type;

namespace {

const std::string holder_token_a = "0123456789abcdef0123456789abcdef01234567";
const std::string holder_token_b = "fedcba9876543210fedcba9876543210fedcba98";

node_view reply_array(std::uint64_t n) { return {type::array, 0, n, {}}; }
node_view reply_bulk(std::string_view v) { return {type::bulk_string, 1, 0, v}; }
node_view reply_int(std::string_view v) { return {type::integer, 1, 0, v}; }
node_view reply_nil() { return {type::null, 1, 0, {}}; }

// A master's read: its counter, whose value the counter was committed for (empty: no record),
// and what it holds.
rd::master_holdings holdings_of(std::uint64_t fence, std::vector<rd::held_value> held,
                                const std::string& committed_for = {})
{
    rd::master_holdings m;
    m.fence = fence;
    if (!committed_for.empty())
        m.fence_holder = rd::holder_id(committed_for);
    m.held = std::move(held);
    return m;
}

rd::held_value held_key(std::string v, std::int64_t pttl, std::uint32_t index = 0)
{
    return {std::move(v), pttl, false, false, index};
}
rd::held_value held_member(std::string v, std::int64_t left)
{
    return {std::move(v), left, true, false, 0};
}

// The holders of `reads` (no read means no answer), the read taking 10 ms, for holders that
// take the lock with a TTL of 1,000 ms at drift factor 0.01 (drift 10 ms + 2 ms).
std::vector<rd::quorum_holder> holders_of(const std::vector<const rd::master_holdings*>& reads)
{
    return rd::holders_on_quorum(reads, reads.size() / 2 + 1, 10ms, 1000ms, 0.01);
}

}  // namespace

TEST_CASE("holders: a master's reply is read into its counter, the counter's record, its keys "
          "and its live readers",
          "[holders]")
{
    const std::string value = holder_token_a + " web-3:8080";
    rd::master_holdings m;
    std::string why;
    // Three string keys (one held, one absent, one not a string), then one live reader.
    const node_view three_keys[] = {reply_array(10),
                                    reply_bulk("41"),
                                    reply_bulk("5f0c2a9e81d3b746"),
                                    reply_bulk(value),
                                    reply_int("2900"),
                                    reply_nil(),
                                    reply_int("-2"),
                                    reply_nil(),
                                    reply_int("-1"),
                                    reply_bulk(holder_token_b),
                                    reply_int("1200")};
    REQUIRE(rd::read_holders_reply(three_keys, 3, m, why));
    CHECK(m.fence == 41);
    CHECK(m.fence_holder == "5f0c2a9e81d3b746");
    REQUIRE(m.held.size() == 3);
    CHECK(m.held[0].value == value);
    CHECK(m.held[0].pttl == 2900);
    CHECK_FALSE(m.held[0].reader);
    CHECK(m.held[0].key == 0);
    CHECK(m.held[1].foreign);   // exists (no expiry), not a string
    CHECK(m.held[1].key == 2);  // the third string key (the second was absent)
    CHECK(m.held[1].pttl == -1);
    CHECK(m.held[2].reader);
    CHECK(m.held[2].value == holder_token_b);
    CHECK(m.held[2].pttl == 1200);
}

TEST_CASE("holders: a reply that is not the read's shape is refused with the reason", "[holders]")
{
    rd::master_holdings m;
    std::string why;
    const node_view not_array[] = {{type::integer, 0, 0, "1"}};
    CHECK_FALSE(rd::read_holders_reply(not_array, 1, m, why));
    CHECK(why.find("no array") != std::string::npos);

    const node_view bad_counter[] = {reply_array(4), reply_bulk("12x"), reply_nil(), reply_nil(),
                                     reply_int("-2")};
    CHECK_FALSE(rd::read_holders_reply(bad_counter, 1, m, why));
    CHECK(why.find("fence counter") != std::string::npos);

    // The record beside the counter: a string or nil, nothing else.
    const node_view bad_record[] = {reply_array(4), reply_bulk("12"), reply_int("7"), reply_nil(),
                                    reply_int("-2")};
    CHECK_FALSE(rd::read_holders_reply(bad_record, 1, m, why));
    CHECK(why.find("record") != std::string::npos);

    const node_view too_short[] = {reply_array(2), reply_nil(), reply_nil()};
    CHECK_FALSE(rd::read_holders_reply(too_short, 1, m, why));
    CHECK(why.find("elements") != std::string::npos);
    // The shape before the record: the counter, then the key's value and PTTL (3 elements).
    const node_view no_record[] = {reply_array(3), reply_bulk("12"), reply_nil(), reply_int("-2")};
    CHECK_FALSE(rd::read_holders_reply(no_record, 1, m, why));
    CHECK(why.find("elements") != std::string::npos);

    const node_view odd[] = {reply_array(5), reply_nil(),     reply_nil(),
                             reply_nil(),    reply_int("-2"), reply_bulk("x")};
    CHECK_FALSE(rd::read_holders_reply(odd, 1, m, why));

    const node_view ttl_text[] = {reply_array(4), reply_nil(), reply_nil(),
                                  reply_bulk(holder_token_a), reply_bulk("100")};
    CHECK_FALSE(rd::read_holders_reply(ttl_text, 1, m, why));
    CHECK(why.find("time left") != std::string::npos);

    const node_view nil_reader[] = {reply_array(6),  reply_nil(), reply_nil(),   reply_nil(),
                                    reply_int("-2"), reply_nil(), reply_int("5")};
    CHECK_FALSE(rd::read_holders_reply(nil_reader, 1, m, why));
    CHECK(why.find("not a string") != std::string::npos);

    const node_view negative_counter[] = {reply_array(4), reply_bulk("-1"), reply_nil(),
                                          reply_nil(), reply_int("-2")};
    CHECK_FALSE(rd::read_holders_reply(negative_counter, 1, m, why));

    // Neither counter nor record (no fenced holder yet), the key absent: nothing held.
    const node_view nothing[] = {reply_array(4), reply_nil(), reply_nil(), reply_nil(),
                                 reply_int("-2")};
    REQUIRE(rd::read_holders_reply(nothing, 1, m, why));
    CHECK(m.fence == 0);
    CHECK(m.fence_holder.empty());
    CHECK(m.held.empty());
}

TEST_CASE("holders: a value held on a majority with time left is the holder, valid until the "
          "majority's shortest time left less the read and the drift",
          "[holders]")
{
    const auto a = holder_token_a + " node-a";
    const auto m0 = holdings_of(7, {held_key(a, 1000)}, a);
    const auto m1 = holdings_of(7, {held_key(a, 900)}, a);
    const auto m2 = holdings_of(7, {held_key(a, 800)}, a);
    const auto m3 = holdings_of(9, {held_key(holder_token_b, 3000)},
                                holder_token_b);  // another holder's: its fence is not ours
    const auto h = holders_of({&m0, &m1, &m2, &m3, nullptr});
    REQUIRE(h.size() == 1);
    CHECK(h[0].value == a);
    CHECK(h[0].masters == 3);
    CHECK(h[0].fence == 7);
    CHECK_FALSE(h[0].reader);
    // 800 ms (the third longest of three) - 10 ms read - 12 ms, the drift of the holders' TTL
    // (not of the time left: the holder's own validity subtracts its TTL's).
    CHECK(h[0].valid_for == std::chrono::steady_clock::duration(778ms));

    // A fourth master holding it longer moves the bound to the third longest.
    const auto m4 = holdings_of(0, {held_key(a, 2000)});
    const auto h2 = holders_of({&m0, &m1, &m2, &m3, &m4});
    REQUIRE(h2.size() == 1);
    CHECK(h2[0].masters == 4);
    CHECK(h2[0].valid_for == std::chrono::steady_clock::duration(900ms - 10ms - 12ms));
}

TEST_CASE("holders: no holder without a majority, nor once the majority's time is spent",
          "[holders]")
{
    const auto m0 = holdings_of(0, {held_key(holder_token_a, 1000)});
    const auto m1 = holdings_of(0, {held_key(holder_token_a, 1000)});
    const auto none = holdings_of(0, {});
    CHECK(holders_of({&m0, &m1, &none, &none, &none}).empty());
    CHECK(holders_of({&m0, &m1, nullptr, nullptr, nullptr})
              .empty());  // silent masters are no holders
    // On three, but the third has 12 ms left: 12 - 10 - 12 < 0.
    const auto short_left = holdings_of(0, {held_key(holder_token_a, 12)});
    CHECK(holders_of({&m0, &m1, &short_left, &none, &none}).empty());
    // A key expired there (PTTL -2 is left out by the reply; 0 means expiring now).
    const auto expiring = holdings_of(0, {held_key(holder_token_a, 0)});
    CHECK(holders_of({&m0, &m1, &expiring}).size() == 1);  // 2 of 3 still hold it
    CHECK(holders_of({&m0, &expiring, &expiring}).empty());
}

TEST_CASE("holders: readers are holders each, the readers' mark and foreign keys are not",
          "[holders]")
{
    const std::string mark(rd::readers_mark);
    const auto m = holdings_of(3, {held_key(mark, 5000), held_member(holder_token_a + " r1", 4000),
                                   held_member(holder_token_b + " r2", 4000)});
    rd::master_holdings foreign;
    foreign.held.push_back({"", 9000, false, true});
    const auto h = holders_of({&m, &m, &m, &foreign, &foreign});
    REQUIRE(h.size() == 2);
    CHECK(h[0].reader);
    CHECK(h[1].reader);
    CHECK(rd::split_value(h[0].value).identity == "r1");
    CHECK(rd::split_value(h[1].value).identity == "r2");
    CHECK(h[0].fence == 0);  // a reader takes no fencing: the counter there is no term of its
}

TEST_CASE("holders: a semaphore's value counts per permit key, as its acquisition does, and a "
          "key without expiry on a majority is held without a bound",
          "[holders]")
{
    // An attempt that set permit 0 on one master and permit 1 on another took no permit on a
    // majority: it is no holder (its release may be lost; its keys then stay to their TTL).
    const auto p0 = holdings_of(0, {held_key(holder_token_a, 900, 0)});
    const auto p1 = holdings_of(0, {held_key(holder_token_a, 900, 1)});
    const auto none = holdings_of(0, {});
    CHECK(holders_of({&p0, &p1, &none}).empty());
    const auto h = holders_of({&p0, &p1, &p0});
    REQUIRE(h.size() == 1);
    CHECK(h[0].key == 0);
    CHECK(h[0].masters == 2);
    CHECK(h[0].valid_for == std::chrono::steady_clock::duration(900ms - 10ms - 12ms));

    const auto forever = holdings_of(0, {held_key("another client's value", -1)});
    const auto f = holders_of({&forever, &forever, &none});
    REQUIRE(f.size() == 1);
    CHECK_FALSE(f[0].expires);
    CHECK(rd::split_value(f[0].value).identity.empty());
}

TEST_CASE("holders: a holder's fencing token is the counter only where the counter's record "
          "names it, once a majority holds it: a majority's record, another value's record, a "
          "mix",
          "[holders][fencing]")
{
    const auto a = holder_token_a + " leader-a";
    const auto b = holder_token_b + " leader-b";
    // The id a read compares with is holder_info::id's: 16 hex characters of the value's SHA-1.
    CHECK(rd::holder_id(a).size() == 16);
    CHECK(rd::holder_id(a) != rd::holder_id(b));
    CHECK(rd::holder_id(a) == rd::sha1_hex(a).substr(0, 16));

    // b committed term 8 on a majority: its own term.
    const auto committed = holdings_of(8, {held_key(b, 1000)}, b);
    const auto by_b = holders_of({&committed, &committed, &committed, nullptr, nullptr});
    REQUIRE(by_b.size() == 1);
    CHECK(by_b[0].id == rd::holder_id(b));
    CHECK(by_b[0].fence == 8);

    // Between b's two rounds: b's SET is on a majority, each counter still a's term 7 (its
    // record a's). Never a's term for b: 0.
    const auto set_only = holdings_of(7, {held_key(b, 1000)}, a);
    const auto between = holders_of({&set_only, &set_only, &set_only, nullptr, nullptr});
    REQUIRE(between.size() == 1);
    CHECK(between[0].fence == 0);
    // A plain (unfenced) holder after a fenced one: no record is ever its own.
    const auto plain = holdings_of(7, {held_key(holder_token_b, 1000)}, a);
    const auto unfenced = holders_of({&plain, &plain, &plain, nullptr, nullptr});
    REQUIRE(unfenced.size() == 1);
    CHECK(unfenced[0].fence == 0);
    // No record at all (a counter a client before the record committed): 0 as well.
    const auto no_record = holdings_of(7, {held_key(b, 1000)});
    CHECK(holders_of({&no_record, &no_record, &no_record, nullptr, nullptr}).at(0).fence == 0);

    // b's token reached one master of the three that hold it so far: not committed, no term.
    const auto mix = holders_of({&set_only, &committed, &set_only, nullptr, nullptr});
    REQUIRE(mix.size() == 1);
    CHECK(mix[0].masters == 3);
    CHECK(mix[0].fence == 0);
    // b's first round moves each counter on and leaves its record (a's): no term for b, also
    // when a majority has the same counter (b, whose quorum may have read another one, could
    // be committing a larger token).
    auto moved = [&](std::uint64_t counter) {
        return holdings_of(counter, {held_key(b, 1000)}, a);
    };
    const auto moved_all = moved(8);
    CHECK(holders_of({&moved_all, &moved_all, &moved_all, nullptr, nullptr}).at(0).fence == 0);
    // b's first round found the counters apart (7, 7, 5: moved to 8, 8, 6): its commit of 8 on
    // two masters is not a majority: no term. On a third, b's term is 8, whatever the fourth
    // says.
    const auto moved_low = moved(6);
    CHECK(holders_of({&committed, &committed, &moved_low, nullptr, nullptr}).at(0).fence == 0);
    const auto after = holders_of({&committed, &committed, &moved_low, &committed, nullptr});
    REQUIRE(after.size() == 1);
    CHECK(after[0].masters == 4);
    CHECK(after[0].fence == 8);
    // A master whose record is b's but that no longer holds b's key gives no term (it counts
    // only where the holder holds); the others are still a's.
    const auto gone = holdings_of(8, {}, b);
    CHECK(holders_of({&set_only, &set_only, &set_only, &gone, nullptr}).at(0).fence == 0);
}
