// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/resp_encoder.hpp"
#include "protocol/resp_parser.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

using namespace std::string_literals;
using namespace std::string_view_literals;
namespace resp = redlock::resp;

namespace {

template <class T>
concept can_append_bulk = requires(std::string& out, T v)
{
    resp::append_bulk(out, v);
};

template <class... Args>
concept can_append_command = requires(std::string& out, Args... args)
{
    resp::append_command(out, args...);
};

}  // namespace

// bool and characters are almost always mistakes when they reach a command.
static_assert(can_append_bulk<int>);
static_assert(can_append_bulk<std::uint64_t>);
static_assert(can_append_bulk<std::int64_t>);
static_assert(can_append_bulk<const char*>);
static_assert(!can_append_bulk<bool>);
static_assert(!can_append_bulk<char>);
static_assert(!can_append_bulk<double>);
static_assert(can_append_command<const char*, std::string, std::string_view, int, std::uint64_t>);
static_assert(!can_append_command<const char*, bool>);
static_assert(!can_append_command<const char*, char>);
static_assert(!can_append_command<const char*, double>);
static_assert(can_append_command<resp::encoded_bulks, std::string_view, resp::encoded_bulks, int>);

TEST_CASE("encoder: array header", "[resp][encoder]")
{
    std::string out;
    resp::append_array_header(out, 0);
    resp::append_array_header(out, 3);
    resp::append_array_header(out, 1234567);
    CHECK(out == "*0\r\n*3\r\n*1234567\r\n");
}

TEST_CASE("encoder: bulk strings are binary-safe", "[resp][encoder]")
{
    std::string out;
    resp::append_bulk(out, "foo");
    resp::append_bulk(out, ""sv);
    resp::append_bulk(out, "a\r\n\0b"sv);
    CHECK(out == "$3\r\nfoo\r\n$0\r\n\r\n$5\r\na\r\n\0b\r\n"s);

    out.clear();
    const std::string long_arg(10000, 'x');
    resp::append_bulk(out, long_arg);
    CHECK(out == "$10000\r\n" + long_arg + "\r\n");
}

TEST_CASE("encoder: integers as decimal bulk strings", "[resp][encoder]")
{
    std::string out;
    resp::append_bulk(out, std::int64_t{0});
    CHECK(out == "$1\r\n0\r\n");

    out.clear();
    resp::append_bulk(out, std::int64_t{-1});
    CHECK(out == "$2\r\n-1\r\n");

    out.clear();
    resp::append_bulk(out, std::numeric_limits<std::int64_t>::max());
    CHECK(out == "$19\r\n9223372036854775807\r\n");

    out.clear();
    resp::append_bulk(out, std::numeric_limits<std::int64_t>::min());
    CHECK(out == "$20\r\n-9223372036854775808\r\n");

    out.clear();
    resp::append_bulk(out, std::numeric_limits<std::uint64_t>::max());
    CHECK(out == "$20\r\n18446744073709551615\r\n");

    out.clear();
    resp::append_bulk(out, 30000);  // int
    resp::append_bulk(out, short{-7});
    resp::append_bulk(out, 10u);
    resp::append_bulk(out, 9999LL);
    resp::append_bulk(out, 10000ULL);
    CHECK(out == "$5\r\n30000\r\n$2\r\n-7\r\n$2\r\n10\r\n$4\r\n9999\r\n$5\r\n10000\r\n");
}

TEST_CASE("encoder: digit counts at every power of ten", "[resp][encoder]")
{
    std::uint64_t v = 1;
    for (int digits = 1; digits <= 20; ++digits)
    {
        for (const std::uint64_t x : {v - 1, v, v + 1})
        {
            std::string out;
            resp::append_bulk(out, x);
            const std::string text = std::to_string(x);
            CHECK(out == "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n");
        }
        if (digits < 20)
            v *= 10;
    }
}

TEST_CASE("encoder: variadic commands", "[resp][encoder]")
{
    std::string out;
    resp::append_command(out, "SET", "key", "val");
    CHECK(out == "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$3\r\nval\r\n");

    // Appends, so pipelined commands share one buffer.
    const std::string key = "lock:\0:\r\n"s;
    const std::string_view token = "tok\xff"sv;
    resp::append_command(out, "SET", key, token, "NX", "PX", 30000);
    CHECK(
        out ==
        "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$3\r\nval\r\n"
        "*6\r\n$3\r\nSET\r\n$9\r\nlock:\0:\r\n\r\n$4\r\ntok\xff\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n"s);

    out.clear();
    resp::append_command(out, "EVALSHA", "abc", 1, "k", std::int64_t{-5}, std::uint64_t{0}, ""sv);
    CHECK(out == "*7\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$1\r\nk\r\n$2\r\n-5\r\n$"
                 "1\r\n0\r\n$0\r\n\r\n");

    out.clear();
    resp::append_command(out, "PING");
    CHECK(out == "*1\r\n$4\r\nPING\r\n");
}

TEST_CASE("encoder: bulks encoded once are copied as the arguments they stand for",
          "[resp][encoder]")
{
    const std::string key = "lock:\0:\r\n"s;
    const std::string_view token = "tok\xff"sv;
    std::string plain;
    resp::append_command(plain, "SET", key, token, "NX", "PX", 30000);

    const auto set = resp::encode_bulks("SET");
    const auto nx_px = resp::encode_bulks("NX", "PX");
    CHECK(set.count() == 1);
    CHECK(nx_px.count() == 2);
    CHECK(nx_px.bytes() == "$2\r\nNX\r\n$2\r\nPX\r\n");
    std::string pre = "before";
    resp::append_command(pre, set, key, token, nx_px, 30000);
    CHECK(pre == "before" + plain);

    // Leading, alone, with integers inside, and with nothing in them.
    const auto head = resp::encode_bulks("EVALSHA", "abc", 1);
    std::string a, b;
    resp::append_command(a, "EVALSHA", "abc", 1, "k", std::int64_t{-5});
    resp::append_command(b, head, "k", std::int64_t{-5});
    CHECK(a == b);
    a.clear();
    b.clear();
    resp::append_command(a, "EVALSHA", "abc", 1);
    resp::append_command(b, head);
    CHECK(a == b);
    const resp::encoded_bulks none;
    b.clear();
    resp::append_command(b, none, "PING");
    CHECK(b == "*1\r\n$4\r\nPING\r\n");

    // Twelve arguments in all: the array header's count takes two digits.
    const auto ten = resp::encode_bulks("a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
    a.clear();
    b.clear();
    resp::append_command(a, "X", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "Y");
    resp::append_command(b, "X", ten, "Y");
    CHECK(a == b);
    CHECK(b.starts_with("*12\r\n"));
}

TEST_CASE("encoder: run-time argument lists", "[resp][encoder]")
{
    std::string out = "prefix";
    const std::array<std::string_view, 4> args{"DEL", "a", "\0"sv, ""};
    resp::append_command(out, args);
    CHECK(out == "prefix*4\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\n\0\r\n$0\r\n\r\n"s);

    out.clear();
    resp::append_command(out, std::span<const std::string_view>{});
    CHECK(out == "*0\r\n");

    out.clear();
    const std::vector<std::string_view> many(1000, "x");
    resp::append_command(out, many);
    std::string expected = "*1000\r\n";
    for (int i = 0; i < 1000; ++i)
        expected += "$1\r\nx\r\n";
    CHECK(out == expected);
}

TEST_CASE("encoder: commands are valid RESP arrays of bulk strings", "[resp][encoder]")
{
    std::string out;
    resp::append_command(out, "SET", "k\r\n", std::numeric_limits<std::int64_t>::min(), ""sv);
    resp::parser p;
    REQUIRE(p.parse(out) == resp::parse_status::done);
    CHECK(p.consumed() == out.size());
    const auto nodes = p.nodes();
    REQUIRE(nodes.size() == 5);
    CHECK(nodes[0].data_type == resp::type::array);
    CHECK(nodes[0].size == 4);
    CHECK(nodes[1].value == "SET");
    CHECK(nodes[2].value == "k\r\n");
    CHECK(nodes[3].value == "-9223372036854775808");
    CHECK(nodes[4].value.empty());
    for (std::size_t i = 1; i < nodes.size(); ++i)
    {
        CHECK(nodes[i].data_type == resp::type::bulk_string);
        CHECK(nodes[i].depth == 1);
    }
}
