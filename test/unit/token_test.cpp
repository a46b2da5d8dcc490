// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/token.hpp"

#include <catch2/catch.hpp>

#include <openssl/rand.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_set>

using redlock::detail::token_source;

namespace {

bool is_lower_hex(const std::string& s)
{
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

}  // namespace

TEST_CASE("token: 40 lowercase hex characters", "[token]")
{
    token_source src;
    for (int i = 0; i != 1000; ++i)
    {
        const auto t = src.next();
        REQUIRE(t.size() == 40);
        REQUIRE(is_lower_hex(t));
    }

    SECTION("the span overload writes exactly 40 characters; char[40] converts to it")
    {
        char buf[42];
        std::memset(buf, 'X', sizeof buf);
        src.next(std::span<char, 40>(buf + 1, 40));
        CHECK(buf[0] == 'X');
        CHECK(buf[41] == 'X');
        CHECK(is_lower_hex(std::string(buf + 1, 40)));

        char arr[40];
        src.next(arr);
        CHECK(is_lower_hex(std::string(arr, 40)));
        CHECK(std::string(arr, 40) != std::string(buf + 1, 40));
    }
    SECTION("every hex digit occurs")
    {
        std::set<char> seen;
        for (int i = 0; i != 100; ++i)
            for (char c : src.next())
                seen.insert(c);
        CHECK(seen.size() == 16);
    }
}

TEST_CASE("token: 100k tokens are all distinct", "[token]")
{
    token_source src;
    std::unordered_set<std::string> tokens;
    tokens.reserve(100000);
    for (int i = 0; i != 100000; ++i)
        tokens.insert(src.next());
    CHECK(tokens.size() == 100000);
}

TEST_CASE("token: tokens straddling batch boundaries", "[token]")
{
    // 4096 is not a multiple of 20: every 205th token of the default source straddles two
    // batches; the small sizes make most of them straddle (or span several batches).
    for (std::size_t batch : {1u, 7u, 19u, 20u, 21u, 39u, 41u, 4096u})
    {
        INFO("batch " << batch);
        token_source src(batch);
        std::unordered_set<std::string> tokens;
        for (int i = 0; i != 2000; ++i)
        {
            const auto t = src.next();
            REQUIRE(t.size() == 40);
            REQUIRE(is_lower_hex(t));
            tokens.insert(t);
        }
        CHECK(tokens.size() == 2000);
    }
    CHECK_NOTHROW(token_source(0).next());  // clamped to 1
}

TEST_CASE("token: sources are independent and movable", "[token]")
{
    token_source a, b;
    CHECK(a.next() != b.next());

    token_source c = std::move(a);
    CHECK(c.next().size() == 40);
    CHECK_THROWS_AS(a.next(), std::logic_error);  // NOLINT(bugprone-use-after-move)
    a = std::move(c);
    CHECK(a.next().size() == 40);
}

TEST_CASE("token: a forked child does not repeat the parent's buffered tokens", "[token]")
{
    token_source src;
    (void)src.next();  // the batch is now filled and shared with a child after fork()

    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
    {
        const auto t = src.next();
        const auto written = ::write(pipe_fds[1], t.data(), t.size());
        ::_exit(written == 40 ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    const auto parent_token = src.next();
    std::array<char, 40> child{};
    std::size_t got = 0;
    while (got < child.size())
    {
        const auto n = ::read(pipe_fds[0], child.data() + got, child.size() - got);
        if (n <= 0)
            break;
        got += static_cast<std::size_t>(n);
    }
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(got == 40);
    CHECK(WIFEXITED(status));
    CHECK(std::string(child.data(), 40) != parent_token);
}

TEST_CASE("token: random_seed", "[token]")
{
    std::set<std::uint64_t> seeds;
    for (int i = 0; i != 100; ++i)
        seeds.insert(redlock::detail::random_seed());
    CHECK(seeds.size() == 100);
}

// The source of the bytes, pinned: OpenSSL's RAND_bytes and nothing else. A RAND method put in
// place for the test (RAND_set_rand_method, deprecated in OpenSSL 3 but still what RAND_bytes
// consults first) either fails, and then no token is made, or gives a known pattern, and then
// the tokens are that pattern in hex: no other generator, seeded or not, stands in between.
// Not under AddressSanitizer: OpenSSL keeps 64 bytes for a replaced RAND method until exit,
// which LeakSanitizer reports (not the library's leak); the normal stage runs it.
#if !defined(__SANITIZE_ADDRESS__)
namespace {

int failing_bytes(unsigned char*, int) { return 0; }
int counting_bytes(unsigned char* buf, int n)
{
    static unsigned char next = 0;
    for (int i = 0; i < n; ++i)
        buf[i] = next++;
    return 1;
}
int ok_status() { return 1; }

}  // namespace

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
TEST_CASE("token: the bytes come from RAND_bytes, and a failure of RAND_bytes makes no token",
          "[token]")
{
    RAND_METHOD failing{};
    failing.bytes = failing_bytes;
    failing.status = ok_status;
    RAND_METHOD counting{};
    counting.bytes = counting_bytes;
    counting.status = ok_status;
    struct restore
    {
        ~restore() { RAND_set_rand_method(nullptr); }  // back to the default method
    } restore_at_exit;

    REQUIRE(RAND_set_rand_method(&failing) == 1);
    {
        token_source s(64);
        CHECK_THROWS_AS(s.next(), std::runtime_error);
    }
    REQUIRE(RAND_set_rand_method(&counting) == 1);
    {
        token_source s(64);
        // The first 20 bytes are 00 01 ... 13.
        CHECK(s.next() == "000102030405060708090a0b0c0d0e0f10111213");
        CHECK(s.next() == "1415161718191a1b1c1d1e1f2021222324252627");
    }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif  // !__SANITIZE_ADDRESS__
