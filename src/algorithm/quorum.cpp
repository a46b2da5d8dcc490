// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/quorum.hpp"

#include <stdexcept>

namespace redlock::detail {

void quorum_tracker::throw_no_master()
{
    throw std::invalid_argument("quorum_tracker: at least one master is needed");
}

quorum_state quorum_tracker::record(std::size_t master, master_outcome o,
                                    std::uint32_t choice) noexcept
{
    if (o != master_outcome::granted || master >= masters_ ||
        data()[master] != master_outcome::pending)
        return record(master, o);
    if (choices_.empty())
    {
        try
        {
            choices_.assign(masters_, 0);
        }
        catch (...)
        {
            // No memory for the choices: counted as failed, which keeps the decision safe.
            return record(master, master_outcome::failed);
        }
        // Grants recorded before without a choice were choice 0.
        for (std::size_t i = 0; i < masters_; ++i)
            if (data()[i] == master_outcome::granted)
                choices_[i] = 1;
    }
    data()[master] = o;
    ++granted_;
    choices_[master] = choice + 1;
    std::size_t same = 0;
    for (const auto c : choices_)
        same += c == choice + 1 ? 1 : 0;
    if (same > best_)
    {
        best_ = same;
        winner_ = choice;
    }
    return decide();
}

redlock::error quorum_tracker::failure_reason() const noexcept
{
    // Grants of a losing choice (a semaphore's permits split between racing acquirers) are
    // contention too: other owners took the permits the majority would have needed.
    const auto other = held_ + (granted_ - best_);
    return other > 0 && other >= failed_ ? redlock::error::contended : redlock::error::no_quorum;
}

}  // namespace redlock::detail
