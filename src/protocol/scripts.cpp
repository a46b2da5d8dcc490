// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/scripts.hpp"

#include <openssl/evp.h>

#include <initializer_list>
#include <stdexcept>
#include <string_view>
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
    static const lua_script s =
        make("local held = redis.call('get', KEYS[1])\n"
             "if held and held ~= ARGV[3] then\n"
             "    if held == 'redlock:readers' or string.sub(held, 1, 16) == 'redlock:permits:' "
             "then return held end\n"
             "    return 'redlock:owned'\n"
             "end\n"
             "for i = 2, #KEYS do\n"
             "    if redis.call('set', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
             "        if not held then\n"
             "            redis.call('set', KEYS[1], ARGV[3], 'PX', ARGV[2])\n"
             "        elseif redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then\n"
             "            redis.call('pexpire', KEYS[1], ARGV[2])\n"
             "        end\n"
             "        return i - 2\n"
             "    end\n"
             "end\n"
             "return -1\n");
    return s;
}

const lua_script& permit_release_script()
{
    static const lua_script s =
        make("local n = tonumber(ARGV[2]) or 1\n"
             "if n < 1 then n = 1 end\n"
             "local ours = 0\n"
             "for i = 2, math.min(n + 1, #KEYS) do\n"
             "    if redis.call('get', KEYS[i]) == ARGV[1] then\n"
             "        redis.call('del', KEYS[i])\n"
             "        ours = 1\n"
             "    end\n"
             "end\n"
             "if redis.call('exists', unpack(KEYS, 2)) > 0 then return ours end\n"
             "if ours == 0 then\n"
             "    local m = redis.call('get', KEYS[1])\n"
             "    if not m or string.sub(m, 1, 16) ~= 'redlock:permits:' then return 0 end\n"
             "end\n"
             "redis.call('del', KEYS[1])\n"
             "return ours\n");
    return s;
}

const lua_script& permit_extend_script()
{
    static const lua_script s =
        make("if redis.call('get', KEYS[2]) ~= ARGV[1] then return 0 end\n"
             "redis.call('pexpire', KEYS[2], ARGV[2])\n"
             "local m = redis.call('get', KEYS[1])\n"
             "if m and string.sub(m, 1, 16) == 'redlock:permits:' and\n"
             "        redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then\n"
             "    redis.call('pexpire', KEYS[1], ARGV[2])\n"
             "end\n"
             "return 1\n");
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

namespace {

// The fence counters KEYS[first..last] (`first`, `last` Lua locals), checked before anything
// is set: a counter another program broke (not an integer) fails this master without leaving
// our keys behind. The same check for a mutex's fenced acquisition and a fenced writer's.
constexpr std::string_view checked_counters =
    "for i = first, last do\n"
    "    local c = redis.call('get', KEYS[i])\n"
    "    if c and not string.match(c, '^%d+$') then\n"
    "        return redis.error_reply('ERR the fence counter ' .. KEYS[i] .. ' is not an "
    "integer')\n"
    "    end\n"
    "end\n";

// The counter KEYS[i] (`i` a Lua local) moved on by one, and its value before, 0 when absent,
// as `c`. Only where our key was just set, and after checked_counters (INCR of a counter that is
// not an integer would fail half-way).
constexpr std::string_view bump_counter_i = "local c = redis.call('incr', KEYS[i]) - 1\n";

std::string joined(std::initializer_list<std::string_view> parts)
{
    std::string out;
    for (const auto p : parts)
        out += p;
    return out;
}

}  // namespace

// Round 1 of a fenced acquisition, for n resources: KEYS[1..n] the lock keys, KEYS[n+1..2n]
// their fence counters.
const lua_script& fenced_acquire_script()
{
    static const lua_script s =
        make(joined({"local n = #KEYS / 2\n"
                     "local first, last = n + 1, 2 * n\n",
                     checked_counters,
                     "for i = 1, n do\n"
                     "    if redis.call('exists', KEYS[i]) == 1 then return false end\n"
                     "end\n"
                     "local out = {}\n"
                     "for i = first, last do\n"
                     "    redis.call('set', KEYS[i - n], ARGV[1], 'PX', ARGV[2])\n    ",
                     bump_counter_i,
                     "    out[i - n] = c\n"
                     "end\n"
                     "return out\n"}));
    return s;
}

const lua_script& fence_commit_script()
{
    static const lua_script s =
        make("local n = #KEYS / 3\n"
             "for i = 1, n do\n"
             "    if redis.call('get', KEYS[i]) ~= ARGV[1] then return 0 end\n"
             "    local c = tonumber(redis.call('get', KEYS[n + i]) or '0')\n"
             "    if c == nil or c > tonumber(ARGV[i + 1]) then return 0 end\n"
             "end\n"
             "local id = string.sub(redis.sha1hex(ARGV[1]), 1, 16)\n"
             "for i = 1, n do\n"
             "    redis.call('set', KEYS[n + i], ARGV[i + 1])\n"
             "    redis.call('set', KEYS[2 * n + i], id)\n"
             "end\n"
             "return 1\n");
    return s;
}

namespace {

// The master's time in ms, as `now`: a reader's expiry is on the master's clock, as a key's
// PX is. Scripts that read TIME and then write are replicated by their effects (the default
// since Redis 5; asked for explicitly before).
constexpr std::string_view master_now =
    "if redis.replicate_commands then redis.replicate_commands() end\n"
    "local t = redis.call('time')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

lua_script with_now(std::string_view rest)
{
    std::string body(master_now);
    body += rest;
    return make(std::move(body));
}

// Drops the readers whose expiry has passed (a member is live up to its expiry, as a key is).
constexpr std::string_view drop_expired =
    "redis.call('zremrangebyscore', KEYS[2], '-inf', '(' .. now)\n";

// While readers hold, the writer's key KEYS[1] holds the shared mark and expires with the last
// of them: so that every mutex (ours or another Redlock client's SET NX) is refused beside
// readers. Sets the mark and both keys' expiry to the latest reader's; deletes the mark when
// no reader is left. Only where KEYS[1] is the mark or absent.
constexpr std::string_view cover_readers =
    "local last = redis.call('zrange', KEYS[2], -1, -1, 'withscores')\n"
    "if last[2] then\n"
    "    redis.call('set', KEYS[1], 'redlock:readers')\n"
    "    redis.call('pexpireat', KEYS[1], last[2])\n"
    "    redis.call('pexpireat', KEYS[2], last[2])\n"
    "else\n"
    "    redis.call('del', KEYS[1])\n"
    "end\n";

// Whether the writer's key holds something other than the readers' mark: a writer's or a
// mutex's token.
constexpr std::string_view held_apart = "local held = redis.call('get', KEYS[1])\n"
                                        "local apart = held and held ~= 'redlock:readers'\n";

// A semaphore's mark in the writer's key (its permits held): returned, so that the client can say
// that the resource is held as another kind of lock (error::kind_mismatch).
constexpr std::string_view refused_by_semaphore =
    "if apart and string.sub(held, 1, 16) == 'redlock:permits:' then return held end\n";

// Our member's expiry as `e`; 0 returned when the token is not in the readers' set.
constexpr std::string_view our_member = "local e = redis.call('zscore', KEYS[2], ARGV[1])\n"
                                        "if not e then return 0 end\n";

}  // namespace

const lua_script& reader_acquire_script()
{
    static const lua_script s = with_now(
        joined({held_apart, refused_by_semaphore,
                "if apart or redis.call('exists', KEYS[3]) == 1 then return 0 end\n", drop_expired,
                "redis.call('zadd', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])\n", cover_readers,
                "return 1\n"}));
    return s;
}

namespace {

// A writer's acquisition but for what it returns when it sets the writer's key (see
// writer_acquire_script): 0 returned when refused, or the semaphore's mark that holds the key.
// Readers hold: the mark, or live members (also should the mark be gone).
constexpr std::string_view writer_sets =
    "if held == 'redlock:readers' or (not held and redis.call('zcard', KEYS[2]) > 0) then\n"
    "    if redis.call('get', KEYS[3]) == ARGV[3] then\n"
    "        redis.call('pexpire', KEYS[3], ARGV[2])\n"
    "    else\n"
    "        redis.call('set', KEYS[3], ARGV[3], 'NX', 'PX', ARGV[2])\n"
    "    end\n"
    "    return 0\n"
    "end\n"
    "if held then return string.sub(held, 1, 16) == 'redlock:permits:' and held or 0 end\n"
    "redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
    "if redis.call('get', KEYS[3]) == ARGV[3] then redis.call('del', KEYS[3]) end\n";

}  // namespace

const lua_script& writer_acquire_script()
{
    static const lua_script s =
        with_now(joined({drop_expired, held_apart, writer_sets, "return 1\n"}));
    return s;
}

// A fenced writer: the counter KEYS[4] checked before anything changes (the intent mark
// included), then the writer's acquisition; its counter moved on and returned as a fenced
// mutex's are.
const lua_script& fenced_writer_acquire_script()
{
    static const lua_script s =
        with_now(joined({"local first, last = 4, 4\n", checked_counters, drop_expired, held_apart,
                         writer_sets, "local i = 4\n", bump_counter_i, "return {c}\n"}));
    return s;
}

const lua_script& reader_release_script()
{
    static const lua_script s =
        with_now(joined({our_member, "redis.call('zrem', KEYS[2], ARGV[1])\n", drop_expired,
                         held_apart, "if not apart then\n", cover_readers,
                         "end\n"
                         "if tonumber(e) < now then return 0 end\n"
                         "return 1\n"}));
    return s;
}

const lua_script& reader_extend_script()
{
    static const lua_script s =
        with_now(joined({our_member, held_apart,
                         "if apart then return 0 end\n"
                         "if tonumber(e) < now then\n"
                         "    redis.call('zrem', KEYS[2], ARGV[1])\n"
                         "    redis.call('zremrangebyscore', KEYS[2], '-inf', '(' .. now)\n",
                         cover_readers,
                         "    return 0\n"
                         "end\n"
                         "redis.call('zadd', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])\n",
                         cover_readers, "return 1\n"}));
    return s;
}

const lua_script& reader_check_script()
{
    static const lua_script s = with_now("local e = redis.call('zscore', KEYS[2], ARGV[1])\n"
                                         "if not e or tonumber(e) < now then return -3 end\n"
                                         "return tonumber(e) - now\n");
    return s;
}

const lua_script& holders_read_script()
{
    static const lua_script s = with_now(
        "local n = #KEYS - 3\n"
        "local function text(k)\n"
        "    if redis.call('type', k).ok == 'string' then return redis.call('get', k) end\n"
        "    return false\n"
        "end\n"
        "local out = {text(KEYS[n + 2]), text(KEYS[n + 3])}\n"
        "for i = 1, n do\n"
        "    out[#out + 1] = text(KEYS[i])\n"
        "    out[#out + 1] = redis.call('pttl', KEYS[i])\n"
        "end\n"
        "if redis.call('type', KEYS[n + 1]).ok == 'zset' then\n"
        "    local r = redis.call('zrangebyscore', KEYS[n + 1], now, '+inf', 'withscores')\n"
        "    for i = 1, #r, 2 do\n"
        "        out[#out + 1] = r[i]\n"
        "        out[#out + 1] = math.floor(tonumber(r[i + 1]) - now)\n"
        "    end\n"
        "end\n"
        "return out\n");
    return s;
}

}  // namespace redlock::detail
