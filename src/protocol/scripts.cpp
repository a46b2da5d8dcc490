// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/scripts.hpp"

#include <openssl/evp.h>

#include <stdexcept>

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

const lua_script& release_script()
{
    static const lua_script s = [] {
        constexpr std::string_view body =
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
            "    return redis.call('del', KEYS[1])\n"
            "else\n"
            "    return 0\n"
            "end\n";
        return lua_script{body, sha1_hex(body)};
    }();
    return s;
}

const lua_script& extend_script()
{
    static const lua_script s = [] {
        constexpr std::string_view body =
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
            "    return redis.call('pexpire', KEYS[1], ARGV[2])\n"
            "else\n"
            "    return 0\n"
            "end\n";
        return lua_script{body, sha1_hex(body)};
    }();
    return s;
}

namespace {
lua_script make(std::string_view body) { return lua_script{body, sha1_hex(body)}; }
}  // namespace

const lua_script& acquire_multi_script()
{
    static const lua_script s = make(
        "for i = 1, #KEYS do\n"
        "    if redis.call('exists', KEYS[i]) == 1 then return 0 end\n"
        "end\n"
        "for i = 1, #KEYS do\n"
        "    redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])\n"
        "end\n"
        "return 1\n");
    return s;
}

const lua_script& release_multi_script()
{
    static const lua_script s = make(
        "local all = 1\n"
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
    static const lua_script s = make(
        "for i = 1, #KEYS do\n"
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
    static const lua_script s = make(
        "local least = -1\n"
        "for i = 1, #KEYS do\n"
        "    if redis.call('get', KEYS[i]) ~= ARGV[1] then return -3 end\n"
        "    local t = redis.call('pttl', KEYS[i])\n"
        "    if least < 0 or t < least then least = t end\n"
        "end\n"
        "return least\n");
    return s;
}

}  // namespace redlock::detail
