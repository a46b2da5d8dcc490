// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// redlock-bench --unsafe-majority-semaphore: the unsound semaphore over a quorum that some
// peers ship (node's redis-semaphore, RedlockSemaphore): each master admits up to N holders,
// and a holder needs the admission of a majority of the masters. Two majorities of admissions
// can overlap on masters that each admitted fewer than N, so N + 1 holders fit (docs/
// algorithm.md, "A counting semaphore"). Written here to count its violations next to the
// library's semaphore, never to be used.
#ifndef REDLOCK_BENCH_MAJORITY_SEMAPHORE_HPP
#define REDLOCK_BENCH_MAJORITY_SEMAPHORE_HPP

#include <redlock/connection.hpp>
#include <redlock/error.hpp>

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::bench {

class majority_semaphore
{
public:
    majority_semaphore(boost::asio::io_context& io, const std::vector<std::string>& uris,
                       std::uint32_t permits, std::chrono::milliseconds ttl,
                       std::chrono::milliseconds timeout)
        : permits_(permits),
          ttl_(ttl),
          timeout_(timeout)
    {
        for (const auto& u : uris)
            conns_.push_back(std::make_unique<redlock::connection>(io.get_executor(), u));
    }

    std::size_t masters() const noexcept { return conns_.size(); }
    redlock::connection& master(std::size_t i) { return *conns_[i]; }

    /// Asks every master to admit `token` under `key`; `h(error_code)` once a majority did
    /// (no error) or, every master having answered or timed out, none can (error::contended,
    /// after the admissions it got are withdrawn). A majority's holder keeps every admission.
    template <class Handler>
    void async_acquire(const std::string& key, const std::string& token, Handler h)
    {
        struct attempt
        {
            Handler h;
            std::atomic<std::size_t> granted{0}, answered{0};
            std::atomic<bool> decided{false};
            explicit attempt(Handler&& handler) : h(std::move(handler)) {}
        };
        auto a = std::make_shared<attempt>(std::move(h));
        const std::size_t quorum = conns_.size() / 2 + 1;
        for (auto& c : conns_)
            c->async_exec(
                redlock::command("EVAL", admit_script, 1, key, token, permits_, ttl_.count()),
                timeout_,
                [this, a, quorum, key, token](redlock::error_code ec, redlock::resp::reply r) {
                    const bool admitted = !ec && !r.empty() &&
                                          r[0].data_type == redlock::resp::type::integer &&
                                          r[0].value == "1";
                    if (admitted && a->granted.fetch_add(1) + 1 == quorum &&
                        !a->decided.exchange(true))
                        a->h(redlock::error_code());
                    if (a->answered.fetch_add(1) + 1 == conns_.size() && !a->decided.exchange(true))
                        async_release(key, token, [a] { a->h(redlock::error::contended); });
                });
    }

    /// Withdraws `token` from every master; `h()` once each answered or timed out.
    template <class Handler>
    void async_release(const std::string& key, const std::string& token, Handler h)
    {
        auto left = std::make_shared<std::atomic<std::size_t>>(conns_.size());
        auto done = std::make_shared<Handler>(std::move(h));
        for (auto& c : conns_)
            c->async_exec(redlock::command("ZREM", key, token), timeout_,
                          [left, done](redlock::error_code, redlock::resp::reply) {
                              if (left->fetch_sub(1) == 1)
                                  (*done)();
                          });
    }

    void close()
    {
        for (auto& c : conns_)
            c->close();
    }

private:
    // Admits ARGV[1] when fewer than ARGV[2] live holders are in the set KEYS[1] (token ->
    // expiry in ms by the master's clock); returns 1 when admitted, else 0.
    static constexpr const char* admit_script =
        "local t = redis.call('time')\n"
        "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
        "redis.call('zremrangebyscore', KEYS[1], '-inf', now)\n"
        "if redis.call('zcard', KEYS[1]) < tonumber(ARGV[2]) then\n"
        "    redis.call('zadd', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])\n"
        "    redis.call('pexpire', KEYS[1], ARGV[3])\n"
        "    return 1\n"
        "end\n"
        "return 0\n";

    std::vector<std::unique_ptr<redlock::connection>> conns_;
    std::uint32_t permits_;
    std::chrono::milliseconds ttl_;
    std::chrono::milliseconds timeout_;
};

}  // namespace redlock::bench

#endif
