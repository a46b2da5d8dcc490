// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_RESP_PARSER_HPP
#define REDLOCK_SRC_PROTOCOL_RESP_PARSER_HPP

/// @file
/// @brief An incremental, resumable RESP2 / RESP3 reply parser with no I/O.

#include <redlock/resp.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::resp {

/// @brief Bounds on what a peer may make the parser accept. Exceeding one fails the reply.
struct parser_limits
{
    /// Open aggregates (attributes included) at any point; a top-level array is depth 1.
    std::size_t max_depth = 32;
    /// Payload bytes of one bulk string, bulk error or verbatim string.
    std::size_t max_bulk_length = 64u << 20;
    /// Elements of one aggregate as sent on the wire: a map of n pairs has 2n elements.
    std::size_t max_aggregate_size = 1u << 20;
    /// Bytes between a type byte and its CRLF (simple strings, numbers, headers). Bulk payloads
    /// are bounded by max_bulk_length instead.
    std::size_t max_line_length = 64u << 10;
};

enum class parse_status
{
    needs_more,  ///< The reply is incomplete; call again with more bytes appended.
    done,        ///< One complete top-level value was parsed: see nodes() and consumed().
    failed,      ///< Invalid RESP or a limit exceeded: see error_message(); the stream is lost.
};

/// @brief Parses one reply at a time from a growing buffer.
///
/// Node layout is the one of resp.hpp, with these choices:
/// - leaves have `size` 0; aggregates have the count as sent (pairs for maps/attributes);
/// - integers, doubles, booleans and big numbers keep their wire text in `value` (`"42"`,
///   `"inf"`, `"t"`): converting is the caller's business, and most callers only compare;
/// - a verbatim string's `value` is its whole payload, format prefix included (`"txt:..."`);
/// - RESP2 nulls (`$-1`, `*-1`) and RESP3 `_` all become type::null;
/// - an attribute node and its pairs precede the value they annotate, at that value's depth.
///
/// Memory is bounded by the bytes actually received: a declared length or count is only
/// checked against the limits, never reserved. The node storage is kept across replies, so a
/// steady stream of replies does not allocate.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class parser
{
public:
    explicit parser(parser_limits limits = {});

    /// @brief Parses (more of) the current reply.
    ///
    /// `buf` holds the reply from its first byte: every byte given to previous calls for this
    /// reply (possibly moved to another address) followed by new ones. Parsing resumes at the
    /// offset where the previous call stopped. Bytes after the value are left alone.
    parse_status parse(std::string_view buf);

    /// After done: the nodes of the value in pre-order, viewing the `buf` of the last parse().
    /// Valid until the next parse() or reset(); empty in any other state.
    std::span<const node_view> nodes() const noexcept { return {views_.data(), view_count_}; }

    /// After done: how many bytes of `buf` the value occupied.
    std::size_t consumed() const noexcept { return pos_; }

    /// After failed: what was wrong, without any payload byte. Empty otherwise.
    std::string_view error_message() const noexcept { return error_; }

    /// Forgets the current reply and clears a failure. parse() calls it after done.
    void reset() noexcept;

private:
    // A node as offsets into the buffer: the buffer may move between calls.
    struct raw_node
    {
        type data_type;
        std::uint32_t depth;
        std::uint64_t size;
        std::size_t offset;
        std::size_t length;
    };

    // An open aggregate: how many of its elements are still to come.
    struct frame
    {
        std::uint64_t remaining;
        bool is_attribute;
    };

    parse_status fail(std::string message);
    parse_status on_line(std::string_view buf, char type_byte, std::size_t begin, std::size_t end);
    parse_status on_bulk_payload(std::string_view buf);
    parse_status on_aggregate(std::string_view buf, type t, std::string_view text,
                              std::size_t begin);
    void push_leaf(type t, std::size_t offset, std::size_t length);
    bool finish_element(bool is_attribute) noexcept;
    parse_status complete(std::string_view buf);

    parser_limits limits_;
    parse_status status_ = parse_status::needs_more;
    std::size_t pos_ = 0;        // start of the next unparsed element (or of a pending payload)
    std::size_t line_scan_ = 0;  // where the search for the current line's CR resumes
    bool in_payload_ = false;    // a bulk header was parsed; its payload starts at pos_
    type payload_type_ = type::bulk_string;
    std::size_t payload_length_ = 0;
    std::vector<raw_node> raw_;
    std::vector<frame> stack_;
    std::vector<node_view> views_;  // materialised at done; the first view_count_ are valid
    std::size_t view_count_ = 0;
    std::string error_;
};

}  // namespace redlock::resp

#endif
