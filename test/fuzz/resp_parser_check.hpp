// The invariants of the RESP parser, checked on one input. Shared by the libFuzzer target
// (resp_parser_fuzz.cpp) and the unit test that replays the corpus and the regressions.
//
// The input is a stream of bytes as a server would send them: zero or more replies back to
// back, possibly cut short or invalid anywhere. It is parsed three ways, the way
// node_connection reads (parse, advance by consumed(), parse again):
//   1. whole: the complete input in one buffer;
//   2. in chunks whose sizes come from a generator seeded with a hash of the input, each call
//      given a fresh copy of the bytes so far (a view kept across calls would be a
//      use-after-free under ASan);
//   3. byte by byte.
// All three must give the same replies, the same final status and the same error message,
// and every reply must be well formed (see check_nodes).
#pragma once

#include "protocol/resp_parser.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::fuzz {

namespace detail {

using resp::node_view;
using resp::parse_status;
using resp::type;

struct owned_node
{
    type t;
    std::uint32_t depth;
    std::uint64_t size;
    std::string value;
    bool operator==(const owned_node&) const = default;
};

struct stream_result
{
    std::vector<std::vector<owned_node>> replies;
    parse_status last = parse_status::needs_more;  // needs_more or failed, after the replies
    std::string error;
    std::size_t consumed = 0;  // bytes taken by the replies
    bool operator==(const stream_result&) const = default;
};

inline std::uint64_t fnv1a(const std::uint8_t* p, std::size_t n)
{
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

// splitmix64: a tiny deterministic generator for the chunk sizes.
inline std::uint64_t next_random(std::uint64_t& s)
{
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline bool is_int64(std::string_view s)
{
    std::int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

inline std::uint64_t elements_of(const node_view& n)
{
    return (n.data_type == type::map || n.data_type == type::attribute) ? n.size * 2 : n.size;
}

// Walks the value that starts at nodes[i] at depth `d` (its attributes first); returns the index
// after it, or npos with `err` set.
inline std::size_t walk(std::span<const node_view> nodes, std::size_t i, std::uint32_t d,
                        const resp::parser_limits& lim, std::string& err)
{
    constexpr auto bad = std::string_view::npos;
    auto fail = [&](std::string what) {
        err = what + " at node " + std::to_string(i);
        return bad;
    };
    // A leaf may sit inside max_depth aggregates; an aggregate opens one more level.
    if (d > lim.max_depth)
        return fail("depth beyond the limit");
    while (i < nodes.size() && nodes[i].data_type == type::attribute)
    {
        if (nodes[i].depth != d)
            return fail("attribute depth " + std::to_string(nodes[i].depth) + ", expected " +
                        std::to_string(d));
        if (d + 1 > lim.max_depth)
            return fail("attribute nested beyond the limit");
        if (!nodes[i].value.empty())
            return fail("attribute with a value");
        if (elements_of(nodes[i]) > lim.max_aggregate_size)
            return fail("attribute larger than the limit");
        const std::uint64_t n = elements_of(nodes[i]);
        ++i;
        for (std::uint64_t k = 0; k < n; ++k)
            if ((i = walk(nodes, i, d + 1, lim, err)) == bad)
                return bad;
    }
    if (i >= nodes.size())
        return fail("missing value (after an attribute or inside an aggregate)");
    const node_view& n = nodes[i];
    if (n.depth != d)
        return fail("depth " + std::to_string(n.depth) + ", expected " + std::to_string(d));
    if (resp::is_aggregate(n.data_type))
    {
        if (d + 1 > lim.max_depth)
            return fail("aggregate nested beyond the limit");
        if (!n.value.empty())
            return fail("aggregate with a value");
        if (elements_of(n) > lim.max_aggregate_size)
            return fail("aggregate larger than the limit");
        const std::uint64_t count = elements_of(n);
        ++i;
        for (std::uint64_t k = 0; k < count; ++k)
            if ((i = walk(nodes, i, d + 1, lim, err)) == bad)
                return bad;
        return i;
    }
    if (n.size != 0)
        return fail("leaf with a size");
    const std::string_view v = n.value;
    switch (n.data_type)
    {
    case type::simple_string:
    case type::simple_error:
        if (v.find_first_of("\r\n") != std::string_view::npos)
            return fail("CR or LF inside a simple string");
        break;
    case type::integer:
        if (!is_int64(v))
            return fail("integer that is not a 64-bit integer");
        break;
    case type::null:
        if (!v.empty())
            return fail("null with a value");
        break;
    case type::boolean:
        if (v != "t" && v != "f")
            return fail("boolean that is neither t nor f");
        break;
    case type::double_type:
    case type::big_number:
        if (v.empty())
            return fail("empty number");
        break;
    case type::bulk_string:
    case type::bulk_error:
        if (v.size() > lim.max_bulk_length)
            return fail("bulk string longer than the limit");
        break;
    case type::verbatim_string:
        if (v.size() < 4 || v[3] != ':' || v.size() > lim.max_bulk_length)
            return fail("verbatim string without its format prefix or over the limit");
        break;
    default: return fail("unknown type " + std::to_string(static_cast<int>(n.data_type)));
    }
    return i + 1;
}

// The checks on one completed reply, parsed from `buf`.
template <class Parser>
std::string check_reply(const Parser& p, std::string_view buf, const resp::parser_limits& lim)
{
    const auto nodes = p.nodes();
    if (p.consumed() == 0 || p.consumed() > buf.size())
        return "consumed() = " + std::to_string(p.consumed()) + " outside [1, " +
               std::to_string(buf.size()) + "]";
    if (nodes.empty())
        return "done with no node";
    if (!p.error_message().empty())
        return "done with an error message";
    for (const auto& n : nodes)
        if (!n.value.empty() && (n.value.data() < buf.data() ||
                                 n.value.data() + n.value.size() > buf.data() + p.consumed()))
            return "a node's value lies outside the consumed bytes";
    std::string err;
    const std::size_t end = walk(nodes, 0, 0, lim, err);
    if (end == std::string_view::npos)
        return "malformed nodes: " + err;
    if (end != nodes.size())
        return "nodes after the end of the top-level value";
    return {};
}

inline std::vector<owned_node> own(std::span<const node_view> nodes)
{
    std::vector<owned_node> out;
    out.reserve(nodes.size());
    for (const auto& n : nodes)
        out.push_back({n.data_type, n.depth, n.size, std::string(n.value)});
    return out;
}

// Feeds `in` with chunk sizes from `next_chunk` (0: everything left). Every parse() call gets
// a fresh, exactly sized heap copy of the unconsumed bytes received so far.
template <class Parser, class NextChunk>
std::string feed(std::string_view in, const resp::parser_limits& lim, NextChunk next_chunk,
                 stream_result& out)
{
    Parser p(lim);
    std::size_t received = 0;  // bytes of `in` given so far
    std::size_t begin = 0;     // start of the current reply
    for (;;)
    {
        const std::size_t n = received - begin;
        auto copy = std::make_unique<char[]>(n == 0 ? 1 : n);
        if (n > 0)
            std::memcpy(copy.get(), in.data() + begin, n);
        const std::string_view buf(copy.get(), n);
        const parse_status st = p.parse(buf);
        if (st == parse_status::done)
        {
            if (auto e = check_reply(p, buf, lim); !e.empty())
                return "reply " + std::to_string(out.replies.size()) + ": " + e;
            out.replies.push_back(own(p.nodes()));
            begin += p.consumed();
            out.consumed = begin;
            continue;
        }
        if (st == parse_status::failed)
        {
            if (p.error_message().empty())
                return "failed without an error message";
            if (!p.nodes().empty())
                return "failed with nodes";
            // Failure is sticky until reset().
            if (p.parse(buf) != parse_status::failed)
                return "a failed parser accepted more input";
            out.last = st;
            out.error = std::string(p.error_message());
            return {};
        }
        if (st != parse_status::needs_more)
            return "parse() returned an unknown status";
        if (!p.nodes().empty() || !p.error_message().empty())
            return "needs_more with nodes or an error message";
        if (received == in.size())
        {
            out.last = st;
            return {};
        }
        const std::size_t c = next_chunk();
        received = c == 0 ? in.size() : std::min(in.size(), received + c);
    }
}

}  // namespace detail

/// @brief Checks every invariant of `Parser` (resp::parser, or a broken one in the test that
/// shows these checks find what they look for) on `data`; returns an empty string when they
/// all hold, else what went wrong.
template <class Parser>
std::string check_parser_on(const std::uint8_t* data, std::size_t size)
{
    using namespace detail;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    const std::uint64_t h = fnv1a(data, size);

    // One input in four runs with small limits, drawn from the hash, to reach every limit.
    resp::parser_limits lim;
    if ((h & 3) == 0)
    {
        lim.max_depth = 1 + ((h >> 2) & 7);
        lim.max_bulk_length = (h >> 5) & 63;
        lim.max_aggregate_size = (h >> 11) & 15;
        lim.max_line_length = 1 + ((h >> 15) & 63);
    }

    stream_result whole;
    if (auto e = feed<Parser>(
            in, lim, [] { return std::size_t{0}; }, whole);
        !e.empty())
        return "whole: " + e;
    if (whole.consumed > size)
        return "consumed more than the input";

    std::uint64_t seed = h;
    stream_result chunked;
    if (auto e = feed<Parser>(
            in, lim, [&] { return static_cast<std::size_t>(1 + next_random(seed) % 17); }, chunked);
        !e.empty())
        return "chunked: " + e;
    if (!(chunked == whole))
        return "chunked feeding differs from whole feeding (error '" + chunked.error + "' vs '" +
               whole.error + "', " + std::to_string(chunked.replies.size()) + " vs " +
               std::to_string(whole.replies.size()) + " replies)";

    stream_result bytewise;
    if (auto e = feed<Parser>(
            in, lim, [] { return std::size_t{1}; }, bytewise);
        !e.empty())
        return "byte by byte: " + e;
    if (!(bytewise == whole))
        return "byte-by-byte feeding differs from whole feeding (error '" + bytewise.error +
               "' vs '" + whole.error + "')";

    // reset() forgets everything: a parser that failed or stopped half-way parses the
    // first reply again exactly like a fresh one.
    {
        Parser p(lim);
        (void)p.parse(in.substr(0, size / 2));
        p.reset();
        Parser fresh(lim);
        const auto a = p.parse(in);
        const auto b = fresh.parse(in);
        if (a != b || own(p.nodes()) != own(fresh.nodes()) || p.consumed() != fresh.consumed() ||
            p.error_message() != fresh.error_message())
            return "a reset parser differs from a fresh one";
    }
    return {};
}

/// Checks every invariant of resp::parser on `data` (check_parser_on).
inline std::string check_resp_input(const std::uint8_t* data, std::size_t size)
{
    return check_parser_on<resp::parser>(data, size);
}

}  // namespace redlock::fuzz
