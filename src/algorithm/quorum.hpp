// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_QUORUM_HPP
#define REDLOCK_SRC_ALGORITHM_QUORUM_HPP

#include <redlock/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace redlock::detail {

/// @brief What one master answered in one round (acquire, extend or release).
enum class master_outcome : std::uint8_t
{
    pending,        ///< No answer yet.
    granted,        ///< The master agreed (SET NX succeeded, the script returned 1...).
    held_by_other,  ///< The master answered, but the key holds another owner's token.
    /// A cluster master whose slots disagreed: another owner holds some of the keys, and it
    /// granted the others (round::send_parts). Counts as held for the decision and its
    /// reason, but, unlike held_by_other, holds keys of ours that a release must delete.
    held_in_part,
    failed,     ///< Transport or server error.
    timed_out,  ///< No answer within the per-attempt deadline.
};

/// @brief The decision of one round.
enum class quorum_state : std::uint8_t
{
    undecided,  ///< Some masters are pending and both outcomes are still possible.
    reached,    ///< A majority granted.
    failed,     ///< Too few masters are left pending for a majority to grant.
};

/// @brief Counts the outcomes of one round over N masters and decides as early as certain.
///
/// The quorum is Q = N/2 + 1. The state becomes `reached` as soon as Q masters granted and
/// `failed` as soon as granted + pending < Q: from then on no later answer can change the
/// result, so the caller can complete (or release and retry) without waiting for the slow
/// masters. Once decided the state never changes; later outcomes are still stored and
/// counted, for diagnostics.
///
/// Outcomes live in an inline buffer for N <= 16 (the tracker does not allocate then) and
/// on the heap beyond.
///
/// @par Thread safety
/// Distinct objects: safe. Shared objects: unsafe.
class quorum_tracker
{
public:
    /// Masters handled without a heap allocation.
    static constexpr std::size_t inline_capacity = 16;

    /// @brief A tracker with every master pending.
    /// @param masters  N, at least 1.
    /// @throws std::invalid_argument if masters is 0.
    explicit quorum_tracker(std::size_t masters) : masters_(masters)
    {
        if (masters == 0)
            throw_no_master();
        if (masters > inline_capacity)
            heap_.assign(masters, master_outcome::pending);
    }

    /// @brief Makes this tracker as new, `quorum_tracker(masters)`, keeping the memory it has
    /// (a round's tracker is reset at every start).
    /// @throws std::invalid_argument if masters is 0.
    void reset(std::size_t masters)
    {
        if (masters == 0)
            throw_no_master();
        masters_ = masters;
        granted_ = best_ = held_ = failed_ = 0;
        winner_ = 0;
        state_ = quorum_state::undecided;
        inline_.fill(master_outcome::pending);
        heap_.clear();
        if (masters > inline_capacity)
            heap_.assign(masters, master_outcome::pending);
        choices_.clear();
    }

    /// @brief N.
    std::size_t masters() const noexcept { return masters_; }

    /// @brief Q = N/2 + 1, the number of grants that make a majority.
    std::size_t quorum() const noexcept { return masters_ / 2 + 1; }

    /// @brief Records master `master`'s outcome and returns the state after it.
    ///
    /// Only the first non-pending outcome of a master counts: later ones, `pending`, and an
    /// out-of-range index are ignored and return the current state (a duplicate or stray
    /// reply must not count twice toward the majority).
    /// Inline: every reply of every round is recorded.
    quorum_state record(std::size_t master, master_outcome o) noexcept
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
        case master_outcome::granted:
            ++granted_;
            best_ = granted_;  // no grant carried a choice: every grant so far is choice 0
            break;
        case master_outcome::held_by_other:
        case master_outcome::held_in_part: ++held_; break;
        case master_outcome::failed:
        case master_outcome::timed_out: ++failed_; break;
        case master_outcome::pending: break;
        }
        return decide();
    }

    /// @brief Records master `master`'s grant of choice `choice` (a semaphore's permit: which
    /// of its permit keys the master set) and returns the state after it.
    ///
    /// Once a round has a grant with a choice, the majority must agree on one choice: the
    /// state becomes `reached` when Q masters granted the same choice (winner() says which),
    /// and `failed` when no choice can reach Q any more (the best choice's grants plus the
    /// pending masters are fewer than Q). Grants without a choice (record() above) count as
    /// choice 0. As record(), only a master's first outcome counts.
    quorum_state record(std::size_t master, master_outcome o, std::uint32_t choice) noexcept;

    /// @brief The choice with the most grants (the one that reached the quorum, when it was
    /// reached with choices); 0 when no grant carried one.
    std::uint32_t winner() const noexcept { return winner_; }

    /// @brief Master `master`'s granted choice; none for a master that did not grant one.
    std::optional<std::uint32_t> choice(std::size_t master) const noexcept
    {
        if (master >= choices_.size() || choices_[master] == 0)
            return std::nullopt;
        return choices_[master] - 1;
    }

    /// @brief The decision so far; sticky once not `undecided`.
    quorum_state state() const noexcept { return state_; }

    /// @brief Master `master`'s recorded outcome (`pending` for an out-of-range index).
    master_outcome outcome(std::size_t master) const noexcept
    {
        return master < masters_ ? data()[master] : master_outcome::pending;
    }

    /// @brief Masters that granted.
    std::size_t granted() const noexcept { return granted_; }

    /// @brief Masters that answered with another owner's token.
    std::size_t held_by_other() const noexcept { return held_; }

    /// @brief Masters that failed or timed out.
    std::size_t failed() const noexcept { return failed_; }

    /// @brief Masters with no outcome yet.
    std::size_t pending() const noexcept { return masters_ - granted_ - held_ - failed_; }

    /// @brief Why the round failed: error::contended when another owner was seen at least as
    /// often as failures (held_by_other() > 0 and held_by_other() >= failed()), otherwise
    /// error::no_quorum. Grants of a choice other than winner() count as another owner's.
    ///
    /// Meaningful when state() is `failed`; it reflects every outcome recorded so far,
    /// including those after the decision.
    redlock::error failure_reason() const noexcept;

private:
    [[noreturn]] static void throw_no_master();
    master_outcome* data() noexcept { return heap_.empty() ? inline_.data() : heap_.data(); }
    const master_outcome* data() const noexcept
    {
        return heap_.empty() ? inline_.data() : heap_.data();
    }

    // The state after an outcome was counted (both record()s).
    quorum_state decide() noexcept
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

    std::size_t masters_;
    std::size_t granted_ = 0;
    std::size_t best_ = 0;  // the grants of the choice with the most (granted_ without choices)
    std::uint32_t winner_ = 0;
    std::size_t held_ = 0;
    std::size_t failed_ = 0;
    quorum_state state_ = quorum_state::undecided;
    // Both members rather than a pointer into inline_, so that the defaulted copy and move
    // stay correct; an empty vector does not allocate.
    std::array<master_outcome, inline_capacity> inline_{};
    std::vector<master_outcome> heap_;
    // Per master: 0, or its granted choice + 1; empty until a grant carries a choice (a
    // mutex's rounds never allocate it).
    std::vector<std::uint32_t> choices_;
};

}  // namespace redlock::detail

#endif
