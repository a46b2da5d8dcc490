// A project that uses an installed redlock through find_package(redlock CONFIG) and the
// umbrella header. It exercises the public API without any server: a client pointed at a
// loopback port where nothing listens must fail an attempt with no_quorum, promptly.
#include <redlock/redlock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>

namespace asio = boost::asio;

// The README's example, compiled (not run: its masters are not on this machine).
[[maybe_unused]] asio::awaitable<void> work(redlock::client& locks)
{
    auto lock = co_await locks.async_lock("invoice:42");
    lock = co_await locks.async_extend(lock, std::chrono::seconds(10));
    co_await locks.async_unlock(lock);
}

int main()
{
    asio::io_context io;
    redlock::client_config cfg;
    cfg.masters = {"redis://127.0.0.1:1"};  // port 1: nothing listens there
    redlock::client locks(io.get_executor(), cfg);

    redlock::error_code result;
    bool done = false;
    locks.async_wait_connected([&](redlock::error_code, std::size_t) {
        locks.async_try_lock("consumer-check",
                             [&](redlock::error_code ec, std::optional<redlock::lock> l) {
                                 result = ec;
                                 done = !l.has_value();
                                 locks.close();
                             });
    });
    io.run_for(std::chrono::seconds(10));
    std::printf("try_lock against a closed port: %s\n", result.message().c_str());
    return done && result == redlock::error::no_quorum ? 0 : 1;
}
