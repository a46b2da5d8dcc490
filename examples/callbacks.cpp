// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// redlock-example-callbacks: the operations of holding a lock with plain callbacks, no
// coroutines: async_lock -> lock_holder (automatic extension) -> async_check -> async_release;
// async_try_lock seeing contention; async_extend and async_unlock; and the loss of a held lock
// reaching the work bound to the holder's loss slot when the keys are stolen. Starts 5 local
// masters itself; exits 0 only if every step behaved as described.

#include <redlock/redlock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "example_checks.hpp"
#include "example_masters.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::error_code;

namespace {

using redlock_example::check;

long long ms(std::chrono::steady_clock::duration d)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// The steps, each started from the previous one's callback. `self` keeps the state alive while
// a callback is pending.
class walkthrough : public std::enable_shared_from_this<walkthrough>
{
public:
    walkthrough(asio::io_context& io, redlock::client& a, redlock::client& b,
                const std::vector<std::string>& masters)
        : io_(io), a_(a), b_(b), masters_(masters), work_(io)
    {
        opts_.ttl = 1000ms;
    }

    void start()
    {
        a_.async_wait_connected([self = shared_from_this()](error_code ec, std::size_t n) {
            std::printf("client A connected to %zu masters (%s)\n", n, ec ? ec.message().c_str() : "ok");
            self->b_.async_wait_connected([self](error_code, std::size_t) { self->lock(); });
        });
    }

private:
    // [callbacks] 1. Lock, then hand the lock to a holder that keeps it alive.
    void lock()
    {
        std::printf("\n1. A locks 'invoice:42' (ttl 1000 ms) and keeps it with a lock_holder\n");
        a_.async_lock("invoice:42", opts_, [self = shared_from_this()](error_code ec, redlock::lock l) {
            self->check_step(!ec && l.held(), "A holds the lock: " + l.describe());
            if (ec)
                return self->finish();
            // The loss signal is emitted on the io_context's executor, where the work runs.
            self->holder_.emplace(self->a_, l, redlock::hold_options{}, self->io_.get_executor());
            self->try_other();
        });
    }

    // 2. Another client sees contention: an empty optional, not an error.
    void try_other()
    {
        std::printf("\n2. B tries the same resource\n");
        b_.async_try_lock("invoice:42", opts_, [self = shared_from_this()](error_code ec, std::optional<redlock::lock> l) {
            self->check_step(!ec && !l, "B is refused while A holds it (empty optional)");
            self->work();
        });
    }

    // 3. The work: 2.5 s, longer than the TTL, bound to the holder's loss signal.
    void work()
    {
        std::printf("\n3. A works for 2500 ms under a 1000 ms lock\n");
        work_.expires_after(2500ms);
        work_.async_wait(asio::bind_cancellation_slot(holder_->loss_slot(), [self = shared_from_this()](error_code ec) {
            self->check_step(!ec, "the work ran to its end, not cancelled");
            self->check_step(self->holder_->held() && self->holder_->extensions() >= 3,
                             "kept alive by " + std::to_string(self->holder_->extensions()) + " extensions");
            self->check_masters();
        }));
    }

    // 4. What the masters say about it.
    void check_masters()
    {
        std::printf("\n4. A asks the masters\n");
        a_.async_check(holder_->current(), [self = shared_from_this()](error_code ec, redlock::check_result r) {
            self->check_step(!ec && r.holding == self->masters_.size(), std::to_string(r.holding) + " masters hold the token");
            self->check_step(r.min_pttl > 0ms && r.min_pttl <= 1000ms,
                             "smallest PTTL " + std::to_string(r.min_pttl.count()) + " ms");
            self->release();
        });
    }

    // 5. Release: the extension stops, the keys are deleted, the completion says how it went.
    void release()
    {
        std::printf("\n5. A releases\n");
        holder_->async_release([self = shared_from_this()](error_code ec) {
            self->check_step(!ec, "released on a majority");
            self->check_step(self->holder_->status() == redlock::error::released, "status: released");
            self->b_.async_try_lock("invoice:42", self->opts_, [self](error_code tec, std::optional<redlock::lock> l) {
                self->check_step(!tec && l && l->held(), "B now acquires it");
                if (l)
                    self->extend_and_unlock(*l);
                else
                    self->finish();
            });
        });
    }

    // 6. Without a holder: extend by hand, then unlock.
    void extend_and_unlock(redlock::lock l)
    {
        std::printf("\n6. B extends by hand to 5000 ms, then unlocks\n");
        b_.async_extend(l, 5000ms, [self = shared_from_this()](error_code ec, redlock::lock extended) {
            self->check_step(!ec && extended.remaining() > 4000ms,
                             "extended: " + std::to_string(ms(extended.remaining())) + " ms left");
            self->b_.async_unlock(extended, [self](error_code uec) {
                self->check_step(!uec, "unlocked");
                self->lose();
            });
        });
    }
    // [callbacks]

    // 7. A held lock is stolen: the next extension finds it gone and the work is cancelled.
    void lose()
    {
        std::printf("\n7. A locks 'invoice:43'; its keys are deleted behind its back after 200 ms\n");
        a_.async_lock("invoice:43", opts_, [self = shared_from_this()](error_code ec, redlock::lock l) {
            if (ec)
            {
                self->check_step(false, "lock: " + ec.message());
                return self->finish();
            }
            self->holder_.emplace(self->a_, l, redlock::hold_options{}, self->io_.get_executor());
            self->started_ = std::chrono::steady_clock::now();
            self->work_.expires_after(10s);
            self->work_.async_wait(asio::bind_cancellation_slot(self->holder_->loss_slot(), [self](error_code wec) {
                const auto after = std::chrono::steady_clock::now() - self->started_;
                self->check_step(wec == asio::error::operation_aborted,
                                 "the work was cancelled after " + std::to_string(ms(after)) + " ms");
                self->check_step(self->holder_->status() == redlock::error::lock_lost,
                                 "status: " + self->holder_->status().message());
                self->check_step(after < 1000ms, "before the lock's validity would have ended");
                self->finish();
            }));
            self->thief_ = std::make_unique<asio::steady_timer>(self->io_, 200ms);
            self->thief_->async_wait([self](error_code) {
                redlock_example::command_on_all(self->masters_, {"DEL", "invoice:43"});
            });
        });
    }

    void finish()
    {
        holder_.reset();  // releases what is left, asynchronously
        work_.expires_after(100ms);
        work_.async_wait([self = shared_from_this()](error_code) {
            self->check_step(redlock_example::keys_on(self->masters_, "invoice:*") == 0,
                             "no key is left on the masters");
            self->a_.close();
            self->b_.close();
        });
    }

    void check_step(bool ok, const std::string& what) { check(ok, what); }

    asio::io_context& io_;
    redlock::client& a_;
    redlock::client& b_;
    const std::vector<std::string>& masters_;
    redlock::lock_options opts_;
    std::optional<redlock::lock_holder> holder_;
    asio::steady_timer work_;
    std::unique_ptr<asio::steady_timer> thief_;
    std::chrono::steady_clock::time_point started_{};
};

}  // namespace

int main(int argc, char** argv)
{
    return redlock_example::run_example("redlock-example-callbacks", [&] {
        const auto masters = redlock_example::masters_from(argc, argv, 3);
        asio::io_context io;
        const auto cfg = redlock_example::config_of(masters);
        redlock::client a(io.get_executor(), cfg);
        redlock::client b(io.get_executor(), cfg);

        auto w = std::make_shared<walkthrough>(io, a, b, masters);
        w->start();
        w.reset();  // the pending callbacks keep it alive
        io.run_for(30s);
        if (!io.stopped())
            check(false, "the walkthrough did not finish within 30 s");
    });
}
