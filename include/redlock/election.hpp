// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_ELECTION_HPP
#define REDLOCK_ELECTION_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>

#include <redlock/client.hpp>
#include <redlock/error.hpp>
#include <redlock/hold.hpp>
#include <redlock/lock.hpp>

namespace redlock {

/// @brief How an election's candidates hold the lead and how its observers read it.
struct election_options
{
    /// The lead's TTL: how long a leader that stops extending (a killed process) keeps the
    /// lead at most; the next leader is elected within about this long plus one round trip.
    std::chrono::milliseconds ttl{10000};
    /// How the lead is kept alive (extend_before, max_hold...). Its `max_hold` is off (zero)
    /// by default here: a leader leads until it resigns or loses the lead.
    hold_options hold{std::chrono::milliseconds(0), 0, std::chrono::milliseconds(0), {}};
    /// An observer reads the masters at least this often while nothing tells it of a change
    /// (a master that refused client tracking, a lost invalidation): the bound on how stale an
    /// observer can be when tracking fails. With tracking, a change is heard within a round trip.
    std::chrono::milliseconds observe_interval{1000};
};

/// @brief Who leads an election, as a majority of the masters says (election::async_leader,
/// election::async_observe). Never the leader's token.
struct leader_info
{
    std::string identity;  ///< The identity the leader campaigned with.
    /// The leader's term: its fencing token, which grows with every new leader. A store that
    /// refuses writes with a term below the highest it has seen refuses a deposed leader's.
    std::uint64_t term = 0;
    /// How long a majority still holds the lead at most, from the read (as
    /// holder_info::valid_for): the leader's validity ends no later.
    std::chrono::milliseconds valid_for{0};
    /// The same end as a point in time: when the read completed, plus valid_for. Past it, this
    /// answer says nothing of who leads.
    std::chrono::steady_clock::time_point valid_until{};
    /// An opaque name of the leader's term (holder_info::id): another for each new leader,
    /// also for a candidate that leads again.
    std::string id;
    std::size_t masters = 0;  ///< How many masters hold the lead.

    /// The same leader in the same term.
    friend bool operator==(const leader_info& a, const leader_info& b) noexcept
    {
        return a.id == b.id && a.term == b.term;
    }
};

/// @brief The lead of an election, held and kept alive (auto-extension) while this object
/// lives: a lock_holder with the leader's term.
///
/// When the lead is lost (an extension fails, the validity runs out), a terminal cancellation
/// is emitted on loss_slot() and status() says why (as lock_holder's). Destroying it, resign()
/// or async_resign() step down: the release is sent at once, and a candidate of the same client
/// waiting in async_campaign has its attempt written behind it on every connection, so it
/// takes the lead first (docs/usage.md, "Leader election").
class leadership
{
public:
    /// The type of the executor on which the loss signal is emitted.
    using executor_type = lock_holder::executor_type;

    /// Leads nothing.
    leadership() = default;
    /// Holds `l`, a lock taken by a campaign, with the options `o`; the loss signal is emitted
    /// on `work_executor`.
    leadership(client& c, lock l, hold_options o, executor_type work_executor);

    /// The leader's term: the lock's fencing token. Write it beside every write to the
    /// resources the leader guards.
    std::uint64_t term() const noexcept { return term_; }
    /// The identity this leader campaigned with.
    std::string_view identity() const noexcept { return identity_; }
    /// True while this candidate leads: not lost, not resigned, validity left.
    bool leading() const { return holder_.held(); }
    /// Empty while leading; otherwise why not (lock_holder::status()).
    error_code status() const { return holder_.status(); }
    /// The lock as last extended.
    lock current() const { return holder_.current(); }
    /// Receives a terminal cancellation when the lead is lost (not when it is resigned).
    boost::asio::cancellation_slot loss_slot() { return holder_.loss_slot(); }
    /// Steps down without waiting (asynchronously; never blocks or throws). Idempotent.
    void resign() noexcept { holder_.release(); }

    /// @brief Steps down, and completes once the release is decided (lock_holder::
    /// async_release).
    ///
    /// @par Handler signature
    /// `void(error_code)`
    ///
    /// @par Per-operation cancellation
    /// As lock_holder::async_release: the release goes on.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_resign(CompletionToken&& token = {})
    {
        return holder_.async_release(std::forward<CompletionToken>(token));
    }

private:
    lock_holder holder_;
    std::uint64_t term_ = 0;
    std::string identity_;
};

namespace detail {
void start_campaign(client& c, const std::string& name, std::string_view identity,
                    const election_options& o,
                    boost::asio::any_completion_handler<void(error_code, leadership)> h);
void start_leader(
    client& c, const std::string& name, const election_options& o,
    boost::asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h);
void start_observe(
    client& c, const std::string& name, const election_options& o, std::optional<leader_info> seen,
    boost::asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h);
}  // namespace detail

/// @brief Leader election over a quorum of masters: candidates campaign for one resource;
/// the one that takes it leads (with a term that grows with every new leader) until it resigns
/// or loses the lead; anyone may read or observe who leads. See docs/usage.md, "Leader
/// election", and docs/algorithm.md, "Leader election".
///
/// The lead is a fenced mutex (lock_options::fencing) on `name`, taken with `wait` and the
/// candidate's identity, and kept by a lock_holder: a deposed leader cannot see itself as
/// leader past its validity, and its term is refused by a store that saw a later one.
///
/// The election object may be destroyed while its operations run: each copies what it needs.
/// The client must outlive them.
class election
{
public:
    /// An election for the resource `name` on the client `c`, in which this process campaigns
    /// as `identity` (a short public text such as host:port: printable, no spaces, at most
    /// max_identity_size bytes; a campaign with a bad one fails with error::invalid_option).
    election(client& c, std::string_view name, std::string_view identity);
    /// As above, with the options `o`.
    election(client& c, std::string_view name, std::string_view identity, election_options o);

    /// The resource the candidates campaign for.
    const std::string& name() const noexcept { return name_; }
    /// This candidate's identity.
    const std::string& identity() const noexcept { return identity_; }
    /// The options given at construction.
    const election_options& options() const noexcept { return o_; }

    /// @brief Waits until this candidate leads, and completes with the lead, kept alive from
    /// then on (its loss signal emitted on the client's executor).
    ///
    /// Waits as long as it takes: a refused attempt waits for the leader's release or expiry
    /// (woken by the masters' client tracking); masters that do not answer are retried. Errors:
    /// invalid_option (a bad identity or options), invalid_argument (a bad name),
    /// connection_closed, operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, leadership)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total: as async_lock's (an attempt under way is released on
    /// every master first).
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_campaign(CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, leadership)>(
            [this](auto handler) {
                detail::start_campaign(*c_, name_, identity_, o_, std::move(handler));
            },
            token);
    }

    /// @brief Who leads now, read from every master (as client::async_holders): empty when
    /// no one leads. A leader's term is committed on the masters about one round trip after
    /// its campaign completes; a read that finds the lead taken but its term not yet committed
    /// waits once for the commit (pushed by the masters, bounded by the read's timeout).
    ///
    /// Errors: no_quorum (fewer than a majority answered), invalid_argument, connection_closed,
    /// operation_aborted.
    ///
    /// @par Handler signature
    /// `void(error_code, std::optional<leader_info>)`
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_leader(CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken,
                                           void(error_code, std::optional<leader_info>)>(
            [this](auto handler) { detail::start_leader(*c_, name_, o_, std::move(handler)); },
            token);
    }

    /// @brief Completes with the leader as soon as it differs from `seen` (another leader,
    /// another term, or none where `seen` had one): call it in a loop, passing what it gave.
    ///
    /// Woken by the masters' client tracking when the lead's keys change (a new leader, a
    /// release, an expiry) and by this client's own campaigns and resignations; reads again
    /// when the leader's validity runs out and at least every observe_interval. Errors: as
    /// async_leader's, and operation_aborted. A read that fewer than a majority answer is not
    /// reported: the observer waits for a majority, but once `seen`'s validity has ended
    /// (leader_info::valid_until) it completes with no leader, since it can no longer say
    /// that one leads.
    ///
    /// @par Handler signature
    /// `void(error_code, std::optional<leader_info>)`
    ///
    /// @par Per-operation cancellation
    /// terminal, partial and total: completes at once with operation_aborted.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_observe(const std::optional<leader_info>& seen, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken,
                                           void(error_code, std::optional<leader_info>)>(
            [this](auto handler, std::optional<leader_info> s) {
                detail::start_observe(*c_, name_, o_, std::move(s), std::move(handler));
            },
            token, seen);
    }

private:
    client* c_;
    std::string name_;
    std::string identity_;
    election_options o_;
};

}  // namespace redlock

#endif
