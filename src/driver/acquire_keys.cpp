// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The keys an acquisition of each kind sends (acquire_keys.hpp), and why it refuses them
// before sending anything: empty, too long, named twice, or not in one hash slot where a Redis
// Cluster master needs one.
#include "driver/acquire_keys.hpp"

#include <utility>

#include "algorithm/fencing.hpp"
#include "protocol/scripts.hpp"
#include "routing/key_slot.hpp"

namespace redlock::detail {

acquire_keys::acquire_keys(std::string_view key_prefix, std::string resource)
    : resource_(std::move(resource))
{
    key_.reserve(key_prefix.size() + resource_.size());
    key_.append(key_prefix).append(resource_);
}

acquire_keys::acquire_keys(std::string_view key_prefix, std::vector<std::string> resources)
    : acquire_keys(key_prefix, resources.empty() ? std::string() : resources.front())
{
    if (resources.size() > 1)
    {
        keys_.reserve(resources.size());
        for (const auto& r : resources)
            keys_.push_back(std::string(key_prefix).append(r));
        resources_ = std::move(resources);
    }
}

error_code acquire_keys::prepare(const lock_options& o, bool cluster, std::string& reason)
{
    if (o.permits > 1 && multi())
    {
        reason = "lock_options::permits: async_lock_all locks resources, not permits";
        return error::invalid_option;
    }
    if (o.role != lock_role::mutex && multi())
    {
        reason = "lock_options::role: async_lock_all locks resources, not a read-write lock";
        return error::invalid_option;
    }
    role_ = o.role;
    fencing_ = o.fencing;
    kind_ = kind_of(o, multi() ? keys_.size() : 1);
    if (o.permits > 1)
    {
        permits_ = std::make_unique<permit_keys>();
        for (std::uint32_t i = 0; i < o.permits; ++i)
            permits_->keys.push_back(slot_sibling(key_, ":permit:" + std::to_string(i)));
        permits_->order = permits_->keys;
        permits_->mark = std::string(permits_mark_prefix) + std::to_string(o.permits);
        permits_->attempt.assign(1, key_);
        permits_->attempt.insert(permits_->attempt.end(), permits_->order.begin(),
                                 permits_->order.end());
    }
    if (o.role != lock_role::mutex)
    {
        rw_ = std::make_unique<rw_keys>();
        rw_->keys = {key_, slot_sibling(key_, ":readers"), slot_sibling(key_, ":intent"),
                     o.fencing ? fence_key(key_) : std::string()};
        rw_->watched = {rw_->keys[0], rw_->keys[2]};
    }
    reason = refused(cluster);
    if (!reason.empty())
        return error::invalid_argument;
    if (o.fencing)
    {
        // Those that hold the token (a writer's: the resource's own key), their fence
        // counters, the counters' records.
        const auto held = release_keys();
        fenced_.reserve(held.size() * 3);
        for (const auto& k : held)
            fenced_.push_back(k);
        for (const auto& k : held)
            fenced_.push_back(fence_key(k));
        for (const auto& k : held)
            fenced_.push_back(fence_holder_key(k));
    }
    return {};
}

std::span<const std::string> acquire_keys::release_keys() const noexcept
{
    if (permits_)
        return permits_->attempt;  // the resource's key, then every permit (release_permit)
    if (!rw_)
        return keys();
    return {rw_->keys.data(), writer() ? 1u : 2u};
}

std::span<const std::string> acquire_keys::watch_keys() const noexcept
{
    if (!rw_)
        return keys();
    if (writer())
        return {rw_->keys.data(), 1};
    return rw_->watched;
}

void acquire_keys::rotate_permits(std::size_t first)
{
    if (!permits_)
        return;
    auto& p = *permits_;
    const auto n = p.keys.size();
    for (std::size_t k = 0; k < n; ++k)
    {
        p.order[k] = p.keys[(first + k) % n];
        p.attempt[k + 1] = p.order[k];
    }
}

std::span<const std::string> acquire_keys::strays(std::size_t won)
{
    auto& p = *permits_;
    // The attempt's first key is the resource's, which holds the mark (key_ may have moved
    // into the lock by now).
    p.strays.assign(1, p.attempt.front());
    for (std::size_t k = 0; k < p.order.size(); ++k)
        if (k != won)
            p.strays.push_back(p.order[k]);
    p.strays.push_back(p.order[won]);
    return p.strays;
}

void acquire_keys::move_kind_keys_into(lock_state& st, std::size_t won) const
{
    if (permits_)
    {
        // Its extension also keeps the semaphore's mark in the resource's key, and its release
        // takes the mark away with the last permit.
        auto& keys = st.permit_keys;
        keys.reserve(permits_->order.size() + 1);
        keys.push_back(key_);
        keys.push_back(permits_->order[won]);
        for (std::size_t k = 0; k < permits_->order.size(); ++k)
            if (k != won)
                keys.push_back(permits_->order[k]);
    }
    if (rw_)
    {
        st.role = role_;
        if (!writer())
            st.reader_keys.assign(rw_->keys.begin(), rw_->keys.begin() + 2);
    }
}

void acquire_keys::move_names_into(lock_state& st)
{
    st.resource = std::move(resource_);
    st.key = std::move(key_);
    st.resources = std::move(resources_);
    st.keys = std::move(keys_);
    st.kind = kind_;
    // The key the lock's own operations name: a permit's, or a reader's member of the
    // readers' set.
    if (!st.permit_keys.empty())
        st.key = st.permit_keys[1];
    else if (!st.reader_keys.empty())
        st.key = st.reader_keys[1];
}

void acquire_keys::name_unheld(lock_state& names) const
{
    names.resource = resource_;
    names.key = key_;
    names.resources = resources_;
    names.keys = keys_;
}

std::string acquire_keys::refused(bool cluster) const
{
    const auto too_long = [](std::size_t i) {
        return "the key of resource " + std::to_string(i) +
               " (key_prefix + resource) is longer than max_key_size (" +
               std::to_string(max_key_size) + " bytes)";
    };
    if (resources_.empty())
    {
        if (resource_.empty())
            return "the resource is empty (or async_lock_all was given none)";
        if (key_.size() > max_key_size)
            return too_long(0);
        return cluster ? refused_by_cluster() : std::string();
    }
    for (std::size_t i = 0; i < resources_.size(); ++i)
    {
        if (resources_[i].empty())
            return "resource " + std::to_string(i) + " is empty";
        if (keys_[i].size() > max_key_size)
            return too_long(i);
        for (std::size_t j = 0; j < i; ++j)
            if (resources_[i] ==
                resources_[j])  // the same key twice would make the lock its own rival
                return "resource " + std::to_string(i) + " repeats resource " + std::to_string(j);
    }
    return cluster ? refused_by_cluster() : std::string();
}

std::string acquire_keys::refused_by_cluster() const
{
    // A cluster master runs each command on the one node that serves its keys' slot: the
    // round splits a lock over several slots per slot (round::send_parts), but a fenced
    // lock's two rounds go as one script each, so its keys must share one slot.
    const auto ks = keys();
    if (permits_ || rw_)
    {
        for (const auto& k : ks)
            if (key_slot(k) != key_slot(ks.front()))
                return "the key " + key_ + " has a '}' and no hash tag, so its " +
                       (!rw_              ? "permit keys"
                        : fenced_writer() ? "readers' set, intent mark and fence counter"
                                          : "readers' set and intent mark") +
                       " cannot share one slot on a Redis Cluster master: give it a hash tag of "
                       "its own, which they then share";
        return {};  // (a fenced writer's counter is among its keys)
    }
    if (fencing_)
        for (std::size_t i = 1; i < ks.size(); ++i)
            if (key_slot(ks[i]) != key_slot(ks[0]))
                return "the keys of resources 0 and " + std::to_string(i) +
                       " hash to different slots (" + std::to_string(key_slot(ks[0])) + ", " +
                       std::to_string(key_slot(ks[i])) +
                       "), and a fenced lock on a Redis Cluster master needs one slot: give the "
                       "resources "
                       "one hash tag (e.g. {order:7}:stock and {order:7}:payment)";
    if (fencing_)
        for (std::size_t i = 0; i < ks.size(); ++i)
            if (key_slot(fence_key(ks[i])) != key_slot(ks[i]))
                return "the key of resource " + std::to_string(i) +
                       " has a '}' and no hash tag, so its fence counter cannot share its slot on "
                       "a Redis "
                       "Cluster master: give it a hash tag of its own, which its counter then "
                       "shares";
    return {};
}

}  // namespace redlock::detail
