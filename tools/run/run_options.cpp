// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "run_options.hpp"

#include "parse_args.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace redlock::run {

namespace {

constexpr const char* usage_line = "Usage: redlock-run [OPTIONS] RESOURCE -- COMMAND [ARG...]";

constexpr const char* description =
    R"(Runs COMMAND while holding a Redlock lock on RESOURCE across the masters, as flock(1)
does on one machine: the lock is kept alive while COMMAND runs and released when it exits;
redlock-run exits with COMMAND's status. If the lock is lost meanwhile, COMMAND's process
group gets SIGTERM at once and SIGKILL after --kill-after (always before the keys expire).

Masters: --master URI (repeatable), else --masters-file FILE, else $REDLOCK_MASTERS (URIs
separated by commas or spaces; a redis-cluster:// URI keeps its comma-separated seeds), else /etc/redlock/masters (one URI per line, # comments).
A password is never given on the command line: use --password-file, $REDLOCK_PASSWORD, or
URIs in $REDLOCK_MASTERS or a masters file.

Durations: 30s, 500ms, 1.5m, 2h, or a bare number of seconds.

Masters are numbered from 0, in the order given, in every message (as in the lock's diagnostics).

Exit status: COMMAND's (128+N if it was killed by signal N); 64 bad arguments or no masters
given; 69 no quorum of masters; 75 the lock is held by someone else (--conflict-exit-code); 78
bad masters in a file or $REDLOCK_MASTERS, unreadable files; 70 an unexpected failure of
redlock-run; 79 the lock was lost while COMMAND ran; 126/127 COMMAND not executable /
not found; 128+N a signal N while acquiring (COMMAND did not run). See docs/cli.md.)";

// CLI11's usage line knows nothing of "-- COMMAND": ours comes first, above the description.
class run_formatter : public CLI::Formatter
{
public:
    std::string make_description(const CLI::App* app) const override
    {
        return std::string(usage_line) + "\n\n" + CLI::Formatter::make_description(app) + "\n";
    }
    std::string make_usage(const CLI::App*, std::string) const override { return {}; }
};

parse_result fail(int code, std::string message)
{
    return cli::failed<run_options>("redlock-run", code, std::move(message));
}

}  // namespace

parse_result parse_run_options(const std::vector<std::string>& args, const run_environment& env)
{
    // Everything after the first "--" is COMMAND, taken as it is; CLI11 sees what comes before.
    std::vector<std::string> ours;
    run_options o;
    bool has_separator = false;
    for (std::size_t i = 0; i < args.size(); ++i)
    {
        if (args[i] == "--")
        {
            has_separator = true;
            o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        ours.push_back(args[i]);
    }

    CLI::App app{description, "redlock-run"};
    app.set_version_flag("--version", "redlock-run " REDLOCK_RUN_VERSION);
    app.formatter(std::make_shared<run_formatter>());
    app.get_formatter()->column_width(30);

    cli::masters_flags masters;
    std::string ttl = "30s", wait = "0", kill_after = "5s", max_hold = "0";

    app.add_option("RESOURCE", o.resource, "The lock's name (the Redis key).")->required();
    app.add_option("--ttl", ttl, "The keys' TTL; extended while COMMAND runs.")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_option("--wait", wait,
                   "How long to wait for a held lock, woken by its release; 0: give up at once.")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_option("--conflict-exit-code", o.conflict_exit_code,
                   "The status when the lock is held.")
        ->check(CLI::Range(0, 255))
        ->capture_default_str();
    app.add_option("--kill-after", kill_after,
                   "After losing the lock: SIGKILL this long after SIGTERM (sooner if the keys "
                   "expire sooner).")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_option("--max-hold", max_hold, "Stop extending after this long; 0: no limit.")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_flag("--fencing", o.fencing, "Take a fenced lock; COMMAND gets REDLOCK_FENCING_TOKEN.");
    app.add_option("--permits", o.permits,
                   "Run COMMAND while fewer than N others run it (a counting semaphore of N "
                   "permits, as consul lock -n N); every runner of RESOURCE must give the same N.")
        ->check(CLI::Range(1, 1024))
        ->type_name("N")
        ->capture_default_str();
    app.add_flag("--shared", o.shared,
                 "Take RESOURCE as a reader (as flock -s): COMMAND runs beside other --shared "
                 "runs, never beside a run without it.");
    app.add_option("--identity", o.identity,
                   "Publish TEXT as the holder's identity in the keys, for anyone to read (1 to "
                   "128 printable ASCII characters, e.g. host:pid); COMMAND gets "
                   "REDLOCK_IDENTITY.")
        ->type_name("TEXT");
    app.add_option(
           "--cluster-replica-acks", o.cluster_replica_acks,
           "redis-cluster:// masters: count an answer once this many replicas have it (WAIT).")
        ->check(CLI::Range(0, 16))
        ->type_name("N")
        ->capture_default_str();
    app.add_flag(
        "-v,--verbose", o.verbose,
        "Tell on stderr: acquisition (validity, each master), extensions, degradation, loss.");
    app.add_flag("-q,--quiet", o.quiet,
                 "No conflict line, no warning about masters that can lose lock keys (for cron; "
                 "--verbose shows them).");
    cli::add_masters_flags(app, masters, o.tls);

    if (auto stop = cli::stop_after<run_options>(
            cli::parse_args(app, ours), "redlock-run", exit_status::usage,
            "one RESOURCE, then -- and COMMAND: usage: redlock-run [OPTIONS] RESOURCE -- "
            "COMMAND [ARG...]"))
        return std::move(*stop);
    if (!has_separator || o.command.empty())
        return fail(exit_status::usage,
                    "no COMMAND: usage: redlock-run [OPTIONS] RESOURCE -- COMMAND [ARG...]");
    if (o.resource.empty())
        return fail(exit_status::usage, "RESOURCE is empty");

    struct duration_field
    {
        const char* name;
        const std::string& text;
        std::chrono::milliseconds& out;
        bool may_be_zero;
    };
    for (auto f :
         {duration_field{"--ttl", ttl, o.ttl, false}, duration_field{"--wait", wait, o.wait, true},
          duration_field{"--kill-after", kill_after, o.kill_after, true},
          duration_field{"--max-hold", max_hold, o.max_hold, true}})
    {
        auto d = parse_duration(f.text);
        if (!d)
            return fail(exit_status::usage,
                        std::string(f.name) + ": \"" + f.text +
                            "\" is not a duration (30s, 500ms, 1.5m, 2h, or seconds)");
        if (!f.may_be_zero && d->count() == 0)
            return fail(exit_status::usage, std::string(f.name) + " must be more than 0");
        f.out = *d;
    }
    if (o.permits > 1 && o.fencing)
        return fail(exit_status::usage, "--fencing is for a mutex: not with --permits");
    if (o.shared && (o.permits > 1 || o.fencing))
        return fail(exit_status::usage, std::string("--shared takes a read-write lock's reader: "
                                                    "not with ") +
                                            (o.fencing ? "--fencing" : "--permits"));

    if (auto failed = cli::resolve_masters(masters, env, o))
        return fail(failed->exit_code, std::move(failed->message));

    if (o.cluster_replica_acks != 0 && !o.any_cluster)
        return fail(exit_status::usage, "--cluster-replica-acks applies to Redis Cluster masters "
                                        "(redis-cluster://, rediss-cluster://), and " +
                                            o.masters_source + " names none");

    // What the client would refuse, refused here with the client's own words.
    lock_options lo;
    lo.ttl = o.ttl;
    lo.wait = o.wait;
    lo.identity = o.identity;
    return cli::accepted_unless_refused("redlock-run", std::move(o), lo, exit_status::usage);
}

client_config make_client_config(const run_options& o)
{
    auto cfg = cli::masters_config(o, "redlock-run");
    cfg.defaults.ttl = o.ttl;
    cfg.defaults.wait = o.wait;
    cfg.defaults.fencing = o.fencing;
    cfg.defaults.permits = o.permits;
    cfg.defaults.role = o.shared ? lock_role::reader : lock_role::mutex;
    cfg.defaults.identity = o.identity;
    cfg.cluster_replica_acks = o.cluster_replica_acks;
    return cfg;
}

hold_options make_hold_options(const run_options& o)
{
    hold_options h;
    // Extend every third of the TTL: a lock taken over is noticed within that time.
    h.extend_before = o.ttl * 2 / 3;
    h.max_hold = o.max_hold;
    return h;
}

}  // namespace redlock::run
