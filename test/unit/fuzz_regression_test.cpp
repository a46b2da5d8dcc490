// Replays the fuzz corpus and every input a fuzzer ever failed on through the same invariant
// checks as the libFuzzer targets, in the normal and the ASan+UBSan builds, so a fixed crash
// stays fixed. A new crash file goes into test/fuzz/regressions/<target>/ (see
// docs/reliability.md); this test picks it up with no code change.
#include "resp_parser_check.hpp"
#include "uri_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(const std::string& target)
{
    std::vector<fs::path> files;
    for (const char* kind : {"corpus", "regressions"})
    {
        const fs::path dir = fs::path(REDLOCK_FUZZ_DIR) / kind / target;
        if (!fs::is_directory(dir))
            continue;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file() && e.path().filename().string().front() != '.')
                files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_file(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class Check>
std::size_t replay(const std::string& target, Check check)
{
    const auto files = inputs_of(target);
    for (const auto& f : files)
    {
        const std::string data = read_file(f);
        INFO(f.string());
        CHECK(check(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()) == "");
    }
    return files.size();
}

}  // namespace

TEST_CASE("fuzz regressions: resp_parser corpus and crashes replay clean", "[fuzz][resp]")
{
    const auto n = replay("resp_parser", redlock::fuzz::check_resp_input);
    // The seed corpus is committed: an empty replay means a wrong path, not a clean run.
    CHECK(n >= 20);
}

TEST_CASE("fuzz regressions: uri corpus and crashes replay clean", "[fuzz][uri]")
{
    const auto n = replay("uri", redlock::fuzz::check_uri_input);
    CHECK(n >= 20);
}

TEST_CASE("fuzz checks: the checks catch what they are meant to catch", "[fuzz]")
{
    using redlock::fuzz::check_uri_input;
    // A valid URI with a password, in mode 1: scheme 0 (redis://), user length 0, the password
    // taking 7 bytes, then the rest.
    // (One literal: GCC 12 sees a false -Warray-bounds in std::string's operator+ when <string>
    // comes from the precompiled header, which does not keep that warning inside <string>.)
    constexpr char raw[] = "\x01\x00\x00\x07"
                           "s3cr\xc3\xa9t"
                           "127.0.0.1:6379/2";
    const std::string in(raw, sizeof raw - 1);
    CHECK(check_uri_input(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()) == "");

    // The RESP checks accept a few typical streams.
    for (std::string s :
         {"+OK\r\n", "*2\r\n$3\r\nfoo\r\n:1\r\n", "|1\r\n+a\r\n+b\r\n%1\r\n+k\r\n_\r\n",
          "$5\r\nhel", "garbage\r\n", ">2\r\n+x\r\n+y\r\n+OK\r\n"})
        CHECK(redlock::fuzz::check_resp_input(reinterpret_cast<const std::uint8_t*>(s.data()),
                                              s.size()) == "");
}

namespace {

// Parsers broken on purpose, each in one way the fuzz checks look for. They wrap resp::parser.
struct wrapped_parser
{
    explicit wrapped_parser(redlock::resp::parser_limits lim) : p(lim) {}
    redlock::resp::parse_status parse(std::string_view b) { return p.parse(b); }
    std::span<const redlock::resp::node_view> nodes() const noexcept { return p.nodes(); }
    std::size_t consumed() const noexcept { return p.consumed(); }
    std::string_view error_message() const noexcept { return p.error_message(); }
    void reset() noexcept { p.reset(); }
    redlock::resp::parser p;
};

// Fails whenever it is given a reply cut short: its result depends on how the bytes arrive.
struct chunk_sensitive_parser : wrapped_parser
{
    using wrapped_parser::wrapped_parser;
    redlock::resp::parse_status parse(std::string_view b)
    {
        const auto st = p.parse(b);
        if (st != redlock::resp::parse_status::needs_more || b.empty())
            return st;
        failed = true;
        return redlock::resp::parse_status::failed;
    }
    std::span<const redlock::resp::node_view> nodes() const noexcept
    {
        return failed ? std::span<const redlock::resp::node_view>{} : p.nodes();
    }
    std::string_view error_message() const noexcept
    {
        return failed ? "cut short" : p.error_message();
    }
    bool failed = false;
};

// Reports every simple string as an integer: malformed nodes.
struct mistyping_parser : wrapped_parser
{
    using wrapped_parser::wrapped_parser;
    redlock::resp::parse_status parse(std::string_view b)
    {
        const auto st = p.parse(b);
        copy.assign(p.nodes().begin(), p.nodes().end());
        for (auto& n : copy)
            if (n.data_type == redlock::resp::type::simple_string)
                n.data_type = redlock::resp::type::integer;
        return st;
    }
    std::span<const redlock::resp::node_view> nodes() const noexcept { return copy; }
    std::vector<redlock::resp::node_view> copy;
};

// Forgets a failure at the next call: failures are not sticky.
struct forgetful_parser : wrapped_parser
{
    using wrapped_parser::wrapped_parser;
    redlock::resp::parse_status parse(std::string_view b)
    {
        if (p.parse(b) != redlock::resp::parse_status::failed)
            return p.parse(b);
        if (failed_once)
        {
            p.reset();
            return redlock::resp::parse_status::needs_more;
        }
        failed_once = true;
        return redlock::resp::parse_status::failed;
    }
    bool failed_once = false;
};

template <class Parser>
std::string check_with(std::string_view s)
{
    return redlock::fuzz::check_parser_on<Parser>(reinterpret_cast<const std::uint8_t*>(s.data()),
                                                  s.size());
}

}  // namespace

TEST_CASE("fuzz checks: a broken parser or a leaking printer is found", "[fuzz]")
{
    // The same inputs pass with resp::parser (above); each broken parser is caught.
    const std::string stream = "*2\r\n$3\r\nfoo\r\n:1\r\n+OK\r\n";
    CHECK(check_with<wrapped_parser>(stream) == "");
    const auto chunked = check_with<chunk_sensitive_parser>(stream);
    INFO(chunked);
    CHECK(chunked.starts_with("chunked feeding differs from whole feeding"));
    const auto mistyped = check_with<mistyping_parser>("+OK\r\n");
    INFO(mistyped);
    CHECK(mistyped.find("integer that is not a 64-bit integer") != std::string::npos);
    const auto forgetful = check_with<forgetful_parser>("garbage\r\n");
    INFO(forgetful);
    CHECK(forgetful.find("a failed parser accepted more input") != std::string::npos);

    // A printer that leaks the password is caught by the URI checks.
    const std::string uri = "redis://user:s3cret@127.0.0.1:6379/2";
    const auto parsed = redlock::fuzz::detail::parse(uri);
    REQUIRE_FALSE(parsed.ec);
    CHECK(redlock::fuzz::detail::check_any(uri, parsed) == "");
    const auto leak =
        redlock::fuzz::detail::check_any(uri, parsed, [](const redlock::master_config& c) {
            return c.to_string() + " (" + c.password + ")";
        });
    CHECK(leak == "to_string() depends on the password's value");
}
