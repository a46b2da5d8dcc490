// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/with_diagnostics.hpp>

#include "runtime/lock_state.hpp"

namespace redlock {

operation_error::operation_error(error_code ec, std::string message,
                                 std::vector<std::string> resources,
                                 std::vector<master_diagnostic> masters)
    : boost::system::system_error(ec),
      message_(std::move(message)),
      resources_(std::move(resources)),
      masters_(std::move(masters))
{}

std::exception_ptr detail::make_operation_error(std::string_view operation, failure_subject subject,
                                                error_code ec, const lock* result,
                                                std::span<const master_diagnostic> masters)
{
    if (subject.resources.empty() && result)
        subject.resources.assign(result->resources().begin(), result->resources().end());
    if (result && !result->masters().empty())
        masters = result->masters();

    // "async_lock 'orders': no quorum ... (reason); masters: [0] granted 120us [1] ..."
    std::string message(operation);
    for (std::size_t i = 0; i < subject.resources.size(); ++i)
        message += (i == 0 ? " '" : ", '") + subject.resources[i] + "'";
    message += ": " + ec.message();
    std::string reason(result ? result->reason() : std::string_view());
    if (reason.empty() && ec == error::invalid_option && subject.options)
    {
        error_code ignored;
        validate(*subject.options, ignored, reason);
    }
    if (!reason.empty())
        message += " (" + reason + ")";
    if (!masters.empty())
        message += "; masters:" + describe_masters(masters);
    return std::make_exception_ptr(operation_error(
        ec, std::move(message), std::move(subject.resources), {masters.begin(), masters.end()}));
}

}  // namespace redlock
