// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/config.hpp>

#include <catch2/catch.hpp>

#include <boost/system/system_error.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using redlock::master_config;
using redlock::parse_master_uri;
using transport_kind = redlock::master_config::transport_kind;
using node_address = redlock::master_config::node_address;

// So that a failed check on cluster_seeds shows the seeds.
template <>
struct Catch::StringMaker<node_address>
{
    static std::string convert(const node_address& n)
    {
        return n.host + " port " + std::to_string(n.port);
    }
};

namespace {

master_config parse_ok(const std::string& uri)
{
    redlock::error_code ec;
    std::string why = "stale";
    auto cfg = parse_master_uri(uri, ec, why);
    INFO("uri: " << uri << "  why: " << why);
    REQUIRE_FALSE(ec);
    CHECK(why.empty());
    return cfg;
}

// Returns the message; checks the error code.
std::string parse_fail(const std::string& uri)
{
    redlock::error_code ec;
    std::string why;
    parse_master_uri(uri, ec, why);
    INFO("uri: " << uri);
    REQUIRE(ec == redlock::error::invalid_uri);
    REQUIRE_FALSE(why.empty());
    return why;
}

// The fields a parse must give, in master_config's order; an empty one is not checked.
struct fields
{
    std::optional<transport_kind> transport = std::nullopt;
    std::optional<std::string> host = std::nullopt;
    std::optional<std::uint16_t> port = std::nullopt;
    std::optional<std::string> path = std::nullopt;
    std::optional<std::string> username = std::nullopt;
    std::optional<std::string> password = std::nullopt;
    std::optional<int> db = std::nullopt;
    std::optional<std::vector<node_address>> cluster_seeds = std::nullopt;
};

// Parses `uri`, which must succeed, and checks each field `expected` gives.
void check_parse(const std::string& uri, const fields& expected)
{
    const auto c = parse_ok(uri);
    INFO("uri: " << uri);
    const auto check = [](const char* field, const auto& actual, const auto& wanted) {
        INFO(field);
        if (wanted)
            CHECK(actual == *wanted);
    };
    check("transport", c.transport, expected.transport);
    check("host", c.host, expected.host);
    check("port", c.port, expected.port);
    check("path", c.path, expected.path);
    check("username", c.username, expected.username);
    check("password", c.password, expected.password);
    check("db", c.db, expected.db);
    check("cluster_seeds", c.cluster_seeds, expected.cluster_seeds);
}

// Parses a cluster `uri`, which must succeed, and checks its seeds, in order, and that host and
// port are the first seed's.
void check_seeds(const std::string& uri, const std::vector<node_address>& seeds)
{
    check_parse(uri,
                {.host = seeds.front().host, .port = seeds.front().port, .cluster_seeds = seeds});
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("master URI: redis:// forms", "[uri]")
{
    SECTION("host only: default port, no auth, db 0")
    {
        check_parse("redis://localhost", {.transport = transport_kind::tcp,
                                          .host = "localhost",
                                          .port = 6379,
                                          .username = "",
                                          .password = "",
                                          .db = 0});
    }
    SECTION("host, port, db")
    {
        check_parse("redis://redis-1.example.com:7000/3",
                    {.host = "redis-1.example.com", .port = 7000, .db = 3});
    }
    SECTION("empty path and '/' mean db 0")
    {
        CHECK(parse_ok("redis://h/").db == 0);
        CHECK(parse_ok("redis://h:1/").port == 1);
    }
    SECTION("port limits")
    {
        CHECK(parse_ok("redis://h:1").port == 1);
        CHECK(parse_ok("redis://h:65535").port == 65535);
        CHECK(parse_ok("redis://h:06379").port == 6379);
    }
    SECTION("db limit is INT_MAX")
    {
        CHECK(parse_ok("redis://h/2147483647").db == 2147483647);
        CHECK(parse_ok("redis://h/007").db == 7);
    }
    SECTION("IPv4 and underscores")
    {
        CHECK(parse_ok("redis://10.0.0.1:6380").host == "10.0.0.1");
        CHECK(parse_ok("redis://redis_master").host == "redis_master");
    }
    SECTION("scheme is case-insensitive")
    {
        CHECK(parse_ok("REDIS://h").transport == transport_kind::tcp);
        CHECK(parse_ok("Rediss://h").transport == transport_kind::tls);
        CHECK(parse_ok("UNIX:///s").transport == transport_kind::unix_socket);
    }
}

TEST_CASE("master URI: user info", "[uri]")
{
    SECTION("user and password")
    {
        check_parse(
            "redis://alice:s3cret@h:6380/1",
            {.host = "h", .port = 6380, .username = "alice", .password = "s3cret", .db = 1});
    }
    SECTION("password only: default user")
    {
        check_parse("redis://:s3cret@h", {.username = "", .password = "s3cret"});
    }
    SECTION("percent-decoding, '+' is not a space, ':' in the password")
    {
        check_parse("redis://al%69ce%40corp:p%40ss%2Fw%3Ard+x:y@h",
                    {.username = "alice@corp", .password = "p@ss/w:rd+x:y"});
    }
    SECTION("decoding gives raw bytes, upper and lower hex")
    {
        const auto c = parse_ok("redis://:%00%ff%FF%7e@h");
        CHECK(c.password == std::string("\0\xff\xff~", 4));
    }
    SECTION("empty user info is no auth")
    {
        CHECK(parse_ok("redis://@h").password.empty());
        CHECK(parse_ok("redis://:@h").password.empty());
    }
    SECTION("sub-delimiters are allowed unescaped")
    {
        CHECK(parse_ok("redis://u:!$&'()*+,;=@h").password == "!$&'()*+,;=");
    }
}

TEST_CASE("master URI: rediss:// and IPv6", "[uri]")
{
    SECTION("TLS")
    {
        check_parse(
            "rediss://u:p@cache.example.com:6380/2",
            {.transport = transport_kind::tls, .host = "cache.example.com", .port = 6380, .db = 2});
    }
    SECTION("IPv6 with and without port")
    {
        CHECK(parse_ok("redis://[::1]").host == "::1");
        CHECK(parse_ok("redis://[::1]").port == 6379);
        check_parse("redis://:pw@[2001:db8::7]:7001/4",
                    {.host = "2001:db8::7", .port = 7001, .db = 4});
        CHECK(parse_ok("redis://[::ffff:10.0.0.1]").host == "::ffff:10.0.0.1");
    }
    SECTION("IPv6 zone identifier (RFC 6874)")
    {
        CHECK(parse_ok("redis://[fe80::1%25eth0]:6379").host == "fe80::1%eth0");
    }
}

TEST_CASE("master URI: redis-cluster:// and rediss-cluster://", "[uri][cluster]")
{
    SECTION("one seed: host and port are the seed's")
    {
        check_parse("redis-cluster://10.0.0.1:7000",
                    {.transport = transport_kind::tcp,
                     .host = "10.0.0.1",
                     .port = 7000,
                     .username = "",
                     .password = "",
                     .db = 0,
                     .cluster_seeds = std::vector<node_address>{{"10.0.0.1", 7000}}});
        CHECK(parse_ok("redis-cluster://h").is_cluster());
    }
    SECTION("several seeds in order, the default port, host and port of the first")
    {
        check_seeds("redis-cluster://node-a:7000,node-b,node-c:7002",
                    {{"node-a", 7000}, {"node-b", 6379}, {"node-c", 7002}});
        check_parse("redis-cluster://h",
                    {.port = 6379, .cluster_seeds = std::vector<node_address>{{"h", 6379}}});
    }
    SECTION("one host on several ports")
    {
        CHECK(parse_ok("redis-cluster://h:7000,h:7001").cluster_seeds.size() == 2);
    }
    SECTION("IPv6 seeds, with a zone")
    {
        check_seeds("redis-cluster://[::1]:7000,[2001:db8::7],[fe80::1%25eth0]:7002",
                    {{"::1", 7000}, {"2001:db8::7", 6379}, {"fe80::1%eth0", 7002}});
    }
    SECTION("TLS")
    {
        check_parse(
            "rediss-cluster://cache-1.example.com:6380,cache-2.example.com:6380",
            {.transport = transport_kind::tls, .host = "cache-1.example.com", .port = 6380});
    }
    SECTION("user info as for redis://; a ',' in the password is not a seed separator")
    {
        check_parse("rediss-cluster://alice:s%40cret@a:1,b:2",
                    {.username = "alice",
                     .password = "s@cret",
                     .cluster_seeds = std::vector<node_address>{{"a", 1}, {"b", 2}}});
        check_parse("redis-cluster://:pw@h", {.username = "", .password = "pw"});
        check_parse("redis-cluster://:p,w:1@a,b",
                    {.password = "p,w:1",
                     .cluster_seeds = std::vector<node_address>{{"a", 6379}, {"b", 6379}}});
    }
    SECTION("scheme is case-insensitive")
    {
        CHECK(parse_ok("REDIS-CLUSTER://h").transport == transport_kind::tcp);
        CHECK(parse_ok("Rediss-Cluster://h").transport == transport_kind::tls);
        CHECK(parse_ok("REDISS-CLUSTER://h").is_cluster());
    }
    SECTION("the db path may only say 0")
    {
        CHECK(parse_ok("redis-cluster://a:1,b:2/0").db == 0);
        CHECK(parse_ok("redis-cluster://a:1,b:2/").db == 0);
        CHECK(parse_ok("redis-cluster://a:1,b:2/0").cluster_seeds.size() == 2);
    }
    SECTION("redis:// and unix:// have no seeds")
    {
        CHECK_FALSE(parse_ok("redis://h").is_cluster());
        CHECK_FALSE(parse_ok("rediss://h").is_cluster());
        CHECK_FALSE(parse_ok("unix:///s").is_cluster());
    }
}

TEST_CASE("master URI: unix://", "[uri]")
{
    SECTION("path only")
    {
        check_parse("unix:///var/run/redis/redis.sock", {.transport = transport_kind::unix_socket,
                                                         .path = "/var/run/redis/redis.sock",
                                                         .password = "",
                                                         .db = 0});
    }
    SECTION("user info and db")
    {
        check_parse("unix://bob:pw%2F1@/tmp/redis.sock?db=5",
                    {.path = "/tmp/redis.sock", .username = "bob", .password = "pw/1", .db = 5});
    }
    SECTION("password only")
    {
        check_parse("unix://:pw@/s", {.path = "/s", .username = "", .password = "pw"});
    }
    SECTION("path is percent-decoded and may hold '@'")
    {
        CHECK(parse_ok("unix:///tmp/my%20redis.sock").path == "/tmp/my redis.sock");
        CHECK(parse_ok("unix:///run/redis@main.sock").path == "/run/redis@main.sock");
        CHECK(parse_ok("unix://:pw@/run/redis@main.sock").path == "/run/redis@main.sock");
    }
    SECTION("empty query and empty parameters are ignored")
    {
        CHECK(parse_ok("unix:///s?").db == 0);
        CHECK(parse_ok("unix:///s?&db=3&").db == 3);
    }
    SECTION("longest accepted path")
    {
        const std::string path = "/" + std::string(106, 'a');  // 107 bytes: sun_path - 1
        CHECK(parse_ok("unix://" + path).path == path);
    }
}

TEST_CASE("master URI: rejections name the problem", "[uri]")
{
    struct bad
    {
        std::string uri;
        std::string expected;  // part of the message
    };
    const std::vector<bad> cases = {
        {"", "empty"},
        {"localhost:6379", "scheme"},
        {"redis:/h", "scheme"},
        {"://h", "scheme"},
        {"1redis://h", "scheme"},
        {"http://h", "unknown scheme 'http'"},
        {"http://h", "redis://, rediss://, unix://"},
        {"redis+sentinel://h", "unknown scheme"},
        {"redis://", "empty host"},
        {"redis://:6379", "empty host"},
        {"redis://:pw@", "empty host"},
        {"redis://:pw@/1", "empty host"},
        {"redis://h:", "empty port"},
        {"redis://h:abc", "port is not a number"},
        {"redis://h:-1", "not a number"},
        {"redis://h:+1", "not a number"},
        {"redis://h:0", "port is out of range"},
        {"redis://h:65536", "out of range"},
        {"redis://h:99999999999999999999999", "out of range"},
        {"redis://h:6379x", "not a number"},
        {"redis://h/x", "db 'x' is not a non-negative integer"},
        {"redis://h/-1", "not a non-negative integer"},
        {"redis://h/1.5", "not a non-negative integer"},
        {"redis://h/2147483648", "out of range"},
        {"redis://h/99999999999999999999999", "out of range"},
        {"redis://h/1/2", "after the db"},
        {"redis://h//", "after the db"},
        {"redis://h/1#frag", "fragment"},
        {"redis://h#frag", "fragment"},
        {"redis://h?db=1", "unknown query parameter 'db'"},
        {"redis://h/1?timeout=1", "unknown query parameter 'timeout'"},
        {"redis://h%41", "invalid character '%'"},
        {"redis://h!x", "invalid character '!'"},
        {"redis://::1:6379", "brackets"},
        {"redis://[::1", "unterminated IPv6"},
        {"redis://[::1:6379/0", "unterminated IPv6"},
        {"redis://[]", "empty IPv6"},
        {"redis://[::g]", "invalid IPv6 address"},
        {"redis://[1.2.3.4]", "invalid IPv6 address"},
        {"redis://[::1]x", "after the IPv6 address"},
        {"redis://[::1]:", "empty port"},
        {"redis://[::1]:0", "out of range"},
        {"redis://[fe80::1%eth0]", "zone"},
        {"redis://[fe80::1%25]", "zone"},
        {"redis://[fe80::1%25e/th]", "unterminated IPv6"},
        {"redis://[fe80::1%25e!]", "zone"},
        {"redis://h x", "space or control character at offset 9"},
        {" redis://h", "offset 0"},
        {"redis://h\n", "control character"},
        {"redis://h\t:1", "control character"},
        {"redis://h\x7f", "control character"},
        {"redis://u%zz:pw@h", "bad percent escape in the user name"},
        {"redis://u:p%4@h", "bad percent escape in the password"},
        {"redis://u:p%@h", "bad percent escape in the password"},
        {"redis://u@h", "user name without a password"},
        {"redis://u:@h", "empty password for user 'u'"},
        {"redis://u:p/q@h", "unescaped '/'"},
        {"redis://u:p?q@h", "unescaped '?'"},
        {"redis://u:p#q@h", "unescaped '#'"},
        {"redis://u:p@q@h", "unescaped '@'"},
        {"redis://u:p[q@h", "unescaped '['"},
        {"redis://u:p]q@h", "unescaped ']'"},
        {"unix://", "absolute socket path"},
        {"unix://tmp/redis.sock", "absolute socket path"},
        {"unix://localhost/tmp/redis.sock", "absolute socket path"},
        {"unix://:pw@tmp/redis.sock", "absolute socket path"},
        {"unix:///", "empty socket path"},
        {"unix:///?db=1", "empty socket path"},
        {"unix:///s%zz", "bad percent escape in the socket path"},
        {"unix:///s%00x", "NUL"},
        {"unix:///" + std::string(107, 'a'), "limit is 107"},
        {"unix:///s?db=x", "db 'x' is not a non-negative integer"},
        {"unix:///s?db=-2", "not a non-negative integer"},
        {"unix:///s?db=2147483648", "out of range"},
        {"unix:///s?db=", "empty db"},
        {"unix:///s?db", "'db' has no value"},
        {"unix:///s?db=1&db=2", "more than once"},
        {"unix:///s?timeout=5", "unknown query parameter 'timeout' (accepted: db)"},
        {"unix:///s?db=1#x", "fragment"},
        {"unix:///s#x", "fragment"},
        {"unix://u@/s", "user name without a password"},
        {"unix://u:p/q@/s", "unescaped '/'"},
        // Clusters.
        {"unix-cluster:///s", "unknown scheme 'unix-cluster'"},
        {"unix-cluster:///s", "redis-cluster://, rediss-cluster://"},
        {"redis+cluster://h", "unknown scheme"},
        {"", "redis-cluster://"},
        {"redis-cluster://", "no seed node"},
        {"rediss-cluster://:pw@", "no seed node"},
        {"redis-cluster:///0", "no seed node"},
        {"redis-cluster://?x", "no seed node"},
        {"redis-cluster://a:1,,b:2", "seed 2 is empty"},
        {"redis-cluster://a:1,b:2,", "seed 3 is empty"},
        {"redis-cluster://,a", "seed 1 is empty"},
        {"redis-cluster://a,/0", "seed 2 is empty"},
        {"redis-cluster://a:1,b,a:1", "seeds 1 and 3 are the same node 'a:1'"},
        {"redis-cluster://h,h:6379", "seeds 1 and 2 are the same node 'h:6379'"},
        {"redis-cluster://Node-1,node-1", "seeds 1 and 2 are the same node"},
        {"redis-cluster://[::1]:7000,a,[::1]:7000", "seeds 1 and 3 are the same node '[::1]:7000'"},
        {"redis-cluster://h/1", "db 1 in a cluster URI: a Redis Cluster has only database 0"},
        {"rediss-cluster://a,b/15", "only database 0"},
        {"redis-cluster://h/x", "db 'x' is not a non-negative integer"},
        {"redis-cluster://h/0/1", "after the db"},
        {"redis-cluster://h?db=0",
         "unknown query parameter 'db' (redis-cluster:// and rediss-cluster:// take no"},
        {"redis-cluster://a,b/0?timeout=1", "unknown query parameter 'timeout'"},
        {"redis-cluster://h#f", "fragment"},
        {"redis-cluster://a:1,b:0", "seed 2: the port is out of range"},
        {"redis-cluster://a:1,b:x", "seed 2: the port is not a number"},
        {"redis-cluster://a:1,b:", "seed 2: empty port"},
        {"redis-cluster://a:1,:2", "seed 2: empty host"},
        {"redis-cluster://a:0,b:1", "seed 1: the port is out of range"},
        {"redis-cluster://a,b!c", "seed 2: invalid character '!' in host 'b!c'"},
        {"redis-cluster://a,::1", "seed 2: an IPv6 address must be written in brackets"},
        {"redis-cluster://a,[::1", "seed 2: unterminated IPv6"},
        {"redis-cluster://a,[::g]:1", "seed 2: invalid IPv6 address '::g'"},
        {"redis-cluster://a,[fe80::1%eth0]", "seed 2: bad IPv6 zone identifier"},
        {"redis-cluster://a, b", "space or control character at offset 18"},
        {"redis-cluster://u@h", "user name without a password"},
        {"redis-cluster://u:@h", "empty password for user 'u'"},
        {"redis-cluster://u:p/q@h", "unescaped '/'"},
    };
    for (const auto& c : cases)
    {
        const auto why = parse_fail(c.uri);
        INFO("uri: " << c.uri << "\nwhy: " << why);
        CHECK(contains(why, c.expected));
    }
}

TEST_CASE("master URI: the password never appears in a message", "[uri][secret]")
{
    const std::string secret = "Hunter2Secret";
    // Malformed in every part, with the secret as password (plain, with characters that
    // must be escaped, or percent-encoded).
    const std::vector<std::string> passwords = {
        secret,
        secret + "/x",
        "x/" + secret,
        secret + "@x",
        secret + "?db=1",
        secret + "#x",
        secret + ":" + secret,
        "%48unter2Secret",  // decodes to the secret
        secret + "%zz",
        secret + "%4",
        secret + "[",
        secret + "]:1",
    };
    const std::vector<std::string> shapes = {
        "redis://user:{}@",
        "redis://user:{}@:1",
        "redis://:{}@h:abc",
        "redis://:{}@h:0",
        "redis://:{}@h:70000",
        "redis://:{}@h/x",
        "redis://:{}@h/-1",
        "redis://:{}@h/1/2",
        "redis://:{}@h?db=1",
        "redis://:{}@h#x",
        "redis://:{}@[::1",
        "redis://:{}@[zz]",
        "redis://:{}@[::1]x",
        "redis://:{}@::1",
        "redis://:{}@h!",
        "redis://user:{}@h x",
        "redis://user:{} @h",
        "redis://user:{}\n@h",
        "rediss://u%zz:{}@h",
        "http://user:{}@h",
        "user:{}@h:6379",
        "redis:/user:{}@h",
        "redis://user:{}",
        "redis://user:{}:6379",
        "redis://user:{}/0",
        "unix://user:{}@",
        "unix://user:{}@tmp/s",
        "unix://user:{}/tmp/s",
        "unix://user:{}@/",
        "unix://user:{}@/s?db=x",
        "unix://user:{}@/s?nope=1",
        "unix://user:{}@/s%zz",
        "unix://:{}@/s#f",
        "unix://{}@/s",
        "redis://{}@h",
        "redis-cluster://user:{}@",
        "redis-cluster://user:{}",
        "redis-cluster://h,user:{}",
        "redis-cluster://:{}@a,,b",
        "redis-cluster://:{}@a,b,",
        "redis-cluster://:{}@a,a",
        "redis-cluster://:{}@a,b:0",
        "redis-cluster://:{}@a,b!",
        "redis-cluster://:{}@a,[::1",
        "redis-cluster://:{}@a/1",
        "redis-cluster://:{}@a?x=1",
        "rediss-cluster://u%zz:{}@a,b",
        "rediss-cluster://user:{}@a, b",
        "unix-cluster://user:{}@/s",
    };
    int failures_checked = 0;
    for (const auto& shape : shapes)
    {
        for (const auto& pw : passwords)
        {
            std::string uri = shape;
            uri.replace(uri.find("{}"), 2, pw);
            redlock::error_code ec;
            std::string why;
            const auto cfg = parse_master_uri(uri, ec, why);
            INFO("uri: " << uri << "\nwhy: " << why);
            if (ec)
            {
                ++failures_checked;
                CHECK_FALSE(contains(why, secret));
                CHECK_FALSE(contains(why, "Hunter2"));
                CHECK_FALSE(contains(why, "2Secret"));
                try
                {
                    parse_master_uri(uri);
                    FAIL("the throwing overload did not throw");
                }
                catch (const boost::system::system_error& e)
                {
                    CHECK(e.code() == redlock::error::invalid_uri);
                    CHECK_FALSE(contains(e.what(), secret));
                    CHECK_FALSE(contains(e.what(), "Hunter2"));
                }
            }
            else
            {
                // A few shapes are valid for some passwords: "{}@h" with "secret:secret"
                // is user "secret" (which may be printed) and password "secret" (which may
                // not). The printed form must mask the password.
                CHECK(contains(cfg.to_string(), ":***@"));
                if (!contains(cfg.username, "Hunter2"))
                    CHECK_FALSE(contains(cfg.to_string(), "Hunter2"));
            }
        }
    }
    CHECK(failures_checked > 350);
}

TEST_CASE("master URI: to_string hides the password and parses back", "[uri]")
{
    SECTION("masked")
    {
        CHECK(parse_ok("redis://alice:s3cret@h:7000/2").to_string() ==
              "redis://alice:***@h:7000/2");
        CHECK(parse_ok("redis://:s3cret@h").to_string() == "redis://:***@h:6379");
        CHECK(parse_ok("rediss://h").to_string() == "rediss://h:6379");
        CHECK(parse_ok("redis://[::1]:7/1").to_string() == "redis://[::1]:7/1");
        CHECK(parse_ok("redis://[fe80::1%25eth0]").to_string() == "redis://[fe80::1%25eth0]:6379");
        CHECK(parse_ok("unix://u:s3cret@/tmp/r.sock?db=3").to_string() ==
              "unix://u:***@/tmp/r.sock?db=3");
        CHECK(parse_ok("unix:///tmp/a%20b@c.sock").to_string() == "unix:///tmp/a%20b%40c.sock");
        CHECK(parse_ok("redis://a%40b%3Ac:pw@h").to_string() == "redis://a%40b%3Ac:***@h:6379");
        CHECK(parse_ok("redis-cluster://alice:s3cret@a:7000,[::1]:7001,B/0").to_string() ==
              "redis-cluster://alice:***@a:7000,[::1]:7001,B:6379");
        CHECK(parse_ok("Rediss-Cluster://:s3cret@[fe80::1%25eth0]").to_string() ==
              "rediss-cluster://:***@[fe80::1%25eth0]:6379");
    }
    SECTION("a config built in code with odd bytes")
    {
        master_config c;
        c.host = "h";
        c.username = "u";
        c.password = "Hunter2Secret";
        CHECK(c.to_string() == "redis://u:***@h:6379");
        c.password.clear();
        CHECK(c.to_string() == "redis://u@h:6379");
    }
    SECTION("a cluster built in code: the seeds, not host and port")
    {
        master_config c;
        c.transport = transport_kind::tls;
        c.host = "ignored";
        c.cluster_seeds = {{"a", 1}, {"fe80::1%eth0", 2}};
        CHECK(c.to_string() == "rediss-cluster://a:1,[fe80::1%25eth0]:2");
    }
    SECTION("round trip without a password")
    {
        for (const std::string uri :
             {"redis://h:1", "rediss://host.example:6380/15", "redis://[2001:db8::1]:6379/2",
              "unix:///tmp/x%3Fy.sock?db=1", "unix:///run/redis@main.sock", "unix:///a:b/c",
              "redis-cluster://h", "rediss-cluster://a:7000,b,[::1]:7002/0",
              "redis-cluster://[fe80::1%25eth0]:1,[fe80::1%25eth1]:1"})
        {
            const auto a = parse_ok(uri);
            const auto b = parse_ok(a.to_string());
            INFO(uri << " -> " << a.to_string());
            CHECK(a.transport == b.transport);
            CHECK(a.host == b.host);
            CHECK(a.port == b.port);
            CHECK(a.path == b.path);
            CHECK(a.db == b.db);
            CHECK(a.cluster_seeds == b.cluster_seeds);
        }
    }
    SECTION("round trip of a cluster with user info: the same but for the masked password")
    {
        const auto a = parse_ok("rediss-cluster://al%40ice:s3cret@a:1,[2001:db8::1]:2,c");
        const auto b = parse_ok(a.to_string());
        INFO(a.to_string());
        CHECK(b.transport == transport_kind::tls);
        CHECK(b.username == "al@ice");
        CHECK(b.password == "***");
        CHECK(b.cluster_seeds == a.cluster_seeds);
        CHECK(b.host == a.host);
        CHECK(b.port == a.port);
        CHECK(b.db == 0);
    }
}

TEST_CASE("master URI: the throwing overload", "[uri]")
{
    CHECK(parse_master_uri("redis://h:1").port == 1);
    try
    {
        parse_master_uri("redis://h:0");
        FAIL("did not throw");
    }
    catch (const boost::system::system_error& e)
    {
        CHECK(e.code() == redlock::error::invalid_uri);
        CHECK(contains(e.what(), "port is out of range"));
    }
}

TEST_CASE("connection_options::validate", "[options]")
{
    using std::chrono::milliseconds;
    redlock::error_code ec = redlock::error::no_quorum;  // overwritten on success
    std::string why = "stale";

    SECTION("defaults are valid")
    {
        redlock::connection_options{}.validate(ec, why);
        CHECK_FALSE(ec);
        CHECK(why.empty());
    }
    SECTION("boundary values are valid")
    {
        redlock::connection_options o;
        o.connect_timeout = milliseconds{1};
        o.health_check_interval = milliseconds{0};
        o.health_check_timeout = milliseconds{0};
        o.reconnect_min_delay = milliseconds{1};
        o.reconnect_max_delay = milliseconds{1};
        o.max_nesting_depth = 1024;
        o.max_bulk_length = 1;
        o.max_aggregate_size = 1;
        o.client_name.clear();
        o.validate(ec, why);
        CHECK_FALSE(ec);
    }

    struct bad
    {
        const char* name;
        void (*mutate)(redlock::connection_options&);
        const char* expected;
    };
    const bad cases[] = {
        {"connect_timeout 0", [](auto& o) { o.connect_timeout = milliseconds{0}; },
         "connect_timeout must be positive"},
        {"connect_timeout < 0", [](auto& o) { o.connect_timeout = milliseconds{-5}; },
         "connect_timeout must be positive (got -5 ms)"},
        {"health_check_interval < 0", [](auto& o) { o.health_check_interval = milliseconds{-1}; },
         "health_check_interval must not be negative"},
        {"health_check_timeout < 0", [](auto& o) { o.health_check_timeout = milliseconds{-1}; },
         "health_check_timeout must not be negative"},
        {"close_timeout < 0", [](auto& o) { o.close_timeout = milliseconds{-1}; },
         "close_timeout must not be negative"},
        {"reconnect_min_delay 0", [](auto& o) { o.reconnect_min_delay = milliseconds{0}; },
         "reconnect_min_delay must be positive"},
        {"reconnect_min_delay < 0", [](auto& o) { o.reconnect_min_delay = milliseconds{-1}; },
         "reconnect_min_delay must be positive"},
        {"max < min",
         [](auto& o) {
             o.reconnect_min_delay = milliseconds{100};
             o.reconnect_max_delay = milliseconds{99};
         },
         "reconnect_max_delay must not be less than reconnect_min_delay"},
        {"max_nesting_depth 0", [](auto& o) { o.max_nesting_depth = 0; },
         "max_nesting_depth must be positive"},
        {"max_nesting_depth 1025", [](auto& o) { o.max_nesting_depth = 1025; },
         "max_nesting_depth must not exceed 1024"},
        {"max_bulk_length 0", [](auto& o) { o.max_bulk_length = 0; },
         "max_bulk_length must be positive"},
        {"max_aggregate_size 0", [](auto& o) { o.max_aggregate_size = 0; },
         "max_aggregate_size must be positive"},
        {"client_name with space", [](auto& o) { o.client_name = "my app"; }, "client_name"},
        {"client_name with newline", [](auto& o) { o.client_name = "app\n"; }, "client_name"},
        {"client_name non-ASCII", [](auto& o) { o.client_name = "caf\xc3\xa9"; }, "client_name"},
    };
    for (const auto& c : cases)
    {
        redlock::connection_options o;
        c.mutate(o);
        ec = {};
        why.clear();
        o.validate(ec, why);
        INFO(c.name << ": " << why);
        CHECK(ec == redlock::error::invalid_option);
        CHECK(contains(why, c.expected));
    }
}
