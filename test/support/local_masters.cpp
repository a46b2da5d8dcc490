// Real redis-server masters on loopback for the live tests, examples and benchmarks.
#include "local_masters.hpp"
#include "file_text.hpp"
#include "process_status.hpp"
#include "temp_dir.hpp"

#include "tls_material.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace redlock::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::chrono::milliseconds command_timeout = 2s;
constexpr std::chrono::milliseconds probe_timeout = 500ms;
constexpr std::chrono::milliseconds stop_grace = 5s;
constexpr std::chrono::milliseconds poll_interval = 10ms;
// A start that fails only because someone took our port between choosing and binding it
// is retried this many times in all.
constexpr int start_attempts = 5;

[[noreturn]] void throw_errno(const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

// ---- Descriptors and directories -----------------------------------------------------------

class unique_fd
{
public:
    explicit unique_fd(int fd = -1) noexcept : fd_(fd) {}
    unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    unique_fd& operator=(unique_fd&& other) noexcept
    {
        reset(std::exchange(other.fd_, -1));
        return *this;
    }
    ~unique_fd() { reset(); }

    int get() const noexcept { return fd_; }
    void reset(int fd = -1) noexcept
    {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_;
};

// Resolved once in the parent: the child may only make async-signal-safe calls between
// fork and exec, which rules out execvp's PATH walk on some libcs.
std::string find_executable(const std::string& name)
{
    std::error_code ec;
    if (name.find('/') != std::string::npos)
    {
        if (::access(name.c_str(), X_OK) == 0 && fs::is_regular_file(name, ec))
            return name;
        throw std::runtime_error("local_masters: '" + name + "' is not an executable file");
    }
    const char* env = std::getenv("PATH");
    std::string_view dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
    for (;;)
    {
        const auto colon = dirs.find(':');
        const std::string_view entry = dirs.substr(0, colon);
        const fs::path candidate = fs::path(entry.empty() ? "." : std::string(entry)) / name;
        if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec))
            return candidate.string();
        if (colon == std::string_view::npos)
            break;
        dirs.remove_prefix(colon + 1);
    }
    throw std::runtime_error(
        "local_masters: '" + name +
        "' not found in PATH; install redis-server or set options::redis_server");
}

/// The last `max_lines` lines of `text`: the part of a server log that explains a failure.
std::string tail(std::string_view text, std::size_t max_lines = 25)
{
    if (text.empty())
        return "(log is empty)";
    return std::string(final_lines(text, max_lines));
}

// ---- Ports ---------------------------------------------------------------------------------

/// Lowest port the kernel hands out for bind(0) and for outgoing connections.
unsigned ephemeral_port_low()
{
    std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
    unsigned low = 0;
    unsigned high = 0;
    return (in >> low >> high) ? low : 32768U;
}

/// Binds 127.0.0.1:`port` (0: the kernel picks); nothing if the port is in use.
std::optional<std::pair<unique_fd, std::uint16_t>> try_bind(std::uint16_t port)
{
    unique_fd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (fd.get() < 0)
        throw_errno("local_masters: socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // No SO_REUSEADDR: a port with a TIME_WAIT leftover is skipped rather than risked.
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
        return std::nullopt;
    socklen_t len = sizeof addr;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw_errno("local_masters: getsockname");
    return std::pair{std::move(fd), ntohs(addr.sin_port)};
}

/// `n` distinct loopback ports that were free a moment ago.
std::vector<std::uint16_t> pick_ports(std::size_t n, std::mt19937& rng)
{
    // Why not plain bind(0): it yields a port from the ephemeral range, the range the kernel
    // also draws outgoing connections' local ports from. Between kill() and restart() a
    // client's reconnect could then occupy the master's port and the restart would fail.
    // Ports below the range are taken only by explicit binds, which we check for here.
    constexpr unsigned lowest = 10000;
    const unsigned below = ephemeral_port_low();
    std::uniform_int_distribution<unsigned> random_port(lowest,
                                                        below > lowest ? below - 1 : lowest);

    std::vector<unique_fd> held;  // all stay bound until the end so the n ports differ
    std::vector<std::uint16_t> ports;
    for (int tries = 0; ports.size() < n; ++tries)
    {
        if (tries > 2000)
            throw std::runtime_error("local_masters: found no free loopback port");
        const bool use_random = below > lowest + 1000 && tries < 1000;
        if (auto bound = try_bind(use_random ? static_cast<std::uint16_t>(random_port(rng)) : 0))
        {
            held.push_back(std::move(bound->first));
            ports.push_back(bound->second);
        }
    }
    return ports;
}

// ---- Processes -----------------------------------------------------------------------------

/// Reaps `pid` if it has exited and returns its wait status.
std::optional<int> try_reap(pid_t pid) noexcept
{
    int status = 0;
    pid_t r = 0;
    do
        r = ::waitpid(pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == pid)
        return status;
    // ECHILD: reaped elsewhere (e.g. SIGCHLD set to SIG_IGN); gone all the same.
    if (r < 0)
        return 0;
    return std::nullopt;
}

int reap(pid_t pid) noexcept
{
    int status = 0;
    pid_t r = 0;
    do
        r = ::waitpid(pid, &status, 0);
    while (r < 0 && errno == EINTR);
    return status;
}

/// Whether `pid` has exited, without reaping it (so a const query changes nothing).
bool has_exited(pid_t pid) noexcept
{
    siginfo_t info{};
    int r = 0;
    do
        r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return errno == ECHILD;
    return info.si_pid == pid;
}

/// In the child: hands errno to the parent through the report pipe and exits.
[[noreturn]] void child_failed(int report_fd) noexcept
{
    const int error = errno;
    [[maybe_unused]] const auto ignored = ::write(report_fd, &error, sizeof error);
    ::_exit(127);
}

/// The child's side of `spawn`: async-signal-safe calls only, everything prepared before fork.
[[noreturn]] void exec_child(int report_fd, pid_t parent, int max_fd, const char* dir,
                             const char* log, char* const argv[]) noexcept
{
    const auto fail = [report_fd] { child_failed(report_fd); };
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        fail();
    // The parent may have died before the line above took effect; then nobody would kill us.
    if (::getppid() != parent)
        ::_exit(127);

    // Signal masks survive exec: a test thread that blocks SIGTERM must not make the server deaf.
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    const int null_fd = ::open("/dev/null", O_RDONLY);
    const int log_fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (null_fd < 0 || log_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0 ||
        ::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0 || ::chdir(dir) != 0)
        fail();
    // Descriptors the test opened without CLOEXEC (Asio's sockets, for one) must not live on
    // in the server: a "closed" client connection would stay open there.
    if (report_fd > 3)
        ::close_range(3, static_cast<unsigned>(report_fd) - 1, 0);
    if (::close_range(static_cast<unsigned>(report_fd) + 1, ~0U, 0) != 0)
        for (int fd = report_fd + 1; fd < max_fd; ++fd)
            ::close(fd);

    ::execv(argv[0], argv);
    child_failed(report_fd);
}

/// Starts `exe conf` in `dir` with stdout/stderr appended to `log`; throws if exec fails.
pid_t spawn(const std::string& exe, const fs::path& conf, const fs::path& dir, const fs::path& log)
{
    std::string exe_arg = exe;
    std::string conf_arg = conf.string();
    char* const argv[] = {exe_arg.data(), conf_arg.data(), nullptr};
    const std::string dir_str = dir.string();
    const std::string log_str = log.string();
    const int max_fd = static_cast<int>(::sysconf(_SC_OPEN_MAX));

    // The child reports a failure before exec through this pipe; a successful exec closes it.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        throw_errno("local_masters: pipe2");
    unique_fd report_read{report[0]};
    unique_fd report_write{report[1]};

    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child < 0)
        throw_errno("local_masters: fork");
    if (child == 0)
        exec_child(report_write.get(), parent, max_fd, dir_str.c_str(), log_str.c_str(), argv);

    report_write.reset();
    int child_errno = 0;
    ssize_t n = 0;
    do
        n = ::read(report_read.get(), &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    if (n > 0)
    {
        reap(child);
        throw std::system_error(child_errno, std::generic_category(),
                                "local_masters: starting " + exe);
    }
    return child;
}

// ---- Blocking RESP client ------------------------------------------------------------------

void set_timeouts(int fd, std::chrono::milliseconds timeout)
{
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
    // On Linux SO_SNDTIMEO also bounds connect().
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
        throw_errno("local_masters: setsockopt");
}

unique_fd connect_to(int family, const sockaddr* addr, socklen_t len,
                     std::chrono::milliseconds timeout, const std::string& peer)
{
    unique_fd fd{::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (fd.get() < 0)
        throw_errno("local_masters: socket");
    set_timeouts(fd.get(), timeout);
    if (::connect(fd.get(), addr, len) != 0)
        throw_errno("local_masters: connect to " + peer);
    return fd;
}

unique_fd connect_tcp(std::uint16_t port, std::chrono::milliseconds timeout)
{
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return connect_to(AF_INET, reinterpret_cast<const sockaddr*>(&addr), sizeof addr, timeout,
                      "127.0.0.1:" + std::to_string(port));
}

unique_fd connect_unix(const std::string& path, std::chrono::milliseconds timeout)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        throw std::runtime_error("local_masters: Unix socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return connect_to(AF_UNIX, reinterpret_cast<const sockaddr*>(&addr), sizeof addr, timeout,
                      path);
}

void append_command(std::string& out, std::span<const std::string_view> args)
{
    out += '*';
    out += std::to_string(args.size());
    out += "\r\n";
    for (const auto arg : args)
    {
        out += '$';
        out += std::to_string(arg.size());
        out += "\r\n";
        out += arg;
        out += "\r\n";
    }
}

/// End offset of the complete RESP value that starts at `pos`, or npos if more bytes are needed.
std::size_t reply_end(std::string_view buf, std::size_t pos)
{
    constexpr auto incomplete = std::string_view::npos;
    const auto eol = buf.find("\r\n", pos);
    if (pos >= buf.size() || eol == std::string_view::npos)
        return incomplete;
    const std::size_t after_header = eol + 2;
    const auto header = buf.substr(pos + 1, eol - pos - 1);
    const auto length = [&] {
        long long value = 0;
        const auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), value);
        if (ec != std::errc{} || end != header.data() + header.size())
            throw std::runtime_error("local_masters: malformed RESP header: " +
                                     std::string(header));
        return value;
    };
    switch (buf[pos])
    {
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(': return after_header;
    case '$':
    case '!':
    case '=':
    {
        const long long n = length();
        if (n < 0)
            return after_header;  // RESP2 null bulk string
        const std::size_t end = after_header + static_cast<std::size_t>(n) + 2;
        return end <= buf.size() ? end : incomplete;
    }
    case '*':
    case '~':
    case '>':
    case '%':
    {
        long long n = length();
        if (buf[pos] == '%')
            n *= 2;
        std::size_t next = after_header;
        for (long long k = 0; k < n && next != incomplete; ++k)
            next = reply_end(buf, next);
        return next;
    }
    default:
        throw std::runtime_error("local_masters: unexpected RESP type byte '" +
                                 std::string(1, buf[pos]) + "'");
    }
}

/// Sends `request` and reads back `count` complete replies.
std::vector<std::string> exchange(const unique_fd& fd, std::string_view request, std::size_t count,
                                  const std::string& peer)
{
    while (!request.empty())
    {
        // MSG_NOSIGNAL: a server that died must not take the test down with SIGPIPE.
        const ssize_t n = ::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw_errno("local_masters: sending to " + peer);
        request.remove_prefix(static_cast<std::size_t>(n));
    }

    std::vector<std::string> replies;
    std::string buf;
    std::size_t start = 0;
    char chunk[4096];
    while (replies.size() < count)
    {
        if (const auto end = reply_end(buf, start); end != std::string_view::npos)
        {
            replies.push_back(buf.substr(start, end - start));
            start = end;
            continue;
        }
        const ssize_t n = ::recv(fd.get(), chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            throw std::system_error(std::make_error_code(std::errc::timed_out),
                                    "local_masters: no reply from " + peer + " (is it paused?)");
        if (n < 0)
            throw_errno("local_masters: receiving from " + peer);
        if (n == 0)
            throw std::system_error(std::make_error_code(std::errc::connection_reset),
                                    "local_masters: " + peer + " closed the connection");
        buf.append(chunk, static_cast<std::size_t>(n));
    }
    return replies;
}

// Quoted for redis.conf, whose parser understands C-like escapes inside double quotes.
std::string quoted(const fs::path& path)
{
    std::string out = "\"";
    for (const char c : path.string())
    {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + '"';
}

struct master_process
{
    fs::path dir;
    std::uint16_t port = 0;
    std::uint16_t tls_port = 0;
    // -1 once reaped: a reaped PID may be reused by the kernel and must never be signalled.
    pid_t pid = -1;

    fs::path config() const { return dir / "redis.conf"; }
    fs::path log() const { return dir / "redis.log"; }
    fs::path socket() const { return dir / "redis.sock"; }
};

/// A failed start; `port_in_use` says a retry with other ports may succeed.
struct start_error : std::runtime_error
{
    start_error(const std::string& what, bool in_use)
        : std::runtime_error(what),
          port_in_use(in_use)
    {}
    bool port_in_use;
};

void kill_and_reap(master_process& m) noexcept
{
    if (m.pid <= 0)
        return;
    ::kill(m.pid, SIGKILL);
    reap(m.pid);
    m.pid = -1;
}

/// SIGTERM, a grace period, then SIGKILL; all of `ms` in parallel so teardown stays quick.
void stop_processes(std::span<master_process> ms) noexcept
{
    for (auto& m : ms)
        if (m.pid > 0)
        {
            // A stopped process would not act on SIGTERM until resumed.
            ::kill(m.pid, SIGCONT);
            ::kill(m.pid, SIGTERM);
        }
    const auto deadline = steady::now() + stop_grace;
    for (auto& m : ms)
        while (m.pid > 0 && steady::now() < deadline)
        {
            if (try_reap(m.pid))
                m.pid = -1;
            else
                std::this_thread::sleep_for(5ms);
        }
    for (auto& m : ms)
        kill_and_reap(m);
}

}  // namespace

// ---- The fixture ---------------------------------------------------------------------------

struct local_masters::impl
{
    options opts;
    std::string server;
    temp_dir root{
        "redlock-masters-"};  // declared before `masters`: removed only after ~impl stopped the processes
    std::optional<tls_material> tls;
    std::vector<master_process> masters;
    std::mt19937 rng{std::random_device{}()};

    explicit impl(options o) : opts(std::move(o)), server(find_executable(opts.redis_server))
    {
        if (opts.tls)
        {
            fs::create_directory(root.path() / "tls");
            tls = write_tls_material(root.path() / "tls");
        }
        masters.resize(opts.count);
        for (std::size_t i = 0; i < masters.size(); ++i)
        {
            masters[i].dir = root.path() / ("master-" + std::to_string(i));
            fs::create_directory(masters[i].dir);
        }
        if (opts.unix_sockets && !masters.empty() &&
            masters.back().socket().string().size() >= sizeof(sockaddr_un{}.sun_path))
            throw std::runtime_error("local_masters: Unix socket path " +
                                     masters.back().socket().string() +
                                     " is too long; set TMPDIR to a shorter directory");
    }

    ~impl() { stop_processes(masters); }

    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;

    master_process& at(std::size_t i)
    {
        if (i >= masters.size())
            throw std::out_of_range("local_masters: no master " + std::to_string(i));
        return masters[i];
    }
    const master_process& at(std::size_t i) const { return const_cast<impl*>(this)->at(i); }

    std::string name(std::size_t i) const
    {
        return "master " + std::to_string(i) + " (127.0.0.1:" + std::to_string(at(i).port) + ")";
    }

    void write_config(const master_process& m) const
    {
        std::ofstream out(m.config(), std::ios::trunc);
        out << "# Generated by redlock::test::local_masters for one test run.\n"
            << "bind 127.0.0.1\n"
            << "port " << m.port << '\n'
            << "daemonize no\n"
            << "save \"\"\n"
            << "appendonly no\n"
            << "dir " << quoted(m.dir) << '\n'
            << "logfile " << quoted(m.log())
            << '\n'
            // Lets tests simulate a slow master with DEBUG SLEEP; loopback clients only anyway.
            << "enable-debug-command local\n";
        if (opts.unix_sockets)
            out << "unixsocket " << quoted(m.socket()) << '\n' << "unixsocketperm 700\n";
        if (tls)
            out << "tls-port " << m.tls_port << '\n'
                << "tls-cert-file " << quoted(tls->cert_file) << '\n'
                << "tls-key-file " << quoted(tls->key_file) << '\n'
                << "tls-ca-cert-file " << quoted(tls->ca_file) << '\n'
                << "tls-auth-clients no\n";
        for (const auto& line : opts.extra_config)
            out << line << '\n';
        out.close();
        if (!out)
            throw std::runtime_error("local_masters: cannot write " + m.config().string());
    }

    /// Sends `args` (after AUTH when configured) and returns the command's reply.
    std::string talk(const unique_fd& fd, std::span<const std::string_view> args,
                     const std::string& peer) const
    {
        std::string request;
        const bool auth = !opts.admin_password.empty();
        if (auth)
        {
            std::vector<std::string_view> auth_args{"AUTH"};
            if (!opts.admin_user.empty())
                auth_args.push_back(opts.admin_user);
            auth_args.push_back(opts.admin_password);
            append_command(request, auth_args);
        }
        append_command(request, args);
        auto replies = exchange(fd, request, auth ? 2 : 1, peer);
        if (auth && replies.front().starts_with('-'))
            throw std::runtime_error(
                "local_masters: AUTH with options::admin_user/admin_password failed on " + peer +
                ": " + replies.front());
        return std::move(replies.back());
    }

    /// True once the master serves commands; connection-level failures mean "not yet".
    bool answers_ping(std::size_t i) const
    {
        try
        {
            const std::string_view ping[] = {"PING"};
            const std::string reply = talk(connect_tcp(at(i).port, probe_timeout), ping, name(i));
            return !reply.starts_with("-LOADING") && !reply.starts_with("-BUSY");
        }
        catch (const std::system_error&)
        {
            return false;
        }
    }

    /// Runs the configured server for master `i` and waits for PING; kills it on failure.
    void launch(std::size_t i)
    {
        master_process& m = at(i);
        std::error_code ec;
        const auto size = fs::file_size(m.log(), ec);
        const std::uintmax_t log_offset = ec ? 0 : size;  // report only this attempt's lines
        m.pid = spawn(server, m.config(), m.dir, m.log());
        try
        {
            const auto deadline = steady::now() + opts.start_timeout;
            for (;;)
            {
                if (const auto status = try_reap(m.pid))
                {
                    m.pid = -1;
                    const std::string log = read_text(m.log(), log_offset);
                    throw start_error("local_masters: redis-server for " + name(i) +
                                          " exited during start-up (" + describe_status(*status) +
                                          "); its log ends with:\n" + tail(log),
                                      log.find("Address already in use") != std::string::npos);
                }
                if (answers_ping(i))
                    return;
                if (steady::now() >= deadline)
                    throw start_error("local_masters: redis-server for " + name(i) +
                                          " did not answer PING within " +
                                          std::to_string(opts.start_timeout.count()) +
                                          " ms; its log ends with:\n" +
                                          tail(read_text(m.log(), log_offset)),
                                      false);
                std::this_thread::sleep_for(poll_interval);
            }
        }
        catch (...)
        {
            kill_and_reap(m);
            throw;
        }
    }

    /// First start of master `i`, on fresh ports.
    void start(std::size_t i)
    {
        master_process& m = at(i);
        for (int attempt = 1;; ++attempt)
        {
            const auto ports = pick_ports(tls ? 2 : 1, rng);
            m.port = ports[0];
            m.tls_port = tls ? ports[1] : 0;
            write_config(m);
            if (launched(i, attempt))
                return;
        }
    }

    /// Starts master `i` again on its old ports, which a transient socket may briefly hold.
    void restart(std::size_t i)
    {
        kill_and_reap(at(i));
        for (int attempt = 1; !launched(i, attempt); ++attempt)
            std::this_thread::sleep_for(200ms);
    }

    /// Launches master `i` at its `attempt`-th try: false if its port was in use and tries are
    /// left, else throws what went wrong.
    bool launched(std::size_t i, int attempt)
    {
        try
        {
            launch(i);
            return true;
        }
        catch (const start_error& e)
        {
            if (!e.port_in_use || attempt == start_attempts)
                throw;
        }
        return false;
    }

    const master_process& running(std::size_t i) const
    {
        const master_process& m = at(i);
        if (m.pid <= 0 || has_exited(m.pid))
            throw std::logic_error("local_masters: " + name(i) + " is not running");
        return m;
    }

    void require_tls() const
    {
        if (!tls)
            throw std::logic_error("local_masters: started without options::tls");
    }

    /// The TLS material; throws if the masters were started without it.
    const tls_material& tls_files() const
    {
        require_tls();
        return *tls;
    }

    void require_unix() const
    {
        if (!opts.unix_sockets)
            throw std::logic_error("local_masters: started without options::unix_sockets");
    }
};

local_masters::local_masters(options opts) : impl_(std::make_unique<impl>(std::move(opts)))
{
    // If a start throws, impl_ is already a complete member: its destructor stops the
    // masters started so far and removes the directory.
    for (std::size_t i = 0; i < impl_->masters.size(); ++i)
        impl_->start(i);
}

local_masters::local_masters() : local_masters(options{}) {}

local_masters::~local_masters() = default;
local_masters::local_masters(local_masters&&) noexcept = default;
local_masters& local_masters::operator=(local_masters&&) noexcept = default;

std::size_t local_masters::size() const noexcept { return impl_ ? impl_->masters.size() : 0; }

std::uint16_t local_masters::port(std::size_t i) const { return impl_->at(i).port; }

std::uint16_t local_masters::tls_port(std::size_t i) const
{
    impl_->require_tls();
    return impl_->at(i).tls_port;
}

std::string local_masters::unix_path(std::size_t i) const
{
    impl_->require_unix();
    return impl_->at(i).socket().string();
}

std::string local_masters::dir(std::size_t i) const { return impl_->at(i).dir.string(); }

std::string local_masters::log_file(std::size_t i) const { return impl_->at(i).log().string(); }

pid_t local_masters::pid(std::size_t i) const { return impl_->running(i).pid; }

std::string local_masters::uri(std::size_t i) const
{
    return "redis://127.0.0.1:" + std::to_string(port(i));
}

std::string local_masters::tls_uri(std::size_t i) const
{
    return "rediss://127.0.0.1:" + std::to_string(tls_port(i));
}

std::string local_masters::unix_uri(std::size_t i) const { return "unix://" + unix_path(i); }

std::vector<std::string> local_masters::uris() const
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < size(); ++i)
        out.push_back(uri(i));
    return out;
}

std::string local_masters::ca_file() const { return impl_->tls_files().ca_file; }
std::string local_masters::other_ca_file() const { return impl_->tls_files().other_ca_file; }
std::string local_masters::cert_file() const { return impl_->tls_files().cert_file; }
std::string local_masters::key_file() const { return impl_->tls_files().key_file; }

void local_masters::kill(std::size_t i) { kill_and_reap(impl_->at(i)); }

void local_masters::pause(std::size_t i)
{
    if (::kill(impl_->running(i).pid, SIGSTOP) != 0)
        throw_errno("local_masters: SIGSTOP " + impl_->name(i));
}

void local_masters::resume(std::size_t i)
{
    if (::kill(impl_->running(i).pid, SIGCONT) != 0)
        throw_errno("local_masters: SIGCONT " + impl_->name(i));
}

void local_masters::stop(std::size_t i) { stop_processes(std::span(&impl_->at(i), 1)); }

void local_masters::restart(std::size_t i) { impl_->restart(i); }

bool local_masters::is_running(std::size_t i) const
{
    const auto& m = impl_->at(i);
    return m.pid > 0 && !has_exited(m.pid);
}

std::string local_masters::command(std::size_t i,
                                   std::initializer_list<std::string_view> args) const
{
    return impl_->talk(connect_tcp(impl_->at(i).port, command_timeout),
                       std::span(args.begin(), args.size()), impl_->name(i));
}

std::string local_masters::command(std::size_t i, const std::vector<std::string>& args) const
{
    const std::vector<std::string_view> views(args.begin(), args.end());
    return impl_->talk(connect_tcp(impl_->at(i).port, command_timeout), views, impl_->name(i));
}

std::string local_masters::unix_command(std::size_t i,
                                        std::initializer_list<std::string_view> args) const
{
    return impl_->talk(connect_unix(unix_path(i), command_timeout),
                       std::span(args.begin(), args.size()), impl_->name(i));
}

}  // namespace redlock::test
