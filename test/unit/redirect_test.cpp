// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/redirect.hpp"

#include <catch2/catch.hpp>

#include <initializer_list>
#include <string_view>

using redlock::detail::cluster_endpoint, redlock::detail::is_cluster_retryable,
    redlock::detail::parse_redirect, redlock::detail::redirect, redlock::detail::redirect_kind;

namespace {

redirect expected(redirect_kind kind, std::uint16_t slot, std::string_view host, std::uint16_t port)
{
    return redirect{kind, slot, cluster_endpoint{std::string(host), port, {}}};
}

// An error text, the node that answered it, and the redirection it must be read as.
struct redirect_case
{
    std::string_view text;
    std::string_view answering;
    redirect_kind kind;
    std::uint16_t slot;
    std::string_view host;
    std::uint16_t port;
};

void check_redirects(std::initializer_list<redirect_case> cases)
{
    for (const auto& c : cases)
    {
        INFO("error text \"" << c.text << "\" from " << c.answering);
        CHECK(parse_redirect(c.text, c.answering) == expected(c.kind, c.slot, c.host, c.port));
    }
}

}  // namespace

TEST_CASE("redirect: MOVED and ASK name the slot and the node", "[redirect]")
{
    check_redirects({
        {"MOVED 3999 127.0.0.1:6381", "10.0.0.1", redirect_kind::moved, 3999, "127.0.0.1", 6381},
        {"ASK 3999 127.0.0.1:6381", "10.0.0.1", redirect_kind::ask, 3999, "127.0.0.1", 6381},
        {"MOVED 0 redis-2.example:1", "", redirect_kind::moved, 0, "redis-2.example", 1},
        {"MOVED 16383 h:65535", "", redirect_kind::moved, 16383, "h", 65535},
    });

    SECTION("an IPv6 host is split at the last colon, brackets or not")
    {
        check_redirects({
            {"MOVED 12182 ::1:7000", "", redirect_kind::moved, 12182, "::1", 7000},
            {"ASK 1 fe80::1:2:3:6379", "", redirect_kind::ask, 1, "fe80::1:2:3", 6379},
            {"MOVED 1 [::1]:7000", "", redirect_kind::moved, 1, "::1", 7000},
        });
    }
    SECTION("an empty host is the node that answered")
    {
        // What redis-server 7.0.15 sends with cluster-preferred-endpoint-type unknown-endpoint:
        // "-MOVED 12182 :23703\r\n" (seen on a local cluster).
        check_redirects({
            {"MOVED 12182 :23703", "10.1.2.3", redirect_kind::moved, 12182, "10.1.2.3", 23703},
            {"ASK 7 :6379", "::1", redirect_kind::ask, 7, "::1", 6379},
        });
        CHECK_FALSE(parse_redirect("MOVED 7 :6379", ""));
    }
}

TEST_CASE("redirect: anything else is no redirection", "[redirect]")
{
    const std::string_view not_redirects[] = {
        "",
        "MOVED",
        "MOVED ",
        "MOVED 3999",
        "MOVED 3999 ",
        "MOVED x y",
        "MOVED 3999 127.0.0.1",   // no port
        "MOVED 3999 127.0.0.1:",  // empty port
        "MOVED 16384 h:1",        // slot out of range
        "MOVED 1 ?:6379",         // a node with no host name to offer: read the map again
        "ASK 1 ?:6379",
        "MOVED 99999 h:1",
        "MOVED 123456 h:1",
        "MOVED -1 h:1",
        "MOVED +1 h:1",
        "MOVED 1 h:0",  // port out of range
        "MOVED 1 h:65536",
        "MOVED 1 h:100000",
        "MOVED 1 h:-1",
        "MOVED 1 h:6379x",
        "MOVED 1 h:6379 extra",  // trailing garbage
        "MOVED 1 h:6379 ",
        "MOVED  1 h:6379",  // fields are separated by one space
        "MOVED 1  h:6379",
        " MOVED 1 h:6379",
        "moved 1 h:6379",  // the server writes the word in capitals
        "MOVEDX 1 h:6379",
        "-MOVED 1 h:6379",  // the text comes without the type byte
        "ERR unknown command",
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "ASKING",
    };
    for (const auto text : not_redirects)
    {
        INFO("error text \"" << text << "\"");
        CHECK_FALSE(parse_redirect(text, "answering.host"));
    }
}

TEST_CASE("redirect: TRYAGAIN and CLUSTERDOWN are worth a later retry", "[redirect]")
{
    for (const std::string_view text :
         {"TRYAGAIN Multiple keys request during rehashing of slot",
          "CLUSTERDOWN The cluster is down", "CLUSTERDOWN Hash slot not served", "TRYAGAIN",
          "CLUSTERDOWN"})
    {
        INFO("error text \"" << text << "\"");
        CHECK(is_cluster_retryable(text));
    }
    for (const std::string_view text :
         {"", "TRYAGAINX", "CLUSTERDOWNED", "tryagain", "ERR TRYAGAIN", "MOVED 1 h:1",
          "LOADING Redis is loading the dataset in memory"})
    {
        INFO("error text \"" << text << "\"");
        CHECK_FALSE(is_cluster_retryable(text));
    }
}
