// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_ACQUIRE_KEYS_HPP
#define REDLOCK_SRC_DRIVER_ACQUIRE_KEYS_HPP

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/options.hpp>

#include "algorithm/token.hpp"
#include "protocol/lock_kind.hpp"
#include "runtime/lock_state.hpp"

namespace redlock::detail {

/// @brief The keys an acquisition of each kind sends, and why it refuses them before sending
/// anything. Pure: no client, no I/O; acquire_op asks it for the keys of each round.
///
/// Per kind (docs/algorithm.md, "Where each kind keeps its state"):
/// - a mutex: the resource's key; a multi-resource lock: one key per resource;
/// - a fenced mutex: its keys, then their fence counters, then the counters' records (the
///   commit's keys; the first two thirds are the attempt's);
/// - a semaphore of N permits: the resource's key (which holds the semaphore's mark), then the
///   N permit keys, tried from a random one in each attempt (rotate_permits);
/// - a reader and a writer: the writer's key, the readers' set, the writer's intent mark, and
///   a fenced writer's fence counter.
///
/// A granted lock takes the keys it holds (move_into), which leaves this object's names moved
/// from: nothing reads them after the grant.
class acquire_keys
{
public:
    acquire_keys(std::string_view key_prefix, std::string resource);
    /// A multi-resource lock's: the first resource is resource(); fewer than two resources are
    /// the one-resource case.
    acquire_keys(std::string_view key_prefix, std::vector<std::string> resources);

    /// Sets up the kind's keys for `o` (already validated on its own): the kind is kind() from
    /// now on. A combination the kind cannot take (permits or a role over several resources)
    /// is error::invalid_option, resources that cannot be locked (empty, too long, named twice;
    /// keys that cannot share a slot on a Redis Cluster master, when `cluster`) are
    /// error::invalid_argument; `reason` then says why.
    error_code prepare(const lock_options& o, bool cluster, std::string& reason);

    lock_kind kind() const noexcept { return kind_; }
    const lock_kind_row& row() const noexcept { return row_of(kind_); }
    const std::string& resource() const noexcept { return resource_; }
    /// The resource's key (a multi-resource lock's first).
    const std::string& key() const noexcept { return key_; }
    bool multi() const noexcept { return !keys_.empty(); }
    bool semaphore() const noexcept { return permits_ != nullptr; }
    bool read_write() const noexcept { return rw_ != nullptr; }
    bool writer() const noexcept { return role_ == lock_role::writer; }

    /// The keys the lock covers: a semaphore's permit keys (in this attempt's order), a
    /// read-write lock's (with a fenced writer's counter), a multi-resource lock's keys, or
    /// the one key. Inline: read several times per acquisition.
    std::span<const std::string> keys() const noexcept
    {
        if (permits_)
            return permits_->order;
        if (rw_)
            return {rw_->keys.data(), fenced_writer() ? 4u : 3u};
        return keys_.empty() ? std::span<const std::string>(&key_, 1)
                             : std::span<const std::string>(keys_);
    }
    /// What each attempt sends: keys(), and a fenced mutex's fence counters after them; a
    /// semaphore's: the resource's key, then the permit keys in the attempt's order.
    std::span<const std::string> attempt_keys() const noexcept
    {
        if (kind_ == lock_kind::fenced)
            return std::span<const std::string>(fenced_).first(fenced_.size() / 3 * 2);
        if (permits_)
            return permits_->attempt;
        return keys();
    }
    /// What a failed attempt releases: a semaphore's attempt keys (release_permit's), a
    /// reader's writer's key and readers' set (its member of the set), a writer's key (its
    /// intent mark stays until the acquisition ends: intent_key()), else keys().
    std::span<const std::string> release_keys() const noexcept;
    /// The keys whose change may free the lock, which a waiting acquisition watches: a
    /// writer's key (a writer waits for it to go; readers keep their mark there), a reader's
    /// the writer's key and the intent mark; else keys().
    std::span<const std::string> watch_keys() const noexcept;
    /// A fenced lock's commit keys: release_keys(), their fence counters, the counters' records.
    std::span<const std::string> commit_keys() const noexcept { return fenced_; }
    /// A writer's intent mark (read-write locks only).
    std::span<const std::string> intent_key() const noexcept { return {&rw_->keys[2], 1}; }

    /// A semaphore's: the next attempt tries the permits from permit `first` (modulo N) on, so
    /// that acquirers racing for free permits seldom ask for the same one first. Nothing for
    /// the other kinds.
    void rotate_permits(std::size_t first);
    /// A semaphore's number of permits; 0 for the other kinds.
    std::size_t permits() const noexcept { return permits_ ? permits_->keys.size() : 0; }
    /// A semaphore's mark in the resource's key: redlock:permits:<N>.
    std::string_view mark() const noexcept { return permits_->mark; }
    /// The permit key that the attempt tried `k`-th.
    const std::string& tried_permit(std::size_t k) const noexcept { return permits_->order[k]; }
    /// A successful semaphore attempt's release of the permits it did not win (release_permit's
    /// keys): the resource's key, the permits other than `won`, then `won`, only looked at.
    std::span<const std::string> strays(std::size_t won);

    /// Moves the names into the lock granted: resource, key, a multi-resource lock's resources
    /// and keys, and the kind.
    void move_names_into(lock_state& st);
    /// The keys the kind's lock holds, granted by its own attempt (`won`: the permit that the
    /// majority set): a semaphore's permit keys (the won one its key), a reader's keys (the
    /// readers' set its key), a read-write lock's role. Before move_names_into.
    void move_kind_keys_into(lock_state& st, std::size_t won) const;
    /// Names a lock that was not taken (the diagnostics' lock) after a failure.
    void name_unheld(lock_state& names) const;

private:
    bool fenced_writer() const noexcept { return kind_ == lock_kind::fenced_writer; }
    std::string refused(bool cluster) const;
    std::string refused_by_cluster() const;

    std::string resource_;
    std::string key_;
    std::vector<std::string> resources_;  // multi-resource locks only
    std::vector<std::string> keys_;       // multi-resource locks only
    lock_kind kind_ = lock_kind::mutex;
    lock_role role_ = lock_role::mutex;
    bool fencing_ = false;
    std::vector<std::string> fenced_;  // fencing only: commit_keys()
    // A semaphore's and a read-write lock's keys, made only for one: a mutex's acquisition,
    // the hot path, neither builds nor destroys them.
    struct permit_keys
    {
        std::vector<std::string> keys;     // the permit keys
        std::vector<std::string> order;    // the attempt's: a rotation from a random permit
        std::vector<std::string> attempt;  // the resource's key, then `order`
        std::vector<std::string> strays;   // strays()
        std::string mark;
    };
    std::unique_ptr<permit_keys> permits_;
    struct rw_keys
    {
        // The writer's key, the readers' set, the intent mark; a fenced writer's fence counter.
        std::array<std::string, 4> keys;
        std::array<std::string, 2> watched;  // a reader's watch: the writer's key, the mark
    };
    std::unique_ptr<rw_keys> rw_;
};

}  // namespace redlock::detail

#endif
