// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// CLI11 parsing for the tools that return their exit status rather than exit (redlock-run,
// redlock-status): how it ended, and what may be printed of it. Never an argument's value: a
// --master URI may carry a password.
#pragma once

#include <redlock/options.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

struct parse_outcome
{
    enum class kind
    {
        parsed,
        help,     ///< `text`: the help, for stdout.
        version,  ///< `text`: the version line, for stdout.
        /// Arguments left over: `text` names the unknown options up to their '=', never their
        /// values; empty when only extra positional arguments were left.
        extras,
        error,  ///< `text`: CLI11's message (it names the option and the value it refused).
    };
    kind end = kind::parsed;
    std::string text;
};

inline parse_outcome parse_args(CLI::App& app, const std::vector<std::string>& args)
{
    parse_outcome out;
    try
    {
        // CLI11 wants its arguments in reverse order.
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(reversed);
    }
    catch (const CLI::CallForHelp&)
    {
        out = {parse_outcome::kind::help, app.help()};
    }
    catch (const CLI::CallForVersion& e)
    {
        out = {parse_outcome::kind::version, e.what()};
    }
    catch (const CLI::ExtrasError&)
    {
        // Not CLI11's message: it echoes the extra arguments, which may be anything.
        out.end = parse_outcome::kind::extras;
        for (const auto& a : app.remaining())
            if (a.size() > 1 && a.front() == '-')
                out.text += (out.text.empty() ? "" : ", ") + a.substr(0, a.find('='));
    }
    catch (const CLI::ParseError& e)
    {
        // The only option that can carry a secret is --master, which is never echoed: it
        // takes any string.
        out = {parse_outcome::kind::error, e.what()};
    }
    return out;
}

/// What a tool's parsing decided: run with these options, or exit with this status after
/// printing `message` (to stdout for --help / --version, stderr otherwise).
template <class Options>
struct parse_result
{
    std::optional<Options> options;
    int exit_code = 0;
    std::string message;
    bool to_stdout = false;
};

/// "NAME: message", to stderr, with `code`.
template <class Options>
parse_result<Options> failed(std::string_view name, int code, std::string message)
{
    parse_result<Options> r;
    r.exit_code = code;
    r.message = std::string(name) + ": " + std::move(message);
    return r;
}

/// The end of a tool's parsing: run with `o`, unless the client would refuse `lo` (the lock
/// options `o` stands for), which is refused here with the client's own words (`usage`).
template <class Options>
parse_result<Options> accepted_unless_refused(std::string_view name, Options o,
                                              const lock_options& lo, int usage)
{
    error_code ec;
    std::string why;
    validate(lo, ec, why);
    if (ec)
        return failed<Options>(name, usage, std::move(why));
    parse_result<Options> r;
    r.options = std::move(o);
    return r;
}

/// The parse_result that ends the tool after `p`, or nullopt when `p` parsed: the help or the
/// version on stdout (status 0); an unknown option named, or CLI11's error, with a pointer to
/// --help (status `usage`); `extras_message` when only positional arguments were left over.
template <class Options>
std::optional<parse_result<Options>> stop_after(const parse_outcome& p, std::string_view name,
                                                int usage, const std::string& extras_message)
{
    const std::string see = "\n(see " + std::string(name) + " --help)";
    switch (p.end)
    {
    case parse_outcome::kind::parsed: return std::nullopt;
    case parse_outcome::kind::help:
    case parse_outcome::kind::version:
    {
        parse_result<Options> r;
        r.message = p.text;
        r.to_stdout = true;
        return r;
    }
    case parse_outcome::kind::extras:
        if (!p.text.empty())
            return failed<Options>(name, usage, "unknown option " + p.text + see);
        return failed<Options>(name, usage, extras_message);
    case parse_outcome::kind::error: return failed<Options>(name, usage, p.text + see);
    }
    return std::nullopt;
}

}  // namespace redlock::cli
