// The calls that GCC 12 miscompiles when written with `co_await` in their argument list
// (docs/usage.md §17), in the shapes the library makes safe. Built with the project's
// compiler and run under ASan in the asan stage: before the overloads, the connection line
// below aborted there with a double free (its defaulted `connection_options` was destroyed
// twice), and the holder lines destroyed a `hold_options` temporary twice.
#include "client_fixture.hpp"

#include <redlock/connection.hpp>

using namespace redlock;
using namespace redlock::test;

TEST_CASE("gcc12: connection, lock_holder and async_with_lock called with co_await beside their "
          "arguments",
          "[live][gcc12]")
{
    live_client live({.count = 3});
    auto& c = live.c;
    const std::string uri = live.m.uri(0);
    live.run(
        [&]() -> asio::awaitable<void> {
            // A connection made from the coroutine's executor and a URI, no options.
            redlock::connection store(co_await asio::this_coro::executor, uri);
            const redlock::command ping("PING");
            auto [pec, pong] = co_await store.async_exec(ping, tuple_awaitable);
            REQUIRE_FALSE(pec);
            REQUIRE(pong.size() == 1);
            CHECK(pong[0].value == "PONG");

            // A holder whose loss signal goes to the coroutine's executor, no options.
            lock l = co_await acquired(c, "gcc12:holder");
            lock_holder holder(c, l, co_await asio::this_coro::executor);
            CHECK(holder.held());
            auto [rec] = co_await holder.async_release(tuple_awaitable);
            CHECK_FALSE(rec);

            // async_with_lock with lock options and no hold options, the work capturing a string
            // by value (the lambda in a variable, as §17 says).
            const std::string resource = "gcc12:with-lock";
            const std::string payload(64, 'x');  // longer than the small-string buffer
            auto work = [payload](redlock::lock) -> asio::awaitable<std::size_t> {
                co_return payload.size();
            };
            auto [wec, n] =
                co_await c.async_with_lock(resource, c.default_options(), std::move(work));
            CHECK_FALSE(wec);
            CHECK(n == 64);
        },
        10s);
}
