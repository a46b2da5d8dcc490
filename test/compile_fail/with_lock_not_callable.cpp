// Must not compile: async_with_lock's work does not take a lock.
#include <redlock/client.hpp>

boost::asio::awaitable<void> run(redlock::client& c)
{
    co_await c.async_with_lock("r", []() -> boost::asio::awaitable<void> { co_return; });
}
