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
    if (o == master_outcome::granted && !choices_.empty())
        return record(master, o, 0);  // a grant without a choice is choice 0
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

    if (o == master_outcome::granted && choices_.empty())
        best_ = granted_;  // every grant so far is choice 0
    return decide();
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

quorum_state quorum_tracker::decide() noexcept
{
    if (state_ == quorum_state::undecided)
    {
        const auto q = quorum();
        if (best_ >= q)
            state_ = quorum_state::reached;
        else if (best_ + pending() < q)
            state_ = quorum_state::failed;
    }
    return state_;
}

redlock::error quorum_tracker::failure_reason() const noexcept
{
    // Grants of a losing choice (a semaphore's permits split between racing acquirers) are
    // contention too: other owners took the permits the majority would have needed.
    const auto other = held_ + (granted_ - best_);
    return other > 0 && other >= failed_ ? redlock::error::contended : redlock::error::no_quorum;
}

}  // namespace redlock::detail
