// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Client-tracking invalidations read from the push messages a master sends (RESP3).
#include "protocol/invalidation.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/multiplexer.hpp"

namespace {

using redlock::detail::multiplexer;
using redlock::detail::read_invalidation;

// The push messages among `bytes`, as the multiplexer sets them aside.
std::vector<redlock::resp::reply> pushes_of(std::string_view bytes)
{
    multiplexer m;
    const auto space = m.read_space(bytes.size());
    std::copy(bytes.begin(), bytes.end(), space.begin());
    m.commit_read(bytes.size());
    REQUIRE(m.consume() == multiplexer::consumed::ok);
    return m.pushes();
}

}  // namespace

TEST_CASE("invalidation: the keys of an invalidate push, or all of them", "[invalidation]")
{
    struct example
    {
        const char* bytes;
        bool all;
        std::vector<std::string_view> keys;
    };
    const example examples[] = {
        {">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\nres\r\n$5\r\nother\r\n", false, {"res", "other"}},
        {">2\r\n$10\r\ninvalidate\r\n_\r\n", true, {}},  // a null key list: every key
    };
    for (const auto& e : examples)
    {
        INFO(e.bytes);
        const auto p = pushes_of(e.bytes);
        REQUIRE(p.size() == 1);
        const auto inv = read_invalidation(p[0]);
        REQUIRE(inv);
        CHECK(inv->all == e.all);
        CHECK(inv->keys == e.keys);
    }
}

TEST_CASE("invalidation: other pushes and malformed ones are not invalidations", "[invalidation]")
{
    const char* others[] = {
        ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",     // pub/sub
        ">2\r\n$10\r\ninvalidatx\r\n*1\r\n$1\r\nk\r\n",        // another name
        ">2\r\n$10\r\ninvalidate\r\n:1\r\n",                   // keys not an array
        ">2\r\n$10\r\ninvalidate\r\n*1\r\n*1\r\n$1\r\nk\r\n",  // a key that is not a string
        ">1\r\n$10\r\ninvalidate\r\n",                         // no keys at all
    };
    for (const auto* bytes : others)
    {
        INFO(bytes);
        const auto p = pushes_of(bytes);
        REQUIRE(p.size() == 1);
        CHECK_FALSE(read_invalidation(p[0]));
    }
}
