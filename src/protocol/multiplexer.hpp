// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_MULTIPLEXER_HPP
#define REDLOCK_SRC_PROTOCOL_MULTIPLEXER_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/resp.hpp>

#include "protocol/reply_sink.hpp"
#include "protocol/resp_parser.hpp"

namespace redlock::detail {

/// @brief The sans-io multiplexer of one pipelined connection (the shape of Boost.Redis's
/// `detail::multiplexer`): requests in, bytes to write out, bytes read in, replies matched to
/// their requests out. No socket, no clock, no executor.
///
/// - **Requests** are appended to one output queue, each with a slot in a FIFO (its sink and
///   tag); whatever accumulates while a write is in flight goes out in the next write
///   (coalescing): prepare_write() takes the queue, commit_write() records that it left.
/// - **Replies**: read_space() / commit_read() fill the read buffer; consume() parses every
///   complete reply in it and pairs each with the slot at the FIFO's head, in order. Push
///   messages (RESP3 `>`) are not replies: they are set aside (pushes()), never matched.
/// - **Delivery** is a separate step: next_reply() hands out one parsed reply at a time with
///   its sink. consume() has finished before the first sink runs, so a sink that submits,
///   abandons, or fails the connection while replies are being delivered cannot reach the
///   parser or the buffer under it: by construction, not by a flag. A request abandoned while
///   an earlier reply is delivered is skipped (its reply is dropped, the stream stays in step);
///   fail_all() ends a delivery: the requests still queued fail instead.
///
/// The node views handed out stay valid until the next read_space(): the driver reads again
/// only after delivering.
class multiplexer
{
public:
    /// Outcome of consume().
    enum class consumed : std::uint8_t
    {
        ok,               ///< Every complete reply was parsed; the rest waits for more bytes.
        invalid_reply,    ///< The bytes are not RESP (or exceed a limit): see error().
        unexpected_reply  ///< A reply came with no request pending.
    };

    explicit multiplexer(resp::parser_limits limits = {});

    // ---- requests ----------------------------------------------------------------------------

    /// Queues one request; `encode(std::string&)` appends its RESP bytes. Returns its sequence.
    template <class Encode>
    std::uint64_t add(reply_sink* sink, std::uint32_t tag, Encode&& encode)
    {
        encode(queue_);
        return push_slot(sink, tag);
    }

    /// Queues `count` requests whose bytes are `bytes`, tagged 0..count-1; returns the first's
    /// sequence.
    std::uint64_t add_batch(reply_sink* sink, std::string_view bytes, std::uint32_t count);

    /// Queues bytes that no reply will be matched to (a request sent while closing, whose
    /// answer is never read).
    std::string& unanswered() noexcept { return queue_; }

    /// The request's sink will not be called; its reply is still consumed and dropped.
    void abandon(std::uint64_t seq) noexcept;

    /// Requests awaiting a reply.
    std::size_t pending() const noexcept { return static_cast<std::size_t>(tail_ - head_); }

    /// Requests awaiting a reply for somebody: pending() less the health-check PINGs and the
    /// abandoned requests (no sink).
    std::size_t awaited() const noexcept;

    /// Whether the request's bytes have all left (commit_write() of the write that held them).
    bool written(std::uint64_t seq) const noexcept { return seq < flushed_; }

    // ---- writing -----------------------------------------------------------------------------

    /// Whether bytes are queued that no write has taken yet.
    bool has_output() const noexcept { return !queue_.empty(); }

    /// Takes the queued bytes as the next write (at most one write at a time): the returned
    /// view stays valid until commit_write().
    std::string_view prepare_write();

    /// The write taken by prepare_write() has left entirely.
    void commit_write() noexcept;

    /// How much of the write in flight has left so far (for a synchronous drain).
    void note_written(std::size_t n) noexcept { written_ = n; }

    /// What has not left: the rest of the write in flight, then the queue.
    std::string unsent() const;

    // ---- reading -----------------------------------------------------------------------------

    /// Room for at least `min_free` more bytes at the end of the read buffer.
    std::span<char> read_space(std::size_t min_free);

    /// `n` bytes were read into read_space().
    void commit_read(std::size_t n) noexcept { rend_ += n; }

    /// Parses every complete reply now in the buffer (see the class comment).
    consumed consume();

    /// Parses the next complete value without matching it to a request: the replies of a
    /// connection's handshake, written before any queued request, come first. `nodes` views
    /// the buffer until the next call.
    resp::parse_status parse_unmatched(std::span<const resp::node_view>& nodes);

    /// What was wrong, after consume() returned invalid_reply.
    std::string_view error() const noexcept { return parser_.error_message(); }

    /// One reply matched to its request.
    struct reply
    {
        reply_sink* sink;
        std::uint32_t tag;
        std::span<const resp::node_view> nodes;
    };

    /// The next parsed reply whose request was not abandoned; false when none is left. Pops the
    /// request from the FIFO.
    bool next_reply(reply& out) noexcept;

    /// Replies consumed since the connection began (abandoned ones included).
    std::uint64_t replies() const noexcept { return replies_; }

    /// The push messages consumed so far, owned (each a pre-order list of nodes), oldest first.
    std::vector<resp::reply>& pushes() noexcept { return pushes_; }

    // ---- failure -----------------------------------------------------------------------------

    /// Pops the next pending request for failing it (its sink, if not abandoned, gets the
    /// error); the replies parsed but not delivered are dropped first. False when none is left.
    bool next_failed(reply_sink*& sink, std::uint32_t& tag) noexcept;

    /// Starts afresh for a new connection: no output, no buffered bytes, no reply half-parsed.
    /// Pending requests must have been failed first (next_failed()).
    void reset() noexcept;

    /// Drops what was read and not yet delivered (a closing connection no longer reads replies).
    void discard_input() noexcept;

private:
    struct slot
    {
        reply_sink* sink;
        std::uint32_t tag;
    };

    // Inline: every request pushes one.
    std::uint64_t push_slot(reply_sink* sink, std::uint32_t tag)
    {
        if (tail_ - head_ == slots_.size())
            grow_slots();
        slots_[tail_ & (slots_.size() - 1)] = slot{sink, tag};
        return tail_++;
    }
    void grow_slots();

    // FIFO of requests awaiting replies: a ring indexed by sequence number.
    std::vector<slot> slots_;
    std::uint64_t head_ = 0;
    std::uint64_t tail_ = 0;
    std::uint64_t writing_upto_ = 0;  // requests below it are in writing_ or before
    std::uint64_t flushed_ = 0;       // requests below it have left (see written())

    std::string queue_;    // accumulates while a write is in flight
    std::string writing_;  // the write in flight
    std::size_t written_ = 0;

    std::vector<char> rbuf_;
    std::size_t rbeg_ = 0;
    std::size_t rend_ = 0;
    resp::parser parser_;

    // Replies parsed by consume() and not yet delivered: their nodes, and where each ends.
    std::vector<resp::node_view> parsed_nodes_;
    std::vector<std::size_t> parsed_ends_;
    std::size_t delivered_ = 0;  // of parsed_ends_
    std::uint64_t replies_ = 0;

    std::vector<resp::reply> pushes_;
};

}  // namespace redlock::detail

#endif
