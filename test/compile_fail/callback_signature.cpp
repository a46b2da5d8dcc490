// Must not compile: async_lock's callback takes the lock without the error code.
#include <redlock/client.hpp>

void run(redlock::client& c)
{
    c.async_lock("r", [](redlock::lock) {});
}
