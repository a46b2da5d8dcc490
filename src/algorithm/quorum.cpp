// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/quorum.hpp"

#include <stdexcept>

namespace redlock::detail {

void quorum_tracker::throw_no_master()
{
    throw std::invalid_argument("quorum_tracker: at least one master is needed");
}

quorum_state quorum_tracker::record(std::size_t master, master_outcome o) noexcept
{
    if (master >= masters_ || o == master_outcome::pending)
        return state_;
    auto& slot = data()[master];
    if (slot != master_outcome::pending)
        return state_;
    slot = o;

    switch (o)
    {
    case master_outcome::granted: ++granted_; break;
    case master_outcome::held_by_other:
    case master_outcome::held_in_part: ++held_; break;
    case master_outcome::failed:
    case master_outcome::timed_out: ++failed_; break;
    case master_outcome::pending: break;
    }

    if (state_ == quorum_state::undecided)
    {
        const auto q = quorum();
        if (granted_ >= q)
            state_ = quorum_state::reached;
        else if (granted_ + pending() < q)
            state_ = quorum_state::failed;
    }
    return state_;
}

redlock::error quorum_tracker::failure_reason() const noexcept
{
    return held_ > 0 && held_ >= failed_ ? redlock::error::contended : redlock::error::no_quorum;
}

}  // namespace redlock::detail
