// Shared helpers of the live tests of holding a lock (test/live/hold_*.cpp): lock_holder,
// async_with_lock, async_lock_all, async_check.
//
// Everything that talks to a master through the harness is a plain function, never a
// coroutine: GCC 12 rejects a braced initializer list inside a coroutine body.
#pragma once

#include "client_fixture.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::test {

/// The integer of a raw RESP2 integer reply (":12\r\n").
inline std::int64_t integer_reply(const std::string& raw)
{
    if (raw.size() < 4 || raw[0] != ':')
        throw std::runtime_error("not an integer reply: " + raw);
    return std::stoll(raw.substr(1));
}

/// PTTL of `key` on master `i`: -2 when absent, -1 when it has no expiry.
inline std::int64_t pttl_on(const local_masters& m, std::size_t i, std::string_view key)
{
    return integer_reply(m.command(i, {"PTTL", key}));
}

/// DEL `key` on master `i` (the lock is "stolen" there, or expired early).
inline void del_on(const local_masters& m, std::size_t i, std::string_view key)
{
    (void)m.command(i, {"DEL", key});
}

/// SET `key` `value` on master `i`, no expiry: a rival holder behind the client's back.
inline void set_on(const local_masters& m, std::size_t i, std::string_view key,
                   std::string_view value)
{
    REQUIRE(m.command(i, {"SET", key, value}) == "+OK\r\n");
}

/// Number of keys on master `i`.
inline std::int64_t dbsize_on(const local_masters& m, std::size_t i)
{
    return integer_reply(m.command(i, {"DBSIZE"}));
}

/// Sum of DBSIZE over every master.
inline std::int64_t dbsize_all(const local_masters& m)
{
    std::int64_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += dbsize_on(m, i);
    return n;
}

/// Whether every master of `m` comes to hold no key (DBSIZE 0) within `limit`.
inline asio::awaitable<bool> no_keys_within(const local_masters& m, steady::duration limit)
{
    co_return co_await eventually([&] { return dbsize_all(m) == 0; }, limit);
}

/// A numeric field of `INFO <section>` on master `i` ("total_reads_processed"); 0 if absent.
inline std::int64_t info_field(const local_masters& m, std::size_t i, std::string_view section,
                               std::string_view field)
{
    const std::string raw = m.command(i, {"INFO", section});
    const std::string needle = "\n" + std::string(field) + ":";
    const auto at = raw.find(needle);
    if (at == std::string::npos)
        return 0;
    return std::stoll(raw.substr(at + needle.size()));
}

/// Calls of `command` (lower case, e.g. "pexpire", "eval") on master `i` since start, from
/// INFO commandstats. Commands run by scripts are counted too: every successful extension runs
/// exactly one PEXPIRE per key, so cmdstat_pexpire counts the extensions a master applied.
inline std::int64_t calls_on(const local_masters& m, std::size_t i, std::string_view command)
{
    const std::string raw = m.command(i, {"INFO", "commandstats"});
    const std::string needle = "cmdstat_" + std::string(command) + ":calls=";
    const auto at = raw.find(needle);
    if (at == std::string::npos)
        return 0;
    return std::stoll(raw.substr(at + needle.size()));
}

/// `calls_on` for every master.
inline std::vector<std::int64_t> calls_all(const local_masters& m, std::string_view command)
{
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < m.size(); ++i)
        out.push_back(calls_on(m, i, command));
    return out;
}

/// Masters on which `key` exists with a positive PTTL.
inline std::size_t masters_with_ttl(const local_masters& m, std::string_view key)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += pttl_on(m, i, key) > 0 ? 1 : 0;
    return n;
}

/// Masters on which `key` holds `value`.
inline std::size_t masters_holding(const local_masters& m, std::string_view key,
                                   std::string_view value)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += get_on(m, i, key) == std::string(value) ? 1 : 0;
    return n;
}

/// A 1 s lock with one attempt: the shape of most tests here. attempt_timeout stays derived
/// (ttl / 20 = 50 ms), so the default extend_before is max(ttl / 3, 3 x 50 ms) = 333 ms.
inline lock_options short_lock(std::chrono::milliseconds ttl = std::chrono::milliseconds(1000))
{
    lock_options o;
    o.ttl = ttl;
    o.max_attempts = 1;
    return o;
}

/// The interval between two extensions with the default schedule, for a lock of `ttl` with
/// the default drift factor: the validity (ttl - drift) minus extend_before.
inline steady::duration default_extension_interval(std::chrono::milliseconds ttl,
                                                   std::chrono::milliseconds attempt_timeout)
{
    const auto drift = std::chrono::microseconds(ttl.count() * 10 + 2000);  // ttl * 0.01 + 2 ms
    const auto before = std::max(ttl / 3, 3 * attempt_timeout);
    return ttl - drift - before;
}

/// The interval between two extensions of a short_lock() with its defaults (a TTL of 1 s, an
/// attempt_timeout of 50 ms): 1000 - 12 - 333 = 655 ms.
inline const steady::duration short_lock_interval =
    default_extension_interval(std::chrono::milliseconds(1000), std::chrono::milliseconds(50));

}  // namespace redlock::test
