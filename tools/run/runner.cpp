// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "runner.hpp"

#include "child_process.hpp"
#include "group_guard.hpp"
#include "supervisor.hpp"

#include <redlock/redlock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

namespace redlock::run {

namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

// Messages go to stderr, one line each, prefixed like every tool's.
template <class... Args>
void say(const char* format, Args... args)
{
    std::fprintf(stderr, "redlock-run: ");
    std::fprintf(stderr, format, args...);
    std::fputc('\n', stderr);
}

double seconds(std::chrono::steady_clock::duration d)
{
    return std::chrono::duration<double>(d).count();
}

class runner
{
public:
    runner(asio::io_context& io, const run_options& o)
        : o_(o),
          client_(io.get_executor(), make_config()),
          signals_(io, SIGINT, SIGTERM, SIGHUP),
          children_(io, SIGCHLD),
          loss_wait_(io),
          kill_timer_(io),
          max_hold_timer_(io),
          supervisor_(o.kill_after, exit_status::lock_lost)
    {}

    void start()
    {
        wait_signal();
        client_.async_wait_connected(asio::bind_cancellation_slot(
            cancel_acquire_.slot(), [this](error_code ec, std::size_t) { connected(ec); }));
    }

    int status() const { return status_; }

private:
    client_config make_config()
    {
        auto cfg = make_client_config(o_);
        // A master that can lose lock keys is worth a line even without --verbose; --quiet
        // (without --verbose) drops the lines, and the checks' INFO and CONFIG with them.
        if (o_.quiet && !o_.verbose)
            cfg.deployment_checks = false;
        // Always: the extensions move the guard's deadline.
        cfg.on_event = [this](const event& e) { tell(e); };
        return cfg;
    }

    // ---- acquisition --------------------------------------------------------------------
    void connected(error_code ec)
    {
        if (interrupted_)
            return finish(128 + interrupted_);
        if (ec)
        {
            say("%s: fewer than a majority of the %zu masters are reachable (%s)",
                o_.resource.c_str(), o_.masters.size(), ec.message().c_str());
            return finish(exit_status::unavailable);
        }
        client_.async_lock(o_.resource, asio::bind_cancellation_slot(
                                            cancel_acquire_.slot(), [this](error_code ec2, lock l) {
                                                locked(ec2, std::move(l));
                                            }));
    }

    void locked(error_code ec, lock l)
    {
        if (interrupted_ && ec)
            return finish(128 + interrupted_);
        if (ec == error::contended)
        {
            // One line (--quiet: none), so that a conflict is never silent; the masters'
            // answers with --verbose.
            const std::string held =
                o_.permits > 1 ? "the " + std::to_string(o_.permits) + " permits of " +
                                     o_.resource + " are held by others"
                : o_.shared ? o_.resource + " is held exclusively by someone else"
                            : o_.resource + " is held by someone else";
            if (o_.verbose)
                say("%s, %s not run: %s", held.c_str(), o_.command.front().c_str(),
                    l.describe().c_str());
            else if (!o_.quiet)
                say("%s, %s not run", held.c_str(), o_.command.front().c_str());
            return finish(o_.conflict_exit_code);
        }
        if (ec)
        {
            say("could not lock %s: %s", o_.resource.c_str(), l.describe().c_str());
            return finish(ec == error::invalid_option || ec == error::invalid_argument
                              ? exit_status::usage
                              : exit_status::unavailable);
        }
        if (o_.verbose)
        {
            say("acquired %s", l.describe().c_str());
            if (o_.fencing)
                say("fencing token %llu", static_cast<unsigned long long>(l.fencing_token()));
        }

        holder_.emplace(client_, l, make_hold_options(o_));
        if (interrupted_)  // a signal came between the grant and this handler
            return finish(128 + interrupted_);
        start_command(l);
        if (o_.max_hold.count() > 0 && child_)
            stop_at_max_hold();
    }

    // --max-hold: when the holder stops extending, COMMAND is stopped as on a loss, while the
    // lock is still valid: SIGTERM now, SIGKILL before the keys expire (or after --kill-after).
    // Waiting for the keys to expire instead would leave COMMAND no time at all.
    void stop_at_max_hold()
    {
        max_hold_timer_.expires_after(o_.max_hold);
        max_hold_timer_.async_wait([this](error_code ec) {
            if (ec || finishing_ || !child_)
                return;
            auto left = std::chrono::duration_cast<milliseconds>(holder_->current().remaining());
            say("held %s for --max-hold (%.3f s): stopping %s", o_.resource.c_str(),
                seconds(o_.max_hold), o_.command.front().c_str());
            act(supervisor_.lock_lost(left));
        });
    }

    // ---- COMMAND ------------------------------------------------------------------------
    void start_command(const lock& l)
    {
        std::vector<std::string> env;
        if (o_.fencing)
            env.push_back("REDLOCK_FENCING_TOKEN=" + std::to_string(l.fencing_token()));
        if (!l.identity().empty())
            env.push_back("REDLOCK_IDENTITY=" + std::string(l.identity()));
        wait_child();  // armed before the child can exit
        int error = 0;
        // Started before COMMAND, so that COMMAND never runs unguarded for longer than the
        // message naming its group takes (group_guard.hpp).
        guard_ = group_guard::start(o_.kill_after, error);
        if (!guard_)
        {
            say("cannot start the process that stops COMMAND if redlock-run dies: %s",
                std::strerror(error));
            return finish(exit_status::internal);
        }
        child_ = child_process::spawn(o_.command, env, error);
        if (!child_)
        {
            guard_->dismiss();
            say("%s: %s", o_.command.front().c_str(), std::strerror(error));
            return finish(error == ENOENT ? exit_status::not_found : exit_status::cannot_execute);
        }
        guard_->watch(child_->pid());
        guard_->deadline(l.valid_until());
        if (o_.verbose)
            say("started %s (pid %d)", o_.command.front().c_str(), static_cast<int>(child_->pid()));
        watch_loss();
    }

    void wait_child()
    {
        children_.async_wait([this](error_code ec, int) {
            if (ec || !child_)
                return;
            if (auto st = child_->try_reap())
                return act(supervisor_.child_exited(*st));
            wait_child();
        });
    }

    void wait_signal()
    {
        signals_.async_wait([this](error_code ec, int signo) {
            if (ec)
                return;
            if (!child_)
            {
                // Still acquiring: give up, leaving no key behind (a cancelled acquisition
                // releases what it took).
                interrupted_ = signo;
                cancel_acquire_.emit(asio::cancellation_type::terminal);
                return;
            }
            if (o_.verbose)
                say("passing %s to %s", ::strsignal(signo), o_.command.front().c_str());
            act(supervisor_.signal_received(signo));
            wait_signal();
        });
    }

    void watch_loss()
    {
        loss_wait_.expires_at(asio::steady_timer::time_point::max());
        loss_wait_.async_wait(
            asio::bind_cancellation_slot(holder_->loss_slot(), [this](error_code) {
                if (finishing_)
                    return;
                auto left =
                    std::chrono::duration_cast<milliseconds>(holder_->current().remaining());
                say("lost the lock on %s (%s): stopping %s", o_.resource.c_str(),
                    holder_->status().message().c_str(), o_.command.front().c_str());
                act(supervisor_.lock_lost(left));
            }));
    }

    void act(const supervisor_action& a)
    {
        if (a.signal != 0)
        {
            if (a.signal == SIGKILL)
                say("%s did not stop in time: SIGKILL", o_.command.front().c_str());
            child_->signal_group(a.signal);
            if (a.and_continue)
                child_->signal_group(SIGCONT);
        }
        if (a.kill_in)
        {
            kill_timer_.expires_after(*a.kill_in);
            kill_timer_.async_wait([this](error_code ec) {
                if (!ec)
                    act(supervisor_.kill_timer_fired());
            });
        }
        if (a.exit_with)
        {
            // COMMAND, stopped for a loss or --max-hold, has exited; what is left of its process
            // group (a child that ignores SIGTERM) is killed now: the lock is about to be
            // released, or its keys may be someone else's already.
            if (supervisor_.lost() && child_)
                child_->signal_group(SIGKILL);
            finish(*a.exit_with);
        }
    }

    // ---- the end ------------------------------------------------------------------------
    void finish(int status)
    {
        if (finishing_)
            return;
        finishing_ = true;
        status_ = status;
        if (guard_)  // COMMAND has exited (or never started)
            guard_->dismiss();
        signals_.cancel();
        children_.cancel();
        loss_wait_.cancel();
        kill_timer_.cancel();
        max_hold_timer_.cancel();
        if (!holder_)
            return client_.close();
        holder_->async_release([this](error_code ec) {
            if (o_.verbose || (ec && ec != error::lock_lost))
                say("released %s%s%s", o_.resource.c_str(), ec ? ": " : "",
                    ec ? ec.message().c_str() : "");
            client_.close();
        });
    }

    void tell(const event& e)
    {
        if (e.kind == event_kind::extended && guard_ && holder_)
            guard_->deadline(holder_->current().valid_until());
        if (e.kind == event_kind::master_warning)
        {
            // Once per warning and master (the client reports what is new at a reconnection);
            // the endpoint as master_states() has it, its password masked.
            const auto states = client_.master_states();
            say("warning: master %zu (%s): %s", e.master, states[e.master].endpoint.c_str(),
                e.ec.message().c_str());
            return;
        }
        if (!o_.verbose)
            return;
        switch (e.kind)
        {
        case event_kind::master_up: say("master %zu up", e.master); break;
        case event_kind::master_down:
            say("master %zu down: %s%s%s", e.master, e.ec.message().c_str(),
                e.detail.empty() ? "" : ": ", std::string(e.detail).c_str());
            break;
        case event_kind::acquired:
            say("%s acquired after %u attempt(s) in %.3f s", std::string(e.resource).c_str(),
                e.attempts, seconds(e.elapsed));
            break;
        case event_kind::extended:
            if (holder_)
                say("extended: %s", holder_->current().describe().c_str());
            break;
        case event_kind::extend_failed:
            say("an extension failed: %s", e.ec.message().c_str());
            break;
        case event_kind::degraded:
            say("%zu of %zu masters hold the lock", e.granted, e.masters);
            break;
        default: break;
        }
    }

    const run_options& o_;
    client client_;
    asio::signal_set signals_;
    asio::signal_set children_;
    asio::steady_timer loss_wait_;
    asio::steady_timer kill_timer_;
    asio::steady_timer max_hold_timer_;
    asio::cancellation_signal cancel_acquire_;
    supervisor supervisor_;
    std::optional<lock_holder> holder_;
    std::optional<child_process> child_;
    std::optional<group_guard> guard_;  // while COMMAND may run
    int interrupted_ = 0;
    bool finishing_ = false;
    int status_ = exit_status::internal;
};

}  // namespace

int run(const run_options& options)
{
    asio::io_context io;
    runner r(io, options);
    r.start();
    io.run();
    return r.status();
}

}  // namespace redlock::run
