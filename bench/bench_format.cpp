// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "bench_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

#include <redlock/config.hpp>

namespace redlock::bench {

namespace fs = std::filesystem;

std::string with_commas(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    const std::string_view s = buf;
    const std::size_t sign = s[0] == '-' ? 1 : 0;
    const std::size_t int_end = std::min(s.find('.'), s.size());
    std::string out(s.substr(0, sign));
    for (std::size_t i = sign; i < int_end; ++i)
    {
        out += s[i];
        const std::size_t left = int_end - i - 1;
        if (left > 0 && left % 3 == 0)
            out += ',';
    }
    out += s.substr(int_end);
    return out;
}

long peak_rss_kib()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;  // KiB on Linux
}

bool on_path(const std::string& exe)
{
    const char* path = std::getenv("PATH");
    if (!path)
        return false;
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
        if (!dir.empty() && ::access((fs::path(dir) / exe).c_str(), X_OK) == 0)
            return true;
    return false;
}

std::string printable_uri(const std::string& uri)
{
    try
    {
        return redlock::parse_master_uri(uri).to_string();
    }
    catch (...)
    {
        return "<invalid uri>";
    }
}

}  // namespace redlock::bench
