// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/replica_acks.hpp"

#include <charconv>
#include <utility>

namespace redlock::detail {

bool replica_ack_queue::sent(sent_command c)
{
    pending_.push_back(c);
    if (scheduled_)
        return false;
    scheduled_ = true;
    return true;
}

void replica_ack_queue::wait_queued()
{
    scheduled_ = false;
    covers_.push_back(std::move(pending_));
    pending_.clear();
}

std::vector<replica_ack_queue::sent_command> replica_ack_queue::wait_answered()
{
    if (covers_.empty())
        return {};
    auto out = std::move(covers_.front());
    covers_.pop_front();
    return out;
}

error_code read_wait_reply(const resp::node_view& head, unsigned required, std::string& detail)
{
    if (resp::is_error(head.data_type))
    {
        detail = "WAIT was refused: " + std::string(head.value);
        return error::not_replicated;
    }
    long long replicas = 0;
    if (head.data_type != resp::type::integer ||
        std::from_chars(head.value.data(), head.value.data() + head.value.size(), replicas).ec !=
            std::errc{})
    {
        detail = "WAIT sent an unreadable reply";
        return error::not_replicated;
    }
    if (replicas >= static_cast<long long>(required))
        return {};
    detail = "WAIT saw " + std::to_string(replicas) + " of the " + std::to_string(required) +
             " replica acknowledgement(s) required in time";
    return error::not_replicated;
}

}  // namespace redlock::detail
