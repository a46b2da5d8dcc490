// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_TRANSPORT_MASTER_IDENTITY_HPP
#define REDLOCK_SRC_TRANSPORT_MASTER_IDENTITY_HPP

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <redlock/config.hpp>

namespace redlock::detail {

/// @brief The server a master's configuration reaches, as far as it can be known without
/// resolving names: two masters with the same key are one server, and a quorum over them is
/// not one.
///
/// TCP and TLS are one family (redis:// and rediss:// to one host and port reach one server);
/// the db index, user and password do not matter. A host is compared case-insensitively
/// without a trailing dot; IP literals as addresses (an IPv4-mapped IPv6 address as its IPv4
/// address); `localhost`, 127.0.0.1 and ::1 as one loopback host. Unix socket paths are
/// compared lexically normalised. Not knowable here: two host names of one server, a port
/// forward, or 127.0.0.2 against 127.0.0.1 on a server listening on every address.
std::string endpoint_key(const master_config& m);

/// The first pair (i, j), i < j, of `masters` with the same endpoint_key; nullopt when none.
std::optional<std::pair<std::size_t, std::size_t>> first_duplicate(
    std::span<const master_config> masters);

}  // namespace redlock::detail

#endif
