// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/key_slot.hpp"

#include "algorithm/fencing.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>

using namespace std::string_view_literals;
using redlock::detail::crc16;
using redlock::detail::fence_holder_key;
using redlock::detail::fence_key;
using redlock::detail::key_slot;
using redlock::detail::slot_count;

TEST_CASE("key_slot: crc16 is CRC-16/XMODEM", "[key_slot]")
{
    // The check value of CRC-16/XMODEM (and the one the Redis Cluster specification gives).
    CHECK(crc16("123456789") == 0x31C3);
    CHECK(crc16("") == 0);
    // One byte: the table entry of that byte, the polynomial itself for 0x01.
    CHECK(crc16("\x01"sv) == 0x1021);
    CHECK(crc16("\0"sv) == 0);
    // Bytes above 0x7f are not sign-extended.
    CHECK(crc16("\xff"sv) == 0x1EF0);
}

TEST_CASE("key_slot: slots agree with a real server's CLUSTER KEYSLOT", "[key_slot]")
{
    // Each pair is `CLUSTER KEYSLOT <key>` of redis-server 7.0.15 started with
    //   redis-server --port 0 --unixsocket /tmp/h1/x.sock --cluster-enabled yes
    //                --cluster-config-file /tmp/h1/x-nodes.conf --daemonize no
    // and queried with `redis-cli -s /tmp/h1/x.sock CLUSTER KEYSLOT <key>`.
    struct sample
    {
        std::string_view key;
        std::uint16_t slot;
    };
    const sample samples[] = {
        {"123456789", 12739},
        {"foo", 12182},
        {"bar", 5061},
        {"hello", 866},
        {"a", 15495},
        {"somekey", 11058},
        {"", 0},
        {"user1000", 3443},
        {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443},
        {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015},
        {"{bar", 4015},
        {"{}", 15257},
        {"x{}y", 16116},
        {"lock:orders", 9244},
        {"{lock:orders}:fence", 9244},
        {"\xc3\xa9", 10180},  // "é" in UTF-8
    };
    for (const auto& s : samples)
    {
        INFO("key \"" << s.key << "\"");
        CHECK(key_slot(s.key) == s.slot);
    }
}

TEST_CASE("key_slot: hash tags choose the hashed part", "[key_slot]")
{
    SECTION("keys with one hash tag share its slot")
    {
        CHECK(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));
        CHECK(key_slot("{user1000}.following") == key_slot("user1000"));
        CHECK(key_slot("a{tag}b") == key_slot("tag"));
    }
    SECTION("an empty first tag makes the whole key hashed")
    {
        CHECK(key_slot("foo{}{bar}") == crc16("foo{}{bar}") % slot_count);
        CHECK(key_slot("foo{}{bar}") != key_slot("bar"));
    }
    SECTION("the tag ends at the first closing brace after the first opening one")
    {
        CHECK(key_slot("foo{{bar}}zap") == key_slot("{bar"));
        CHECK(key_slot("foo{{bar}}zap") == crc16("{bar") % slot_count);
        CHECK(key_slot("foo{bar}{zap}") == key_slot("bar"));
    }
    SECTION("an unclosed or reversed brace is no tag")
    {
        CHECK(key_slot("foo{bar") == crc16("foo{bar") % slot_count);
        CHECK(key_slot("foo}bar{") == crc16("foo}bar{") % slot_count);
    }
}

TEST_CASE("key_slot: a lock key's fence counter and the counter's record are in the lock "
          "key's slot",
          "[key_slot]")
{
    // Not listed: a key with a '}' and no hash tag, which slot_sibling cannot wrap
    // (algorithm/fencing.hpp), and the empty key, whose "{}:fence" has an empty tag.
    for (const std::string key :
         {"orders", "lock:orders", "{tagged}:lock", "a{b}c", "{x", "\xc3\xa9"})
    {
        INFO("key \"" << key << "\" fence key \"" << fence_key(key) << "\"");
        CHECK(key_slot(fence_key(key)) == key_slot(key));
        CHECK(key_slot(fence_holder_key(key)) == key_slot(key));
        CHECK(fence_holder_key(key) == fence_key(key) + ":holder");
    }
    CHECK(fence_key("orders") == "{orders}:fence");
    CHECK(fence_holder_key("orders") == "{orders}:fence:holder");
    CHECK(fence_holder_key("{user1}:cart") == "{user1}:cart:fence:holder");
}

TEST_CASE("key_slot: every slot is below 16384", "[key_slot]")
{
    std::string key;
    for (int i = 0; i < 100000; ++i)
    {
        key = "key:" + std::to_string(i);
        REQUIRE(key_slot(key) < slot_count);
    }
}
