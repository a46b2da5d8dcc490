// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "common.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

namespace redlock::bench {

std::chrono::microseconds process_cpu_time()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto us = [](const timeval& t) {
        return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
    };
    return us(ru.ru_utime) + us(ru.ru_stime);
}

std::optional<std::chrono::microseconds> process_cpu_time_of(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string stat{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields are
    // counted from the last ')'. utime and stime are fields 14 and 15, i.e. the 12th and 13th
    // after comm.
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
        return std::nullopt;
    std::istringstream fields(stat.substr(close + 1));
    std::string skip;
    for (int k = 0; k < 11; ++k)
        fields >> skip;
    unsigned long long utime = 0, stime = 0;
    if (!(fields >> utime >> stime))
        return std::nullopt;
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        return std::nullopt;
    return std::chrono::microseconds(static_cast<std::int64_t>(
        (utime + stime) * 1'000'000ULL / static_cast<unsigned long long>(hz)));
}

std::string run_capture(const std::string& cmd)
{
    std::string out;
    FILE* f = popen(cmd.c_str(), "r");
    if (!f)
        return out;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0)
        out.append(buf.data(), n);
    pclose(f);
    return out;
}

std::optional<double> redis_benchmark_rps(const std::string& args)
{
    // CSV: a header line, then "SET","123456.78",... per test.
    auto out = run_capture("redis-benchmark " + args + " --csv 2>/dev/null");
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line))
    {
        if (line.rfind("\"test\"", 0) == 0 || line.empty())
            continue;
        auto a = line.find("\",\"");
        if (a == std::string::npos)
            continue;
        auto b = line.find('"', a + 3);
        try
        {
            return std::stod(line.substr(a + 3, b - a - 3));
        }
        catch (...)
        {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

std::optional<std::string> arg_value(int argc, char** argv, const std::string& name)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == name)
            return std::string(argv[i + 1]);
    return std::nullopt;
}

}  // namespace redlock::bench
