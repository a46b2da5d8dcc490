// The fault-injecting TCP proxy of the reliability tests (see fault_proxy.hpp).
#include "fault_proxy.hpp"
#include "tuple_awaitable.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <exception>
#include <future>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace redlock::test {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using error_code = boost::system::error_code;

constexpr std::size_t read_size = 16 * 1024;
// Past this many bytes waiting in one direction (a long stall or a large latency), the proxy
// stops reading from the sender, so that TCP flow control pushes back on it as a slow link
// would, instead of the proxy growing without bound.
constexpr std::size_t max_queued = 4 * 1024 * 1024;

constexpr int to_master = 0;
constexpr int to_client = 1;

struct direction_settings
{
    std::chrono::milliseconds latency{0};
    bool stalled = false;
    fault_proxy::stall_mode mode = fault_proxy::stall_mode::buffer;
};

bool has(fault_proxy::direction set, int d)
{
    return (static_cast<unsigned>(set) & (1u << d)) != 0;
}

}  // namespace

struct fault_proxy::impl
{
    struct session;

    asio::io_context io{1};
    tcp::acceptor acceptor{io};
    tcp::endpoint master;
    std::uint16_t port = 0;
    std::array<direction_settings, 2> dirs{};
    bool refuse = false;
    bool stopping = false;
    statistics st{};
    std::set<std::shared_ptr<session>> sessions;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
    std::promise<void> finished;
    std::thread thread;

    /// One proxied connection: the client's socket, the proxy's socket to the master, and one
    /// queue of chunks per direction. Pipe d reads sock[d] and writes sock[1 - d].
    struct session : std::enable_shared_from_this<session>
    {
        struct pipe
        {
            explicit pipe(asio::io_context& io) : writer_wake(io), reader_wake(io) {}
            std::deque<std::pair<steady::time_point, std::string>> queue;  // (due, bytes)
            std::size_t queued = 0;
            steady::time_point last_due{};
            bool eof = false;    // the sender ended its stream
            bool done = false;   // ...and the end was forwarded
            bool holed = false;  // bytes were dropped: the stream cannot go on after a stall
            asio::steady_timer writer_wake;
            asio::steady_timer reader_wake;
        };

        session(impl& p, tcp::socket client)
            : owner(p),
              sock{std::move(client), tcp::socket(p.io)},
              pipes{pipe(p.io), pipe(p.io)}
        {}

        impl& owner;
        std::array<tcp::socket, 2> sock;
        std::array<pipe, 2> pipes;
        bool closed = false;

        void wake() noexcept
        {
            for (auto& pp : pipes)
            {
                pp.writer_wake.cancel();
                pp.reader_wake.cancel();
            }
        }

        /// Closes both sockets; `abortive`: with a reset (SO_LINGER 0) rather than a FIN.
        void close(bool abortive) noexcept
        {
            if (closed)
                return;
            closed = true;
            for (auto& s : sock)
            {
                error_code ignored;
                if (abortive && s.is_open())
                    s.set_option(asio::socket_base::linger(true, 0), ignored);
                s.close(ignored);
            }
            for (auto& pp : pipes)
            {
                owner.st.bytes_dropped += pp.queued;
                pp.queue.clear();
                pp.queued = 0;
            }
            wake();
            owner.sessions.erase(shared_from_this());
        }
    };

    impl(std::uint16_t master_port, const std::string& master_host)
        : master(asio::ip::make_address(master_host), master_port)
    {
        const tcp::endpoint listen_on(asio::ip::address_v4::loopback(), 0);
        acceptor.open(listen_on.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(listen_on);
        acceptor.listen();
        port = acceptor.local_endpoint().port();
        work.emplace(io.get_executor());
        asio::co_spawn(io, accept_loop(), asio::detached);
        thread = std::thread([this] {
            // Nothing in the proxy throws on purpose; a stray exception must not take the
            // test process down from a thread it does not own.
            for (;;)
            {
                try
                {
                    io.run();
                    break;
                }
                catch (...)
                {}
            }
            finished.set_value();
        });
    }

    ~impl()
    {
        auto done = finished.get_future();
        run_sync([this] {
            stopping = true;
            error_code ignored;
            acceptor.close(ignored);
            auto all = sessions;
            for (const auto& s : all)
                s->close(true);
            work.reset();
        });
        // Every wait was cancelled above, so run() returns at once; the bound is a safety net.
        if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
            io.stop();
        thread.join();
    }

    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;

    /// Runs `f` on the proxy thread and returns its result (inline when already there).
    template <class F>
    auto run_sync(F f) -> std::invoke_result_t<F&>
    {
        if (io.get_executor().running_in_this_thread())
            return f();
        std::packaged_task<std::invoke_result_t<F&>()> task(std::move(f));
        auto result = task.get_future();
        asio::post(io, std::move(task));
        return result.get();
    }

    void wake_all()
    {
        for (const auto& s : sessions)
            s->wake();
    }

    asio::awaitable<void> accept_loop()
    {
        for (;;)
        {
            auto [ec, sock] = co_await acceptor.async_accept(tuple_awaitable);
            if (stopping || ec == asio::error::operation_aborted)
                co_return;
            if (ec)
            {
                // Out of descriptors or similar: back off a little rather than spin.
                asio::steady_timer t(io, std::chrono::milliseconds(10));
                co_await t.async_wait(tuple_awaitable);
                continue;
            }
            if (refuse)
            {
                error_code ignored;
                sock.set_option(asio::socket_base::linger(true, 0), ignored);
                sock.close(ignored);
                ++st.refused;
                continue;
            }
            ++st.accepted;
            auto s = std::make_shared<session>(*this, std::move(sock));
            sessions.insert(s);
            asio::co_spawn(io, run_session(s), asio::detached);
        }
    }

    asio::awaitable<void> run_session(std::shared_ptr<session> s)
    {
        auto [ec] = co_await s->sock[1].async_connect(master, tuple_awaitable);
        if (s->closed)
            co_return;
        if (ec)
        {
            ++st.upstream_failed;
            s->close(false);
            co_return;
        }
        error_code ignored;
        // Small requests and replies must not wait for Nagle: the proxy adds only what it is told.
        for (auto& sock : s->sock)
            sock.set_option(tcp::no_delay(true), ignored);
        for (int d : {to_master, to_client})
        {
            asio::co_spawn(io, reader(s, d), asio::detached);
            asio::co_spawn(io, writer(s, d), asio::detached);
        }
    }

    static asio::awaitable<void> sleep_until(asio::steady_timer& t, steady::time_point when)
    {
        t.expires_at(when);
        co_await t.async_wait(tuple_awaitable);
    }

    asio::awaitable<void> reader(std::shared_ptr<session> s, int d)
    {
        auto& pp = s->pipes[d];
        auto& src = s->sock[d];
        std::array<char, read_size> buf;
        for (;;)
        {
            while (!s->closed && pp.queued >= max_queued)
                co_await sleep_until(pp.reader_wake, steady::time_point::max());
            if (s->closed)
                co_return;
            auto [ec, n] = co_await src.async_read_some(asio::buffer(buf), tuple_awaitable);
            if (s->closed)
                co_return;
            if (ec == asio::error::eof)
            {
                pp.eof = true;
                pp.writer_wake.cancel();
                co_return;
            }
            if (ec)
            {
                // A reset or an error on one side: pass it on as a reset of the other side.
                s->close(true);
                co_return;
            }
            const auto& cfg = dirs[d];
            if (cfg.stalled && cfg.mode == stall_mode::drop)
            {
                pp.holed = true;
                st.bytes_dropped += n;
                continue;
            }
            const auto due = std::max(steady::now() + cfg.latency, pp.last_due);
            pp.last_due = due;
            pp.queue.emplace_back(due, std::string(buf.data(), n));
            pp.queued += n;
            pp.writer_wake.cancel();
        }
    }

    asio::awaitable<void> writer(std::shared_ptr<session> s, int d)
    {
        auto& pp = s->pipes[d];
        auto& dst = s->sock[1 - d];
        for (;;)
        {
            if (s->closed)
                co_return;
            const auto& cfg = dirs[d];
            if (cfg.stalled)
            {
                if (cfg.mode == stall_mode::drop && !pp.queue.empty())
                {
                    st.bytes_dropped += pp.queued;
                    pp.queue.clear();
                    pp.queued = 0;
                    pp.holed = true;
                    pp.reader_wake.cancel();
                }
                co_await sleep_until(pp.writer_wake, steady::time_point::max());
                continue;
            }
            if (pp.queue.empty())
            {
                if (pp.eof)
                {
                    // Half-close: the receiver sees the end of stream after the last byte.
                    error_code ignored;
                    dst.shutdown(tcp::socket::shutdown_send, ignored);
                    pp.done = true;
                    if (s->pipes[1 - d].done)
                        s->close(false);
                    co_return;
                }
                co_await sleep_until(pp.writer_wake, steady::time_point::max());
                continue;
            }
            if (pp.queue.front().first > steady::now())
            {
                co_await sleep_until(pp.writer_wake, pp.queue.front().first);
                continue;
            }
            std::string bytes = std::move(pp.queue.front().second);
            pp.queue.pop_front();
            auto [ec, n] = co_await asio::async_write(dst, asio::buffer(bytes), tuple_awaitable);
            if (s->closed)
                co_return;
            pp.queued -= bytes.size();
            if (ec)
            {
                s->close(true);
                co_return;
            }
            (d == to_master ? st.bytes_to_master : st.bytes_to_client) += n;
            pp.reader_wake.cancel();
        }
    }

    void cut_holed(int d)
    {
        auto all = sessions;
        for (const auto& s : all)
            if (s->pipes[d].holed)
            {
                ++st.cut;
                s->close(true);
            }
    }

    void unstall(fault_proxy::direction which)
    {
        for (int d : {to_master, to_client})
            if (has(which, d) && dirs[d].stalled)
            {
                const bool was_drop = dirs[d].mode == stall_mode::drop;
                dirs[d].stalled = false;
                if (was_drop)
                    cut_holed(d);
            }
        wake_all();
    }
};

fault_proxy::fault_proxy(std::uint16_t master_port, std::string master_host)
    : impl_(std::make_unique<impl>(master_port, master_host))
{}

fault_proxy::~fault_proxy() = default;

std::uint16_t fault_proxy::port() const noexcept { return impl_->port; }

std::string fault_proxy::uri() const { return "redis://127.0.0.1:" + std::to_string(impl_->port); }

void fault_proxy::set_latency(std::chrono::milliseconds to_master_delay,
                              std::chrono::milliseconds to_client_delay)
{
    impl_->run_sync([&] {
        impl_->dirs[to_master].latency = std::max(to_master_delay, std::chrono::milliseconds(0));
        impl_->dirs[to_client].latency = std::max(to_client_delay, std::chrono::milliseconds(0));
    });
}

void fault_proxy::stall(stall_mode mode, direction d)
{
    impl_->run_sync([&] {
        for (int k : {to_master, to_client})
            if (has(d, k))
            {
                impl_->dirs[k].stalled = true;
                impl_->dirs[k].mode = mode;
            }
        impl_->wake_all();
    });
}

void fault_proxy::unstall(direction d)
{
    impl_->run_sync([&] { impl_->unstall(d); });
}

void fault_proxy::drop_connections()
{
    impl_->run_sync([&] {
        auto all = impl_->sessions;
        for (const auto& s : all)
        {
            ++impl_->st.cut;
            s->close(true);
        }
    });
}

void fault_proxy::refuse_connections(bool refuse)
{
    impl_->run_sync([&] { impl_->refuse = refuse; });
}

void fault_proxy::heal()
{
    impl_->run_sync([&] {
        for (auto& d : impl_->dirs)
            d.latency = std::chrono::milliseconds(0);
        impl_->refuse = false;
        impl_->unstall(direction::both);
    });
}

fault_proxy::statistics fault_proxy::stats() const
{
    return impl_->run_sync([&] {
        auto s = impl_->st;
        s.active = impl_->sessions.size();
        return s;
    });
}

}  // namespace redlock::test
