// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "masters_options.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace redlock::cli {

namespace {

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

failure fail(int code, std::string message) { return failure{code, std::move(message)}; }

}  // namespace

environment environment::system()
{
    environment env;
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

void add_masters_flags(CLI::App& app, masters_flags& flags, tls_options& tls)
{
    app.add_option("--master", flags.master,
                   "A master's URI: redis://, rediss://, unix://, redis-cluster://, "
                   "rediss-cluster:// (repeat for each).")
        ->type_name("URI")
        ->allow_extra_args(false);
    app.add_option("--masters-file", flags.masters_file, "Master URIs, one per line (# comments).")
        ->type_name("FILE");
    app.add_option("--password-file", flags.password_file,
                   "The masters' password (first line), for URIs without one.")
        ->type_name("FILE");
    app.add_option("--connect-timeout", flags.connect_timeout, "Per master connection attempt.")
        ->type_name("DURATION")
        ->capture_default_str();
    app.add_option("--tls-ca-file", tls.ca_file, "Trusted CAs (PEM) for rediss:// masters.")
        ->type_name("FILE");
    app.add_option("--tls-ca-dir", tls.ca_dir, "Directory of hashed CA certificates.")
        ->type_name("DIR");
    app.add_option("--tls-cert-file", tls.cert_file, "Client certificate (PEM), mutual TLS.")
        ->type_name("FILE");
    app.add_option("--tls-key-file", tls.key_file, "Client private key (PEM), mutual TLS.")
        ->type_name("FILE");
    app.add_option("--tls-server-name", tls.server_name, "Name for SNI and verification.")
        ->type_name("NAME");
    app.add_flag("--tls-insecure", flags.tls_insecure,
                 "Do not verify the masters' certificates (tests only).");
}

std::optional<failure> resolve_masters(const masters_flags& flags, const environment& env,
                                       masters_options& o)
{
    const auto timeout = parse_duration(flags.connect_timeout);
    if (!timeout)
        return fail(exit_status::usage,
                    "--connect-timeout: \"" + flags.connect_timeout +
                        "\" is not a duration (30s, 500ms, 1.5m, 2h, or seconds)");
    if (timeout->count() == 0)
        return fail(exit_status::usage, "--connect-timeout must be more than 0");
    o.connect_timeout = *timeout;
    o.tls.verify_peer = !flags.tls_insecure;

    // The password: --password-file, else REDLOCK_PASSWORD.
    if (!flags.password_file.empty())
    {
        auto text = env.read_file(flags.password_file);
        if (!text)
            return fail(exit_status::config,
                        "--password-file " + flags.password_file + ": " + std::strerror(errno));
        o.password = text->substr(0, text->find_first_of("\r\n"));
        if (o.password.empty())
            return fail(exit_status::config,
                        "--password-file " + flags.password_file + ": the first line is empty");
    }
    else if (auto p = env.getenv("REDLOCK_PASSWORD"); p && !p->empty())
    {
        o.password = *p;
    }

    // The masters: --master, else --masters-file, else REDLOCK_MASTERS, else the default file.
    int bad_master_status = exit_status::config;
    if (!flags.master.empty())
    {
        o.masters = flags.master;
        o.masters_source = "--master";
        bad_master_status = exit_status::usage;
    }
    else if (!flags.masters_file.empty())
    {
        auto text = env.read_file(flags.masters_file);
        if (!text)
            return fail(exit_status::config,
                        "--masters-file " + flags.masters_file + ": " + std::strerror(errno));
        o.masters = split_lines(*text);
        o.masters_source = "--masters-file " + flags.masters_file;
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

    for (std::size_t i = 0; i < o.masters.size(); ++i)
    {
        error_code ec;
        std::string why;
        auto m = parse_master_uri(o.masters[i], ec, why);
        if (ec)
            return fail(bad_master_status,
                        o.masters_source + ": master " + std::to_string(i) + ": " + why);
        o.any_cluster = o.any_cluster || m.is_cluster();
        if (!m.password.empty() && o.masters_source == "--master")
            return fail(
                exit_status::usage,
                "--master " + m.to_string() +
                    ": a password on the command line is visible to every user of the machine "
                    "(ps); give it with --password-file or REDLOCK_PASSWORD, or put the URIs in "
                    "REDLOCK_MASTERS or a masters file");
    }
    return std::nullopt;
}

client_config masters_config(const masters_options& o, std::string client_name)
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
    cfg.connection.client_name = std::move(client_name);
    cfg.connection.connect_timeout = o.connect_timeout;
    return cfg;
}

}  // namespace redlock::cli
