// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_TEST_LIVE_CONTENDERS_HPP
#define REDLOCK_TEST_LIVE_CONTENDERS_HPP

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "client_fixture.hpp"
#include "io_helpers.hpp"

namespace redlock::test {

/// @brief Contenders in several processes' worth of clients: `clients` threads, each with its
/// own io_context and client of `m`, each running `per_client` coroutines
/// `body(client&, client_id, k)` until they return (they watch the clock themselves); a
/// client is closed once its coroutines are done. A coroutine that throws, or that has not
/// returned `limit` after the start, is an error in `errors`.
template <class Body>
void run_contenders(const local_masters& m, int clients, int per_client, steady::duration limit,
                    error_log& errors, Body body)
{
    auto worker = [&](int id) {
        try
        {
            asio::io_context io;
            client c(io.get_executor(), config_for(m));
            int finished = 0;
            for (int k = 0; k < per_client; ++k)
                asio::co_spawn(io, body(c, id, k), [&](std::exception_ptr e) {
                    if (e)
                        errors.add("client " + std::to_string(id) + ": a coroutine threw");
                    if (++finished == per_client)
                        c.close();
                });
            io.run_for(limit);
            if (finished != per_client)
                errors.add("client " + std::to_string(id) + ": a coroutine did not finish");
        }
        catch (const std::exception& e)
        {
            errors.add(std::string("worker threw: ") + e.what());
        }
    };
    std::vector<std::thread> threads;
    for (int id = 0; id < clients; ++id)
        threads.emplace_back(worker, id);
    for (auto& t : threads)
        t.join();
}

/// @brief While it lives: pauses one master of `m` after another, for `pause` every
/// `pause + gap`, until `stop_at` is near (the quorum goes on without it). Joined, with the
/// master resumed, when it goes out of scope.
class master_pauser
{
public:
    master_pauser(local_masters& m, steady::time_point stop_at,
                  steady::duration gap = std::chrono::milliseconds(350),
                  steady::duration pause = std::chrono::milliseconds(150))
        : t_([&m, stop_at, gap, pause] {
              std::size_t i = 0;
              while (steady::now() + gap + 2 * pause < stop_at)
              {
                  std::this_thread::sleep_for(gap);
                  m.pause(i);
                  std::this_thread::sleep_for(pause);
                  m.resume(i);
                  i = (i + 1) % m.size();
              }
          })
    {}
    ~master_pauser() { t_.join(); }
    master_pauser(const master_pauser&) = delete;
    master_pauser& operator=(const master_pauser&) = delete;

private:
    std::thread t_;
};

}  // namespace redlock::test

#endif
