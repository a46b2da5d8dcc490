// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The value a lock's keys hold: the token alone, or `<token> <identity>`
// (lock_options::identity), and how a reader takes it apart.
#include "algorithm/lock_value.hpp"

#include <catch2/catch.hpp>

#include <redlock/options.hpp>

#include "algorithm/token.hpp"

using redlock::detail::compose_value;
using redlock::detail::identity_problem;
using redlock::detail::split_value;

TEST_CASE("lock value: the token alone without an identity, token space identity with one",
          "[unit][identity]")
{
    redlock::detail::token_source tokens;
    const auto token = tokens.next();
    CHECK(compose_value(token, "") == token);
    CHECK(compose_value(token, "web-3:8080") == token + " web-3:8080");
    CHECK(compose_value(token, "a b") == token + " a b");  // spaces in the identity are kept

    std::string reused(300, 'x');
    const auto capacity = reused.capacity();
    redlock::detail::compose_value_into(reused, token, "worker 7");
    CHECK(reused == token + " worker 7");
    CHECK(reused.capacity() == capacity);  // no new storage once large enough
    redlock::detail::compose_value_into(reused, token, "");
    CHECK(reused == token);
}

TEST_CASE("lock value: split at the space after the 40 hex characters of a token",
          "[unit][identity]")
{
    redlock::detail::token_source tokens;
    const auto token = tokens.next();
    for (const std::string identity : {"web-3:8080", "a b c", " leading", "x", "trailing "})
    {
        INFO(identity);
        const auto value = compose_value(token, identity);
        const auto parts = split_value(value);  // views into value
        CHECK(parts.token == token);
        CHECK(parts.identity == identity);
    }
    // A bare token, this library's or another client's, has no identity.
    CHECK(split_value(token).token == token);
    CHECK(split_value(token).identity.empty());
    CHECK(split_value("").identity.empty());
    const std::string other = "0123456789ABCDEF0123456789ABCDEF01234567 not-ours";  // uppercase
    CHECK(split_value(other).token == other);
    CHECK(split_value(other).identity.empty());
    const std::string short_token = "0123abcd someone";
    CHECK(split_value(short_token).token == short_token);
    CHECK(split_value(short_token).identity.empty());
    CHECK(split_value(token + " ").identity.empty());      // a space, then nothing: not ours
    CHECK(split_value(token + "x web").identity.empty());  // no space at offset 40
}

TEST_CASE("lock value: an identity is 1 to 128 bytes of printable ASCII", "[unit][identity]")
{
    CHECK(identity_problem("").empty());
    CHECK(identity_problem("web-3:8080").empty());
    CHECK(identity_problem(" ~ ").empty());  // 0x20 and 0x7E are in
    CHECK(identity_problem(std::string(redlock::max_identity_size, 'a')).empty());
    CHECK_THAT(identity_problem(std::string(redlock::max_identity_size + 1, 'a')),
               Catch::Contains("lock_options::identity is 129 bytes long: at most 128"));
    CHECK_THAT(identity_problem("web\n3"),
               Catch::Contains("lock_options::identity has byte 0x0A at offset 3"));
    CHECK_THAT(identity_problem(std::string("a\0b", 3)), Catch::Contains("byte 0x00 at offset 1"));
    CHECK_THAT(identity_problem("tab\there"), Catch::Contains("byte 0x09"));
    CHECK_THAT(identity_problem("del\x7f"), Catch::Contains("byte 0x7F"));
    CHECK_THAT(identity_problem("caf\xc3\xa9"), Catch::Contains("byte 0xC3 at offset 3"));
}
