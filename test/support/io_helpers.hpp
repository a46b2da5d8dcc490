// Running an io_context in the live tests: by hand on the test thread, bounded in time, or on
// threads of its own; and the log in which those threads leave their errors.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace redlock::test {

/// Runs `io` on this thread, one handler at a time, until `done()` or `limit` has passed.
/// Returns whether `done()` came true.
template <class Pred>
bool run_until(boost::asio::io_context& io, Pred&& done, std::chrono::milliseconds limit)
{
    using clock_type = std::chrono::steady_clock;
    const auto deadline = clock_type::now() + limit;
    while (!done())
    {
        const auto now = clock_type::now();
        if (now >= deadline)
            return false;
        if (io.stopped())
            io.restart();
        if (io.run_one_for(std::min<clock_type::duration>(deadline - now,
                                                          std::chrono::milliseconds(10))) == 0 &&
            io.stopped())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

/// Runs `io` on this thread for `d`.
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds d)
{
    run_until(
        io, [] { return false; }, d);
}

/// Threads that run an io_context; stopped and joined on destruction, also on a failed REQUIRE.
class io_threads
{
public:
    io_threads(boost::asio::io_context& io, int n) : io_(io), guard_(io.get_executor())
    {
        for (int i = 0; i < n; ++i)
            threads_.emplace_back([this] { io_.run(); });
    }
    ~io_threads() { stop(); }
    void stop()
    {
        guard_.reset();
        io_.stop();
        for (auto& t : threads_)
            if (t.joinable())
                t.join();
    }
    io_threads(const io_threads&) = delete;
    io_threads& operator=(const io_threads&) = delete;

private:
    boost::asio::io_context& io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
    std::vector<std::thread> threads_;
};

/// Errors seen on worker threads (Catch2 assertions are for the test thread only): counts them
/// all, keeps the first 20.
struct error_log
{
    void add(std::string s)
    {
        std::lock_guard g(m);
        ++count;
        if (v.size() < 20)
            v.push_back(std::move(s));
    }
    std::string str()
    {
        std::lock_guard g(m);
        std::string out;
        for (auto& s : v)
            out += s + "\n";
        return out;
    }
    std::size_t size()
    {
        std::lock_guard g(m);
        return count;
    }
    std::mutex m;
    std::vector<std::string> v;
    std::size_t count = 0;
};

}  // namespace redlock::test
