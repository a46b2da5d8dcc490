// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/resp_parser.hpp"

#include <charconv>
#include <limits>
#include <utility>

// Wire format: the RESP3 specification (redis/redis-specifications, spec/protocol/RESP3.md),
// which is a superset of RESP2 except for the two RESP2 nulls accepted below.
//
// Streamed strings (`$?`) and streamed aggregates (`*?`, `%?`...) are rejected as protocol
// errors: the specification allows them, but Redis never sends them, and accepting them would
// only widen what a hostile peer can make us buffer.

namespace redlock::resp {
namespace {

// Returned by the step functions to mean "keep going": the bytes for the next step may
// already be in the buffer, and only parse() decides that it needs more.
constexpr parse_status proceed = parse_status::needs_more;

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Skips a run of digits from `i`; false when there is none.
constexpr bool skip_digits(std::string_view s, std::size_t& i) noexcept
{
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i]))
        ++i;
    return i != start;
}

// `:` payloads: an optional '-' and decimal digits that fit a signed 64-bit integer.
// from_chars already refuses '+', spaces and overflow.
bool valid_integer(std::string_view s) noexcept
{
    // The usual reply (a release's 1 or 0, a PTTL) has at most 18 digits, which always fit:
    // checked here digit by digit; only longer ones need from_chars's overflow check.
    const std::size_t sign = !s.empty() && s.front() == '-' ? 1 : 0;
    if (s.size() > sign && s.size() - sign <= 18)
    {
        for (std::size_t i = sign; i < s.size(); ++i)
            if (!is_digit(s[i]))
                return false;
        return true;
    }
    std::int64_t v = 0;
    const char* const end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v);
    return r.ec == std::errc{} && r.ptr == end;
}

// Lengths and counts: decimal digits only (the RESP2 -1 nulls are handled by the caller),
// bounded by the signed 64-bit range the specification uses for them.
bool parse_length(std::string_view s, std::uint64_t& out) noexcept
{
    if (s.empty() || !is_digit(s.front()))
        return false;
    const char* const end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, out);
    return r.ec == std::errc{} && r.ptr == end &&
           out <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

// `,` payloads: `[+|-]<integral>[.<fractional>][<E|e>[sign]<exponent>]`, or `inf`, `-inf`,
// `nan`. `-nan` is accepted too: servers that format doubles with printf can produce it.
bool valid_double(std::string_view s) noexcept
{
    if (s == "inf" || s == "-inf" || s == "+inf" || s == "nan" || s == "-nan")
        return true;
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
        ++i;
    if (!skip_digits(s, i))
        return false;
    if (i < s.size() && s[i] == '.')
    {
        ++i;
        if (!skip_digits(s, i))
            return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E'))
    {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+'))
            ++i;
        if (!skip_digits(s, i))
            return false;
    }
    return i == s.size();
}

// `(` payloads: an optional sign and at least one digit, of any length.
bool valid_big_number(std::string_view s) noexcept
{
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
        ++i;
    return skip_digits(s, i) && i == s.size();
}

constexpr bool is_type_byte(char c) noexcept
{
    switch (c)
    {
    case '+':
    case '-':
    case ':':
    case '$':
    case '!':
    case '=':
    case ',':
    case '#':
    case '(':
    case '_':
    case '*':
    case '%':
    case '~':
    case '>':
    case '|': return true;
    default: return false;
    }
}

constexpr type aggregate_type(char c) noexcept
{
    switch (c)
    {
    case '%': return type::map;
    case '~': return type::set;
    case '>': return type::push;
    case '|': return type::attribute;
    default: return type::array;
    }
}

/// How a one-line element (its whole value on the type line) is checked and stored.
struct line_rule
{
    type leaf;
    bool (*valid)(std::string_view) noexcept;
    const char* error;  ///< the parse error when `valid` refuses the text
};

bool any_text(std::string_view) noexcept { return true; }
bool empty_text(std::string_view s) noexcept { return s.empty(); }
bool boolean_text(std::string_view s) noexcept { return s == "t" || s == "f"; }

/// The rule of a one-line element's type byte, or nullptr for bulk and aggregate types.
/// Simple strings and errors need no check: CR and LF, forbidden inside by the specification,
/// already failed the line scan.
const line_rule* line_rule_for(char c) noexcept
{
    static constexpr line_rule simple_string{type::simple_string, any_text, ""};
    static constexpr line_rule simple_error{type::simple_error, any_text, ""};
    static constexpr line_rule integer{type::integer, valid_integer, "invalid integer"};
    static constexpr line_rule null{type::null, empty_text, "invalid null"};
    static constexpr line_rule boolean{type::boolean, boolean_text, "invalid boolean"};
    static constexpr line_rule double_type{type::double_type, valid_double, "invalid double"};
    static constexpr line_rule big_number{type::big_number, valid_big_number, "invalid big number"};
    switch (c)
    {
    case '+': return &simple_string;
    case '-': return &simple_error;
    case ':': return &integer;
    case '_': return &null;
    case '#': return &boolean;
    case ',': return &double_type;
    case '(': return &big_number;
    default: return nullptr;
    }
}

std::string with_number(std::string_view text, std::uint64_t v)
{
    char digits[24];
    const auto r = std::to_chars(digits, digits + sizeof digits, v);
    std::string out(text);
    out.append(digits, r.ptr);
    return out;
}

}  // namespace

parser::parser(parser_limits limits) : limits_(limits)
{
    // Enough for the usual replies (a status, an integer, a short array) from the start.
    raw_.reserve(16);
    views_.reserve(16);
    views_.resize(1);  // (a one-line reply is written into the first directly: on_line)
}

void parser::reset() noexcept
{
    status_ = parse_status::needs_more;
    pos_ = 0;
    line_scan_ = 0;
    in_payload_ = false;
    raw_.clear();
    stack_.clear();
    view_count_ = 0;
    error_.clear();
}

parse_status parser::parse(std::string_view buf)
{
    if (status_ == parse_status::failed)
        return status_;
    if (status_ == parse_status::done)
        reset();
    if (buf.size() < pos_)
        return fail("buffer shorter than the bytes already parsed");

    for (;;)
    {
        if (in_payload_)
        {
            const std::size_t avail = buf.size() - pos_;
            if (avail > payload_length_ && buf[pos_ + payload_length_] != '\r')
                return fail("missing CRLF after bulk payload");
            if (avail < payload_length_ || avail - payload_length_ < 2)
                return parse_status::needs_more;
            const parse_status st = on_bulk_payload(buf);
            if (st != proceed)
                return st;
            continue;
        }

        if (pos_ == buf.size())
            return parse_status::needs_more;
        const char type_byte = buf[pos_];
        if (!is_type_byte(type_byte))
        {
            static constexpr char hex[] = "0123456789abcdef";
            const auto b = static_cast<unsigned char>(type_byte);
            std::string message = "invalid type byte 0x";
            message += hex[b >> 4];
            message += hex[b & 0xf];
            return fail(std::move(message));
        }

        // Resume the search where the last call gave up, so a line fed byte by byte is scanned
        // once in total. The search stops at the CR position of a line of max_line_length
        // bytes: a peer that never sends CR costs that much scanning, not the whole buffer.
        const std::size_t begin = pos_ + 1;
        const bool capped = buf.size() - begin > limits_.max_line_length;
        const std::size_t stop = capped ? begin + limits_.max_line_length + 1 : buf.size();
        // Lines are short (statuses, numbers, headers): a plain loop beats a memchr call, and
        // finds a bare LF (forbidden in every line) in the same pass.
        std::size_t cr_at = line_scan_ > begin ? line_scan_ : begin;
        while (cr_at < stop && buf[cr_at] != '\r' && buf[cr_at] != '\n')
            ++cr_at;
        if (cr_at == stop)
        {
            if (capped)
                return fail(with_number("line length exceeds limit ", limits_.max_line_length));
            line_scan_ = cr_at;
            return parse_status::needs_more;
        }
        if (buf[cr_at] == '\n')
            return fail("LF without CR");
        if (cr_at + 1 == buf.size())
        {
            line_scan_ = cr_at;
            return parse_status::needs_more;
        }
        if (buf[cr_at + 1] != '\n')
            return fail("CR not followed by LF");

        const parse_status st = on_line(buf, type_byte, begin, cr_at);
        if (st != proceed)
            return st;
    }
}

parse_status parser::on_line(std::string_view buf, char type_byte, std::size_t begin,
                             std::size_t end)
{
    const std::string_view text(buf.data() + begin, end - begin);
    pos_ = end + 2;

    if (const line_rule* rule = line_rule_for(type_byte))
    {
        if (!rule->valid(text))
            return fail(rule->error);
        if (raw_.empty()) [[likely]]
        {
            // The whole reply (a status, an integer, a null: most of what a lock's round
            // reads): nothing to record, its one view made here.
            views_.front() = node_view{rule->leaf, 0, 0, text};
            view_count_ = 1;
            status_ = parse_status::done;
            return status_;
        }
        push_leaf(rule->leaf, begin, text.size());
        return finish_element(false) ? complete(buf) : proceed;
    }

    switch (type_byte)
    {
    case '$':
    case '!':
    case '=':
    {
        if (text == "?")
            return fail("streamed strings are not supported");
        if (type_byte == '$' && text == "-1")  // the RESP2 null bulk string
        {
            push_leaf(type::null, begin, 0);
            break;
        }
        std::uint64_t length = 0;
        if (!parse_length(text, length))
            return fail("invalid length");
        if (length > limits_.max_bulk_length)
            return fail(with_number("bulk length ", length) +
                        with_number(" exceeds limit ", limits_.max_bulk_length));
        // The payload of a verbatim string starts with a 3-byte format and ':' ("txt:").
        if (type_byte == '=' && length < 4)
            return fail("verbatim string without a format prefix");
        in_payload_ = true;
        payload_type_ = type_byte == '$'   ? type::bulk_string
                        : type_byte == '!' ? type::bulk_error
                                           : type::verbatim_string;
        payload_length_ = static_cast<std::size_t>(length);
        return proceed;
    }

    default: return on_aggregate(buf, aggregate_type(type_byte), text, begin);
    }

    return finish_element(false) ? complete(buf) : proceed;
}

parse_status parser::on_bulk_payload(std::string_view buf)
{
    const std::size_t end = pos_ + payload_length_;
    if (buf[end + 1] != '\n')
        return fail("missing CRLF after bulk payload");
    if (payload_type_ == type::verbatim_string && buf[pos_ + 3] != ':')
        return fail("verbatim string without a format prefix");
    push_leaf(payload_type_, pos_, payload_length_);
    pos_ = end + 2;
    in_payload_ = false;
    return finish_element(false) ? complete(buf) : proceed;
}

parse_status parser::on_aggregate(std::string_view buf, type t, std::string_view text,
                                  std::size_t begin)
{
    if (text == "?")
        return fail("streamed aggregates are not supported");
    if (t == type::array && text == "-1")  // the RESP2 null array
    {
        push_leaf(type::null, begin, 0);
        return finish_element(false) ? complete(buf) : proceed;
    }
    std::uint64_t count = 0;
    if (!parse_length(text, count))
        return fail("invalid aggregate size");
    const bool is_attribute = t == type::attribute;
    // Maps and attributes announce pairs; parse_length bounds count, so doubling is safe.
    const std::uint64_t elements = (t == type::map || is_attribute) ? count * 2 : count;
    if (elements > limits_.max_aggregate_size)
        return fail(with_number("aggregate size ", elements) +
                    with_number(" exceeds limit ", limits_.max_aggregate_size));
    const std::size_t depth = stack_.size() + 1;
    if (depth > limits_.max_depth)
        return fail(with_number("nesting depth ", depth) +
                    with_number(" exceeds limit ", limits_.max_depth));
    raw_.push_back({t, static_cast<std::uint32_t>(stack_.size()), count, begin, 0});
    if (elements == 0)
        return finish_element(is_attribute) ? complete(buf) : proceed;
    // Only open aggregates are stacked, so the stack is bounded by max_depth, not by counts.
    stack_.push_back({elements, is_attribute});
    return proceed;
}

void parser::push_leaf(type t, std::size_t offset, std::size_t length)
{
    raw_.push_back({t, static_cast<std::uint32_t>(stack_.size()), 0, offset, length});
}

// Called when a value ends. An attribute is not an element of its parent: the value it
// annotates, which follows it, is. Returns true when the top-level value is complete.
bool parser::finish_element(bool is_attribute) noexcept
{
    if (is_attribute)
        return false;
    while (!stack_.empty())
    {
        frame& top = stack_.back();
        if (--top.remaining != 0)
            return false;
        const bool closed_attribute = top.is_attribute;
        stack_.pop_back();
        if (closed_attribute)
            return false;
    }
    return true;
}

parse_status parser::complete(std::string_view buf)
{
    // views_ only grows: shrinking and regrowing it would value-initialise it on every reply.
    if (views_.size() < raw_.size())
        views_.resize(raw_.size());
    view_count_ = raw_.size();
    for (std::size_t i = 0; i < raw_.size(); ++i)
    {
        const raw_node& r = raw_[i];
        // Offsets were checked against the buffer as they were recorded.
        views_[i] = node_view{r.data_type, r.depth, r.size,
                              std::string_view(buf.data() + r.offset, r.length)};
    }
    status_ = parse_status::done;
    return status_;
}

parse_status parser::fail(std::string message)
{
    status_ = parse_status::failed;
    error_ = std::move(message);
    view_count_ = 0;
    return status_;
}

}  // namespace redlock::resp
