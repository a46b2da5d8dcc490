// Must not compile: with the default token, co_await yields the lock alone, not (error_code, lock).
#include <redlock/client.hpp>

boost::asio::awaitable<void> run(redlock::client& c) { auto [ec, l] = co_await c.async_lock("r"); }
