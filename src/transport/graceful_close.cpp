// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// Closing a connection without losing what it sent (node_connection::close, drain_now).
//
// Why a drain at all: a master that cannot write a reply (the client reset its socket) frees
// that client, and the commands it had received but not yet read are dropped with it. A client
// that closes its socket with unread replies resets it. So a close right after a burst of
// releases (each already counted as sent) would lose the releases a slow master had not yet
// read, leaving their keys to expire by TTL. A graceful close writes what is queued, shuts the
// sending side down, and reads until the master closes: every command that left the client is
// read by the master before it sees the end of the stream.
#include "transport/node_connection.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

namespace redlock::detail {

void node_connection::close()
{
    if (closed_)
        return;
    closed_ = true;
    resolver_.cancel();
    connect_timer_.cancel();
    backoff_timer_.cancel();
    // A ready connection drains even with nothing in flight: the close of the other masters may
    // still make an attempt fail, whose release must reach this one too (start_drain).
    if (state_ == state::ready && opts_.close_timeout.count() > 0)
        start_drain(writing_ || mux_.has_output() || pending() > 0);
    else
        drop(error::connection_closed, "connection closed by its owner");
    set_state(state::closed);
    settle();
}

void node_connection::start_drain(bool unfinished)
{
    draining_ = true;
    drain_needed_ = unfinished;
    set_state(state::closed);
    health_timer_.cancel();
    // The sinks learn at once that no reply will come; what they submit meanwhile (a release
    // after a failed attempt) is still queued, and goes out before the shutdown.
    fail_pending(error::connection_closed);
    event_.cancel();  // run() ends
    drain_timer_.expires_after(opts_.close_timeout);
    drain_timer_.async_wait([self = shared_from_this(), gen = gen_](const error_code& ec) {
        if (!ec && gen == self->gen_ && self->draining_)
            self->end_drain();
    });
    // The shutdown waits for the end of the handler that closes: a client closes its masters
    // one after another, and an attempt learns that it failed only when a majority of them
    // have failed it, after the first ones closed. Its release, submitted then, must still
    // reach those whose SET had left (submit() queues it while draining_ && !half_closed_).
    asio::post(ex_, [self = shared_from_this(), gen = gen_] {
        if (gen == self->gen_ && self->draining_)
            self->flush_drain();
    });
    // The read in progress goes on: on_read drops what arrives until the master closes.
}

void node_connection::flush_drain()
{
    drain_flushing_ = true;
    if (writing_)
        return;  // the write's completion writes the rest, then shuts the sending side down
    if (mux_.has_output())
        start_write();
    else if (drain_needed_)
        half_close();
    else
        end_drain();  // nothing left unanswered, nothing to send: closed at once
}

void node_connection::half_close()
{
    half_closed_ = true;
    stream_.shutdown_send();
}

void node_connection::end_drain()
{
    draining_ = false;
    drain_flushing_ = false;
    half_closed_ = false;
    drain_timer_.cancel();
    drop(error::connection_closed, {});
}

void node_connection::drain_now(std::span<const std::shared_ptr<node_connection>> conns,
                                std::chrono::steady_clock::time_point deadline) noexcept
{
    struct draining_socket
    {
        node_connection* conn;
        int fd;
        std::string out;  // still to write before the shutdown
        std::size_t at = 0;
        bool done = false;
    };
    std::vector<draining_socket> socks;
    for (const auto& c : conns)
    {
        const bool unfinished =
            c->draining_ || (c->state_ == state::ready &&
                             (c->writing_ || c->mux_.has_output() || c->pending() > 0));
        const int fd = c->stream_.plain_native_handle();
        if (!unfinished || fd < 0)
            continue;
        draining_socket s{c.get(), fd, {}};
        // Only a connection that close() was draining writes the rest: there every attempt
        // that close() failed has its release queued behind its SET. Elsewhere the operations
        // were abandoned without releases, so what had not left yet stays unsent (a command
        // cut by the shutdown is discarded by the master); what had left is still delivered.
        if (c->draining_ && !c->half_closed_)
            s.out = c->mux_.unsent();
        if (!c->half_closed_ && s.out.empty())
            ::shutdown(fd, SHUT_WR);
        socks.push_back(std::move(s));
    }

    char scratch[16 * 1024];
    std::vector<pollfd> pfds;
    for (;;)
    {
        pfds.clear();
        for (const auto& s : socks)
            if (!s.done)
                pfds.push_back(
                    {s.fd, static_cast<short>(POLLIN | (s.at < s.out.size() ? POLLOUT : 0)), 0});
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (pfds.empty() || left.count() <= 0)
            break;
        if (::poll(pfds.data(), pfds.size(), static_cast<int>(left.count()) + 1) < 0 &&
            errno != EINTR)
            break;
        std::size_t k = 0;
        for (auto& s : socks)
        {
            if (s.done)
                continue;
            const auto revents = pfds[k++].revents;
            if ((revents & POLLOUT) && s.at < s.out.size())
            {
                const auto n = ::send(s.fd, s.out.data() + s.at, s.out.size() - s.at,
                                      MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                    s.done = true;
                else if (n > 0 && (s.at += static_cast<std::size_t>(n)) == s.out.size())
                    ::shutdown(s.fd, SHUT_WR);
            }
            if (!s.done && (revents & (POLLIN | POLLHUP | POLLERR)))
            {
                const auto n = ::recv(s.fd, scratch, sizeof scratch, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                    s.done = true;
            }
        }
    }
    for (auto& s : socks)
    {
        s.conn->draining_ = false;
        s.conn->half_closed_ = true;
        s.conn->stream_.close();
    }
}

}  // namespace redlock::detail
