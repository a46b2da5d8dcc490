// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "transport/node_connection.hpp"

#include <algorithm>
#include <cstring>
#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "protocol/resp_encoder.hpp"
#include "transport/reconnect_backoff.hpp"

namespace redlock::detail {

namespace {

resp::parser_limits limits_of(const connection_options& o)
{
    resp::parser_limits l;
    l.max_depth = o.max_nesting_depth;
    l.max_bulk_length = o.max_bulk_length;
    l.max_aggregate_size = o.max_aggregate_size;
    return l;
}

// Reconnect jitter is not security-sensitive; a per-thread PRNG seeded once is enough.
std::minstd_rand& jitter_source()
{
    thread_local std::minstd_rand rng{std::random_device{}()};
    return rng;
}

}  // namespace

node_connection::node_connection(asio::any_io_executor ex, master_config cfg,
                                 connection_options opts)
    : ex_(std::move(ex)),
      cfg_(std::move(cfg)),
      opts_(std::move(opts)),
      stream_(ex_),
      resolver_(ex_),
      connect_timer_(ex_),
      backoff_timer_(ex_),
      event_(ex_),
      health_timer_(ex_),
      drain_timer_(ex_),
      lazy_timer_(ex_),
      mux_(limits_of(opts_))
{
    auto first = [](std::chrono::milliseconds a, std::chrono::milliseconds b) {
        if (a.count() == 0)
            return b;
        if (b.count() == 0)
            return a;
        return std::min(a, b);
    };
    auto base = first(opts_.health_check_interval, opts_.health_check_timeout);
    if (base.count() > 0)
        tick_ = std::max(std::chrono::milliseconds(5), base / 4);
}

node_connection::~node_connection() = default;

void node_connection::start() { asio::co_spawn(ex_, run(shared_from_this()), asio::detached); }

void node_connection::wait_settled(std::function<void(error_code)> fn)
{
    if (state_ == state::connecting)
    {
        settle_waiters_.push_back(std::move(fn));
        return;
    }
    error_code ec = state_ == state::ready    ? error_code()
                    : state_ == state::closed ? error_code(error::connection_closed)
                                              : last_error_;
    asio::post(ex_, [fn = std::move(fn), ec] { fn(ec); });
}

void node_connection::settle()
{
    auto waiters = std::move(settle_waiters_);
    settle_waiters_.clear();
    error_code ec = state_ == state::ready    ? error_code()
                    : state_ == state::closed ? error_code(error::connection_closed)
                                              : last_error_;
    for (auto& w : waiters)
        asio::post(ex_, [w = std::move(w), ec] { w(ec); });
}

void node_connection::set_error(const error_code& ec, std::string detail)
{
    last_error_ = ec;
    last_error_detail_ = cfg_.to_string() + ": " + detail;
    const std::lock_guard<std::mutex> guard(published_error_mutex_);
    published_error_ = ec;
}

void node_connection::set_state(state s)
{
    state_ = s;
    published_state_.store(s, std::memory_order_relaxed);
    if (!availability_)
        return;
    // Posted: whoever is told may submit again, and must not do so from inside this code.
    if (s == state::ready && reported_ != reported::up)
    {
        reported_ = reported::up;
        asio::post(ex_, [fn = availability_] { fn(true, {}); });
    }
    else if (s == state::down && reported_ != reported::down)
    {
        reported_ = reported::down;
        asio::post(ex_, [fn = availability_, ec = last_error_] { fn(false, ec); });
    }
}

deployment_warnings node_connection::learn_deployment()
{
    const auto now = check_deployment(facts_);
    const auto added = now.new_since(warnings_);
    warnings_ = now;
    const std::lock_guard<std::mutex> guard(published_error_mutex_);
    published_warnings_ = now;
    return added;
}

master_info node_connection::info() const
{
    master_info m;
    m.endpoint = cfg_.to_string();
    switch (published_state_.load(std::memory_order_relaxed))
    {
    case state::connecting: m.state = master_state::connecting; break;
    case state::ready: m.state = master_state::ready; break;
    case state::down: m.state = master_state::down; break;
    case state::closed: m.state = master_state::closed; break;
    }
    deployment_warnings warnings;
    {
        const std::lock_guard<std::mutex> guard(published_error_mutex_);
        m.last_error = published_error_;
        warnings = published_warnings_;
    }
    m.requests = stats_.requests;
    m.replies = stats_.replies;
    m.connects = stats_.connects;
    m.drops = stats_.drops;
    m.warnings = warnings.codes();
    return m;
}

// ---- The lifecycle --------------------------------------------------------------------------

asio::awaitable<void> node_connection::run(std::shared_ptr<node_connection> self)
{
    reconnect_backoff backoff(opts_.reconnect_min_delay, opts_.reconnect_max_delay);
    while (!closed_)
    {
        set_state(state::connecting);
        error_code ec = co_await connect_once();
        if (closed_)
            break;
        if (ec)
        {
            // Requests queued while connecting belong to this attempt: they fail with its cause.
            drop(ec, {});
            settle();
            backoff_timer_.expires_after(backoff.next(jitter_source()));
            co_await backoff_timer_.async_wait(as_tuple_awaitable);
            continue;
        }

        ++stats_.connects;
        // Who the master is, before anything of this connection reaches it: a restart seen
        // here keeps its answers out of the quorums from the first one on.
        if (identity_fn_ && identity_)
            identity_fn_(*identity_);
        // Published before the master is ready, told after master_up.
        const auto new_warnings = deployment_fn_ ? learn_deployment() : deployment_warnings{};
        set_state(state::ready);
        last_error_ = {};
        last_error_detail_.clear();
        {
            const std::lock_guard<std::mutex> guard(published_error_mutex_);
            published_error_ = {};
        }
        if (!new_warnings.empty())
            asio::post(ex_, [fn = deployment_fn_, new_warnings] { fn(new_warnings); });
        settle();
        start_read();
        if (mux_.has_output())
            start_write();
        arm_health_timer();
        const std::uint64_t replies_at_connect = stats_.replies;

        event_.expires_at(asio::steady_timer::time_point::max());
        co_await event_.async_wait(as_tuple_awaitable);
        // Woken by drop(): in-flight requests have failed; reconnect at once, because a master
        // that restarts is usually back before any backoff would end. But only after a
        // connection on which the master answered something (the handshake, or a reply since):
        // with nothing to send in the handshake (no AUTH, SELECT or CLIENT SETNAME), a peer that
        // accepts and closes at once (a proxy whose backend is down, a server at maxclients)
        // would otherwise be reconnected to in a tight loop. That case backs off as a failed
        // attempt does.
        if (has_handshake() || stats_.replies != replies_at_connect)
        {
            backoff.reset();
        }
        else if (!closed_)
        {
            backoff_timer_.expires_after(backoff.next(jitter_source()));
            co_await backoff_timer_.async_wait(as_tuple_awaitable);
        }
    }
    set_state(state::closed);
    settle();
    (void)self;
}

// ---- The request FIFO -----------------------------------------------------------------------

void node_connection::fail_pending(const error_code& ec)
{
    // Sinks may submit again from on_reply; those calls see the new state and are refused,
    // so this loop terminates.
    reply_sink* sink = nullptr;
    std::uint32_t tag = 0;
    while (mux_.next_failed(sink, tag))
        sink->on_reply(tag, ec, {});
}

// ---- Writing --------------------------------------------------------------------------------

void node_connection::post_write()
{
    // Deferring the write to the end of the current handler coalesces all the requests that
    // this handler (and any queued before the kick runs) submits.
    kick_posted_ = true;
    asio::post(ex_, [self = shared_from_this()] {
        self->kick_posted_ = false;
        if (self->state_ == state::ready && !self->writing_ && self->mux_.has_output())
            self->start_write();
    });
}

void node_connection::request_lazy_write()
{
    // The bytes wait, queued in order, for the next write or for lazy_delay_, whichever comes
    // first: any other request's write takes them along.
    if (lazy_armed_)
        return;
    lazy_armed_ = true;
    lazy_timer_.expires_after(lazy_delay_);
    lazy_timer_.async_wait([self = shared_from_this()](const error_code&) {
        self->lazy_armed_ = false;
        self->request_write();
    });
}

void node_connection::start_write()
{
    writing_ = true;
    const auto bytes = mux_.prepare_write();
    ++stats_.writes;
    // The completion condition records how much has left: a graceful close at the execution
    // context's shutdown writes the rest itself (drain_now).
    asio::async_write(
        stream_, asio::buffer(bytes.data(), bytes.size()),
        [this, gen = gen_](const error_code& ec, std::size_t n) -> std::size_t {
            if (gen == gen_)
                mux_.note_written(n);
            return ec ? 0 : 65536;
        },
        [self = shared_from_this(), gen = gen_](const error_code& ec, std::size_t) {
            if (gen != self->gen_)
                return;
            self->writing_ = false;
            if (ec)
            {
                if (self->draining_)
                    return self->end_drain();
                self->drop(error::connection_lost, "write failed: " + ec.message());
                return;
            }
            self->mux_.commit_write();
            if (self->mux_.has_output())
                self->start_write();
            else if (self->draining_ && self->drain_flushing_)
                self->half_close();
        });
}

// ---- Reading --------------------------------------------------------------------------------

void node_connection::start_read()
{
    const auto space = mux_.read_space(min_read_space);
    stream_.async_read_some(
        asio::buffer(space.data(), space.size()),
        [self = shared_from_this(), gen = gen_](const error_code& ec, std::size_t n) {
            self->on_read(ec, n, gen);
        });
}

void node_connection::on_read(const error_code& ec, std::size_t n, std::uint64_t gen)
{
    if (gen != gen_)
        return;
    if (draining_)
    {
        // Closing gracefully: the replies have no reader any more; the master's end of stream
        // (or an error) ends the drain.
        if (ec)
            return end_drain();
        mux_.discard_input();
        start_read();
        return;
    }
    if (ec)
    {
        drop(error::connection_lost, ec == asio::error::eof
                                         ? std::string("server closed the connection")
                                         : "read failed: " + ec.message());
        return;
    }
    mux_.commit_read(n);
    read_at_ = std::chrono::steady_clock::now();
    // Every reply of the batch is consumed before the first sink runs: what the sinks do
    // (submit, abandon, close) cannot reach the parser or the buffer. The replies before a
    // protocol violation are delivered; the requests after it fail with it. A sink that fails
    // or closes the connection fails the requests still queued, which ends the loop.
    const auto verdict = mux_.consume();
    const auto before = mux_.replies();
    delivering_ = true;
    multiplexer::reply r;
    while (mux_.next_reply(r))
        r.sink->on_reply(r.tag, {}, r.nodes);
    if (!mux_.pushes().empty())
    {
        // Taken out first: what a push's handler submits or reads cannot touch the list.
        push_batch_.swap(mux_.pushes());
        mux_.pushes().clear();
        for (const auto& p : push_batch_)
            if (push_fn_ && gen == gen_ && !draining_)
                push_fn_(p);
        push_batch_.clear();
    }
    delivering_ = false;
    stats_.replies += mux_.replies() - before;
    if (gen != gen_ || draining_)
    {
        // A sink dropped or closed the connection: a closing one reads (and drops) until the
        // master closes; a dropped one is done.
        if (draining_ && gen == gen_)
            start_read();
        return;
    }
    if (verdict == multiplexer::consumed::invalid_reply)
        return drop(error::protocol_error, "invalid reply: " + std::string(mux_.error()));
    if (verdict == multiplexer::consumed::unexpected_reply)
        return drop(error::protocol_error, "reply received with no request pending");
    if (!writing_ && mux_.has_output())
        start_write();
    start_read();
}

// ---- Health check and teardown --------------------------------------------------------------

void node_connection::arm_health_timer()
{
    if (tick_.count() == 0)
        return;
    seen_replies_ = stats_.replies;
    seen_writes_ = stats_.writes;
    stalled_for_ = idle_for_ = std::chrono::milliseconds(0);
    health_timer_.expires_after(tick_);
    health_timer_.async_wait([self = shared_from_this(), gen = gen_](const error_code& ec) {
        if (!ec)
            self->on_health_tick(gen);
    });
}

void node_connection::on_health_tick(std::uint64_t gen)
{
    if (gen != gen_ || state_ != state::ready)
        return;
    const bool progressed = stats_.replies != seen_replies_;
    const bool wrote = stats_.writes != seen_writes_;
    seen_replies_ = stats_.replies;
    seen_writes_ = stats_.writes;

    if (pending() > 0 && !progressed)
        stalled_for_ += tick_;
    else
        stalled_for_ = std::chrono::milliseconds(0);
    if (opts_.health_check_timeout.count() > 0 && stalled_for_ >= opts_.health_check_timeout)
    {
        drop(error::connection_lost,
             "no reply for " + std::to_string(stalled_for_.count()) + " ms (health check)");
        return;
    }

    if (pending() == 0 && !progressed && !wrote)
        idle_for_ += tick_;
    else
        idle_for_ = std::chrono::milliseconds(0);
    if (opts_.health_check_interval.count() > 0 && idle_for_ >= opts_.health_check_interval)
    {
        idle_for_ = std::chrono::milliseconds(0);
        mux_.add(nullptr, 0, [](std::string& out) { resp::append_command(out, "PING"); });
        ++stats_.requests;
        request_write();
    }

    health_timer_.expires_after(tick_);
    health_timer_.async_wait([self = shared_from_this(), gen](const error_code& ec) {
        if (!ec)
            self->on_health_tick(gen);
    });
}

void node_connection::drop(const error_code& ec, std::string detail)
{
    const bool was_up = state_ == state::ready;
    ++gen_;
    if (was_up)
        ++stats_.drops;
    if (ec == error::connection_lost && was_up)
    {
        // Whether the drop cost anyone a reply: an idle connection's drop (a server's timeout,
        // a restart between requests) costs nothing but the reconnection.
        const std::size_t n = mux_.awaited();
        detail +=
            n == 0 ? std::string(" (idle: no request in flight)")
                   : " (" + std::to_string(n) + (n == 1 ? " request" : " requests") + " in flight)";
    }
    if (ec != error::connection_closed && !detail.empty())
        set_error(ec, std::move(detail));
    set_state(closed_ ? state::closed : state::down);
    stream_.close();
    health_timer_.cancel();
    writing_ = false;
    fail_pending(ec);
    mux_.reset();
    event_.cancel();
}

}  // namespace redlock::detail
