// A TCP proxy in front of one master that injects faults on command: latency, stalls,
// connection cuts, refused connections.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace redlock::test {

/**
 * @brief A loopback TCP proxy in front of one Redis master, with faults on command.
 *
 * Listens on `127.0.0.1` on a port the kernel picks and forwards every accepted connection to
 * `master_host:master_port` over a connection of its own. There is no kernel latency injection
 * on the test machines (no `tc netem`); this is how a test makes a master slow, half-dead or
 * unreachable while the process itself keeps running. It runs on a thread of its own with an
 * io_context of its own, so a test thread that blocks (or a client io_context that the test
 * runs in slices) does not slow the forwarding down.
 *
 * Faults, each applied to every current and future connection until changed:
 * - **latency** (per direction): every chunk read is forwarded `d` later than it arrived, in
 *   order (a chunk never overtakes an earlier one). A change applies to chunks read after it.
 * - **stall** (per direction): bytes are still accepted from the sender but nothing is
 *   forwarded. `stall_mode::buffer` keeps them and forwards them when the stall ends, in order,
 *   like a link that comes back; `stall_mode::drop` discards them. A TCP stream cannot go on
 *   after a hole, so when a drop-mode stall ends every connection that lost bytes is cut.
 *   An end of stream from the sender is not forwarded while its direction is stalled.
 * - **cut** (drop_connections): every current connection is reset on both sides (RST, as a
 *   middlebox that drops its state does). New connections are accepted as usual.
 * - **refuse** (refuse_connections): new connections are accepted and reset at once; the
 *   client sees its connect succeed and the stream end (a half-dead host or a full backlog).
 *
 * When the master is down, an accepted connection is closed as soon as the proxy's own
 * connect fails, so the client sees the same thing as with `refuse`.
 *
 * @par Thread safety
 * Every public member may be called from any thread. The control members are synchronous:
 * when one returns, the proxy thread has applied it (for a cut: every connection is closed).
 *
 * @par Object lifetimes
 * The destructor closes the listening socket and every connection, and joins the thread.
 */
class fault_proxy
{
public:
    /// Which way bytes flow.
    enum class direction : std::uint8_t
    {
        to_master = 1,  ///< client -> master (requests)
        to_client = 2,  ///< master -> client (replies)
        both = 3,
    };

    /// What a stall does with the bytes it accepts.
    enum class stall_mode : std::uint8_t
    {
        buffer,  ///< keep them; forward them in order when the stall ends
        drop,    ///< discard them; the connection is cut when the stall ends
    };

    /// Counters since construction.
    struct statistics
    {
        std::uint64_t accepted = 0;  ///< Connections accepted and forwarded.
        std::uint64_t refused = 0;   ///< Connections reset on accept (refuse mode).
        std::uint64_t upstream_failed =
            0;  ///< Connections closed because the master was unreachable.
        std::uint64_t cut =
            0;  ///< Connections reset by drop_connections or a drop-mode stall's end.
        std::uint64_t active = 0;           ///< Connections open now.
        std::uint64_t bytes_to_master = 0;  ///< Bytes forwarded client -> master.
        std::uint64_t bytes_to_client = 0;  ///< Bytes forwarded master -> client.
        std::uint64_t bytes_dropped = 0;    ///< Bytes discarded by drop-mode stalls and cuts.
    };

    /**
     * @brief Starts listening and forwarding.
     * @param master_port Port of the master on `master_host`.
     * @param master_host IPv4 or IPv6 literal of the master.
     * @throws boost::system::system_error if the listening socket cannot be set up.
     */
    explicit fault_proxy(std::uint16_t master_port, std::string master_host = "127.0.0.1");

    /// @brief Closes everything and joins the proxy thread.
    ~fault_proxy();

    fault_proxy(const fault_proxy&) = delete;
    fault_proxy& operator=(const fault_proxy&) = delete;

    /// @brief The port the proxy listens on (127.0.0.1).
    std::uint16_t port() const noexcept;
    /// @brief `redis://127.0.0.1:PORT`, for a client that should go through the proxy.
    std::string uri() const;

    /// @brief Delays each chunk by `to_master` on its way to the master and by `to_client` on
    /// its way back. Zero: no delay.
    void set_latency(std::chrono::milliseconds to_master, std::chrono::milliseconds to_client);
    /// @brief The same delay both ways.
    void set_latency(std::chrono::milliseconds both) { set_latency(both, both); }

    /// @brief Starts stalling the directions in `d` (the others keep their state).
    void stall(stall_mode mode = stall_mode::buffer, direction d = direction::both);
    /// @brief Ends the stall of the directions in `d`: buffered bytes flow again, connections
    /// with dropped bytes are cut.
    void unstall(direction d = direction::both);

    /// @brief Resets every current connection on both sides. Returns once they are closed.
    void drop_connections();

    /// @brief While `refuse` is true, new connections are reset as soon as they are accepted.
    void refuse_connections(bool refuse = true);

    /// @brief Back to normal: no latency, no stall (buffered bytes flow, holed connections are
    /// cut), new connections accepted. Current connections stay open.
    void heal();

    /// @brief The counters, read on the proxy thread.
    statistics stats() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace redlock::test
