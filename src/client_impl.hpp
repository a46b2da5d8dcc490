// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_CLIENT_IMPL_HPP
#define REDLOCK_SRC_CLIENT_IMPL_HPP

#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include <redlock/options.hpp>

#include "algorithm/backoff.hpp"
#include "algorithm/token.hpp"
#include "detail/deadline_list.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

/// The shared state of a client: its strand, one connection per master, the deadline list
/// and the token source. Operations hold a shared_ptr to it; everything runs on `strand`.
class client_impl : public std::enable_shared_from_this<client_impl>
{
public:
    client_impl(asio::any_io_executor ex, client_config cfg, std::vector<master_config> masters);
    ~client_impl();

    void start();
    void close();

    std::size_t size() const noexcept { return conns.size(); }
    std::size_t quorum() const noexcept { return conns.size() / 2 + 1; }

    asio::any_io_executor strand;
    client_config cfg;
    std::vector<std::shared_ptr<node_connection>> conns;
    deadline_list deadlines;
    token_source tokens;
    xoshiro256ss jitter_rng{random_seed()};  // seeds each acquisition's retry schedule
    bool closed = false;
};

}  // namespace redlock::detail

#endif
