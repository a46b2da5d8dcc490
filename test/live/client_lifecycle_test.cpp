// Closing and destroying a client while operations are under way: every handler is called,
// promptly, and nothing is touched after the client is gone.
#include "client_fixture.hpp"

#include <memory>

namespace redlock::test {

TEST_CASE("client: close completes an acquisition that is in flight or in a retry delay", "[live][client]")
{
    local_masters m({.count = 3});
    const auto attempts = GENERATE(1u, 3u);
    CAPTURE(attempts);

    asio::io_context io;
    auto c = std::make_unique<client>(io.get_executor(), config_for(m));
    for (std::size_t i = 0; i < m.size(); ++i)
        m.pause(i);  // the attempts stay in flight until the client closes

    lock_options o = c->default_options();
    o.max_attempts = attempts;
    o.attempt_timeout = 20ms;     // the first attempt fails fast, then a retry delay follows
    o.retry_delay = 1000ms;
    std::optional<error_code> result;
    c->async_lock("r", o, [&](error_code ec, lock) { result = ec; });

    asio::steady_timer t(io, 60ms);  // past the first attempt and its release
    t.async_wait([&](error_code) { c->close(); });
    const auto t0 = steady::now();
    io.run_for(3s);

    for (std::size_t i = 0; i < m.size(); ++i)
        m.resume(i);
    REQUIRE(result.has_value());
    CHECK(ms(steady::now() - t0) < 1000);
    if (attempts > 1)
        CHECK(*result == error::connection_closed);
    else
        CHECK((*result == error::no_quorum || *result == error::connection_closed));
}

TEST_CASE("client: destroying a client as its attempt deadline expires is safe", "[live][client]")
{
    // The deadline timer's handler may already be queued when the client is destroyed; it
    // must not touch the freed client (AddressSanitizer builds report it if it does).
    local_masters m({.count = 3});
    int completed = 0;
    for (int iter = 0; iter < 50; ++iter)
    {
        asio::io_context io;
        client_config cfg = config_for(m);
        cfg.defaults.attempt_timeout = 10ms;
        auto c = std::make_unique<client>(io.get_executor(), cfg);
        asio::steady_timer t(io);
        c->async_wait_connected([&](error_code, std::size_t) {
            const auto t0 = steady::now();
            c->async_lock("r" + std::to_string(iter), [&](error_code, lock) { ++completed; });
            t.expires_at(t0 + 10ms);
            t.async_wait([&](error_code) { c.reset(); });
        });
        io.run_for(5s);
        REQUIRE(io.stopped());
    }
    // Each lock either succeeded before the reset or completed with connection_closed.
    CHECK(completed == 50);
}

}  // namespace redlock::test
