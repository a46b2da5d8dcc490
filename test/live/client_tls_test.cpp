// TLS through the client: a private CA given in client_config::tls, a wrong CA refused, and
// mutual TLS (redis-server --tls-auth-clients yes) with per-master settings in
// client_config::master_configs.
#include "client_fixture.hpp"

namespace redlock::test {

namespace {

std::vector<std::string> tls_uris(const local_masters& m)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m.size(); ++i)
        out.push_back(m.tls_uri(i));
    return out;
}

// Connects, then locks and unlocks once; returns the first error.
error_code lock_once(client_config cfg)
{
    asio::io_context io;
    client c(io.get_executor(), std::move(cfg));
    error_code result;
    run_bounded(
        io,
        [&]() -> asio::awaitable<void> {
            auto [wec, ready] = co_await c.async_wait_connected(tuple_awaitable);
            if (wec)
            {
                result = wec;
                co_return;
            }
            auto [ec, l] = co_await c.async_lock("tls", tuple_awaitable);
            if (ec)
            {
                result = ec;
                co_return;
            }
            auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
            result = uec;
        }(),
        10s);
    return result;
}

}  // namespace

TEST_CASE("client: TLS masters with a private CA given in client_config::tls",
          "[live][client][tls]")
{
    local_masters m({.count = 3, .tls = true});
    client_config cfg;
    cfg.masters = tls_uris(m);
    cfg.tls.ca_file = m.ca_file();
    CHECK_FALSE(lock_once(cfg));
    CHECK(total_keys(m) == 0);

    cfg.tls.ca_file = m.other_ca_file();  // the servers' certificate does not chain to it
    CHECK(lock_once(cfg) == error::no_quorum);

    cfg.tls.verify_peer = false;  // explicitly not verified: connects
    CHECK_FALSE(lock_once(cfg));
}

TEST_CASE("client: mutual TLS with per-master settings in client_config::master_configs",
          "[live][client][tls]")
{
    local_masters m({.count = 3, .tls = true, .extra_config = {"tls-auth-clients yes"}});
    auto with_certificate = [&](bool certificate) {
        client_config cfg;
        for (std::size_t i = 0; i < m.size(); ++i)
        {
            auto mc = parse_master_uri(m.tls_uri(i));
            mc.tls.ca_file = m.ca_file();
            mc.tls.server_name =
                "localhost";  // the certificate's DNS name, for SNI and verification
            if (certificate)
            {
                mc.tls.cert_file = m.cert_file();
                mc.tls.key_file = m.key_file();
            }
            cfg.master_configs.push_back(mc);
        }
        return cfg;
    };
    CHECK(lock_once(with_certificate(false)) ==
          error::no_quorum);  // the servers want a certificate
    CHECK_FALSE(lock_once(with_certificate(true)));
    CHECK(total_keys(m) == 0);

    // URIs and structures together: the same server in both lists is caught.
    auto both = with_certificate(true);
    both.masters = {m.tls_uri(0)};
    CHECK_THROWS_WITH(client(asio::io_context().get_executor(), both),
                      Catch::Contains("masters 0 (rediss://127.0.0.1:" +
                                      std::to_string(m.tls_port(0)) + ") and 1"));
}

}  // namespace redlock::test
