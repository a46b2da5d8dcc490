// A real Redis Cluster on loopback for the live tests: local_masters nodes joined by redis-cli.
#include "local_cluster.hpp"
#include "file_text.hpp"
#include "process_status.hpp"

#include "protocol/resp_parser.hpp"
#include "routing/slot_map.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <variant>

extern char** environ;

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::chrono::milliseconds cluster_poll_interval = 20ms;
constexpr std::string_view loopback = "127.0.0.1";

/// The last `max_lines` lines of `text`, ending with a newline.
std::string last_lines(std::string_view text, std::size_t max_lines)
{
    if (text.empty())
        return "(empty)\n";
    std::string out(final_lines(text, max_lines));
    if (!out.empty() && out.back() != '\n')
        out += '\n';
    return out;
}

/// A child process we started: killed and reaped if it still runs when this goes away.
class child_process
{
public:
    explicit child_process(pid_t pid) noexcept : pid_(pid) {}
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;
    ~child_process()
    {
        if (pid_ > 0)
        {
            ::kill(pid_, SIGKILL);
            reap(0);
        }
    }

    /// Its wait status once it has exited, polling until `deadline`; nullopt if it still runs.
    std::optional<int> wait_until(steady::time_point deadline) noexcept
    {
        for (;;)
        {
            if (const auto status = reap(WNOHANG))
                return status;
            if (steady::now() >= deadline)
                return std::nullopt;
            std::this_thread::sleep_for(10ms);
        }
    }

private:
    /// waitpid with `flags`: the wait status, or nullopt if it still runs (WNOHANG only).
    std::optional<int> reap(int flags) noexcept
    {
        int status = 0;
        pid_t r = 0;
        do
            r = ::waitpid(pid_, &status, flags);
        while (r < 0 && errno == EINTR);
        if (r == 0)
            return std::nullopt;
        // Reaped, or ECHILD (reaped elsewhere): either way the PID may be reused from now on
        // and must never be signalled again.
        pid_ = -1;
        return r > 0 ? status : 0;
    }

    pid_t pid_;
};

/// Runs `args` (args[0] looked up in PATH) with stdin from /dev/null and stdout and stderr
/// to `output`, and waits for it until `timeout`. Throws with the output's tail if it cannot
/// be started, does not finish in time (then it is killed) or exits with a failure.
void run_to_completion(const std::vector<std::string>& args, const std::filesystem::path& output,
                       std::chrono::milliseconds timeout)
{
    std::vector<char*> argv;
    std::vector<std::string> storage = args;
    for (auto& a : storage)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string command_line;
    for (const auto& a : args)
        command_line += (command_line.empty() ? "" : " ") + a;

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    if (const int e = ::posix_spawn_file_actions_init(&actions); e != 0)
        throw std::system_error(e, std::generic_category(),
                                "local_cluster: posix_spawn_file_actions_init");
    if (const int e = ::posix_spawnattr_init(&attr); e != 0)
    {
        ::posix_spawn_file_actions_destroy(&actions);
        throw std::system_error(e, std::generic_category(), "local_cluster: posix_spawnattr_init");
    }
    // A test thread's blocked signals, and signals the test ignores, must not carry over into
    // the tool (a handler is reset by exec anyway; SIG_IGN is not).
    sigset_t none;
    sigset_t defaults;
    ::sigemptyset(&none);
    ::sigemptyset(&defaults);
    for (const int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD})
        ::sigaddset(&defaults, sig);
    const std::string output_path = output.string();
    int e = ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (e == 0)
        e = ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path.c_str(),
                                               O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (e == 0)
        e = ::posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    // Descriptors the test opened without CLOEXEC (Asio's sockets) must not live on in it.
    if (e == 0)
        e = ::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    if (e == 0)
        e = ::posix_spawnattr_setsigmask(&attr, &none);
    if (e == 0)
        e = ::posix_spawnattr_setsigdefault(&attr, &defaults);
    if (e == 0)
        e = ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    if (e == 0)
        e = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
    if (e != 0)
        throw std::system_error(e, std::generic_category(),
                                "local_cluster: starting `" + command_line + "`");

    child_process child(pid);
    const auto status = child.wait_until(steady::now() + timeout);
    if (!status)
        throw std::runtime_error(
            "local_cluster: `" + command_line + "` did not finish within " +
            std::to_string(timeout.count()) +
            " ms (killed, so output it had buffered is lost); its output ends with:\n" +
            last_lines(read_text(output), 30));
    if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
        throw std::runtime_error("local_cluster: `" + command_line + "` failed (" +
                                 describe_status(*status) + "); its output ends with:\n" +
                                 last_lines(read_text(output), 30));
}

/// A parsed reply that keeps the bytes its nodes view.
struct parsed_reply
{
    std::string bytes;
    resp::parser parser;

    explicit parsed_reply(std::string b) : bytes(std::move(b))
    {
        if (parser.parse(bytes) != resp::parse_status::done)
            throw std::runtime_error("local_cluster: a reply that is not one complete RESP value");
    }
    const resp::node_view& top() const { return parser.nodes().front(); }
};

/// The value of `name:value` in an INFO-style text (a field a line, CRLF or LF), or nullopt.
std::optional<std::string_view> info_field(std::string_view text, std::string_view name)
{
    for (auto at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1))
    {
        const auto colon = at + name.size();
        if ((at != 0 && text[at - 1] != '\n') || colon == text.size() || text[colon] != ':')
            continue;
        auto value = text.substr(colon + 1, text.find('\n', colon) - colon - 1);
        if (!value.empty() && value.back() == '\r')
            value.remove_suffix(1);
        return value;
    }
    return std::nullopt;
}

}  // namespace

struct local_cluster::impl
{
    options opts;
    local_masters nodes;
    std::vector<std::size_t> primaries;
    std::size_t reshards = 0;  // names each reshard's log

    static local_masters::options node_options(const options& o)
    {
        if (o.shards < 3)
            throw std::invalid_argument(
                "local_cluster: redis-cli --cluster create needs at least 3 shards, not " +
                std::to_string(o.shards));
        local_masters::options m;
        m.count = o.shards * (1 + o.replicas);
        m.redis_server = o.redis_server;
        m.extra_config = {
            "cluster-enabled yes",
            // Relative to the node's own directory (its `dir`).
            "cluster-config-file nodes.conf",
            "cluster-node-timeout " + std::to_string(o.node_timeout.count()),
            // A replica's first sync would wait 5 s (the default) for more replicas to share it.
            "repl-diskless-sync-delay 0",
            // CLUSTER SLOTS hides a replica until its replication offset is not 0, which an
            // idle primary's pings to its replicas (10 s apart by default) make it.
            "repl-ping-replica-period 1",
        };
        m.extra_config.insert(m.extra_config.end(), o.extra_config.begin(), o.extra_config.end());
        return m;
    }

    explicit impl(options o) : opts(std::move(o)), nodes(node_options(opts)) {}

    /// The directory that holds the nodes' directories (removed with them).
    std::filesystem::path root() const { return std::filesystem::path(nodes.dir(0)).parent_path(); }

    std::string name(std::size_t i) const
    {
        return "node " + std::to_string(i) + " (127.0.0.1:" + std::to_string(nodes.port(i)) + ")";
    }

    void create()
    {
        std::vector<std::string> args = {opts.redis_cli, "--cluster", "create"};
        for (std::size_t i = 0; i < nodes.size(); ++i)
            args.push_back(std::string(loopback) + ":" + std::to_string(nodes.port(i)));
        args.insert(args.end(),
                    {"--cluster-replicas", std::to_string(opts.replicas), "--cluster-yes"});
        run_to_completion(args, root() / "cluster-create.log", opts.ready_timeout);
    }

    /// Node `i`'s slot map, or what is wrong with it: not covering every slot, or listing
    /// fewer replicas for some range than the cluster has (slot_map drops replicas, so they
    /// are counted here: an entry is [start, end, primary, replica...]).
    std::variant<detail::slot_map, std::string> slots_of(std::size_t i) const
    {
        const parsed_reply reply(nodes.command(i, {"CLUSTER", "SLOTS"}));
        auto parsed = detail::slot_map::parse(reply.parser.nodes(), loopback);
        if (!parsed)
            return std::move(parsed.error);
        if (!parsed.map->covers_all())
            return "CLUSTER SLOTS covers " + std::to_string(parsed.map->covered_slots()) +
                   " slots, not all 16384";
        for (const auto& n : reply.parser.nodes())
            if (n.depth == 1 && n.data_type == resp::type::array && n.size < 3 + opts.replicas)
                return "CLUSTER SLOTS lists " + std::to_string(n.size < 3 ? 0 : n.size - 3) +
                       " replicas for a slot range, not " + std::to_string(opts.replicas);
        return std::move(*parsed.map);
    }

    /// What node `i` still lacks to be ready, or nullopt when it is ready. `reference` is the
    /// slot map of the first node that had one, which every node must share.
    std::optional<std::string> not_ready(std::size_t i,
                                         std::optional<detail::slot_map>& reference) const
    {
        try
        {
            const parsed_reply info(nodes.command(i, {"CLUSTER", "INFO"}));
            if (info.top().data_type != resp::type::bulk_string &&
                info.top().data_type != resp::type::verbatim_string)
                return "CLUSTER INFO answered " + info.bytes;
            const auto state = info_field(info.top().value, "cluster_state");
            if (state != "ok")
                return "cluster_state:" + std::string(state.value_or("(missing)"));
            const auto known = info_field(info.top().value, "cluster_known_nodes");
            if (known != std::to_string(nodes.size()))
                return "cluster_known_nodes:" + std::string(known.value_or("(missing)"));

            auto map = slots_of(i);
            if (const auto* problem = std::get_if<std::string>(&map))
                return *problem;
            if (!reference)
                reference = std::move(std::get<detail::slot_map>(map));
            else if (std::get<detail::slot_map>(map) != *reference)
                return std::string("its CLUSTER SLOTS differs from another node's");

            const parsed_reply replication(nodes.command(i, {"INFO", "replication"}));
            const auto text = replication.top().value;
            if (info_field(text, "role") == "slave" &&
                info_field(text, "master_link_status") != "up")
                return std::string("a replica whose link to its primary is not up");
            return std::nullopt;
        }
        catch (const std::exception& e)
        {
            return std::string(e.what());
        }
    }

    void wait_ready()
    {
        const auto deadline = steady::now() + opts.ready_timeout;
        std::vector<std::string> lacks(nodes.size());
        for (;;)
        {
            for (std::size_t i = 0; i < nodes.size(); ++i)
                if (!nodes.is_running(i))
                    throw std::runtime_error(
                        "local_cluster: " + name(i) +
                        " exited while the cluster formed; its log ends with:\n" +
                        last_lines(read_text(nodes.log_file(i)), 25));
            std::optional<detail::slot_map> reference;
            bool ready = true;
            for (std::size_t i = 0; i < nodes.size(); ++i)
            {
                const auto lack = not_ready(i, reference);
                lacks[i] = lack.value_or("ready");
                ready = ready && !lack;
            }
            if (ready)
            {
                record_primaries(*reference);
                return;
            }
            if (steady::now() >= deadline)
                break;
            std::this_thread::sleep_for(cluster_poll_interval);
        }
        std::string message = "local_cluster: the cluster was not ready within " +
                              std::to_string(opts.ready_timeout.count()) + " ms.\n";
        for (std::size_t i = 0; i < nodes.size(); ++i)
            message += name(i) + ": " + lacks[i] + "\n";
        message += "redis-cli --cluster create said:\n" +
                   last_lines(read_text(root() / "cluster-create.log"), 15);
        for (std::size_t i = 0; i < nodes.size(); ++i)
            message +=
                name(i) + "'s log ends with:\n" + last_lines(read_text(nodes.log_file(i)), 10);
        throw std::runtime_error(message);
    }

    void record_primaries(const detail::slot_map& map)
    {
        primaries.clear();
        for (std::size_t s = 0; s < map.shards(); ++s)
        {
            const auto& primary = map.shard(s);
            const auto node = primary.host == loopback ? find_port(primary.port) : std::nullopt;
            if (!node)
                throw std::runtime_error("local_cluster: a shard primary at " + primary.host + ":" +
                                         std::to_string(primary.port) +
                                         " is none of this cluster's nodes");
            primaries.push_back(*node);
        }
    }

    std::optional<std::size_t> find_port(std::uint16_t port) const noexcept
    {
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (nodes.port(i) == port)
                return i;
        return std::nullopt;
    }
};

local_cluster::local_cluster(options opts) : impl_(std::make_unique<impl>(std::move(opts)))
{
    // If either step throws, impl_ is a complete member: its local_masters stops the nodes.
    impl_->create();
    impl_->wait_ready();
}

local_cluster::local_cluster() : local_cluster(options{}) {}

local_cluster::~local_cluster() = default;
local_cluster::local_cluster(local_cluster&&) noexcept = default;
local_cluster& local_cluster::operator=(local_cluster&&) noexcept = default;

std::size_t local_cluster::node_count() const noexcept { return impl_ ? impl_->nodes.size() : 0; }

std::size_t local_cluster::shard_count() const noexcept { return impl_ ? impl_->opts.shards : 0; }

std::uint16_t local_cluster::port(std::size_t i) const { return impl_->nodes.port(i); }

pid_t local_cluster::pid(std::size_t i) const { return impl_->nodes.pid(i); }

std::string local_cluster::log_file(std::size_t i) const { return impl_->nodes.log_file(i); }

std::optional<std::size_t> local_cluster::node_at(std::uint16_t port) const noexcept
{
    return impl_ ? impl_->find_port(port) : std::nullopt;
}

const std::vector<std::size_t>& local_cluster::primaries() const noexcept
{
    return impl_->primaries;
}

std::vector<std::string> local_cluster::seeds() const
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < node_count(); ++i)
        out.push_back(std::string(loopback) + ":" + std::to_string(port(i)));
    return out;
}

std::string local_cluster::uri() const
{
    std::string out = "redis-cluster://";
    for (const auto& seed : seeds())
        out += (out.back() == '/' ? "" : ",") + seed;
    return out;
}

std::string local_cluster::id(std::size_t i) const
{
    const auto raw = command(i, {"CLUSTER", "MYID"});
    // A bulk string: $40\r\n<id>\r\n
    const auto start = raw.find("\r\n");
    if (raw.empty() || raw[0] != '$' || start == std::string::npos)
        throw std::runtime_error("local_cluster: CLUSTER MYID of " + impl_->name(i) + " answered " +
                                 raw);
    return raw.substr(start + 2, raw.size() - start - 4);
}

void local_cluster::reshard(std::size_t from, std::size_t to, std::size_t slots,
                            std::chrono::milliseconds timeout)
{
    const std::vector<std::string> args = {impl_->opts.redis_cli,
                                           "--cluster",
                                           "reshard",
                                           std::string(loopback) + ":" + std::to_string(port(from)),
                                           "--cluster-from",
                                           id(from),
                                           "--cluster-to",
                                           id(to),
                                           "--cluster-slots",
                                           std::to_string(slots),
                                           "--cluster-yes"};
    run_to_completion(
        args, impl_->root() / ("cluster-reshard-" + std::to_string(++impl_->reshards) + ".log"),
        timeout);
}

std::string local_cluster::command(std::size_t i,
                                   std::initializer_list<std::string_view> args) const
{
    return impl_->nodes.command(i, args);
}

std::string local_cluster::command(std::size_t i, const std::vector<std::string>& args) const
{
    return impl_->nodes.command(i, args);
}

void local_cluster::kill(std::size_t i) { impl_->nodes.kill(i); }
void local_cluster::pause(std::size_t i) { impl_->nodes.pause(i); }
void local_cluster::resume(std::size_t i) { impl_->nodes.resume(i); }
void local_cluster::stop(std::size_t i) { impl_->nodes.stop(i); }
bool local_cluster::is_running(std::size_t i) const { return impl_->nodes.is_running(i); }

void local_cluster::restart(std::size_t i)
{
    impl_->nodes.stop(i);
    impl_->nodes.restart(i);
    impl_->wait_ready();
}

local_masters& local_cluster::masters() noexcept { return impl_->nodes; }

}  // namespace redlock::test
