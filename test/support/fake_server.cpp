#include "fake_server.hpp"
#include "tuple_awaitable.hpp"

#include <algorithm>
#include <charconv>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace redlock::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using error_code = boost::system::error_code;

// ---- fake_script ----------------------------------------------------------------------------

fake_script::step& fake_script::current()
{
    // A modifier with no step before it applies to a step that matches anything.
    if (steps_.empty())
        steps_.emplace_back();
    return steps_.back();
}

fake_script& fake_script::expect(std::string_view name)
{
    steps_.emplace_back().expect = name;
    return *this;
}

fake_script& fake_script::any()
{
    steps_.emplace_back();
    return *this;
}

fake_script& fake_script::at(std::string_view name)
{
    auto& s = steps_.emplace_back();
    s.expect = name;
    s.skip_others = true;
    return *this;
}

fake_script& fake_script::reply(std::string bytes)
{
    current().what = answer::bytes;
    current().bytes = std::move(bytes);
    return *this;
}

fake_script& fake_script::normal()
{
    current().what = answer::normal;
    return *this;
}

fake_script& fake_script::silent()
{
    current().what = answer::none;
    return *this;
}

fake_script& fake_script::after(std::chrono::milliseconds d)
{
    current().delay = d;
    return *this;
}

fake_script& fake_script::slowly(std::size_t chunk, std::chrono::milliseconds pause)
{
    current().chunk = chunk;
    current().chunk_delay = pause;
    return *this;
}

fake_script& fake_script::close() { return then(disposition::close); }

fake_script& fake_script::reset() { return then(disposition::reset); }

fake_script& fake_script::stall() { return then(disposition::stall); }

fake_script& fake_script::on_accept(std::string bytes)
{
    accept_bytes_ = std::move(bytes);
    return *this;
}

fake_script& fake_script::close_on_accept() { return on_accept_then(disposition::close); }

fake_script& fake_script::reset_on_accept() { return on_accept_then(disposition::reset); }

fake_script& fake_script::then(disposition d)
{
    current().then = d;
    return *this;
}

fake_script& fake_script::on_accept_then(disposition d)
{
    accept_then_ = d;
    return *this;
}

fake_script& fake_script::when_done(disposition d)
{
    after_steps_ = d;
    return *this;
}

// ---- Helpers --------------------------------------------------------------------------------

namespace {

// A stress test sends hundreds of thousands of commands; the log keeps the first ones.
constexpr std::size_t max_logged_commands = 20000;

std::string upper(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        if (c >= 'a' && c <= 'z')
            c = static_cast<char>(c - 'a' + 'A');
    return out;
}

std::string bulk(std::string_view s)
{
    return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

std::string integer(long long v) { return ":" + std::to_string(v) + "\r\n"; }

bool to_number(std::string_view s, long long& out)
{
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// One RESP array of bulk strings from the front of `buf`. Returns the bytes it took, 0 when
// incomplete, npos when `buf` does not start with one.
constexpr std::size_t malformed = std::string::npos;

std::size_t parse_command(std::string_view buf, std::vector<std::string>& args)
{
    args.clear();
    std::size_t pos = 0;
    auto line = [&](char type, long long& n) -> int {  // 1 ok, 0 incomplete, -1 malformed
        if (pos == buf.size())
            return 0;
        if (buf[pos] != type)
            return -1;
        const auto eol = buf.find("\r\n", pos);
        if (eol == std::string_view::npos)
            return buf.size() - pos > 32 ? -1 : 0;
        if (!to_number(buf.substr(pos + 1, eol - pos - 1), n) || n < 0)
            return -1;
        pos = eol + 2;
        return 1;
    };
    long long count = 0;
    if (int r = line('*', count); r <= 0)
        return r == 0 ? 0 : malformed;
    if (count == 0 || count > 1024 * 1024)
        return malformed;
    for (long long i = 0; i < count; ++i)
    {
        long long len = 0;
        if (int r = line('$', len); r <= 0)
            return r == 0 ? 0 : malformed;
        if (len > 512 * 1024 * 1024)
            return malformed;
        const auto n = static_cast<std::size_t>(len);
        if (buf.size() - pos < n + 2)
            return 0;
        if (buf.substr(pos + n, 2) != "\r\n")
            return malformed;
        args.emplace_back(buf.substr(pos, n));
        pos += n + 2;
    }
    return pos;
}

}  // namespace

// ---- The server -----------------------------------------------------------------------------

struct fake_server::impl
{
    struct entry
    {
        std::string value;
        std::optional<steady::time_point> expires;
    };

    struct record
    {
        std::vector<std::vector<std::string>> commands;
        bool open = true;
    };

    // Declared first, destroyed last: the coroutine frames it destroys own the sockets.
    std::optional<asio::io_context> io;
    std::uint16_t port = 0;
    std::thread thread;

    mutable std::mutex m;
    std::deque<fake_script> queue;
    fake_script fallback;
    std::vector<record> records;
    std::vector<std::string> errors;
    std::map<std::string, entry, std::less<>> store;

    void add_error(std::string e)
    {
        std::lock_guard g(m);
        errors.push_back(std::move(e));
    }

    // Looks `key` up in the store (m held), dropping it when expired.
    entry* find(std::string_view key)
    {
        auto it = store.find(key);
        if (it == store.end())
            return nullptr;
        if (it->second.expires && *it->second.expires <= steady::now())
        {
            store.erase(it);
            return nullptr;
        }
        return &it->second;
    }

    std::string normal_answer(const std::vector<std::string>& a)
    {
        const std::string name = upper(a[0]);
        std::lock_guard g(m);
        if (name == "PING")
            return a.size() > 1 ? bulk(a[1]) : "+PONG\r\n";
        if (name == "ECHO")
            return a.size() == 2 ? bulk(a[1])
                                 : "-ERR wrong number of arguments for 'echo' command\r\n";
        if (name == "AUTH" || name == "SELECT" || name == "CLIENT" || name == "SCRIPT")
            return "+OK\r\n";
        if (name == "SET" && a.size() >= 3)
        {
            bool nx = false;
            std::optional<steady::time_point> expires;
            for (std::size_t i = 3; i < a.size(); ++i)
            {
                const auto opt = upper(a[i]);
                long long ms = 0;
                if (opt == "NX")
                    nx = true;
                else if (opt == "PX" && i + 1 < a.size() && to_number(a[i + 1], ms) && ms > 0)
                    expires = steady::now() + std::chrono::milliseconds(ms), ++i;
                else
                    return "-ERR syntax error\r\n";
            }
            if (nx && find(a[1]))
                return "$-1\r\n";
            store[a[1]] = entry{a[2], expires};
            return "+OK\r\n";
        }
        if (name == "GET" && a.size() == 2)
        {
            const entry* e = find(a[1]);
            return e ? bulk(e->value) : "$-1\r\n";
        }
        if (name == "DEL" && a.size() >= 2)
        {
            long long n = 0;
            for (std::size_t i = 1; i < a.size(); ++i)
                if (find(a[i]))
                    n += static_cast<long long>(store.erase(a[i]));
            return integer(n);
        }
        if (name == "PEXPIRE" && a.size() == 3)
        {
            long long ms = 0;
            entry* e = find(a[1]);
            if (!to_number(a[2], ms))
                return "-ERR value is not an integer or out of range\r\n";
            if (!e)
                return integer(0);
            e->expires = steady::now() + std::chrono::milliseconds(ms);
            return integer(1);
        }
        if (name == "KEYS")
        {
            std::string out;
            long long n = 0;
            for (auto it = store.begin(); it != store.end();)
            {
                if (it->second.expires && *it->second.expires <= steady::now())
                {
                    it = store.erase(it);
                    continue;
                }
                out += bulk(it->first);
                ++n;
                ++it;
            }
            return "*" + std::to_string(n) + "\r\n" + out;
        }
        if ((name == "EVAL" || name == "EVALSHA") && (a.size() == 5 || a.size() == 6) &&
            a[2] == "1")
        {
            // redlock's scripts: KEYS[1] = key, ARGV[1] = token, ARGV[2] = ttl (extend only).
            entry* e = find(a[3]);
            if (!e || e->value != a[4])
                return integer(0);
            if (a.size() == 5)
            {
                store.erase(a[3]);
                return integer(1);
            }
            long long ms = 0;
            if (!to_number(a[5], ms) || ms <= 0)
                return "-ERR invalid expire time\r\n";
            e->expires = steady::now() + std::chrono::milliseconds(ms);
            return integer(1);
        }
        return "-ERR unknown command '" + a[0] + "', with args beginning with: \r\n";
    }

    // The end of a connection as the script says.
    // Writes the normal answers gathered in `out`, if any, and empties it; false if the write
    // failed.
    static asio::awaitable<bool> write_pending(tcp::socket& sock, std::string& out)
    {
        if (out.empty())
            co_return true;
        auto [ec, n] = co_await asio::async_write(sock, asio::buffer(out), tuple_awaitable);
        (void)n;
        out.clear();
        co_return !ec;
    }

    static asio::awaitable<void> finish(tcp::socket& sock, fake_script::disposition d)
    {
        error_code ignored;
        switch (d)
        {
        case fake_script::disposition::keep: co_return;
        case fake_script::disposition::reset:
            sock.set_option(asio::socket_base::linger(true, 0), ignored);
            sock.close(ignored);
            co_return;
        case fake_script::disposition::close:
        case fake_script::disposition::stall:
        {
            // close: FIN now, then read until the peer closes too, so that our close does not
            // turn into an RST over bytes the peer sent meanwhile (bounded: 2 s).
            asio::steady_timer guard(sock.get_executor());
            if (d == fake_script::disposition::close)
            {
                sock.shutdown(tcp::socket::shutdown_send, ignored);
                guard.expires_after(std::chrono::seconds(2));
                guard.async_wait([&sock](const error_code& ec) {
                    if (!ec)
                    {
                        error_code e;
                        sock.close(e);
                    }
                });
            }
            char sink[4096];
            for (;;)
            {
                auto [ec, n] = co_await sock.async_read_some(asio::buffer(sink), tuple_awaitable);
                if (ec)
                    break;
            }
            guard.cancel();
            sock.close(ignored);
            co_return;
        }
        }
    }

    asio::awaitable<void> write_step(tcp::socket& sock, const fake_script::step& st,
                                     std::string bytes)
    {
        if (st.delay.count() > 0)
        {
            asio::steady_timer t(sock.get_executor(), st.delay);
            co_await t.async_wait(tuple_awaitable);
        }
        const std::size_t chunk = st.chunk > 0 ? st.chunk : std::max<std::size_t>(bytes.size(), 1);
        for (std::size_t off = 0; off < bytes.size(); off += chunk)
        {
            if (off > 0 && st.chunk_delay.count() > 0)
            {
                asio::steady_timer t(sock.get_executor(), st.chunk_delay);
                co_await t.async_wait(tuple_awaitable);
            }
            const auto n = std::min(chunk, bytes.size() - off);
            auto [ec, written] = co_await asio::async_write(
                sock, asio::buffer(bytes.data() + off, n), tuple_awaitable);
            (void)written;
            if (ec)
                co_return;
        }
    }

    asio::awaitable<void> session(tcp::socket sock, std::size_t k, fake_script script)
    {
        error_code ignored;
        sock.set_option(tcp::no_delay(true), ignored);
        auto mark_closed = [&] {
            std::lock_guard g(m);
            records[k].open = false;
        };

        if (!script.accept_bytes().empty())
            co_await asio::async_write(sock, asio::buffer(script.accept_bytes()), tuple_awaitable);
        if (auto d = script.on_accept_disposition())
        {
            co_await finish(sock, *d);
            mark_closed();
            co_return;
        }

        const auto& steps = script.steps();
        std::size_t next = 0;
        std::string in;
        std::string out;  // normal answers, written together before the next read
        std::vector<std::string> args;
        char tmp[16 * 1024];
        for (;;)
        {
            const std::size_t used = parse_command(in, args);
            if (used == malformed)
            {
                add_error("connection " + std::to_string(k) + ": malformed command bytes");
                break;
            }
            if (used == 0)
            {
                if (!co_await write_pending(sock, out))
                    break;
                auto [ec, n] = co_await sock.async_read_some(asio::buffer(tmp), tuple_awaitable);
                if (ec)
                    break;
                in.append(tmp, n);
                continue;
            }
            in.erase(0, used);
            {
                std::lock_guard g(m);
                if (records[k].commands.size() < max_logged_commands)
                    records[k].commands.push_back(args);
            }

            const fake_script::step* st = nullptr;
            if (next < steps.size())
            {
                const auto& s = steps[next];
                if (s.expect.empty() || upper(s.expect) == upper(args[0]))
                {
                    st = &s;
                    ++next;
                }
                else if (!s.skip_others)
                {
                    add_error("connection " + std::to_string(k) + ": expected " + s.expect +
                              ", got " + args[0]);
                    break;
                }
            }
            else if (script.after_steps() != fake_script::disposition::keep)
            {
                co_await write_pending(sock, out);
                co_await finish(sock, script.after_steps());
                break;
            }

            if (!st)
            {
                out += normal_answer(args);
                continue;
            }
            // A scripted step: what was answered before it goes out first, in order.
            if (!co_await write_pending(sock, out))
                break;
            std::string bytes = st->what == fake_script::answer::bytes    ? st->bytes
                                : st->what == fake_script::answer::normal ? normal_answer(args)
                                                                          : std::string();
            co_await write_step(sock, *st, std::move(bytes));
            if (st->then != fake_script::disposition::keep)
            {
                co_await finish(sock, st->then);
                break;
            }
        }
        sock.close(ignored);
        mark_closed();
    }

    asio::awaitable<void> accept_loop(tcp::acceptor acc)
    {
        for (;;)
        {
            auto [ec, sock] = co_await acc.async_accept(tuple_awaitable);
            if (ec)
            {
                if (ec == asio::error::operation_aborted || !acc.is_open())
                    co_return;
                continue;  // e.g. EMFILE: try again
            }
            fake_script s;
            std::size_t k = 0;
            {
                std::lock_guard g(m);
                if (!queue.empty())
                {
                    s = std::move(queue.front());
                    queue.pop_front();
                }
                else
                {
                    s = fallback;
                }
                k = records.size();
                records.emplace_back();
            }
            asio::co_spawn(acc.get_executor(), session(std::move(sock), k, std::move(s)),
                           asio::detached);
        }
    }
};

fake_server::fake_server() : impl_(std::make_unique<impl>())
{
    auto& io = impl_->io.emplace(1);
    tcp::acceptor acc(io, tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
    impl_->port = acc.local_endpoint().port();
    asio::co_spawn(io, impl_->accept_loop(std::move(acc)), asio::detached);
    impl_->thread = std::thread([&io] {
        auto guard = asio::make_work_guard(io);
        io.run();
    });
}

fake_server::~fake_server()
{
    impl_->io->stop();
    impl_->thread.join();
    // Destroys the suspended sessions (and their sockets) while the rest of impl is alive.
    impl_->io.reset();
}

void fake_server::push(fake_script s)
{
    std::lock_guard g(impl_->m);
    impl_->queue.push_back(std::move(s));
}

void fake_server::set_default(fake_script s)
{
    std::lock_guard g(impl_->m);
    impl_->fallback = std::move(s);
}

std::uint16_t fake_server::port() const noexcept { return impl_->port; }

std::string fake_server::uri(std::string_view userinfo, int db) const
{
    std::string u = "redis://";
    if (!userinfo.empty())
        u.append(userinfo).append("@");
    u += "127.0.0.1:" + std::to_string(impl_->port);
    if (db != 0)
        u += "/" + std::to_string(db);
    return u;
}

std::size_t fake_server::connections() const
{
    std::lock_guard g(impl_->m);
    return impl_->records.size();
}

std::size_t fake_server::open_connections() const
{
    std::lock_guard g(impl_->m);
    return static_cast<std::size_t>(std::count_if(impl_->records.begin(), impl_->records.end(),
                                                  [](const auto& r) { return r.open; }));
}

std::vector<std::vector<std::string>> fake_server::commands(std::size_t k) const
{
    std::lock_guard g(impl_->m);
    if (k >= impl_->records.size())
        return {};
    return impl_->records[k].commands;
}

std::vector<std::string> fake_server::command_names(std::size_t k) const
{
    std::vector<std::string> names;
    for (const auto& c : commands(k))
        names.push_back(upper(c[0]));
    return names;
}

std::vector<std::string> fake_server::errors() const
{
    std::lock_guard g(impl_->m);
    return impl_->errors;
}

std::optional<std::string> fake_server::value_of(std::string_view key) const
{
    std::lock_guard g(impl_->m);
    const auto* e = impl_->find(key);
    return e ? std::optional<std::string>(e->value) : std::nullopt;
}

void fake_server::set_value(std::string_view key, std::string_view value)
{
    std::lock_guard g(impl_->m);
    impl_->store[std::string(key)] = impl::entry{std::string(value), std::nullopt};
}

}  // namespace redlock::test
