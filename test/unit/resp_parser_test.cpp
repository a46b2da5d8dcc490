// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/resp_parser.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
// Declared here because GCC does not install the sanitizer interface headers.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define REDLOCK_TEST_HAVE_MALLINFO2 1
#endif

using namespace std::string_literals;
using namespace std::string_view_literals;
namespace resp = redlock::resp;
using resp::node;
using resp::parse_status;
using resp::type;

namespace {

std::string escape(std::string_view s)
{
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (const char c : s)
    {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x20 && b < 0x7f && c != '\\')
        {
            out += c;
        }
        else
        {
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 0xf];
        }
    }
    return out;
}

// Nodes as text, one per line: Catch then shows a readable diff on failure.
template <class Range>
std::string render(const Range& nodes)
{
    std::string out;
    for (const auto& n : nodes)
    {
        out += std::to_string(n.depth) + ' ' + std::string(resp::to_string(n.data_type)) + ' ' +
               std::to_string(n.size) + " \"" + escape(n.value) + "\"\n";
    }
    return out;
}

const char* status_name(parse_status s)
{
    switch (s)
    {
    case parse_status::needs_more: return "needs_more";
    case parse_status::done: return "done";
    case parse_status::failed: return "failed";
    }
    return "?";
}

// Parses `input` in one feed, which must complete a reply, and compares its nodes with `expected`.
void check_parses_to(std::string_view input, const resp::reply& expected)
{
    resp::parser p;
    REQUIRE(p.parse(input) == parse_status::done);
    CHECK(render(p.nodes()) == render(expected));
}

struct outcome
{
    parse_status status;
    std::string nodes;  // rendered
    std::size_t consumed;
    std::string error;
};

outcome snapshot(const resp::parser& p, parse_status st)
{
    return {st, st == parse_status::done ? render(p.nodes()) : std::string{},
            st == parse_status::done ? p.consumed() : 0, std::string(p.error_message())};
}

outcome parse_once(std::string_view input, resp::parser_limits limits = {})
{
    resp::parser p(limits);
    return snapshot(p, p.parse(input));
}

// Walks one value in pre-order and returns the index after it: checks that the node list
// is shaped as resp.hpp says (aggregate sizes, depths, attributes before their value).
std::size_t check_value(std::span<const resp::node_view> nodes, std::size_t i, std::uint32_t depth)
{
    REQUIRE(i < nodes.size());
    const auto& n = nodes[i];
    REQUIRE(n.depth == depth);
    ++i;
    if (resp::is_aggregate(n.data_type))
    {
        CHECK(n.value.empty());
        const bool paired = n.data_type == type::map || n.data_type == type::attribute;
        const std::uint64_t elements = paired ? 2 * n.size : n.size;
        for (std::uint64_t e = 0; e < elements; ++e)
            i = check_value(nodes, i, depth + 1);
        if (n.data_type == type::attribute)
            i = check_value(nodes, i, depth);  // the annotated value
    }
    else
    {
        CHECK(n.size == 0);
    }
    return i;
}

void check_shape(std::span<const resp::node_view> nodes)
{
    REQUIRE(!nodes.empty());
    CHECK(check_value(nodes, 0, 0) == nodes.size());
}

// Every reply the parser must accept, each exactly one top-level value.
const std::vector<std::string>& corpus()
{
    static const std::vector<std::string> items = {
        "+OK\r\n",
        "+\r\n",
        "-ERR unknown command 'FOO'\r\n",
        ":0\r\n",
        ":-42\r\n",
        ":9223372036854775807\r\n",
        ":-9223372036854775808\r\n",
        "$3\r\nfoo\r\n",
        "$0\r\n\r\n",
        "$6\r\na\r\n\0bc\r\n"s,
        "$4\r\n\r\n\r\n\r\n",
        "$-1\r\n",
        "*-1\r\n",
        "_\r\n",
        "!21\r\nSYNTAX invalid syntax\r\n",
        "=15\r\ntxt:Some string\r\n",
        "=4\r\nmkd:\r\n",
        ",1.5\r\n",
        ",-0.5E-3\r\n",
        ",10\r\n",
        ",1e10\r\n",
        ",inf\r\n",
        ",-inf\r\n",
        ",nan\r\n",
        "#t\r\n",
        "#f\r\n",
        "(3492890328409238509324850943850943825024385\r\n",
        "(-1\r\n",
        "*0\r\n",
        "*3\r\n:1\r\n:2\r\n:3\r\n",
        "*2\r\n*2\r\n+a\r\n$1\r\nb\r\n*0\r\n",
        "*2\r\n$-1\r\n*-1\r\n",
        "*7\r\n+s\r\n-e\r\n:1\r\n$0\r\n\r\n_\r\n#t\r\n,3.14\r\n",
        "%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n",
        "%0\r\n",
        "%1\r\n$3\r\nkey\r\n*2\r\n%1\r\n:1\r\n:2\r\n~0\r\n",
        "~3\r\n+a\r\n+b\r\n+c\r\n",
        ">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n",
        // The two attribute examples of the RESP3 specification.
        "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:"
        "2039123\r\n:9543892\r\n",
        "*3\r\n:1\r\n:2\r\n|1\r\n+ttl\r\n:3600\r\n:3\r\n",
        "|0\r\n+OK\r\n",
        "|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:1\r\n",
        "%1\r\n|1\r\n+x\r\n+y\r\n+key\r\n*-1\r\n",
        "*1\r\n|1\r\n+a\r\n*1\r\n:1\r\n*0\r\n",
        "*1\r\n*1\r\n*1\r\n%1\r\n~1\r\n>1\r\n_\r\n#f\r\n",
        "*2\r\n*1\r\n*1\r\n*0\r\n*1\r\n$2\r\nhi\r\n",
    };
    return items;
}

std::optional<std::size_t> allocated_bytes()
{
#if defined(__SANITIZE_ADDRESS__)
    return __sanitizer_get_current_allocated_bytes();
#elif defined(REDLOCK_TEST_HAVE_MALLINFO2)
    return mallinfo2().uordblks;
#else
    return std::nullopt;
#endif
}

}  // namespace

TEST_CASE("parser: simple types", "[resp][parser]")
{
    struct expectation
    {
        std::string input;
        type t;
        std::string value;
    };
    const std::vector<expectation> cases = {
        {"+OK\r\n", type::simple_string, "OK"},
        {"+\r\n", type::simple_string, ""},
        {"-ERR bad\r\n", type::simple_error, "ERR bad"},
        {":-42\r\n", type::integer, "-42"},
        {"$3\r\nfoo\r\n", type::bulk_string, "foo"},
        {"$0\r\n\r\n", type::bulk_string, ""},
        {"$7\r\na\r\nb\0c\n\r\n"s, type::bulk_string, "a\r\nb\0c\n"s},
        {"!21\r\nSYNTAX invalid syntax\r\n", type::bulk_error, "SYNTAX invalid syntax"},
        {"=15\r\ntxt:Some string\r\n", type::verbatim_string, "txt:Some string"},
        {"_\r\n", type::null, ""},
        {"$-1\r\n", type::null, ""},
        {"*-1\r\n", type::null, ""},
        {",3.14\r\n", type::double_type, "3.14"},
        {",-inf\r\n", type::double_type, "-inf"},
        {"#t\r\n", type::boolean, "t"},
        {"#f\r\n", type::boolean, "f"},
        {"(-123456789012345678901234567890\r\n", type::big_number,
         "-123456789012345678901234567890"},
    };
    resp::parser p;  // one parser for all: reuse after done is the normal case
    for (const auto& c : cases)
    {
        INFO(escape(c.input));
        REQUIRE(p.parse(c.input) == parse_status::done);
        CHECK(p.consumed() == c.input.size());
        REQUIRE(p.nodes().size() == 1);
        const auto& n = p.nodes()[0];
        CHECK(n.data_type == c.t);
        CHECK(n.value == c.value);
        CHECK(n.depth == 0);
        CHECK(n.size == 0);
        CHECK(p.error_message().empty());
    }
}

TEST_CASE("parser: aggregates, maps, attributes and push", "[resp][parser]")
{
    SECTION("nested arrays")
    {
        check_parses_to("*2\r\n*2\r\n+a\r\n$1\r\nb\r\n*0\r\n", {
                                                                   {type::array, 0, 2, ""},
                                                                   {type::array, 1, 2, ""},
                                                                   {type::simple_string, 2, 0, "a"},
                                                                   {type::bulk_string, 2, 0, "b"},
                                                                   {type::array, 1, 0, ""},
                                                               });
    }
    SECTION("map sizes count pairs")
    {
        check_parses_to("%2\r\n+first\r\n:1\r\n+second\r\n~2\r\n#t\r\n_\r\n",
                        {
                            {type::map, 0, 2, ""},
                            {type::simple_string, 1, 0, "first"},
                            {type::integer, 1, 0, "1"},
                            {type::simple_string, 1, 0, "second"},
                            {type::set, 1, 2, ""},
                            {type::boolean, 2, 0, "t"},
                            {type::null, 2, 0, ""},
                        });
    }
    SECTION("push")
    {
        check_parses_to(">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n",
                        {
                            {type::push, 0, 3, ""},
                            {type::bulk_string, 1, 0, "message"},
                            {type::bulk_string, 1, 0, "channel"},
                            {type::bulk_string, 1, 0, "hello"},
                        });
    }
    SECTION("a top-level attribute precedes its value, which completes the reply")
    {
        const std::string input =
            "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
            "*2\r\n:2039123\r\n:9543892\r\n";
        const resp::reply expected = {
            {type::attribute, 0, 1, ""},
            {type::simple_string, 1, 0, "key-popularity"},
            {type::map, 1, 2, ""},
            {type::bulk_string, 2, 0, "a"},
            {type::double_type, 2, 0, "0.1923"},
            {type::bulk_string, 2, 0, "b"},
            {type::double_type, 2, 0, "0.0012"},
            {type::array, 0, 2, ""},
            {type::integer, 1, 0, "2039123"},
            {type::integer, 1, 0, "9543892"},
        };
        resp::parser p;
        // The attribute alone is not a reply.
        const std::size_t attribute_end = input.find("*2");
        CHECK(p.parse(std::string_view(input).substr(0, attribute_end)) ==
              parse_status::needs_more);
        REQUIRE(p.parse(input) == parse_status::done);
        CHECK(p.consumed() == input.size());
        CHECK(render(p.nodes()) == render(expected));
    }
    SECTION("an attribute inside an array is not one of its elements")
    {
        check_parses_to("*3\r\n:1\r\n:2\r\n|1\r\n+ttl\r\n:3600\r\n:3\r\n",
                        {
                            {type::array, 0, 3, ""},
                            {type::integer, 1, 0, "1"},
                            {type::integer, 1, 0, "2"},
                            {type::attribute, 1, 1, ""},
                            {type::simple_string, 2, 0, "ttl"},
                            {type::integer, 2, 0, "3600"},
                            {type::integer, 1, 0, "3"},
                        });
    }
    SECTION("empty and consecutive attributes")
    {
        resp::parser p;
        REQUIRE(p.parse("|0\r\n") == parse_status::needs_more);
        REQUIRE(p.parse("|0\r\n|1\r\n+a\r\n+b\r\n:7\r\n") == parse_status::done);
        const resp::reply expected = {
            {type::attribute, 0, 0, ""},      {type::attribute, 0, 1, ""},
            {type::simple_string, 1, 0, "a"}, {type::simple_string, 1, 0, "b"},
            {type::integer, 0, 0, "7"},
        };
        CHECK(render(p.nodes()) == render(expected));
    }
    SECTION("RESP2 nulls inside aggregates")
    {
        check_parses_to("*3\r\n$-1\r\n*-1\r\n$0\r\n\r\n", {
                                                              {type::array, 0, 3, ""},
                                                              {type::null, 1, 0, ""},
                                                              {type::null, 1, 0, ""},
                                                              {type::bulk_string, 1, 0, ""},
                                                          });
    }
}

TEST_CASE("parser: the corpus parses in one feed", "[resp][parser]")
{
    for (const auto& input : corpus())
    {
        INFO(escape(input));
        resp::parser p;
        REQUIRE(p.parse(input) == parse_status::done);
        CHECK(p.consumed() == input.size());
        check_shape(p.nodes());
        for (const auto& n : p.nodes())
        {
            // Views point into the buffer that was passed, not into a copy.
            if (!n.value.empty())
            {
                CHECK(n.value.data() >= input.data());
                CHECK(n.value.data() + n.value.size() <= input.data() + input.size());
            }
        }
    }
}

TEST_CASE("parser: every split point gives the same nodes", "[resp][parser]")
{
    for (const auto& input : corpus())
    {
        INFO(escape(input));
        const outcome whole = parse_once(input);
        REQUIRE(whole.status == parse_status::done);

        for (std::size_t k = 0; k < input.size(); ++k)
        {
            INFO("split at " << k);
            resp::parser p;
            {
                const std::string first(input, 0, k);
                REQUIRE(p.parse(first) == parse_status::needs_more);
                CHECK(p.nodes().empty());
            }  // destroyed: the next call must not rely on the old bytes' address
            const std::string full(input);
            const auto st = p.parse(full);
            REQUIRE(st == parse_status::done);
            CHECK(p.consumed() == input.size());
            CHECK(render(p.nodes()) == whole.nodes);
        }

        // Three pieces, each fed from a fresh copy.
        for (std::size_t a = 0; a < input.size(); ++a)
        {
            for (std::size_t b = a; b < input.size(); ++b)
            {
                resp::parser p;
                const auto s1 = std::make_unique<std::string>(input, 0, a);
                REQUIRE(p.parse(*s1) == parse_status::needs_more);
                const auto s2 = std::make_unique<std::string>(input, 0, b);
                REQUIRE(p.parse(*s2) == parse_status::needs_more);
                const auto s3 = std::make_unique<std::string>(input);
                REQUIRE(p.parse(*s3) == parse_status::done);
                if (render(p.nodes()) != whole.nodes)
                {
                    FAIL("split at " << a << ", " << b << ":\n" << render(p.nodes()));
                }
            }
        }
    }
}

TEST_CASE("parser: byte by byte feeding gives the same nodes", "[resp][parser]")
{
    for (const auto& input : corpus())
    {
        INFO(escape(input));
        const outcome whole = parse_once(input);
        resp::parser p;
        std::string grown;
        for (std::size_t i = 0; i + 1 < input.size(); ++i)
        {
            grown += input[i];
            // A fresh copy each time: the parser only keeps offsets between calls.
            const std::string copy = grown;
            REQUIRE(p.parse(copy) == parse_status::needs_more);
        }
        grown += input.back();
        REQUIRE(p.parse(grown) == parse_status::done);
        CHECK(p.consumed() == input.size());
        CHECK(render(p.nodes()) == whole.nodes);
    }
}

TEST_CASE("parser: replies back to back", "[resp][parser]")
{
    std::string stream;
    for (const auto& input : corpus())
        stream += input;

    SECTION("parse, advance by consumed(), parse again")
    {
        resp::parser p;
        std::size_t offset = 0;
        for (const auto& input : corpus())
        {
            INFO(escape(input));
            REQUIRE(p.parse(std::string_view(stream).substr(offset)) == parse_status::done);
            CHECK(p.consumed() == input.size());
            CHECK(render(p.nodes()) == parse_once(input).nodes);
            offset += p.consumed();
        }
        CHECK(offset == stream.size());
        CHECK(p.parse(std::string_view(stream).substr(offset)) == parse_status::needs_more);
    }

    SECTION("a connection's read loop: random chunks, erase what was consumed")
    {
        std::mt19937 rng(7);
        for (int round = 0; round < 50; ++round)
        {
            resp::parser p;
            std::string buffer;
            std::vector<std::string> got;
            std::size_t fed = 0;
            while (fed < stream.size())
            {
                const std::size_t chunk =
                    std::min<std::size_t>(stream.size() - fed, 1 + rng() % 40);
                buffer.append(stream, fed, chunk);
                fed += chunk;
                for (;;)
                {
                    const auto st = p.parse(buffer);
                    REQUIRE(st != parse_status::failed);
                    if (st == parse_status::needs_more)
                        break;
                    got.push_back(render(p.nodes()));
                    buffer.erase(0, p.consumed());
                }
            }
            CHECK(buffer.empty());
            REQUIRE(got.size() == corpus().size());
            for (std::size_t i = 0; i < got.size(); ++i)
                CHECK(got[i] == parse_once(corpus()[i]).nodes);
        }
    }
}

TEST_CASE("parser: leaves trailing bytes alone", "[resp][parser]")
{
    resp::parser p;
    const std::string buf = "+OK\r\n:1\r\n$3\r\nab";
    REQUIRE(p.parse(buf) == parse_status::done);
    CHECK(p.consumed() == 5);
    REQUIRE(p.parse(std::string_view(buf).substr(5)) == parse_status::done);
    CHECK(p.consumed() == 4);
    CHECK(p.nodes()[0].value == "1");
    CHECK(p.parse(std::string_view(buf).substr(9)) == parse_status::needs_more);
    CHECK(p.nodes().empty());
    // reset() abandons the partial reply.
    p.reset();
    REQUIRE(p.parse("_\r\n") == parse_status::done);
    CHECK(p.nodes()[0].data_type == type::null);
}

TEST_CASE("parser: malformed input fails with a message", "[resp][parser]")
{
    struct bad
    {
        std::string input;
        std::string message;  // a substring of error_message()
    };
    const std::vector<bad> cases = {
        {"?foo\r\n", "invalid type byte 0x3f"},
        {"\0\r\n"s, "invalid type byte 0x00"},
        {"*1\r\nX\r\n", "invalid type byte 0x58"},
        {":12a\r\n", "invalid integer"},
        {":\r\n", "invalid integer"},
        {":+1\r\n", "invalid integer"},
        {": 1\r\n", "invalid integer"},
        {":9223372036854775808\r\n", "invalid integer"},
        {":-9223372036854775809\r\n", "invalid integer"},
        {"$-2\r\n", "invalid length"},
        {"$-0\r\n", "invalid length"},
        {"$\r\n", "invalid length"},
        {"$+3\r\nfoo\r\n", "invalid length"},
        {"$3x\r\nfoo\r\n", "invalid length"},
        {"!-1\r\n", "invalid length"},
        {"=-1\r\n", "invalid length"},
        {"$99999999999999999999\r\n", "invalid length"},
        {"$9223372036854775808\r\n", "invalid length"},
        {"*-2\r\n", "invalid aggregate size"},
        {"%-1\r\n", "invalid aggregate size"},
        {"~-1\r\n", "invalid aggregate size"},
        {"*18446744073709551616\r\n", "invalid aggregate size"},
        {"$3\r\nfooX\r\n", "missing CRLF after bulk payload"},
        {"$3\r\nfoo\rX", "missing CRLF after bulk payload"},
        {"$3\r\nfoo\n\r", "missing CRLF after bulk payload"},
        {"$0\r\nX", "missing CRLF after bulk payload"},
        {"#x\r\n", "invalid boolean"},
        {"#tt\r\n", "invalid boolean"},
        {"#\r\n", "invalid boolean"},
        {"#T\r\n", "invalid boolean"},
        {",1.\r\n", "invalid double"},
        {",.5\r\n", "invalid double"},
        {",abc\r\n", "invalid double"},
        {",1e\r\n", "invalid double"},
        {",1e+\r\n", "invalid double"},
        {",\r\n", "invalid double"},
        {",1.5x\r\n", "invalid double"},
        {",infinity\r\n", "invalid double"},
        {",--1\r\n", "invalid double"},
        {"(12a\r\n", "invalid big number"},
        {"(\r\n", "invalid big number"},
        {"(-\r\n", "invalid big number"},
        {"=3\r\ntxt\r\n", "verbatim string without a format prefix"},
        {"=5\r\ntxt-a\r\n", "verbatim string without a format prefix"},
        {"=0\r\n\r\n", "verbatim string without a format prefix"},
        {"_x\r\n", "invalid null"},
        {"+OK\rX", "CR not followed by LF"},
        {"+OK\r\r\n", "CR not followed by LF"},
        {"+O\nK\r\n", "LF without CR"},
        {"-E\n\r\n", "LF without CR"},
        {":1\n\r\n", "LF without CR"},
        {"$3\nfoo\r\n", "LF without CR"},
        {"$?\r\n", "streamed strings are not supported"},
        {"*?\r\n", "streamed aggregates are not supported"},
        {"%?\r\n", "streamed aggregates are not supported"},
        {"$100000000\r\n", "bulk length 100000000 exceeds limit 67108864"},
        {"$9999999999999\r\n", "bulk length 9999999999999 exceeds limit 67108864"},
        {"*1048577\r\n", "aggregate size 1048577 exceeds limit 1048576"},
        {"%524289\r\n", "aggregate size 1048578 exceeds limit 1048576"},
        {"|524289\r\n", "aggregate size 1048578 exceeds limit 1048576"},
        {"*4294967295\r\n", "aggregate size 4294967295 exceeds limit 1048576"},
        {"+" + std::string(64 * 1024 + 1, 'a'), "line length exceeds limit 65536"},
        {"+" + std::string(64 * 1024 + 1, 'a') + "\r\n", "line length exceeds limit 65536"},
    };
    for (const auto& c : cases)
    {
        INFO(escape(c.input.substr(0, 40)));
        resp::parser p;
        REQUIRE(p.parse(c.input) == parse_status::failed);
        CHECK_THAT(std::string(p.error_message()), Catch::Matchers::Contains(c.message));
        CHECK(p.nodes().empty());
        // The failure is sticky until reset().
        CHECK(p.parse(c.input) == parse_status::failed);
        CHECK(p.parse("+OK\r\n") == parse_status::failed);
        p.reset();
        CHECK(p.error_message().empty());
        REQUIRE(p.parse("+OK\r\n") == parse_status::done);

        // Incremental feeding reaches the same verdict, never a done.
        const std::string expected_message = parse_once(c.input).error;
        resp::parser q;
        auto st = parse_status::needs_more;
        const std::size_t step = c.input.size() > 1000 ? 997 : 1;  // the 64 KiB lines
        for (std::size_t n = 0; st == parse_status::needs_more;
             n = std::min(n + step, c.input.size()))
        {
            st = q.parse(std::string(c.input, 0, n));
            if (n == c.input.size())
                break;
        }
        CHECK(st == parse_status::failed);
        CHECK(q.error_message() == expected_message);
    }
}

TEST_CASE("parser: error messages never echo payload bytes", "[resp][parser]")
{
    for (const std::string input : {":12secret\r\n", ",secret\r\n", "#secret\r\n", "(secret\r\n",
                                    "$3\r\nsecret\r\n", "=6\r\nsecret\r\n", "_secret\r\n",
                                    "+sec\nret\r\n", "secret\r\n", "$secret\r\n", "*secret\r\n"})
    {
        INFO(input);
        resp::parser p;
        REQUIRE(p.parse(input) == parse_status::failed);
        const std::string message(p.error_message());
        CHECK_FALSE(message.empty());
        CHECK(message.find("secret") == std::string::npos);
        CHECK(message.find("sec") == std::string::npos);
        for (const char c : message)
            CHECK((c >= 0x20 && c < 0x7f));
    }
}

TEST_CASE("parser: nesting depth limit", "[resp][parser]")
{
    const auto nested = [](std::size_t levels, std::string_view opener) {
        std::string s;
        for (std::size_t i = 0; i < levels; ++i)
            s += opener;
        return s + ":1\r\n";
    };

    SECTION("32 levels are accepted by default")
    {
        const std::string input = nested(32, "*1\r\n");
        resp::parser p;
        REQUIRE(p.parse(input) == parse_status::done);
        REQUIRE(p.nodes().size() == 33);
        CHECK(p.nodes().back().depth == 32);
        check_shape(p.nodes());
    }
    SECTION("33 levels fail")
    {
        resp::parser p;
        REQUIRE(p.parse(nested(33, "*1\r\n")) == parse_status::failed);
        CHECK(p.error_message() == "nesting depth 33 exceeds limit 32");
    }
    SECTION("maps and attributes count as levels; empty aggregates too")
    {
        resp::parser_limits limits;
        limits.max_depth = 2;
        CHECK(parse_once("%1\r\n:1\r\n*1\r\n:1\r\n", limits).status == parse_status::done);
        CHECK(parse_once("%1\r\n:1\r\n|1\r\n:1\r\n*1\r\n:1\r\n:1\r\n", limits).status ==
              parse_status::failed);
        CHECK(parse_once("*1\r\n*1\r\n*0\r\n", limits).error == "nesting depth 3 exceeds limit 2");
        CHECK(parse_once("*1\r\n*1\r\n:1\r\n", limits).status == parse_status::done);
    }
    SECTION("depth is checked before the rest arrives")
    {
        resp::parser p;
        CHECK(p.parse(nested(40, "*1\r\n").substr(0, 33 * 4)) == parse_status::failed);
    }
}

TEST_CASE("parser: size limits are configurable", "[resp][parser]")
{
    resp::parser_limits limits;
    limits.max_bulk_length = 8;
    limits.max_aggregate_size = 4;
    limits.max_line_length = 16;

    CHECK(parse_once("$8\r\n12345678\r\n", limits).status == parse_status::done);
    CHECK(parse_once("$9\r\n", limits).error == "bulk length 9 exceeds limit 8");
    CHECK(parse_once("!9\r\n", limits).error == "bulk length 9 exceeds limit 8");
    CHECK(parse_once("=9\r\n", limits).error == "bulk length 9 exceeds limit 8");

    CHECK(parse_once("*4\r\n_\r\n_\r\n_\r\n_\r\n", limits).status == parse_status::done);
    CHECK(parse_once("*5\r\n", limits).error == "aggregate size 5 exceeds limit 4");
    CHECK(parse_once("~5\r\n", limits).error == "aggregate size 5 exceeds limit 4");
    CHECK(parse_once(">5\r\n", limits).error == "aggregate size 5 exceeds limit 4");
    CHECK(parse_once("%2\r\n_\r\n_\r\n_\r\n_\r\n", limits).status == parse_status::done);
    CHECK(parse_once("%3\r\n", limits).error == "aggregate size 6 exceeds limit 4");
    CHECK(parse_once("|3\r\n", limits).error == "aggregate size 6 exceeds limit 4");

    // A line is at most max_line_length bytes between the type byte and CR.
    const std::string sixteen(16, 'a');
    CHECK(parse_once("+" + sixteen + "\r\n", limits).status == parse_status::done);
    CHECK(parse_once("+" + sixteen, limits).status == parse_status::needs_more);
    CHECK(parse_once("+" + sixteen + "\r", limits).status == parse_status::needs_more);
    CHECK(parse_once("+" + sixteen + "a", limits).error == "line length exceeds limit 16");
    CHECK(parse_once("+" + sixteen + "a\r\n", limits).error == "line length exceeds limit 16");
    CHECK(parse_once(":" + std::string(40, '1'), limits).status == parse_status::failed);
    // Bulk payloads are not lines.
    limits.max_bulk_length = 100;
    CHECK(parse_once("$100\r\n" + std::string(100, 'b') + "\r\n", limits).status ==
          parse_status::done);
}

TEST_CASE("parser: huge declared sizes wait without allocating", "[resp][parser]")
{
    // With the defaults they fail at once (see the malformed cases); with limits opened wide
    // the parser must wait for bytes, holding memory proportional to what it received.
    resp::parser_limits wide;
    wide.max_bulk_length = std::numeric_limits<std::size_t>::max();
    wide.max_aggregate_size = std::numeric_limits<std::size_t>::max();

    const auto before = allocated_bytes();
    {
        resp::parser p(wide);
        CHECK(p.parse("*4294967295\r\n") == parse_status::needs_more);
        CHECK(p.parse("*4294967295\r\n:1\r\n:2\r\n") == parse_status::needs_more);
        resp::parser q(wide);
        CHECK(q.parse("$9999999999999\r\n") == parse_status::needs_more);
        CHECK(q.parse("$9999999999999\r\nsome bytes") == parse_status::needs_more);
        resp::parser r(wide);
        CHECK(r.parse("%9223372036854775807\r\n") == parse_status::needs_more);
        resp::parser s(wide);
        CHECK(s.parse("$9223372036854775807\r\n") == parse_status::needs_more);

        if (const auto during = allocated_bytes(); before && during)
        {
            INFO("allocated " << (*during - *before) << " bytes");
            CHECK(*during < *before + 64 * 1024);
        }
    }
}

TEST_CASE("parser: a rejected buffer that shrank", "[resp][parser]")
{
    resp::parser p;
    REQUIRE(p.parse("$10\r\nabc") == parse_status::needs_more);
    CHECK(p.parse("$1") == parse_status::failed);
    CHECK_FALSE(p.error_message().empty());
}

TEST_CASE("parser: to_string names every type", "[resp]")
{
    CHECK(resp::to_string(type::simple_string) == "simple_string");
    CHECK(resp::to_string(type::bulk_string) == "bulk_string");
    CHECK(resp::to_string(type::verbatim_string) == "verbatim_string");
    CHECK(resp::to_string(type::double_type) == "double");
    CHECK(resp::to_string(type::attribute) == "attribute");
    for (int t = 0; t <= static_cast<int>(type::verbatim_string); ++t)
        CHECK(resp::to_string(static_cast<type>(t)) != "unknown");
}

TEST_CASE("parser: deterministic fuzz", "[resp][parser][fuzz]")
{
    std::mt19937 rng(20260101);
    const std::string_view alphabet = "+-:$!=,#(_*%~>|\r\n\r\n0123456789-?tf.eEinfa";
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    const auto random_byte = [&]() -> char {
        if (rng() % 2 == 0)
            return alphabet[pick(alphabet.size())];
        return static_cast<char>(rng() % 256);
    };

    resp::parser_limits small;
    small.max_depth = 3;
    small.max_bulk_length = 8;
    small.max_aggregate_size = 4;
    small.max_line_length = 16;

    std::size_t counts[3] = {};
    const auto check_input = [&](const std::string& input) {
        const resp::parser_limits limits = rng() % 4 == 0 ? small : resp::parser_limits{};
        resp::parser p(limits);
        const auto st = p.parse(input);
        REQUIRE((st == parse_status::needs_more || st == parse_status::done ||
                 st == parse_status::failed));
        ++counts[static_cast<int>(st)];
        if (st == parse_status::done)
        {
            REQUIRE(p.consumed() <= input.size());
            REQUIRE(p.consumed() > 0);
            check_shape(p.nodes());
            for (const auto& n : p.nodes())
            {
                if (!n.value.empty())
                {
                    REQUIRE(n.value.data() >= input.data());
                    REQUIRE(n.value.data() + n.value.size() <= input.data() + p.consumed());
                }
            }
        }
        else if (st == parse_status::failed)
        {
            REQUIRE_FALSE(p.error_message().empty());
            REQUIRE(p.nodes().empty());
        }
        else
        {
            REQUIRE(p.nodes().empty());
        }

        // Feeding in two pieces, from different buffers, reaches the same verdict.
        const outcome whole = snapshot(p, st);
        const std::size_t k = input.empty() ? 0 : pick(input.size() + 1);
        resp::parser q(limits);
        const std::string first(input, 0, k);
        auto st2 = q.parse(first);
        const std::string second(input);
        if (st2 == parse_status::needs_more)
            st2 = q.parse(second);
        const outcome split = snapshot(q, st2);
        if (split.status != whole.status || split.nodes != whole.nodes ||
            split.consumed != whole.consumed || split.error != whole.error)
        {
            FAIL("split at " << k << " of " << escape(input) << ": " << status_name(whole.status)
                             << " vs " << status_name(split.status) << " / " << whole.error
                             << " vs " << split.error);
        }
    };

    for (int i = 0; i < 10000; ++i)
    {
        std::string input(pick(65), '\0');
        for (auto& c : input)
            c = random_byte();
        // Half of them start with a valid type byte, to get past the first check.
        if (!input.empty() && rng() % 2 == 0)
            input[0] = "+-:$!=,#(_*%~>|"[pick(15)];
        check_input(input);
    }

    const auto& items = corpus();
    for (int i = 0; i < 10000; ++i)
    {
        std::string input = items[pick(items.size())];
        if (rng() % 3 == 0)
            input += items[pick(items.size())];
        const std::size_t mutations = 1 + pick(4);
        for (std::size_t m = 0; m < mutations; ++m)
        {
            switch (rng() % 6)
            {
            case 0:  // replace a byte
                if (!input.empty())
                    input[pick(input.size())] = random_byte();
                break;
            case 1:  // insert a byte
                input.insert(input.begin() + static_cast<std::ptrdiff_t>(pick(input.size() + 1)),
                             random_byte());
                break;
            case 2:  // delete a byte
                if (!input.empty())
                    input.erase(pick(input.size()), 1);
                break;
            case 3:  // truncate
                input.resize(pick(input.size() + 1));
                break;
            case 4:  // duplicate a slice
                if (!input.empty())
                {
                    const std::size_t from = pick(input.size());
                    const std::size_t len = 1 + pick(input.size() - from);
                    input.insert(pick(input.size() + 1), input.substr(from, len));
                }
                break;
            default:  // splice another reply in
                input.insert(pick(input.size() + 1), items[pick(items.size())]);
                break;
            }
        }
        check_input(input);
    }

    INFO("needs_more " << counts[0] << ", done " << counts[1] << ", failed " << counts[2]);
    // The corpus mutations must reach every outcome, or the fuzz loop tests little.
    CHECK(counts[0] > 100);
    CHECK(counts[1] > 100);
    CHECK(counts[2] > 100);
}
