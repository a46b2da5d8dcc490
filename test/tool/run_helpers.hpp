// What the end-to-end tests of redlock-run share: a scratch directory for COMMAND's files, the
// command line against the test's masters, the keys on the masters, the processes of
// COMMAND's group, and stderr read line by line.
#pragma once

#include "local_masters.hpp"
#include "temp_dir.hpp"
#include "tool_process.hpp"

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace redlock::test {

inline constexpr int conflict_status = 75;
inline constexpr int lock_lost_status = 79;

// A scratch directory for the commands' files, removed at the end.
struct scratch : temp_dir
{
    scratch() : temp_dir("redlock-run-test-") {}
};

// redlock-run --master URI... OPTIONS RESOURCE -- COMMAND.
inline std::vector<std::string> run_args(const std::vector<std::string>& masters,
                                         const std::vector<std::string>& options,
                                         const std::string& resource,
                                         const std::vector<std::string>& command)
{
    std::vector<std::string> args{REDLOCK_RUN_PATH};
    for (const auto& uri : masters)
    {
        args.push_back("--master");
        args.push_back(uri);
    }
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(resource);
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
}

inline std::vector<std::string> run_args(const local_masters& m,
                                         const std::vector<std::string>& options,
                                         const std::string& resource,
                                         const std::vector<std::string>& command)
{
    return run_args(m.uris(), options, resource, command);
}

inline std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

// Another owner holds `key` on masters [first, last).
inline void hold_elsewhere(const local_masters& m, const std::string& key, std::size_t first = 0,
                           std::size_t last = static_cast<std::size_t>(-1))
{
    for (std::size_t i = first; i < m.size() && i < last; ++i)
        m.command(i, {"SET", key, "someone-else", "PX", "60000"});
}

// The other owner's keys are untouched.
inline bool still_elsewhere(const local_masters& m, const std::string& key, std::size_t first = 0,
                            std::size_t last = static_cast<std::size_t>(-1))
{
    for (std::size_t i = first; i < m.size() && i < last; ++i)
        if (m.command(i, {"GET", key}) != "$12\r\nsomeone-else\r\n")
            return false;
    return true;
}

// No master holds `key` any more.
inline bool no_key_left(const local_masters& m, const std::string& key)
{
    for (std::size_t i = 0; i < m.size(); ++i)
        if (m.command(i, {"EXISTS", key}) != ":0\r\n")
            return false;
    return true;
}

// The key's PTTL on master i, in ms (-2: no key).
inline long pttl(const local_masters& m, std::size_t i, const std::string& key)
{
    const auto reply = m.command(i, {"PTTL", key});
    return std::stol(reply.substr(1));
}

// The process is gone: no such PID, or a zombie nobody reaped yet (its parent died).
inline bool process_gone(pid_t pid)
{
    if (pid <= 0 || ::kill(pid, 0) != 0)
        return true;
    const auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto close_paren = stat.rfind(')');
    return close_paren == std::string::npos || stat.compare(close_paren, 3, ") Z") == 0;
}

// The PID a script wrote to a file (-1 while it has not).
inline pid_t pid_in(const std::string& path)
{
    const auto text = read_text(path);
    return text.empty() || text.back() != '\n' ? -1 : static_cast<pid_t>(std::stol(text));
}

// The lines of a text, without their '\n'.
inline std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

// How many lines match `pattern` (the whole line, ECMAScript).
inline std::size_t count_lines(const std::string& text, const std::string& pattern)
{
    const std::regex re(pattern);
    std::size_t n = 0;
    for (const auto& line : lines_of(text))
        n += std::regex_match(line, re) ? 1 : 0;
    return n;
}

// The lines that match none of `patterns`: what a test did not expect redlock-run to print.
inline std::vector<std::string> unexpected_lines(const std::string& text,
                                                 const std::vector<std::string>& patterns)
{
    std::vector<std::regex> res;
    for (const auto& p : patterns)
        res.emplace_back(p);
    std::vector<std::string> out;
    for (const auto& line : lines_of(text))
    {
        bool known = false;
        for (const auto& re : res)
            known = known || std::regex_match(line, re);
        if (!known)
            out.push_back(line);
    }
    return out;
}

// The process's state letter in /proc (R, S, T, Z, ...; '?' when it is gone).
inline char process_state(pid_t pid)
{
    const auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto close_paren = stat.rfind(')');
    return close_paren == std::string::npos || close_paren + 2 >= stat.size()
               ? '?'
               : stat[close_paren + 2];
}

// The fields of /proc/PID/stat after the command's name: [0] state, [1] ppid, [2] pgrp, ...
inline std::vector<std::string> stat_fields(pid_t pid)
{
    const auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto close_paren = stat.rfind(')');
    std::vector<std::string> out;
    if (close_paren == std::string::npos)
        return out;
    std::istringstream in(stat.substr(close_paren + 1));
    for (std::string f; in >> f;)
        out.push_back(f);
    return out;
}

// The PIDs whose parent is `parent`.
inline std::vector<pid_t> children_of(pid_t parent)
{
    std::vector<pid_t> out;
    for (const auto& dir : std::filesystem::directory_iterator("/proc"))
    {
        const auto entry = dir.path().filename().string();
        if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const auto pid = static_cast<pid_t>(std::stol(entry));
        const auto f = stat_fields(pid);
        if (f.size() > 1 && f[1] == std::to_string(parent))
            out.push_back(pid);
    }
    return out;
}

// Whether the process ignores `signo` (SigIgn in /proc/PID/status).
inline bool ignores(pid_t pid, int signo)
{
    const auto status = read_text("/proc/" + std::to_string(pid) + "/status");
    const auto at = status.find("SigIgn:\t");
    if (at == std::string::npos)
        return false;
    const auto mask = std::stoull(status.substr(at + 8, 16), nullptr, 16);
    return (mask >> (signo - 1)) & 1U;
}

// When `needle` appeared on the process's stderr (polled every 10 ms), or nullopt after `bound`.
inline std::optional<std::chrono::steady_clock::time_point> when_printed(
    const tool_process& run, const std::string& needle, std::chrono::milliseconds bound)
{
    if (!eventually([&] { return run.error_output().find(needle) != std::string::npos; }, bound))
        return std::nullopt;
    return std::chrono::steady_clock::now();
}

inline double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace redlock::test
