// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_MASTER_SET_HPP
#define REDLOCK_SRC_OPERATION_MASTER_SET_HPP

#include <bit>
#include <cstddef>
#include <cstdint>

#include <boost/container/small_vector.hpp>

namespace redlock::detail {

/// @brief A set of master indices in [0, N), as a bit vector.
///
/// What an operation's action names when it concerns only some masters (e.g. the ones a
/// release waits for). One word inline: up to 64 masters the set does not allocate, and
/// actions are returned by value on every event.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class master_set
{
public:
    /// @brief The empty set over no master.
    master_set() = default;

    /// @brief The empty set over `masters` masters.
    explicit master_set(std::size_t masters) : words_((masters + 63) / 64, 0), masters_(masters) {}

    /// @brief N, the size of the universe (not of the set: see count()).
    std::size_t masters() const noexcept { return masters_; }

    /// @brief Whether master `i` is in the set; false for an index out of range.
    bool contains(std::size_t i) const noexcept
    {
        return i < masters_ && (words_[i / 64] >> (i % 64) & 1u) != 0;
    }

    /// @brief Adds master `i`; an index out of range is ignored.
    void insert(std::size_t i) noexcept
    {
        if (i < masters_)
            words_[i / 64] |= std::uint64_t{1} << (i % 64);
    }

    /// @brief Removes master `i`; an index out of range is ignored.
    void erase(std::size_t i) noexcept
    {
        if (i < masters_)
            words_[i / 64] &= ~(std::uint64_t{1} << (i % 64));
    }

    /// @brief The number of masters in the set.
    std::size_t count() const noexcept
    {
        std::size_t n = 0;
        for (const auto w : words_)
            n += static_cast<std::size_t>(std::popcount(w));
        return n;
    }

    /// @brief Whether no master is in the set.
    bool empty() const noexcept { return count() == 0; }

    friend bool operator==(const master_set&, const master_set&) = default;

private:
    boost::container::small_vector<std::uint64_t, 1> words_;
    std::size_t masters_ = 0;
};

/// @brief Which masters a round goes to, and which of those it waits for: what an operation
/// decided (src/fsm/aside_targets.hpp for the rounds nobody awaits), which the round carries
/// out (round::start's `to` and `awaited`).
struct send_plan
{
    master_set to;       ///< Sent the command.
    master_set awaited;  ///< Of `to`, those whose answers the round waits for.

    /// Every one of `masters`, sent to and awaited.
    static send_plan everyone(std::size_t masters)
    {
        send_plan p{master_set(masters), master_set(masters)};
        for (std::size_t i = 0; i < masters; ++i)
        {
            p.to.insert(i);
            p.awaited.insert(i);
        }
        return p;
    }
};

}  // namespace redlock::detail

#endif
