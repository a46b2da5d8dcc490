// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The keys an acquisition takes (a resource's, several resources', or a semaphore's permits),
// and why it refuses them before sending anything: empty, too long, named twice, or not in one
// hash slot where a Redis Cluster master needs one. The rest of acquire_op is in acquire_op.cpp.
#include <string>

#include "algorithm/fencing.hpp"
#include "driver/acquire_op.hpp"
#include "routing/key_slot.hpp"

namespace redlock::detail {

std::string acquire_op::refused_resources() const
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
        return refused_by_cluster();
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
    return refused_by_cluster();
}

std::string acquire_op::refused_by_cluster() const
{
    if (!c_->has_cluster_master)
        return {};
    // A cluster master runs each command on the one node that serves its keys' slot: the
    // round splits a lock over several slots per slot (round::send_parts), but a fenced
    // lock's two rounds go as one script each, so its keys must share one slot.
    const auto ks = keys();
    if (permits_ || rw_)
    {
        for (const auto& k : ks)
            if (key_slot(k) != key_slot(ks.front()))
                return "the key " + key_ + " has a '}' and no hash tag, so its " +
                       (!rw_         ? "permit keys"
                        : o_.fencing ? "readers' set, intent mark and fence counter"
                                     : "readers' set and intent mark") +
                       " cannot share one slot on a Redis Cluster master: give it a hash tag of "
                       "its own, which they then share";
        return {};  // (a fenced writer's counter is among its keys)
    }
    if (o_.fencing)
        for (std::size_t i = 1; i < ks.size(); ++i)
            if (key_slot(ks[i]) != key_slot(ks[0]))
                return "the keys of resources 0 and " + std::to_string(i) +
                       " hash to different slots (" + std::to_string(key_slot(ks[0])) + ", " +
                       std::to_string(key_slot(ks[i])) +
                       "), and a fenced lock on a Redis Cluster master needs one slot: give the "
                       "resources "
                       "one hash tag (e.g. {order:7}:stock and {order:7}:payment)";
    if (o_.fencing)
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
