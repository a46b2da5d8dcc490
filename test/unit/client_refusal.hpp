// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// What a client's constructor says of a configuration, without any master being reached.
#ifndef REDLOCK_TEST_UNIT_CLIENT_REFUSAL_HPP
#define REDLOCK_TEST_UNIT_CLIENT_REFUSAL_HPP

#include <catch2/catch.hpp>

#include <redlock/client.hpp>

#include <boost/asio/io_context.hpp>

#include <string>

namespace redlock::test {

/// The message of the invalid_option a client built from `cfg` throws, or "(accepted)".
inline std::string client_refusal(const client_config& cfg)
{
    boost::asio::io_context io;
    try
    {
        client c(io.get_executor(), cfg);
    }
    catch (const boost::system::system_error& e)
    {
        CHECK(e.code() == error::invalid_option);
        return e.what();
    }
    return "(accepted)";
}

}  // namespace redlock::test

#endif
