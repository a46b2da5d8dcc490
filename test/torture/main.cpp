// redlock-torture: the mutual-exclusion checker of the reliability suite (docs/reliability.md).
//
// The parent starts N masters with a fault proxy in front of each, forks P worker processes
// (this executable again, with --worker) whose coroutines contend on R resources through the
// public API and write every hold to a ledger, runs a fault schedule meanwhile, then checks
// the ledgers (no two holds of one resource overlap within their validity windows) and scans
// the masters for keys left behind. Exit status: 0 pass; 1 an overlap, a validity error or a
// leftover key; 2 the run itself failed (a worker crashed or hung, a master would not start).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <boost/asio/error.hpp>

#include <redlock/error.hpp>

#include "checker.hpp"
#include "fault_proxy.hpp"
#include "faults.hpp"
#include "ledger.hpp"
#include "local_masters.hpp"
#include "temp_dir.hpp"

#include "parse_or_exit.hpp"
#include "worker.hpp"

namespace {

namespace fs = std::filesystem;
namespace rt = redlock::torture;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using rt::nanos;

volatile sig_atomic_t interrupted = 0;

void on_signal(int) { interrupted = 1; }

// ---- Command line ----------------------------------------------------------------------------

struct options
{
    int duration_s = 60;
    int processes = 3;
    int workers = 16;
    int resources = 4;
    int masters = 5;
    std::vector<int> ttls{300, 1000, 2000};
    std::optional<std::uint64_t> seed;
    bool verbose = false;
    bool unsafe_restarts = false;
    bool keep_ledger = false;
    bool require_takeovers =
        false;  // --require-takeovers: fail a run that never took over an expired lock
    bool self_test = false;
    int try_pct = 15;
    int extend_pct = 10;
    int overrun_pct = 3;
    int hold_max_ms = 20;
    // --fencing: this share of the acquisitions fenced, masters persistent (AOF, fsync always).
    int fencing_pct = 0;
    bool volatile_masters = false;  // --volatile-masters: no persistence even with --fencing
    bool kinds = false;             // --kinds: every kind of lock (worker_config::kinds)
    int permits = 2;                // --permits: the semaphores' permits with --kinds
    // Worker mode.
    std::optional<int> worker;
    nanos until = 0;
    std::string ledger;
    std::vector<std::string> uris;
};

options parse(int argc, char** argv)
{
    options o;
    CLI::App app{"The mutual-exclusion checker: worker processes contend on a few resources "
                 "through the public "
                 "API while a fault schedule runs; their ledgers are checked for overlaps and the "
                 "masters for "
                 "leftover keys (docs/reliability.md).",
                 "redlock-torture"};
    // The counts of the run, each at least 1.
    for (const auto& [name, value, what] :
         {std::tuple{"--duration", &o.duration_s, "seconds of the run"},
          std::tuple{"--processes", &o.processes, "worker processes"},
          std::tuple{"--workers", &o.workers, "workers per process"},
          std::tuple{"--resources", &o.resources, "resources contended"},
          std::tuple{"--masters", &o.masters, "masters started"}})
        app.add_option(name, *value, what)->check(CLI::PositiveNumber)->capture_default_str();
    app.add_option("--ttls", o.ttls,
                   "the TTLs drawn from, ms (>= 50: less leaves no validity after the "
                   "attempt deadline)")
        ->delimiter(',')
        ->check(CLI::Range(50, 86'400'000))
        ->capture_default_str();
    app.add_option("--seed", o.seed, "the fault schedule's and workers' seed (default: random)");
    app.add_option("--try-pct", o.try_pct, "% of acquisitions that are try_lock")
        ->check(CLI::Range(0, 100));
    app.add_option("--extend-pct", o.extend_pct, "% of holds that extend")
        ->check(CLI::Range(0, 100));
    app.add_option("--overrun-pct", o.overrun_pct, "% of holds that overrun their validity")
        ->check(CLI::Range(0, 100));
    app.add_option("--hold-max", o.hold_max_ms, "longest hold, ms")->check(CLI::NonNegativeNumber);
    app.add_flag("--verbose", o.verbose, "tell each fault and each worker's progress");
    app.add_flag(
        "--unsafe-restarts", o.unsafe_restarts,
        "restart masters without the delayed restart: majorities at once, and the clients' "
        "restart_quarantine off");
    app.add_flag_callback(
        "--fencing", [&o] { o.fencing_pct = 50; },
        "half the acquisitions fenced, masters persistent (AOF, fsync always)");
    app.add_option("--fencing-pct", o.fencing_pct, "this share of the acquisitions fenced")
        ->check(CLI::Range(0, 100));
    app.add_flag("--volatile-masters", o.volatile_masters, "no persistence even with fencing");
    app.add_flag("--kinds", o.kinds,
                 "every kind of lock: resource i is a mutex (plain, fenced, or with another in "
                 "one multi-resource lock) if i % 3 is 0, a read-write lock (readers, writers, "
                 "fenced writers) if 1, a semaphore if 2; masters persistent as with --fencing");
    app.add_option("--permits", o.permits, "the semaphores' permits with --kinds")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    app.add_flag("--keep-ledger", o.keep_ledger, "keep the ledgers' directory");
    app.add_flag(
        "--require-takeovers", o.require_takeovers,
        "fail unless some holder overran its validity and another then took the resource (the "
        "take-over-after-expiry path was exercised)");
    app.add_flag("--self-test", o.self_test,
                 "run the checker on synthetic ledgers with known answers");
    // Worker mode: set by the parent when it starts a worker process.
    app.add_option("--worker", o.worker)->group("");
    app.add_option("--until", o.until)->group("");
    app.add_option("--ledger", o.ledger)->group("");
    app.add_option("--uris", o.uris)->delimiter(',')->group("");
    redlock::cli::parse_or_exit(app, argc, argv);
    return o;
}

// ---- Worker processes ------------------------------------------------------------------------

/// The worker processes, killed and reaped by PID on every way out of the parent.
class worker_set
{
public:
    worker_set() = default;
    worker_set(const worker_set&) = delete;
    worker_set& operator=(const worker_set&) = delete;
    ~worker_set() { kill_all(); }

    void spawn(const std::vector<std::string>& args)
    {
        // Everything the child needs is prepared before fork: between fork and exec it may only
        // make async-signal-safe calls (the parent has threads: the proxies').
        std::vector<char*> argv;
        for (const auto& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid < 0)
            throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        if (pid == 0)
        {
            // Dies with the parent, whatever kills it; and not at all if it is already gone.
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent)
                ::_exit(1);
            // Asio's sockets are not close-on-exec: a worker holding a copy of a proxy's socket
            // would keep "cut" connections open. Keep only stdin, stdout, stderr.
            if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
                for (int fd = 3; fd < 65536; ++fd)
                    ::close(fd);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        pids_.push_back(pid);
        status_.push_back(std::nullopt);
    }

    /// Reaps the workers that have exited; returns how many are still running.
    std::size_t poll()
    {
        std::size_t running = 0;
        for (std::size_t i = 0; i < pids_.size(); ++i)
        {
            if (status_[i])
                continue;
            int st = 0;
            const pid_t r = ::waitpid(pids_[i], &st, WNOHANG);
            if (r == pids_[i])
                status_[i] = st;
            else
                ++running;
        }
        return running;
    }

    /// The first worker that exited unsuccessfully, described.
    std::optional<std::string> failed() const
    {
        for (std::size_t i = 0; i < pids_.size(); ++i)
            if (status_[i] && !(WIFEXITED(*status_[i]) && WEXITSTATUS(*status_[i]) == 0))
                return "worker " + std::to_string(i) + " (pid " + std::to_string(pids_[i]) + ") " +
                       (WIFEXITED(*status_[i])
                            ? "exited with status " + std::to_string(WEXITSTATUS(*status_[i]))
                            : "was killed by signal " + std::to_string(WTERMSIG(*status_[i])));
        return std::nullopt;
    }

    void kill_all() noexcept
    {
        for (std::size_t i = 0; i < pids_.size(); ++i)
            if (!status_[i])
            {
                ::kill(pids_[i], SIGKILL);
                int st = 0;
                while (::waitpid(pids_[i], &st, 0) < 0 && errno == EINTR)
                {}
                status_[i] = st;
            }
    }

private:
    std::vector<pid_t> pids_;
    std::vector<std::optional<int>> status_;
};

std::string self_exe()
{
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
    return p.string();
}

// ---- Leftover keys ---------------------------------------------------------------------------

/// Reads the simple RESP2 replies of SCAN, GET and PTTL.
struct resp_reader
{
    std::string_view s;

    std::string_view line()
    {
        const auto eol = s.find("\r\n");
        if (eol == std::string_view::npos)
            throw std::runtime_error("truncated reply");
        auto l = s.substr(0, eol);
        s.remove_prefix(eol + 2);
        return l;
    }
    long long integer(char prefix)
    {
        const auto l = line();
        if (l.empty() || l[0] != prefix)
            throw std::runtime_error("unexpected reply type '" + std::string(l) + "'");
        long long v = 0;
        const auto digits = l.substr(1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (ec != std::errc() || end != digits.data() + digits.size())
            throw std::runtime_error("malformed integer in reply '" + std::string(l) + "'");
        return v;
    }
    std::optional<std::string> bulk()
    {
        const auto len = integer('$');
        if (len < 0)
            return std::nullopt;
        auto v = std::string(s.substr(0, static_cast<std::size_t>(len)));
        s.remove_prefix(static_cast<std::size_t>(len) + 2);
        return v;
    }
};

struct leftover
{
    std::size_t master;
    std::string key;
    std::string value;
    long long pttl;
};

std::vector<leftover> scan_leftovers(const redlock::test::local_masters& m)
{
    std::vector<leftover> out;
    for (std::size_t i = 0; i < m.size(); ++i)
    {
        std::string cursor = "0";
        do
        {
            const std::string raw =
                m.command(i, {"SCAN", cursor, "MATCH", "torture:*", "COUNT", "1000"});
            resp_reader r{raw};
            if (r.integer('*') != 2)
                throw std::runtime_error("SCAN: unexpected reply");
            cursor = r.bulk().value_or("0");
            const auto n = r.integer('*');
            for (long long k = 0; k < n; ++k)
                out.push_back({i, r.bulk().value_or(""), {}, 0});
        } while (cursor != "0");
    }
    for (auto& l : out)
    {
        const std::string v = m.command(l.master, {"GET", l.key});
        resp_reader gv{v};
        l.value = gv.bulk().value_or("(gone)");
        const std::string p = m.command(l.master, {"PTTL", l.key});
        resp_reader pr{p};
        l.pttl = pr.integer(':');
    }
    return out;
}

// ---- Figures ---------------------------------------------------------------------------------

std::string error_name(rt::error_domain d, std::int32_t v)
{
    using redlock::error;
    if (d == rt::error_domain::none)
        return "ok";
    if (d == rt::error_domain::other)
        return v == boost::asio::error::operation_aborted ? "operation_aborted"
                                                          : "system:" + std::to_string(v);
    switch (static_cast<error>(v))
    {
    case error::contended: return "contended";
    case error::no_quorum: return "no_quorum";
    case error::validity_expired: return "validity_expired";
    case error::lock_lost: return "lock_lost";
    case error::connection_closed: return "connection_closed";
    case error::invalid_argument: return "invalid_argument";
    case error::invalid_option: return "invalid_option";
    default: return redlock::make_error_code(static_cast<error>(v)).message();
    }
}

std::string counts_text(const std::map<std::string, std::size_t>& m)
{
    std::string s;
    for (const auto& [k, v] : m)
        s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
    return s.empty() ? "none" : s;
}

double ms_of(nanos n) { return static_cast<double>(n) / 1e6; }

struct latency
{
    std::vector<nanos> v;
    std::string text()
    {
        if (v.empty())
            return "n/a";
        std::sort(v.begin(), v.end());
        auto pct = [&](double p) {
            return v[std::min(v.size() - 1,
                              static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size())))];
        };
        char buf[128];
        std::snprintf(buf, sizeof buf, "p50 %.2f ms, p99 %.2f ms, max %.2f ms", ms_of(pct(50)),
                      ms_of(pct(99)), ms_of(v.back()));
        return buf;
    }
};

/// The longest an operation may take by its options (the library's defaults but for the TTL).
nanos attempt_ns(int ttl_ms)
{
    return std::clamp<nanos>(static_cast<nanos>(ttl_ms) / 20, 10, 200) * 1'000'000;
}
constexpr nanos release_ns = 200'000'000;
constexpr nanos retry_max_ns = (50 + 150) * 1'000'000;
nanos lock_bound(const rt::record& r)
{
    const int attempts = (r.flags & rt::flag_try_lock) ? 1 : 3;
    return attempts * (attempt_ns(r.ttl_ms) + release_ns) + (attempts - 1) * retry_max_ns;
}

// ---- The parent ------------------------------------------------------------------------------

int run_parent(const options& o, int argc, char** argv)
{
    const std::uint64_t seed = o.seed ? *o.seed : std::random_device{}();
    const int max_ttl = *std::max_element(o.ttls.begin(), o.ttls.end());
    const auto duration = std::chrono::seconds(o.duration_s);
    // The last stretch has no faults, so that every key left on a master at the end is a leak:
    // keys set before it have expired (largest TTL), and the clients have reconnected.
    const auto quiet = std::min<steady::duration>(
        duration, std::max<steady::duration>(5s, std::chrono::milliseconds(2 * max_ttl + 1000)));

    std::string command = "redlock-torture";
    for (int i = 1; i < argc; ++i)
        command += std::string(" ") + argv[i];
    std::string ttl_text;
    for (int t : o.ttls)
        ttl_text += (ttl_text.empty() ? "" : "/") + std::to_string(t);
    std::printf("%s\n", command.c_str());
    std::printf(
        "  %d masters, each behind a fault proxy; %d processes x %d workers on %d resources;\n"
        "  TTLs %s ms; %d s (faults for the first %.1f s); seed %llu%s\n",
        o.masters, o.processes, o.workers, o.resources, ttl_text.c_str(), o.duration_s,
        std::chrono::duration<double>(duration - quiet).count(),
        static_cast<unsigned long long>(seed),
        o.unsafe_restarts ? "\n  UNSAFE: majorities restarted at once (overlaps expected)" : "");
    if (o.kinds)
        std::printf("  every kind: resources %% 3 = 0 mutexes (plain, fenced, multi-resource), 1 "
                    "read-write locks, 2 semaphores of %d permits; masters %s\n",
                    o.permits,
                    o.volatile_masters ? "WITHOUT persistence"
                                       : "persistent (appendonly, fsync always)");
    else if (o.fencing_pct > 0)
        std::printf("  fencing: %d%% of the acquisitions fenced; masters %s\n", o.fencing_pct,
                    o.volatile_masters
                        ? "WITHOUT persistence (fencing violations possible after a kill)"
                        : "persistent (appendonly, fsync always)");
    std::fflush(stdout);

    const auto t_setup = steady::now();
    // Fencing orders holders only while the masters keep their fence counters: with --fencing
    // they persist every write (a killed master restarts with its counters), as the spec's
    // fsync=always setting.
    redlock::test::local_masters::options mopts{.count = static_cast<std::size_t>(o.masters)};
    if ((o.fencing_pct > 0 || o.kinds) && !o.volatile_masters)
        mopts.extra_config = {"appendonly yes", "appendfsync always"};
    redlock::test::local_masters masters(mopts);
    std::vector<std::unique_ptr<redlock::test::fault_proxy>> proxies;
    std::string uris;
    for (int i = 0; i < o.masters; ++i)
    {
        proxies.push_back(std::make_unique<redlock::test::fault_proxy>(
            masters.port(static_cast<std::size_t>(i))));
        uris += (uris.empty() ? "" : ",") + proxies.back()->uri();
    }
    // A fresh directory for the ledgers, removed at the end unless kept.
    redlock::test::temp_dir dir("redlock-torture-");
    dir.keep(o.keep_ledger);

    const auto t_begin = steady::now();
    const auto until = t_begin + duration;
    const auto fault_end = until - quiet;
    const nanos until_ns = rt::to_ns(until);

    worker_set workers;
    const std::string exe = self_exe();
    std::vector<std::string> ledgers;
    for (int p = 0; p < o.processes; ++p)
    {
        ledgers.push_back((dir.path() / ("worker-" + std::to_string(p) + ".ledger")).string());
        std::vector<std::string> args{exe,
                                      "--worker",
                                      std::to_string(p),
                                      "--until",
                                      std::to_string(until_ns),
                                      "--ledger",
                                      ledgers.back(),
                                      "--uris",
                                      uris,
                                      "--workers",
                                      std::to_string(o.workers),
                                      "--resources",
                                      std::to_string(o.resources),
                                      "--ttls",
                                      [&] {
                                          std::string s;
                                          for (int t : o.ttls)
                                              s += (s.empty() ? "" : ",") + std::to_string(t);
                                          return s;
                                      }(),
                                      "--seed",
                                      std::to_string(seed),
                                      "--try-pct",
                                      std::to_string(o.try_pct),
                                      "--extend-pct",
                                      std::to_string(o.extend_pct),
                                      "--overrun-pct",
                                      std::to_string(o.overrun_pct),
                                      "--hold-max",
                                      std::to_string(o.hold_max_ms),
                                      "--fencing-pct",
                                      std::to_string(o.fencing_pct),
                                      "--permits",
                                      std::to_string(o.permits)};
        if (o.unsafe_restarts)
            args.push_back("--unsafe-restarts");
        if (o.kinds)
            args.push_back("--kinds");
        workers.spawn(args);
    }

    rt::fault_schedule faults(masters, proxies,
                              {.max_impaired = static_cast<std::size_t>((o.masters - 1) / 2),
                               .max_ttl = std::chrono::milliseconds(max_ttl),
                               .unsafe_restarts = o.unsafe_restarts,
                               .verbose = o.verbose,
                               .seed = seed});

    auto abort_run = [&](const std::string& why) {
        std::printf("FAILED: %s\n", why.c_str());
        workers.kill_all();
        return 2;
    };

    while (steady::now() < fault_end && !interrupted)
    {
        faults.step(steady::now());
        workers.poll();
        if (auto f = workers.failed())
            return abort_run(*f);
        std::this_thread::sleep_for(5ms);
    }
    faults.heal_all();
    // Every operation has a deadline: a worker still running long after the end has hung.
    const auto hard_stop = until + 75s;
    while (workers.poll() > 0 && steady::now() < hard_stop && !interrupted)
        std::this_thread::sleep_for(20ms);
    if (interrupted)
        return abort_run("interrupted");
    if (workers.poll() > 0)
        return abort_run("workers still running 75 s after the end (hang)");
    if (auto f = workers.failed())
        return abort_run(*f);
    const double run_s = std::chrono::duration<double>(steady::now() - t_begin).count();

    // ---- Check -------------------------------------------------------------------------------
    std::vector<rt::record> records;
    for (const auto& l : ledgers)
    {
        auto part = rt::read_ledger(l);
        records.insert(records.end(), part.begin(), part.end());
    }
    const auto result = rt::check(records);
    const auto left = scan_leftovers(masters);

    std::size_t by_lock = 0, by_try = 0, overran = 0, late_ops = 0, hung_ops = 0;
    std::map<std::string, std::size_t> failures, extend_out, unlock_out, unlock_in_validity;
    latency lock_ok, lock_failed, unlock_lat, extend_lat;
    nanos worst_excess = 0;
    nanos worst_lag = 0;
    for (const auto& r : records)
    {
        if (r.kind == rt::record_kind::stats)
        {
            worst_lag = std::max(worst_lag, r.t_start);
            continue;
        }
        if (r.flags & rt::flag_further_resource)
            continue;  // a multi-resource lock's acquisition is counted by its first record
        const nanos took = r.t_acquired - r.t_start;
        const nanos excess = took - lock_bound(r);
        worst_excess = std::max(worst_excess, excess);
        late_ops += excess > 250'000'000 ? 1 : 0;
        hung_ops += excess > 5'000'000'000 ? 1 : 0;
        if (r.kind == rt::record_kind::failure)
        {
            ++failures[error_name(r.acquire_domain, r.acquire_error) +
                       ((r.flags & rt::flag_try_lock) ? " (try)" : "")];
            lock_failed.v.push_back(took);
            continue;
        }
        lock_ok.v.push_back(took);
        ((r.flags & rt::flag_try_lock) ? by_try : by_lock) += 1;
        overran += (r.flags & rt::flag_overran) ? 1 : 0;
        if (r.flags & rt::flag_extend_tried)
        {
            ++extend_out[error_name(r.extend_domain, r.extend_error)];
            extend_lat.v.push_back(r.t_extend_done - r.t_extend);
        }
        if (r.flags & rt::flag_unlock_called)
        {
            const auto name = error_name(r.unlock_domain, r.unlock_error);
            ++unlock_out[name];
            const nanos end = (r.flags & rt::flag_extend_ok) ? r.valid_until_ext : r.valid_until;
            if (r.t_release < end)
                ++unlock_in_validity[name];
            unlock_lat.v.push_back(r.t_released - r.t_release);
            const nanos uexcess = r.t_released - r.t_release - release_ns;
            worst_excess = std::max(worst_excess, uexcess);
            late_ops += uexcess > 250'000'000 ? 1 : 0;
            hung_ops += uexcess > 5'000'000'000 ? 1 : 0;
        }
    }

    std::string fault_text;
    for (std::size_t k = 0; k < rt::fault_kinds; ++k)
        if (faults.injected()[k] > 0)
            fault_text += (fault_text.empty() ? "" : ", ") +
                          std::string(rt::to_string(static_cast<rt::fault_kind>(k))) + " " +
                          std::to_string(faults.injected()[k]);

    std::printf("\nrun: %.1f s (+%.1f s to start %d masters and %d proxies)\n", run_s,
                std::chrono::duration<double>(t_begin - t_setup).count(), o.masters, o.masters);
    std::printf("faults injected: %zu (%s); at most %zu of %d masters impaired at once",
                faults.total_injected(), fault_text.empty() ? "none" : fault_text.c_str(),
                faults.max_impaired_seen(), o.masters);
    if (faults.min_downtime().count() >= 0)
        std::printf("; killed masters down >= %lld ms (largest TTL %d ms)",
                    static_cast<long long>(faults.min_downtime().count()), max_ttl);
    std::printf("\n");
    std::printf("acquisitions: %zu (async_lock %zu, async_try_lock %zu); %zu holders overran their "
                "validity on purpose\n",
                result.holds, by_lock, by_try, overran);
    std::printf("failed acquisitions: %zu (%s)\n", result.failures, counts_text(failures).c_str());
    std::printf("extensions: %s\n", counts_text(extend_out).c_str());
    std::printf("unlocks: %s; of which before the end of validity: %s\n",
                counts_text(unlock_out).c_str(), counts_text(unlock_in_validity).c_str());
    std::printf("latency: acquired %s; failed %s; unlock %s; extend %s\n", lock_ok.text().c_str(),
                lock_failed.text().c_str(), unlock_lat.text().c_str(), extend_lat.text().c_str());
    std::printf("operations over their deadline bound by > 250 ms: %zu (worst excess %.1f ms); "
                "hung (> 5 s): %zu;\n"
                "         worst event-loop lag of a worker: %.1f ms\n",
                late_ops, ms_of(std::max<nanos>(worst_excess, 0)), hung_ops, ms_of(worst_lag));
    std::printf("checker: overlaps %zu; validity errors %zu; order errors %zu; holds completed "
                "after their validity %zu;\n"
                "         takeovers after a holder's validity ended (holder still working) %zu; "
                "tightest handover %.3f ms;\n"
                "         overlaps if a failed extension were kept until reported: %zu\n",
                result.overlaps, result.validity_errors, result.order_errors, result.empty_holds,
                result.expiry_takeovers, result.min_gap < 0 ? 0.0 : ms_of(result.min_gap),
                result.overlaps_if_failed_extend_kept);
    if (o.kinds)
    {
        std::string by_kind;
        for (std::size_t k = 0; k < result.holds_by_kind.size(); ++k)
            by_kind += (by_kind.empty() ? "" : ", ") +
                       std::string(rt::to_string(static_cast<rt::held_kind>(k))) + " " +
                       std::to_string(result.holds_by_kind[k]);
        std::printf("kinds: acquisitions %s; permits beyond a semaphore's number %zu\n",
                    by_kind.c_str(), result.excess_permits);
        std::string overlaps_by_kind;
        for (std::size_t k = 0; k < result.overlaps_by_kind.size(); ++k)
            overlaps_by_kind += std::string(overlaps_by_kind.empty() ? "" : ", ") +
                                rt::to_string(static_cast<rt::held_kind>(k)) + " " +
                                std::to_string(result.overlaps_by_kind[k]);
        std::printf("kinds: overlaps (a pair of two kinds counts for both; a permit too many for "
                    "permit) %s\n",
                    overlaps_by_kind.c_str());
    }
    if (result.fenced_holds > 0)
        std::printf("fencing: %zu fenced holds; tokens not above an earlier holder's %zu; tokens "
                    "repeated %zu\n",
                    result.fenced_holds, result.fencing_order_errors, result.fencing_repeats);
    for (const auto& d : result.details)
        std::printf("    %s\n", d.c_str());
    std::printf("leftover keys: %zu (SCAN of all %d masters after every worker finished)\n",
                left.size(), o.masters);
    for (std::size_t k = 0; k < left.size() && k < 20; ++k)
        std::printf("    master %zu: %s = %s, pttl %lld ms\n", left[k].master, left[k].key.c_str(),
                    left[k].value.c_str(), left[k].pttl);
    if (o.keep_ledger)
        std::printf("ledgers kept in %s\n", dir.path().c_str());

    const bool exercised = !o.require_takeovers || (overran > 0 && result.expiry_takeovers > 0);
    if (!exercised)
        std::printf("the take-over after a holder's validity ended was never exercised "
                    "(--require-takeovers)\n");
    // With --kinds, a run passes only if it took every kind (and so checked each one's rule).
    bool every_kind = true;
    if (o.kinds)
        for (std::size_t k = 0; k < result.holds_by_kind.size(); ++k)
            if (result.holds_by_kind[k] == 0)
            {
                every_kind = false;
                std::printf("no %s was acquired (--kinds needs at least 4 resources)\n",
                            rt::to_string(static_cast<rt::held_kind>(k)));
            }
    const bool pass =
        result.ok() && left.empty() && hung_ops == 0 && result.holds > 0 && exercised && every_kind;
    std::printf("result: %s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    const options o = parse(argc, argv);
    if (o.worker)
        return rt::run_worker({.process = *o.worker,
                               .workers = o.workers,
                               .resources = o.resources,
                               .masters = o.uris,
                               .ttls_ms = o.ttls,
                               .until = o.until,
                               .ledger = o.ledger,
                               .seed = o.seed.value_or(1),
                               .try_lock_pct = o.try_pct,
                               .extend_pct = o.extend_pct,
                               .overrun_pct = o.overrun_pct,
                               .hold_max_ms = o.hold_max_ms,
                               .fencing_pct = o.fencing_pct,
                               .kinds = o.kinds,
                               .permits = o.permits,
                               .no_quarantine = o.unsafe_restarts});
    if (o.self_test)
    {
        const auto failures = rt::self_test();
        for (const auto& f : failures)
            std::printf("checker self-test FAILED: %s\n", f.c_str());
        std::printf("checker self-test: %s\n", failures.empty() ? "PASS" : "FAIL");
        return failures.empty() ? 0 : 1;
    }
    struct sigaction sa
    {};
    sa.sa_handler = on_signal;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    try
    {
        return run_parent(o, argc, argv);
    }
    catch (const std::exception& e)
    {
        std::printf("FAILED: %s\n", e.what());
        return 2;
    }
}
