// Must not compile: async_with_lock's work returns an int, not an awaitable. The test checks
// that the compiler says so in a sentence (the static_assert of client.hpp), not only in a
// page of template errors.
#include <redlock/client.hpp>

boost::asio::awaitable<void> run(redlock::client& c)
{
    co_await c.async_with_lock("r", [](redlock::lock) { return 42; });
}
