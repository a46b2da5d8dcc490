// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/scripts.hpp"

#include <openssl/evp.h>

#include <stdexcept>
#include <utility>

namespace redlock::detail {

std::string sha1_hex(std::string_view data)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha1(), nullptr) != 1)
        throw std::runtime_error("redlock: OpenSSL SHA1 failed");
    static constexpr char hex[] = "0123456789abcdef";
    std::string out(2 * len, '\0');
    for (unsigned int i = 0; i < len; ++i)
    {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 0xf];
    }
    return out;
}

namespace {

lua_script make(std::string body)
{
    auto sha1 = sha1_hex(body);
    return lua_script{std::move(body), std::move(sha1)};
}

/// A script that runs `action` (a Lua expression, its value returned) only while KEYS[1]
/// holds our token ARGV[1], and returns 0 otherwise: the shape of every single-key script
/// that must not touch a key another holder owns.
lua_script owner_guarded(std::string_view action)
{
    std::string body = "if redis.call('get', KEYS[1]) == ARGV[1] then\n    return ";
    body += action;
    body += "\nelse\n    return 0\nend\n";
    return make(std::move(body));
}

}  // namespace

const lua_script& release_script()
{
    static const lua_script s = owner_guarded("redis.call('del', KEYS[1])");
    return s;
}

const lua_script& handover_script()
{
    // SET KEEPTTL (Redis 6) keeps the expiry to the millisecond. Before Redis 6 it is an error,
    // and PTTL then SET PX stands in: the expiry may then move later by the script's own run
    // time (the clock can cross a millisecond between the two calls; seen at +1 ms), never
    // earlier, inside the 2 ms the validity already leaves for drift.
    static const lua_script s =
        make("if redis.call('get', KEYS[1]) ~= ARGV[1] then\n"
             "    return 0\n"
             "end\n"
             "local kept = redis.pcall('set', KEYS[1], ARGV[2], 'keepttl')\n"
             "if type(kept) == 'table' and kept.err then\n"
             "    local ttl = redis.call('pttl', KEYS[1])\n"
             "    if ttl > 0 then\n"
             "        redis.call('set', KEYS[1], ARGV[2], 'px', ttl)\n"
             "    elseif ttl == -1 then\n"
             "        redis.call('set', KEYS[1], ARGV[2])\n"
             "    else\n"
             "        return 0\n"
             "    end\n"
             "end\n"
             "return 1\n");
    return s;
}

const lua_script& extend_script()
{
    static const lua_script s = owner_guarded("redis.call('pexpire', KEYS[1], ARGV[2])");
    return s;
}

const lua_script& acquire_multi_script()
{
    static const lua_script s = make("for i = 1, #KEYS do\n"
                                     "    if redis.call('exists', KEYS[i]) == 1 then return 0 end\n"
                                     "end\n"
                                     "for i = 1, #KEYS do\n"
                                     "    redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])\n"
                                     "end\n"
                                     "return 1\n");
    return s;
}

const lua_script& permit_acquire_script()
{
    static const lua_script s = make(
        "for i = 1, #KEYS do\n"
        "    if redis.call('set', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then return i - 1 end\n"
        "end\n"
        "return -1\n");
    return s;
}

const lua_script& release_multi_script()
{
    static const lua_script s = make("local all = 1\n"
                                     "for i = 1, #KEYS do\n"
                                     "    if redis.call('get', KEYS[i]) == ARGV[1] then\n"
                                     "        redis.call('del', KEYS[i])\n"
                                     "    else\n"
                                     "        all = 0\n"
                                     "    end\n"
                                     "end\n"
                                     "return all\n");
    return s;
}

const lua_script& extend_multi_script()
{
    static const lua_script s =
        make("for i = 1, #KEYS do\n"
             "    if redis.call('get', KEYS[i]) ~= ARGV[1] then return 0 end\n"
             "end\n"
             "for i = 1, #KEYS do\n"
             "    redis.call('pexpire', KEYS[i], ARGV[2])\n"
             "end\n"
             "return 1\n");
    return s;
}

const lua_script& check_script()
{
    static const lua_script s =
        make("local least = -1\n"
             "for i = 1, #KEYS do\n"
             "    if redis.call('get', KEYS[i]) ~= ARGV[1] then return -3 end\n"
             "    local t = redis.call('pttl', KEYS[i])\n"
             "    if least < 0 or t < least then least = t end\n"
             "end\n"
             "return least\n");
    return s;
}

// Round 1 of a fenced acquisition, for n resources: KEYS[1..n] the lock keys, KEYS[n+1..2n]
// their fence counters. The counters are checked before anything is set, so that a counter
// another program broke (not an integer) fails this master without leaving our keys behind.
const lua_script& fenced_acquire_script()
{
    static const lua_script s =
        make("local n = #KEYS / 2\n"
             "for i = 1, n do\n"
             "    local c = redis.call('get', KEYS[n + i])\n"
             "    if c and not string.match(c, '^%d+$') then\n"
             "        return redis.error_reply('ERR the fence counter ' .. KEYS[n + i] .. ' is not "
             "an integer')\n"
             "    end\n"
             "end\n"
             "for i = 1, n do\n"
             "    if redis.call('exists', KEYS[i]) == 1 then return false end\n"
             "end\n"
             "local out = {}\n"
             "for i = 1, n do\n"
             "    redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])\n"
             "    out[i] = tonumber(redis.call('get', KEYS[n + i]) or '0')\n"
             "end\n"
             "return out\n");
    return s;
}

const lua_script& fence_commit_script()
{
    static const lua_script s =
        make("local n = #KEYS / 2\n"
             "for i = 1, n do\n"
             "    if redis.call('get', KEYS[i]) ~= ARGV[1] then return 0 end\n"
             "    local c = tonumber(redis.call('get', KEYS[n + i]) or '0')\n"
             "    if c == nil or c >= tonumber(ARGV[i + 1]) then return 0 end\n"
             "end\n"
             "for i = 1, n do redis.call('set', KEYS[n + i], ARGV[i + 1]) end\n"
             "return 1\n");
    return s;
}

}  // namespace redlock::detail
