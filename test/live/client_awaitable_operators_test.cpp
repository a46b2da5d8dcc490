// `co_await (lock || timer)` with Asio's awaitable operators: docs/usage.md shows it, this
// compiles and runs it. On Boost 1.81 the operators take awaitables, so both operations are
// given asio::use_awaitable (the default token, asio::deferred, does not combine there).
#include "client_fixture.hpp"

#include <variant>

#include <boost/asio/experimental/awaitable_operators.hpp>

namespace redlock::test {

namespace {

using boost::asio::experimental::awaitable_operators::operator||;

// The snippet of docs/usage.md: a lock, or nothing after `patience`.
asio::awaitable<std::optional<lock>> lock_within(client& locks, std::string resource,
                                                 std::chrono::milliseconds patience)
{
    auto ex = co_await asio::this_coro::executor;  // on its own line (GCC 12, §17)
    asio::steady_timer timer(ex, patience);
    auto winner = co_await (locks.async_lock(resource, asio::use_awaitable) ||
                            timer.async_wait(asio::use_awaitable));
    if (winner.index() == 0)
        co_return std::get<0>(std::move(winner));
    co_return std::nullopt;  // the timer won: the acquisition was cancelled and released
}

}  // namespace

TEST_CASE_METHOD(masters_rig<3>, "client: co_await (async_lock || timer) with awaitable operators",
                 "[live][client]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // Free: the lock wins.
            auto first = co_await lock_within(c, "ops", 2000ms);
            REQUIRE(first.has_value());
            CHECK(first->held());
            // Held by `first`, retried until the timer wins: no lock, and nothing of ours left.
            lock_options patient = c.default_options();
            patient.max_attempts = 1000;
            patient.retry_delay = 5ms;
            asio::steady_timer timer(co_await asio::this_coro::executor, 50ms);
            auto second = co_await (c.async_lock("ops", patient, asio::use_awaitable) ||
                                    timer.async_wait(asio::use_awaitable));
            CHECK(second.index() == 1);
            co_await c.async_unlock(*first, asio::use_awaitable);
            CHECK(co_await settled_keys(m) == 0);
        },
        10s);
}

}  // namespace redlock::test
