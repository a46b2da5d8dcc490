// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "config/master_identity.hpp"

#include <filesystem>
#include <vector>

#include <boost/asio/ip/address.hpp>

namespace redlock::detail {

namespace {

std::string normalised_host(std::string host)
{
    for (auto& c : host)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    if (host.size() > 1 && host.back() == '.')
        host.pop_back();
    if (host == "localhost")
        return "loopback";
    boost::system::error_code ec;
    auto addr = boost::asio::ip::make_address(host, ec);
    if (ec)
        return host;  // a name: compared as written
    if (addr.is_v6() && addr.to_v6().is_v4_mapped())
        addr = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, addr.to_v6());
    if (addr.is_v6() && addr.to_v6().scope_id() != 0)
        return addr.to_string();  // a zone makes it another address
    if ((addr.is_v4() && addr.to_v4() == boost::asio::ip::address_v4::loopback()) ||
        (addr.is_v6() && addr.to_v6() == boost::asio::ip::address_v6::loopback()))
        return "loopback";
    return addr.to_string();
}

}  // namespace

std::string endpoint_key(const master_config& m)
{
    if (m.transport == master_config::transport_kind::unix_socket)
        return "unix:" + std::filesystem::path(m.path).lexically_normal().string();
    return "tcp:" + normalised_host(m.host) + ":" + std::to_string(m.port);
}

std::optional<std::pair<std::size_t, std::size_t>> first_duplicate(
    std::span<const master_config> masters)
{
    // A cluster master is every one of its seeds: two masters that share a node are one.
    const auto keys_of = [](const master_config& m) {
        std::vector<std::string> out;
        if (!m.is_cluster())
            out.push_back(endpoint_key(m));
        for (const auto& seed : m.cluster_seeds)
            out.push_back("tcp:" + normalised_host(seed.host) + ":" + std::to_string(seed.port));
        return out;
    };
    std::vector<std::vector<std::string>> keys;
    keys.reserve(masters.size());
    for (std::size_t j = 0; j < masters.size(); ++j)
    {
        keys.push_back(keys_of(masters[j]));
        for (std::size_t i = 0; i < j; ++i)
            for (const auto& a : keys[i])
                for (const auto& b : keys[j])
                    if (a == b)
                        return std::pair{i, j};
    }
    return std::nullopt;
}

}  // namespace redlock::detail
