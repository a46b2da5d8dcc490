// The local_masters fixture itself: what every other live test relies on.
#include "local_masters.hpp"
#include "process_status.hpp"

#include <catch2/catch.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using redlock::test::has_children;
using redlock::test::local_masters;
using redlock::test::process_gone;

namespace {

/// A blocking loopback TCP connection; -errno when connect fails.
int connect_loopback(std::uint16_t port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    timeval tv{};
    tv.tv_sec = 3;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    {
        const int error = errno;
        ::close(fd);
        return -error;
    }
    return fd;
}

struct tls_result
{
    bool handshake_ok = false;
    long verify_result = X509_V_OK;
    std::string reply;
};

/// TLS handshake with 127.0.0.1:`port` trusting only `ca_file` and checking the IP SAN,
/// then PING over it. Independent of the library, so it checks the generated PKI alone.
tls_result tls_ping(std::uint16_t port, const std::string& ca_file)
{
    tls_result result;
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    REQUIRE(ctx != nullptr);
    REQUIRE(SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) == 1);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    SSL* ssl = SSL_new(ctx);
    REQUIRE(X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1") == 1);
    const int fd = connect_loopback(port);
    REQUIRE(fd >= 0);
    SSL_set_fd(ssl, fd);
    result.handshake_ok = SSL_connect(ssl) == 1;
    result.verify_result = SSL_get_verify_result(ssl);
    if (result.handshake_ok)
    {
        const std::string ping = "*1\r\n$4\r\nPING\r\n";
        REQUIRE(SSL_write(ssl, ping.data(), static_cast<int>(ping.size())) ==
                static_cast<int>(ping.size()));
        char buf[64];
        const int n = SSL_read(ssl, buf, sizeof buf);
        if (n > 0)
            result.reply.assign(buf, static_cast<std::size_t>(n));
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    ::close(fd);
    return result;
}

/// Points TMPDIR at a private scratch directory for one scope, to see what a fixture leaves.
class scratch_tmpdir
{
public:
    scratch_tmpdir()
    {
        if (const char* old = std::getenv("TMPDIR"))
            old_ = old;
        std::string pattern = (fs::temp_directory_path() / "redlock-harness-test-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path_ = pattern;
        ::setenv("TMPDIR", path_.c_str(), 1);
    }
    ~scratch_tmpdir()
    {
        if (old_)
            ::setenv("TMPDIR", old_->c_str(), 1);
        else
            ::unsetenv("TMPDIR");
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    scratch_tmpdir(const scratch_tmpdir&) = delete;
    scratch_tmpdir& operator=(const scratch_tmpdir&) = delete;

    bool empty() const { return fs::is_empty(path_); }

private:
    fs::path path_;
    std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("local_masters starts distinct live masters", "[harness]")
{
    local_masters masters({.count = 3});
    REQUIRE(masters.size() == 3);

    std::set<std::uint16_t> ports;
    std::set<pid_t> pids;
    for (std::size_t i = 0; i < masters.size(); ++i)
    {
        ports.insert(masters.port(i));
        pids.insert(masters.pid(i));
        CHECK(masters.is_running(i));
        CHECK(::kill(masters.pid(i), 0) == 0);
        CHECK(masters.uri(i) == "redis://127.0.0.1:" + std::to_string(masters.port(i)));
        CHECK(fs::is_directory(masters.dir(i)));
        CHECK(masters.command(i, {"PING"}) == "+PONG\r\n");
        // Persistence is off: a lock must not survive a restart through a dump file.
        CHECK(masters.command(i, {"CONFIG", "GET", "appendonly"}) ==
              "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
        CHECK(masters.command(i, {"CONFIG", "GET", "save"}) == "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
    }
    CHECK(ports.size() == 3);
    CHECK(pids.size() == 3);
    CHECK(masters.uris() ==
          std::vector<std::string>{masters.uri(0), masters.uri(1), masters.uri(2)});
    CHECK_THROWS_AS(masters.port(3), std::out_of_range);
    CHECK_THROWS_AS(masters.tls_port(0), std::logic_error);
    CHECK_THROWS_AS(masters.unix_path(0), std::logic_error);
}

TEST_CASE("local_masters::command round-trips replies of every shape", "[harness]")
{
    local_masters masters({.count = 1});
    CHECK(masters.command(0, {"SET", "greeting", "hello\r\nworld"}) == "+OK\r\n");
    CHECK(masters.command(0, {"GET", "greeting"}) == "$12\r\nhello\r\nworld\r\n");
    CHECK(masters.command(0, {"GET", "missing"}) == "$-1\r\n");
    CHECK(masters.command(0, {"EXISTS", "greeting"}) == ":1\r\n");
    CHECK(masters.command(0, std::vector<std::string>{"DEL", "greeting"}) == ":1\r\n");
    CHECK(masters.command(0, {"SET", "a", "1"}) == "+OK\r\n");
    CHECK(masters.command(0, {"SCAN", "0"}) == "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n");
    CHECK_THAT(masters.command(0, {"NOSUCHCOMMAND"}), Contains("-ERR"));
    // DEBUG is enabled for loopback so tests can make a master slow.
    CHECK(masters.command(0, {"DEBUG", "SLEEP", "0"}) == "+OK\r\n");
}

TEST_CASE("local_masters kill, restart and stop", "[harness]")
{
    local_masters masters({.count = 2});
    const auto port = masters.port(0);
    const pid_t old_pid = masters.pid(0);
    REQUIRE(masters.command(0, {"SET", "k", "v"}) == "+OK\r\n");

    masters.kill(0);
    CHECK(process_gone(old_pid));
    CHECK_FALSE(masters.is_running(0));
    CHECK_THROWS_AS(masters.pid(0), std::logic_error);
    CHECK(connect_loopback(port) == -ECONNREFUSED);
    CHECK_THROWS(masters.command(0, {"PING"}));
    CHECK(masters.command(1, {"PING"}) == "+PONG\r\n");  // the others are untouched
    masters.kill(0);                                     // idempotent

    masters.restart(0);
    CHECK(masters.is_running(0));
    CHECK(masters.port(0) == port);
    CHECK(masters.pid(0) != old_pid);
    CHECK(masters.command(0, {"PING"}) == "+PONG\r\n");
    CHECK(masters.command(0, {"GET", "k"}) == "$-1\r\n");  // nothing persisted

    const pid_t running_pid = masters.pid(0);
    masters.restart(0);  // while running: the old process is killed first
    CHECK(process_gone(running_pid));
    CHECK(masters.command(0, {"PING"}) == "+PONG\r\n");

    const pid_t stopped_pid = masters.pid(0);
    masters.stop(0);
    CHECK(process_gone(stopped_pid));
    CHECK_FALSE(masters.is_running(0));
    CHECK(connect_loopback(port) == -ECONNREFUSED);
    masters.restart(0);
    CHECK(masters.command(0, {"PING"}) == "+PONG\r\n");
}

TEST_CASE("local_masters pause makes command() time out, resume brings it back", "[harness]")
{
    local_masters masters({.count = 1});
    masters.pause(0);
    CHECK(masters.is_running(0));  // stopped, not dead

    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(masters.command(0, {"PING"}), Contains("no reply"));
    const auto waited = std::chrono::steady_clock::now() - start;
    CHECK(waited >= std::chrono::milliseconds(1500));
    CHECK(waited < std::chrono::milliseconds(3000));

    masters.resume(0);
    CHECK(masters.command(0, {"PING"}) == "+PONG\r\n");
}

TEST_CASE("local_masters listens on Unix sockets when asked", "[harness]")
{
    local_masters masters({.count = 2, .unix_sockets = true});
    for (std::size_t i = 0; i < masters.size(); ++i)
    {
        const std::string path = masters.unix_path(i);
        CHECK(fs::is_socket(path));
        CHECK(path.starts_with(masters.dir(i)));
        CHECK(masters.unix_uri(i) == "unix://" + path);
        CHECK(masters.unix_command(i, {"PING"}) == "+PONG\r\n");
    }
    CHECK(masters.command(0, {"CONFIG", "GET", "unixsocketperm"}) ==
          "*2\r\n$14\r\nunixsocketperm\r\n$3\r\n700\r\n");

    masters.kill(1);
    masters.restart(1);
    CHECK(masters.unix_command(1, {"PING"}) == "+PONG\r\n");
}

TEST_CASE("local_masters serves TLS with a generated CA", "[harness][tls]")
{
    local_masters masters({.count = 2, .tls = true});
    CHECK(fs::is_regular_file(masters.ca_file()));
    CHECK(fs::is_regular_file(masters.other_ca_file()));
    CHECK(masters.ca_file() != masters.other_ca_file());

    for (std::size_t i = 0; i < masters.size(); ++i)
    {
        CHECK(masters.tls_port(i) != masters.port(i));
        CHECK(masters.tls_uri(i) == "rediss://127.0.0.1:" + std::to_string(masters.tls_port(i)));
        CHECK(masters.command(i, {"PING"}) == "+PONG\r\n");

        const auto trusted = tls_ping(masters.tls_port(i), masters.ca_file());
        CHECK(trusted.handshake_ok);
        CHECK(trusted.verify_result == X509_V_OK);
        CHECK(trusted.reply == "+PONG\r\n");

        const auto untrusted = tls_ping(masters.tls_port(i), masters.other_ca_file());
        CHECK_FALSE(untrusted.handshake_ok);
        CHECK(untrusted.verify_result != X509_V_OK);
    }
}

TEST_CASE("local_masters applies extra_config and authenticates its own connections", "[harness]")
{
    local_masters masters(
        {.count = 1,
         .extra_config = {"user default off", "user admin on >s3cret ~* &* +@all"},
         .admin_user = "admin",
         .admin_password = "s3cret"});
    CHECK(masters.command(0, {"ACL", "WHOAMI"}) == "$5\r\nadmin\r\n");
}

TEST_CASE("local_masters leaves no process and no directory behind", "[harness]")
{
    std::vector<pid_t> pids;
    std::vector<fs::path> dirs;
    const auto remember = [&](const local_masters& masters) {
        for (std::size_t i = 0; i < masters.size(); ++i)
        {
            pids.push_back(masters.pid(i));
            dirs.push_back(masters.dir(i));
        }
        dirs.push_back(fs::path(masters.dir(0)).parent_path());
    };

    SECTION("on normal destruction, with a paused master")
    {
        local_masters masters({.count = 3, .unix_sockets = true, .tls = true});
        remember(masters);
        masters.pause(2);
    }
    SECTION("when the test throws")
    {
        CHECK_THROWS_WITH(
            [&] {
                local_masters masters({.count = 2});
                remember(masters);
                throw std::runtime_error("test failure");
            }(),
            "test failure");
    }
    SECTION("after being moved from")
    {
        local_masters outer({.count = 1});
        {
            local_masters inner({.count = 1});
            remember(inner);
            outer = std::move(inner);  // outer's own master is stopped here
        }
        CHECK(outer.command(0, {"PING"}) == "+PONG\r\n");
    }

    for (const pid_t pid : pids)
        CHECK(process_gone(pid));
    for (const auto& dir : dirs)
        CHECK_FALSE(fs::exists(dir));
    CHECK_FALSE(has_children());
}

TEST_CASE("local_masters reports start failures and cleans up", "[harness]")
{
    scratch_tmpdir scratch;

    SECTION("a bad config line: the server's own complaint is in the message")
    {
        CHECK_THROWS_WITH(local_masters({.count = 2, .extra_config = {"no-such-directive yes"}}),
                          Contains("no-such-directive") && Contains("exited during start-up"));
    }
    SECTION("no answer within start_timeout")
    {
        CHECK_THROWS_WITH(
            local_masters({.count = 1, .start_timeout = std::chrono::milliseconds(0)}),
            Contains("did not answer PING"));
    }
    SECTION("a missing executable")
    {
        CHECK_THROWS_WITH(
            local_masters({.count = 1, .redis_server = "no-such-redis-server-binary"}),
            Contains("not found in PATH"));
    }

    CHECK(scratch.empty());
    CHECK_FALSE(has_children());
}
