// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_TRANSPORT_NODE_CONNECTION_HPP
#define REDLOCK_SRC_TRANSPORT_NODE_CONNECTION_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/events.hpp>
#include <redlock/resp.hpp>

#include "algorithm/deployment_check.hpp"
#include "protocol/multiplexer.hpp"
#include "protocol/server_info.hpp"
#include "runtime/relaxed_counter.hpp"
#include "transport/stream.hpp"

namespace redlock::detail {

/// The completion token of node_connection's coroutines (connect.cpp, node_connection.cpp):
/// errors as values.
inline constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);
/// Room asked of the read buffer before each read_some.
inline constexpr std::size_t min_read_space = 16 * 1024;

/// @brief One multiplexed, pipelined connection to one Redis master.
///
/// Requests are appended to a single output buffer; whatever accumulates while a write is in
/// flight goes out in the next single write. Replies are matched to requests in FIFO order,
/// and every complete reply in the read buffer is dispatched before the next read. A request
/// that its owner abandons (deadline, cancellation) keeps its place in the FIFO: its reply is
/// consumed and dropped, so the stream never desynchronises.
///
/// Lifecycle: connecting (requests are queued and sent after the handshake) -> ready -> on a
/// drop, in-flight requests fail with connection_lost and a reconnection starts at once; when
/// it fails the connection is `down` (requests fail fast with not_connected) until the next
/// attempt, after an exponential backoff with jitter.
///
/// @par Thread safety
/// Every member must be called on the executor given at construction (a strand when the
/// io_context runs on several threads).
class node_connection : public std::enable_shared_from_this<node_connection>
{
public:
    enum class state : std::uint8_t
    {
        connecting,
        ready,
        down,
        closed
    };

    struct statistics
    {
        // Readable from any thread (master_info()); written on the executor only.
        relaxed_counter requests;  ///< Accepted requests (health PINGs included).
        relaxed_counter replies;   ///< Replies read.
        relaxed_counter writes;    ///< Write operations started (one per coalesced batch).
        relaxed_counter connects;  ///< Successful connections (handshake done).
        relaxed_counter drops;     ///< Connections lost after being ready.
    };

    node_connection(asio::any_io_executor ex, master_config cfg, connection_options opts);
    ~node_connection();

    node_connection(const node_connection&) = delete;
    node_connection& operator=(const node_connection&) = delete;

    /// Starts connecting (and keeps the connection up until close()).
    void start();

    /// @brief Stops for good: pending requests fail with connection_closed; no reconnection.
    ///
    /// A ready connection closes gracefully (draining). The pending requests fail at once; at
    /// the end of the calling handler (by then the sinks have submitted what the failures made
    /// them submit, also those failed by other connections' close()), if anything was left
    /// unanswered or is queued, the queued bytes are written, the sending side is shut down,
    /// and what the master still sends is read and dropped until it closes its side or
    /// `close_timeout` passes; otherwise the socket is closed then. A master frees a client
    /// whose replies cannot be written, dropping the commands it had received but not yet
    /// read; the drain lets it execute every command that left this process. A request
    /// submitted while draining (a release of an attempt that close() failed) is still
    /// written, but never answered: submit() returns connection_closed for it.
    void close();

    /// How long a lazy request's bytes may wait for a write (submit's `lazy`); 0: none wait.
    void set_lazy_write_delay(std::chrono::microseconds d) noexcept { lazy_delay_ = d; }

    /// @brief Queues one command; `encode(std::string&)` appends its RESP bytes.
    /// @returns An empty error_code when accepted (the sink will be called), else the reason the
    /// master cannot take requests now (not_connected, connection_closed); the sink is then
    /// never called.
    ///
    /// `lazy`: the command's bytes may wait up to set_lazy_write_delay() to leave with later
    /// commands' (any other request's write takes them at once); for commands whose answer
    /// nobody waits for urgently, and whose order on the connection is all that matters.
    template <class Encode>
    error_code submit(reply_sink* sink, std::uint32_t tag, Encode&& encode, request_ticket& ticket,
                      bool lazy = false)
    {
        if (state_ != state::ready && state_ != state::connecting)
        {
            if (draining_ && !half_closed_)
                encode(
                    mux_.unanswered());  // sent before the drain's shutdown, never answered (close())
            return state_ == state::closed ? error_code(error::connection_closed)
                                           : error_code(error::not_connected);
        }
        ticket.seq = mux_.add(sink, tag, std::forward<Encode>(encode));
        ++stats_.requests;
        if (lazy && lazy_delay_.count() > 0)
            request_lazy_write();
        else
            request_write();
        return {};
    }

    /// @brief Queues `count` commands whose RESP bytes are `bytes`, as one pipelined batch:
    /// their replies reach `sink` with tags 0..count-1, in order. `first` identifies the first.
    error_code submit_batch(reply_sink* sink, std::string_view bytes, std::uint32_t count,
                            request_ticket& first)
    {
        if (state_ != state::ready && state_ != state::connecting)
        {
            if (draining_ && !half_closed_)
                mux_.unanswered().append(bytes);  // as in submit()
            return state_ == state::closed ? error_code(error::connection_closed)
                                           : error_code(error::not_connected);
        }
        first.seq = mux_.add_batch(sink, bytes, count);
        stats_.requests += count;
        request_write();
        return {};
    }

    /// The sink of this request will not be called; its reply is still read and dropped.
    void abandon(request_ticket ticket) noexcept { mux_.abandon(ticket.seq); }

    /// abandon() for the `count` consecutive requests of a batch starting at `first`.
    void abandon(request_ticket first, std::uint32_t count) noexcept
    {
        for (std::uint32_t i = 0; i < count; ++i)
            abandon(request_ticket{first.seq + i});
    }

    /// Whether the request's bytes have all been handed to the kernel (its write completed):
    /// from then on the master executes it even if this connection is closed at once.
    bool written(request_ticket ticket) const noexcept { return mux_.written(ticket.seq); }

    /// When the read whose replies are being delivered completed: one clock reading per read
    /// batch, for the latency diagnostics of every reply in it (valid inside reply_sink::on_reply
    /// for a reply without error).
    std::chrono::steady_clock::time_point read_time() const noexcept { return read_at_; }

    state current_state() const noexcept { return state_; }

    /// Changes each time the connection drops: what was learnt about the master over one
    /// connection (script_cache) holds while this stays the same.
    std::uint64_t generation() const noexcept { return gen_; }

    /// @brief Called (posted to the executor, never from inside the connection's own code) when
    /// the master becomes ready (`up`), or unreachable: a ready connection dropped, or the
    /// first attempt after start or after a drop failed (`ec` says why).
    void on_availability(std::function<void(bool up, error_code ec)> fn)
    {
        availability_ = std::move(fn);
    }

    /// @brief Asks the master who it is (`INFO server`) in every handshake, and calls `fn`
    /// with the answer once the handshake succeeded, before the connection is ready and before
    /// anything queued is written. Synchronous: `fn` must not call back into the connection.
    /// A master that refuses INFO (an ACL rule) or answers something unreadable connects all
    /// the same; `fn` is not called then. Before start().
    void on_identity(std::function<void(const server_identity&)> fn)
    {
        identity_fn_ = std::move(fn);
    }
    /// @brief Checks the master's deployment in every handshake (a plain `INFO` instead of
    /// `INFO server`, and `CONFIG GET save`, in the same write; either refused or unreadable
    /// connects all the same, its facts unknown). info() then carries the warnings of the last
    /// handshake, and `fn` is called (posted to the executor, after the master is reported
    /// up) with those that the previous handshake did not find, when there are any.
    /// Before start().
    void on_deployment_warnings(std::function<void(deployment_warnings)> fn)
    {
        deployment_fn_ = std::move(fn);
    }
    /// @brief Called with each push message (RESP3 `>`: a client-tracking invalidation),
    /// on the executor, after the replies read with it have been delivered. It may submit.
    /// Before start().
    void on_push(std::function<void(const resp::reply&)> fn) { push_fn_ = std::move(fn); }
    /// The state and counters, for client::master_states(); safe from any thread.
    master_info info() const;
    /// Whether a graceful close (see close()) is still under way.
    bool draining() const noexcept { return draining_; }
    const master_config& config() const noexcept { return cfg_; }
    const statistics& stats() const noexcept { return stats_; }
    std::size_t pending() const noexcept { return mux_.pending(); }

    /// Why the last connection attempt failed or the connection dropped (empty when none).
    const error_code& last_error() const noexcept { return last_error_; }
    /// A human-readable detail for last_error(), naming the master (never its password).
    const std::string& last_error_detail() const noexcept { return last_error_detail_; }

    const asio::any_io_executor& get_executor() const noexcept { return ex_; }

    /// Completes (on the executor) once the connection is ready, or failed/closed while trying;
    /// used to wait for the first connection. Called with the state's error, if any.
    void wait_settled(std::function<void(error_code)> fn);
    /// Destroys the waiters of wait_settled without calling them (the execution context is
    /// shutting down).
    void abandon_waiters() noexcept { settle_waiters_.clear(); }

    /// @brief The graceful close of close(), done synchronously for every connection of
    /// `conns` that has requests written or queued, when no handler will run again (the
    /// execution context is shutting down): the sending side is shut down, and replies read
    /// and dropped until each master closes or `deadline` passes, so that every command that
    /// left is executed. A connection that close() was draining first writes what it still
    /// holds; any other writes nothing more (its operations were abandoned without releases,
    /// so an attempt still queued must not go out). All connections are drained at once (one
    /// poll), so a silent master costs the bound once.
    /// TCP and Unix sockets only: a TLS stream's state cannot be driven without its handlers,
    /// so a TLS connection is closed as it is.
    static void drain_now(std::span<const std::shared_ptr<node_connection>> conns,
                          std::chrono::steady_clock::time_point deadline) noexcept;

private:
    asio::awaitable<void> run(std::shared_ptr<node_connection> self);
    asio::awaitable<error_code> connect_once();
    asio::awaitable<error_code> connect_stream();
    asio::awaitable<error_code> handshake();
    /// Whether handshake() sends anything (AUTH, SELECT, CLIENT SETNAME, INFO), i.e. whether a
    /// successful connection attempt means the master answered.
    bool has_handshake() const noexcept;

    void fail_pending(const error_code& ec);

    // Inline: every request asks, and all but the first of a handler's find the write asked
    // for already (or under way).
    void request_write()
    {
        if (state_ != state::ready || writing_ || kick_posted_)
            return;
        if (delivering_)
            return;  // the read loop writes, after the batch, everything its replies trigger
        post_write();
    }
    // request_write()'s kick, posted.
    void post_write();
    void request_lazy_write();
    void start_write();
    void start_read();
    void on_read(const error_code& ec, std::size_t n, std::uint64_t gen);
    void arm_health_timer();
    void on_health_tick(std::uint64_t gen);
    void drop(const error_code& ec, std::string detail);
    void start_drain(bool unfinished);
    void flush_drain();
    void half_close();
    void end_drain();
    void settle();
    void set_error(const error_code& ec, std::string detail);
    /// Takes the last handshake's facts as the master's warnings (published for info());
    /// returns those that the previous handshake did not find.
    deployment_warnings learn_deployment();

    asio::any_io_executor ex_;
    master_config cfg_;
    connection_options opts_;
    std::unique_ptr<asio::ssl::context> tls_ctx_;
    any_stream stream_;
    asio::ip::tcp::resolver resolver_;
    asio::steady_timer connect_timer_;
    asio::steady_timer backoff_timer_;
    asio::steady_timer event_;  // cancelled to wake run() when the connection drops
    asio::steady_timer health_timer_;
    asio::steady_timer drain_timer_;  // bounds a graceful close (close())
    asio::steady_timer lazy_timer_;   // writes lazy requests' bytes at the latest then
    std::chrono::microseconds lazy_delay_{0};
    bool lazy_armed_ = false;

    state state_ = state::connecting;
    bool closed_ = false;
    std::uint64_t gen_ = 0;  // bumped at every drop; stale handlers check it
    bool connect_timed_out_ = false;
    bool draining_ = false;        // a graceful close is under way (close())
    bool drain_needed_ = false;    // ... with requests unanswered or unsent at close()
    bool drain_flushing_ = false;  // ... the handler that started it is over (flush_drain)
    bool half_closed_ = false;     // ... and the sending side is shut down

    // Requests, bytes and replies: the sans-io part. This class moves bytes and keeps time.
    multiplexer mux_;
    bool writing_ = false;
    bool kick_posted_ = false;
    bool delivering_ = false;  // replies are being delivered; the read loop writes what they queue
    std::chrono::steady_clock::time_point read_at_{};

    // Health check bookkeeping, advanced by the periodic tick.
    std::chrono::milliseconds tick_{0};
    std::uint64_t seen_replies_ = 0;
    std::uint64_t seen_writes_ = 0;
    std::chrono::milliseconds stalled_for_{0};
    std::chrono::milliseconds idle_for_{0};

    error_code last_error_;
    std::string last_error_detail_;
    std::vector<std::function<void(error_code)>> settle_waiters_;
    statistics stats_;

    // What info() reads from other threads, and the availability reported so far.
    void set_state(state s);
    std::atomic<state> published_state_{state::connecting};
    mutable std::mutex published_error_mutex_;  // guards published_error_, published_warnings_
    error_code published_error_;
    deployment_warnings published_warnings_;
    std::function<void(bool, error_code)> availability_;
    std::function<void(const server_identity&)> identity_fn_;
    std::function<void(const resp::reply&)> push_fn_;
    std::vector<resp::reply> push_batch_;      // the pushes being delivered (their capacity reused)
    std::optional<server_identity> identity_;  // learnt by the last handshake
    std::function<void(deployment_warnings)> deployment_fn_;
    server_facts facts_;            // learnt by the last handshake (on_deployment_warnings)
    deployment_warnings warnings_;  // of the last successful handshake
    enum class reported : std::uint8_t
    {
        nothing,
        up,
        down
    } reported_ = reported::nothing;
};

}  // namespace redlock::detail

#endif
