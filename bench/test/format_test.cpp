// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The masters as redlock-bench prints them, in its summary and its JSON's configuration
// (bench_format.cpp, printable_uri): never a password (guarantees.md B10).
#include <catch2/catch.hpp>

#include "../bench_format.hpp"

#include <string>

using redlock::bench::printable_uri;

TEST_CASE("format: printable_uri masks the password of every kind of master URI")
{
    for (const std::string uri :
         {"redis://:s3cret@127.0.0.1:6379", "redis://bench:s3cret@127.0.0.1:6379/2",
          "rediss://bench:s3cret@redis.example:6380",
          "redis-cluster://:s3cret@10.0.0.1:7000,10.0.0.2:7000",
          "unix://:s3cret@/run/redis/redis.sock", "redis://:s3cr%40t@127.0.0.1:6379"})
    {
        INFO(uri);
        const auto shown = printable_uri(uri);
        CHECK(shown.find("s3cr") == std::string::npos);
        CHECK(shown.find("***") != std::string::npos);
    }
    CHECK(printable_uri("redis://127.0.0.1:6379").find("127.0.0.1:6379") != std::string::npos);
    // A URI that does not parse is not echoed: it might hold a password.
    CHECK(printable_uri("redis://user:s3cret") == "<invalid uri>");
}

TEST_CASE("format: with_commas groups thousands")
{
    CHECK(redlock::bench::with_commas(1234567.8) == "1,234,568");
    CHECK(redlock::bench::with_commas(-1234.5, 1) == "-1,234.5");
    CHECK(redlock::bench::with_commas(999) == "999");
}
