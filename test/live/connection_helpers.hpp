// Driving a redlock::connection from the test thread in the live connection tests
// (connection_test.cpp, fake_server_connection_test.cpp): a request or the wait for the
// connection, run to completion in bounded slices (io_helpers.hpp's run_until).
#pragma once

#include "io_helpers.hpp"

#include <redlock/connection.hpp>
#include <redlock/error.hpp>
#include <redlock/resp.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

namespace redlock::test {

/// The outcome of one async_exec; shared with the handler so that a handler that runs after
/// a failed REQUIRE finds it alive.
struct outcome
{
    bool done = false;
    error_code ec;
    resp::reply reply;
    std::chrono::steady_clock::time_point at{};
};

/// A completion handler of async_exec that fills `o` (and stamps when it ran).
inline auto record(const std::shared_ptr<outcome>& o)
{
    return [o](error_code ec, resp::reply r) {
        o->done = true;
        o->ec = ec;
        o->reply = std::move(r);
        o->at = std::chrono::steady_clock::now();
    };
}

/// async_exec with the request deadline `timeout` (0: none), run to completion on this thread;
/// the test fails if it has not completed within `limit`.
inline outcome exec(boost::asio::io_context& io, connection& conn, command cmd,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                    std::chrono::milliseconds limit = std::chrono::seconds(5))
{
    auto o = std::make_shared<outcome>();
    conn.async_exec(std::move(cmd), timeout, record(o));
    REQUIRE(run_until(
        io, [&] { return o->done; }, limit));
    return *o;
}

/// async_wait_connected, run to completion on this thread; the test fails if it has not
/// completed within `limit`.
inline error_code wait_connected(boost::asio::io_context& io, connection& conn,
                                 std::chrono::milliseconds limit = std::chrono::seconds(5))
{
    auto r = std::make_shared<std::optional<error_code>>();
    conn.async_wait_connected([r](error_code ec) { *r = ec; });
    REQUIRE(run_until(
        io, [&] { return r->has_value(); }, limit));
    return **r;
}

/// Closes `conn` and lets the close run, so no handler outlives the test's objects.
inline void shut(boost::asio::io_context& io, connection& conn)
{
    conn.close();
    run_for(io, std::chrono::milliseconds(20));
}

}  // namespace redlock::test
