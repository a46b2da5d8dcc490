// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "run_options.hpp"

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
    parse_result r;
    r.exit_code = code;
    r.message = "redlock-run: " + std::move(message);
    return r;
}

std::string trim(std::string_view s)
{
    auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return {};
    auto last = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(first, last - first + 1));
}

// URIs separated by commas or whitespace (REDLOCK_MASTERS). A cluster URI's seeds are
// separated by commas too: an item with no scheme right after a comma that follows a
// `redis-cluster://` or `rediss-cluster://` URI is its next seed.
std::vector<std::string> split_list(std::string_view text)
{
    const auto is_cluster_uri = [](std::string_view u) {
        const auto sep = u.find("://");
        if (sep == std::string_view::npos || sep < 8)
            return false;
        std::string tail(u.substr(sep - 8, 8));  // schemes are case-insensitive
        for (auto& ch : tail)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return tail == "-cluster";
    };
    std::vector<std::string> out;
    std::string item;
    bool after_comma = false;
    const auto end_item = [&] {
        if (item.empty())
            return;
        if (after_comma && !out.empty() && item.find("://") == std::string::npos &&
            is_cluster_uri(out.back()))
            out.back() += "," + item;
        else
            out.push_back(std::move(item));
        item.clear();
    };
    for (char c : text)
    {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')
        {
            // What separates the next item from the one before: a comma among the separators?
            const bool ended = !item.empty();
            end_item();
            after_comma = (!ended && after_comma) || c == ',';
        }
        else
        {
            item += c;
        }
    }
    end_item();
    return out;
}

// One URI per line; blank lines and lines starting with '#' are skipped.
std::vector<std::string> split_lines(std::string_view text)
{
    std::vector<std::string> out;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);)
    {
        auto t = trim(line);
        if (!t.empty() && t.front() != '#')
            out.push_back(std::move(t));
    }
    return out;
}

}  // namespace

run_environment run_environment::system()
{
    run_environment env;
    env.getenv = [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr)
            return std::nullopt;
        return std::string(v);
    };
    env.read_file = [](const std::string& path) -> std::optional<std::string> {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            return std::nullopt;
        std::ostringstream out;
        out << in.rdbuf();
        if (in.bad())
            return std::nullopt;
        return std::move(out).str();
    };
    return env;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text)
{
    // The number: digits with at most one decimal point.
    std::size_t n = 0;
    bool dot = false, digit = false;
    for (; n < text.size(); ++n)
    {
        char c = text[n];
        if (c >= '0' && c <= '9')
            digit = true;
        else if (c == '.' && !dot)
            dot = true;
        else
            break;
    }
    if (!digit)
        return std::nullopt;
    double value = 0;
    auto number = text.substr(0, n);
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc{} || end != number.data() + number.size())
        return std::nullopt;

    auto unit = text.substr(n);
    double ms_per_unit;
    if (unit.empty() || unit == "s")
        ms_per_unit = 1000;
    else if (unit == "ms")
        ms_per_unit = 1;
    else if (unit == "m")
        ms_per_unit = 60'000;
    else if (unit == "h")
        ms_per_unit = 3'600'000;
    else
        return std::nullopt;

    double ms = std::round(value * ms_per_unit);
    // Beyond a year is a typo, and keeps every later sum far from overflowing.
    if (!std::isfinite(ms) || ms > 365.0 * 24 * 3'600'000)
        return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

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

    std::vector<std::string> master_flags;
    std::string masters_file, password_file;
    std::string ttl = "30s", wait = "0", kill_after = "5s", max_hold = "0", connect_timeout = "2s";
    bool tls_insecure = false;

    app.add_option("RESOURCE", o.resource, "The lock's name (the Redis key).")->required();
    app.add_option("--master", master_flags,
                   "A master's URI: redis://, rediss://, unix://, redis-cluster://, "
                   "rediss-cluster:// (repeat for each).")
        ->type_name("URI")
        ->allow_extra_args(false);
    app.add_option("--masters-file", masters_file, "Master URIs, one per line (# comments).")
        ->type_name("FILE");
    app.add_option("--password-file", password_file,
                   "The masters' password (first line), for URIs without one.")
        ->type_name("FILE");
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
    app.add_option("--connect-timeout", connect_timeout, "Per master connection attempt.")
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
    app.add_option("--tls-ca-file", o.tls.ca_file, "Trusted CAs (PEM) for rediss:// masters.")
        ->type_name("FILE");
    app.add_option("--tls-ca-dir", o.tls.ca_dir, "Directory of hashed CA certificates.")
        ->type_name("DIR");
    app.add_option("--tls-cert-file", o.tls.cert_file, "Client certificate (PEM), mutual TLS.")
        ->type_name("FILE");
    app.add_option("--tls-key-file", o.tls.key_file, "Client private key (PEM), mutual TLS.")
        ->type_name("FILE");
    app.add_option("--tls-server-name", o.tls.server_name, "Name for SNI and verification.")
        ->type_name("NAME");
    app.add_flag("--tls-insecure", tls_insecure,
                 "Do not verify the masters' certificates (tests only).");

    try
    {
        // CLI11 wants its arguments in reverse order.
        std::vector<std::string> reversed(ours.rbegin(), ours.rend());
        app.parse(reversed);
    }
    catch (const CLI::CallForHelp&)
    {
        parse_result r;
        r.message = app.help();
        r.to_stdout = true;
        return r;
    }
    catch (const CLI::CallForVersion& e)
    {
        parse_result r;
        r.message = e.what();
        r.to_stdout = true;
        return r;
    }
    catch (const CLI::ExtrasError&)
    {
        // Not CLI11's message: it echoes the extra arguments, which may be anything (a URI with
        // a password). Unknown options are named up to their '='; a second RESOURCE is not.
        std::string unknown;
        for (const auto& a : app.remaining())
            if (a.size() > 1 && a.front() == '-')
                unknown += (unknown.empty() ? "" : ", ") + a.substr(0, a.find('='));
        if (!unknown.empty())
            return fail(exit_status::usage,
                        "unknown option " + unknown + "\n(see redlock-run --help)");
        return fail(exit_status::usage, "one RESOURCE, then -- and COMMAND: usage: redlock-run "
                                        "[OPTIONS] RESOURCE -- COMMAND [ARG...]");
    }
    catch (const CLI::ParseError& e)
    {
        // CLI11's messages name the option and echo the value it refused. The only option
        // that can carry a secret is --master, which is never echoed: it takes any string.
        return fail(exit_status::usage, std::string(e.what()) + "\n(see redlock-run --help)");
    }
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
          duration_field{"--max-hold", max_hold, o.max_hold, true},
          duration_field{"--connect-timeout", connect_timeout, o.connect_timeout, false}})
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
    o.tls.verify_peer = !tls_insecure;
    if (o.permits > 1 && o.fencing)
        return fail(exit_status::usage, "--fencing is for a mutex: not with --permits");
    if (o.shared && (o.permits > 1 || o.fencing))
        return fail(exit_status::usage, std::string("--shared takes a read-write lock's reader: "
                                                    "not with ") +
                                            (o.fencing ? "--fencing" : "--permits"));

    // The password: --password-file, else REDLOCK_PASSWORD.
    if (!password_file.empty())
    {
        auto text = env.read_file(password_file);
        if (!text)
            return fail(exit_status::config,
                        "--password-file " + password_file + ": " + std::strerror(errno));
        o.password = text->substr(0, text->find_first_of("\r\n"));
        if (o.password.empty())
            return fail(exit_status::config,
                        "--password-file " + password_file + ": the first line is empty");
    }
    else if (auto p = env.getenv("REDLOCK_PASSWORD"); p && !p->empty())
    {
        o.password = *p;
    }

    // The masters: --master, else --masters-file, else REDLOCK_MASTERS, else the default file.
    int bad_master_status = exit_status::config;
    if (!master_flags.empty())
    {
        o.masters = master_flags;
        o.masters_source = "--master";
        bad_master_status = exit_status::usage;
    }
    else if (!masters_file.empty())
    {
        auto text = env.read_file(masters_file);
        if (!text)
            return fail(exit_status::config,
                        "--masters-file " + masters_file + ": " + std::strerror(errno));
        o.masters = split_lines(*text);
        o.masters_source = "--masters-file " + masters_file;
    }
    else if (auto m = env.getenv("REDLOCK_MASTERS"); m && !trim(*m).empty())
    {
        o.masters = split_list(*m);
        o.masters_source = "REDLOCK_MASTERS";
    }
    else if (auto text = env.read_file(env.default_masters_file))
    {
        o.masters = split_lines(*text);
        o.masters_source = env.default_masters_file;
    }
    else if (const int error = errno; error != ENOENT && error != ENOTDIR)
    {
        // It exists (e.g. root's 0600 file, read by another user): say why it cannot be used.
        return fail(exit_status::config, env.default_masters_file + ": " + std::strerror(error));
    }
    else
    {
        return fail(exit_status::usage,
                    "no masters: give --master URI (one per master), --masters-file, "
                    "REDLOCK_MASTERS, or " +
                        env.default_masters_file);
    }
    if (o.masters.empty())
        return fail(exit_status::config, o.masters_source + " names no master");

    bool any_cluster = false;
    for (std::size_t i = 0; i < o.masters.size(); ++i)
    {
        error_code ec;
        std::string why;
        auto m = parse_master_uri(o.masters[i], ec, why);
        if (ec)
            return fail(bad_master_status,
                        o.masters_source + ": master " + std::to_string(i) + ": " + why);
        any_cluster = any_cluster || m.is_cluster();
        if (!m.password.empty() && o.masters_source == "--master")
            return fail(
                exit_status::usage,
                "--master " + m.to_string() +
                    ": a password on the command line is visible to every user of the machine "
                    "(ps); give it with --password-file or REDLOCK_PASSWORD, or put the URIs in "
                    "REDLOCK_MASTERS or a masters file");
    }

    if (o.cluster_replica_acks != 0 && !any_cluster)
        return fail(exit_status::usage, "--cluster-replica-acks applies to Redis Cluster masters "
                                        "(redis-cluster://, rediss-cluster://), and " +
                                            o.masters_source + " names none");

    // What the client would refuse, refused here with the client's own words.
    error_code ec;
    std::string why;
    lock_options lo;
    lo.ttl = o.ttl;
    lo.wait = o.wait;
    lo.identity = o.identity;
    validate(lo, ec, why);
    if (ec)
        return fail(exit_status::usage, why);

    parse_result r;
    r.options = std::move(o);
    return r;
}

client_config make_client_config(const run_options& o)
{
    client_config cfg;
    for (const auto& uri : o.masters)
    {
        auto m = parse_master_uri(uri);
        if (m.password.empty() && !o.password.empty())
            m.password = o.password;
        if (m.transport == master_config::transport_kind::tls)
            m.tls = o.tls;
        cfg.master_configs.push_back(std::move(m));
    }
    cfg.connection.client_name = "redlock-run";
    cfg.connection.connect_timeout = o.connect_timeout;
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
