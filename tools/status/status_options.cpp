// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "status_options.hpp"

#include "parse_args.hpp"

#include <CLI/CLI.hpp>

namespace redlock::status {

namespace {

constexpr const char* description =
    R"(Usage: redlock-status [OPTIONS] RESOURCE

Prints who holds RESOURCE, as a majority of the masters sees it: the holder's identity (what
it published with redlock-run --identity or lock_options::identity), its own fencing token
if it took one (once its commit is on the masters read), how long a majority still holds it;
then what each master holds and its fence counter (never a token). With --watch, prints a
line each time the holders change, as the masters report it (client tracking), reading them
again at least every --interval, until interrupted.

Masters, password and TLS: as redlock-run (--master URI, --masters-file, $REDLOCK_MASTERS,
/etc/redlock/masters; --password-file or $REDLOCK_PASSWORD). Durations: 500ms, 2s, 1.5m.

Exit status: 0 held; 1 free; 69 fewer than a majority of the masters answered; 64 bad
arguments or no masters given; 78 bad masters in a file or $REDLOCK_MASTERS, unreadable files;
70 an unexpected failure. With --watch: 0 once interrupted. See docs/cli.md.)";

parse_result fail(int code, std::string message)
{
    return cli::failed<status_options>("redlock-status", code, std::move(message));
}

}  // namespace

parse_result parse_status_options(const std::vector<std::string>& args, const cli::environment& env)
{
    status_options o;
    CLI::App app{description, "redlock-status"};
    app.set_version_flag("--version", "redlock-status " REDLOCK_STATUS_VERSION);
    app.get_formatter()->column_width(30);
    cli::masters_flags masters;
    std::string timeout = "500ms", interval = "1s", ttl = "30s";
    app.add_option("RESOURCE", o.resource, "The lock's name (the Redis key).")->required();
    app.add_option("--permits", o.permits,
                   "Read a counting semaphore of N permits (as redlock-run --permits N).")
        ->check(CLI::Range(1, 1024))
        ->type_name("N")
        ->capture_default_str();
    app.add_option("--timeout", timeout, "How long the masters have to answer.")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_option("--ttl", ttl,
                   "The TTL the holders take the lock with (redlock-run --ttl): its drift "
                   "allowance is subtracted from the validity shown.")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_flag("--watch", o.watch, "Print each change of the holders until interrupted.");
    app.add_option(
           "--interval", interval,
           "--watch: read the masters at least this often (changes are pushed by the masters).")
        ->type_name("DURATION")
        ->capture_default_str();
    cli::add_masters_flags(app, masters, o.tls);
    if (auto stop = cli::stop_after<status_options>(
            cli::parse_args(app, args), "redlock-status", exit_status::usage,
            "one RESOURCE: usage: redlock-status [OPTIONS] RESOURCE"))
        return std::move(*stop);
    if (o.resource.empty())
        return fail(exit_status::usage, "RESOURCE is empty");
    for (auto [name, text, out] :
         {std::tuple{"--timeout", &timeout, &o.timeout},
          std::tuple{"--interval", &interval, &o.interval}, std::tuple{"--ttl", &ttl, &o.ttl}})
    {
        const auto d = cli::parse_duration(*text);
        if (!d)
            return fail(exit_status::usage, std::string(name) + ": \"" + *text +
                                                "\" is not a duration (500ms, 2s, 1.5m)");
        if (d->count() == 0)
            return fail(exit_status::usage, std::string(name) + " must be more than 0");
        *out = *d;
    }
    if (auto failed = cli::resolve_masters(masters, env, o))
        return fail(failed->exit_code, std::move(failed->message));
    const auto lo = read_options(o);
    return cli::accepted_unless_refused("redlock-status", std::move(o), lo, exit_status::usage);
}

lock_options read_options(const status_options& o)
{
    lock_options lo;
    lo.permits = o.permits;
    lo.attempt_timeout = o.timeout;
    lo.ttl = o.ttl;
    return lo;
}

}  // namespace redlock::status
