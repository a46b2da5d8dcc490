// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DETAIL_LOCK_STATE_HPP
#define REDLOCK_SRC_DETAIL_LOCK_STATE_HPP

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <redlock/lock.hpp>
#include <redlock/options.hpp>

#include "protocol/lock_kind.hpp"

namespace redlock::detail {

/// Each master's outcome of a round. Inline up to 7 masters: a lock takes its round's
/// diagnostics on every acquisition, which would otherwise be an allocation per lock.
using diagnostic_list = boost::container::small_vector<master_diagnostic, 7>;

/// A lock's token, inline up to the 40 characters of the tokens the client makes (a
/// std::string would allocate for them on every acquisition); longer tokens given to
/// lock_from_parts are kept too.
class token_text
{
public:
    void assign(std::string_view s) { chars_.assign(s.begin(), s.end()); }
    bool empty() const noexcept { return chars_.empty(); }
    operator std::string_view() const noexcept { return {chars_.data(), chars_.size()}; }

private:
    boost::container::small_vector<char, 40> chars_;
};

/// What this client knows of a held lock's keys, shared by every copy of the lock and by the
/// locks derived from it (an extension's, a hold's): whether the claim has ended (a release
/// or hand-over began, an extension failed, a hold was lost) and until when it was last
/// proven. Touched on the client's strand only. A lock is handed over (round::start_release)
/// only while its claim is live, with the claim's validity, never with a copy's.
struct claim_state
{
    std::chrono::steady_clock::time_point valid_until{};
    bool over = false;
    bool offerable = true;  ///< false: rebuilt by lock_from_parts, never handed over

    claim_state() = default;
    // A copy of a lock_state never carries a claim of its own: derive() makes the copy share
    // the original's. Not copying it also keeps a copy made on another thread
    // (lock_holder::current()) from reading what the strand writes here (a data race that
    // ThreadSanitizer found).
    claim_state(const claim_state&) noexcept {}
    claim_state& operator=(const claim_state&) noexcept { return *this; }
};

/// The immutable state shared by the copies of a lock. Opaque to users: the public header
/// only names it, so that what a lock holds can change without touching the API.
struct lock_state
{
    std::string resource;  ///< The (first) resource.
    std::string key;       ///< The (first) key.
    token_text token;
    std::chrono::steady_clock::time_point valid_until{};
    std::chrono::milliseconds ttl{0};  ///< The TTL the keys were last set or extended with.
    std::vector<std::uint64_t>
        fences;  ///< The fencing tokens, one per resource (lock_options::fencing).
    diagnostic_list masters;
    std::vector<std::string> resources;  ///< Multi-resource locks only: every resource.
    std::vector<std::string> keys;       ///< Multi-resource locks only: every key.
    std::string reason;                  ///< Why the operation failed, when not a master's doing.
    /// A read-write lock's side: a reader's `key` is the readers' set, its token a member.
    lock_role role = lock_role::mutex;
    /// What was taken (protocol/lock_kind.hpp): its release, extension and check are the
    /// kind's commands, and only a kind that allows it is handed over.
    lock_kind kind = lock_kind::mutex;
    /// A reader's only: the writer's key and the readers' set, what its commands take.
    std::vector<std::string> reader_keys;
    /// A permit's only: the resource's key (the semaphore's mark), its permit key, then the
    /// semaphore's other permit keys. Its release takes them all (release_permit: the mark
    /// goes with the last permit), its extension the first two (extend_permit).
    std::vector<std::string> permit_keys;

    /// The claim of the lock this state belongs to (see claim_state): its own, or that of the
    /// state it was derived from (derive()).
    claim_state& claim() const noexcept { return origin ? origin->own_claim : own_claim; }
    /// A copy to change (a new validity, a reason) that shares this state's claim.
    static std::shared_ptr<lock_state> derive(const std::shared_ptr<const lock_state>& from)
    {
        auto st = std::make_shared<lock_state>(*from);
        st->origin = from->origin ? from->origin : from;
        return st;
    }

    std::span<const std::string> key_span() const noexcept
    {
        if (!keys.empty())
            return keys;
        return reader_keys.empty() ? std::span<const std::string>(&key, 1)
                                   : std::span<const std::string>(reader_keys);
    }

    /// The keys an extension takes: key_span(), or the first two of a permit's permit_keys.
    std::span<const std::string> extend_span() const noexcept
    {
        return permit_keys.empty() ? key_span()
                                   : std::span<const std::string>(permit_keys).first(2);
    }
    /// The keys a release takes: key_span(), or a permit's permit_keys.
    std::span<const std::string> release_span() const noexcept
    {
        return permit_keys.empty() ? key_span() : std::span<const std::string>(permit_keys);
    }
    /// The same resources and keys, without a token or validity: what a failed operation
    /// returns, with `diagnostics` as its masters.
    std::shared_ptr<lock_state> unheld(diagnostic_list diagnostics, std::string why = {}) const
    {
        auto st = std::make_shared<lock_state>();
        st->resource = resource;
        st->key = key;
        st->resources = resources;
        st->keys = keys;
        st->masters = std::move(diagnostics);
        st->reason = std::move(why);
        return st;
    }

private:
    mutable claim_state own_claim;
    std::shared_ptr<const lock_state> origin;  // derived states: the first state of the claim
};

/// Each master's outcome on one line (" [0] granted 120us [1] error (...) 3us"), as
/// lock::describe() and operation_error print them.
std::string describe_masters(std::span<const master_diagnostic> masters);

/// The library's way into a lock (Boost.MySQL's `detail::access` idea): the public class
/// names this struct as its only friend, and nothing else sees its state.
struct access
{
    static lock make(std::shared_ptr<const lock_state> s) noexcept { return lock(std::move(s)); }
    static const std::shared_ptr<const lock_state>& state(const lock& l) noexcept { return l.s_; }
};

}  // namespace redlock::detail

#endif
