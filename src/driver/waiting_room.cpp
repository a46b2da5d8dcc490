// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/waiting_room.hpp"

#include <algorithm>

#include <boost/asio/post.hpp>

namespace redlock::detail {

bool waiting_room::enqueue(const std::string& key, release_listener* l)
{
    auto& q = queues_[key];
    q.push_back(l);
    return q.size() == 1;
}

release_listener* waiting_room::successor(const std::string& key) const
{
    const auto q = queues_.find(key);
    if (q == queues_.end() || q->second.empty())
        return nullptr;
    const auto row = handoffs_.find(key);
    if (row != handoffs_.end() && row->second + 1 >= yield_every)
        return nullptr;
    return q->second.front();
}

void waiting_room::handed_over(const std::string& key)
{
    if (handoffs_.size() >= max_rows && !handoffs_.contains(key))
        handoffs_.clear();
    ++handoffs_[key];
}

release_listener* waiting_room::leave(const std::string& key, release_listener* l)
{
    const auto it = queues_.find(key);
    if (it == queues_.end())
        return nullptr;
    auto& q = it->second;
    const auto pos = std::find(q.begin(), q.end(), l);
    if (pos == q.end())
        return nullptr;
    const bool was_first = pos == q.begin();
    q.erase(pos);
    if (q.empty())
    {
        queues_.erase(it);
        return nullptr;
    }
    return was_first ? q.front() : nullptr;
}

namespace {

// `who` is listed under each of `keys` (once).
template <class Listener>
void list_under(std::unordered_map<std::string, std::vector<Listener*>>& lists,
                std::span<const std::string> keys, Listener* who)
{
    for (const auto& k : keys)
    {
        auto& w = lists[k];
        if (std::find(w.begin(), w.end(), who) == w.end())
            w.push_back(who);
    }
}

// `who` is no longer listed under `keys`; a key left with nobody is dropped.
template <class Listener>
void unlist_under(std::unordered_map<std::string, std::vector<Listener*>>& lists,
                  std::span<const std::string> keys, Listener* who) noexcept
{
    for (const auto& k : keys)
    {
        const auto it = lists.find(k);
        if (it == lists.end())
            continue;
        std::erase(it->second, who);
        if (it->second.empty())
            lists.erase(it);
    }
}

// The listeners under any of `keys` (under every key, for `all`), each once.
template <class Listener>
std::vector<Listener*> listed_under(
    const std::unordered_map<std::string, std::vector<Listener*>>& lists,
    std::span<const std::string> keys, bool all = false)
{
    std::vector<Listener*> whom;
    if (all)
        for (const auto& [key, w] : lists)
            whom.insert(whom.end(), w.begin(), w.end());
    else
        for (const auto& k : keys)
            if (const auto it = lists.find(k); it != lists.end())
                whom.insert(whom.end(), it->second.begin(), it->second.end());
    std::sort(whom.begin(), whom.end());
    whom.erase(std::unique(whom.begin(), whom.end()), whom.end());
    return whom;
}

// Keeps each of `whom` alive until the posted callbacks have run.
template <class Listener>
std::vector<std::shared_ptr<void>> held_all(const std::vector<Listener*>& whom)
{
    std::vector<std::shared_ptr<void>> held;
    held.reserve(whom.size());
    for (auto* l : whom)
        held.push_back(l->hold());
    return held;
}

}  // namespace

void waiting_room::watch(std::span<const std::string> keys, release_listener* l)
{
    list_under(watchers_, keys, l);
}

void waiting_room::unwatch(std::span<const std::string> keys, release_listener* l) noexcept
{
    unlist_under(watchers_, keys, l);
}

void waiting_room::observe(std::span<const std::string> keys, key_observer* o)
{
    list_under(observers_, keys, o);
}

void waiting_room::unobserve(std::span<const std::string> keys, key_observer* o) noexcept
{
    unlist_under(observers_, keys, o);
}

void waiting_room::changed_here(std::span<const std::string> keys) { tell_observers(keys); }

void waiting_room::tell_observers(std::span<const std::string> keys, bool all)
{
    if (observers_.empty())
        return;
    auto whom = listed_under(observers_, keys, all);
    if (whom.empty())
        return;
    auto held = held_all(whom);
    // Posted: an observer reads the masters again, which must not start inside a round's
    // callback or a push's parsing.
    boost::asio::post(ex_, [whom = std::move(whom), held = std::move(held)] {
        for (auto* o : whom)
            o->on_key_changed();
    });
}

void waiting_room::tell_observers(const invalidation& inv)
{
    if (observers_.empty())
        return;
    if (inv.all)
        return tell_observers({}, true);
    std::vector<std::string> keys;
    for (const auto k : inv.keys)
        keys.emplace_back(k);
    tell_observers(keys);
}

void waiting_room::invalidate(std::size_t master, const invalidation& inv)
{
    if (inv.all)
        return invalidate_all(master);
    tell_observers(inv);
    std::vector<release_listener*> whom;
    whom.swap(scratch_);
    whom.clear();
    for (const auto k : inv.keys)
    {
        // A lookup by string_view would need a transparent hash; keys are short.
        const auto it = watchers_.find(std::string(k));
        if (it != watchers_.end())
            whom.insert(whom.end(), it->second.begin(), it->second.end());
    }
    tell(master, whom);
    whom.swap(scratch_);
}

void waiting_room::invalidate_all(std::size_t master)
{
    tell_observers({}, true);
    std::vector<release_listener*> whom;
    for (const auto& [key, w] : watchers_)
        whom.insert(whom.end(), w.begin(), w.end());
    tell(master, whom);
}

bool waiting_room::released_here(const master_set& masters, std::span<const std::string> keys)
{
    if (keys.empty())
        return false;
    const auto& key = keys[0];
    if (!watchers_.contains(key))
    {
        handoffs_.erase(key);  // no local waiter: the row ends here
    }
    else
    {
        handed_over(key);
        if (handoffs_[key] >= yield_every)
        {
            handoffs_.erase(key);
            return true;
        }
    }
    notify_released(masters, keys);
    return false;
}

void waiting_room::refused_elsewhere(std::span<const std::string> keys, bool first_attempt) noexcept
{
    if (keys.empty() || (first_attempt && handoffs_.contains(keys[0])))
        return;
    handoffs_.erase(keys[0]);
}

void waiting_room::notify_released(const master_set& masters, std::span<const std::string> keys)
{
    tell_observers(keys);
    auto whom = listed_under(watchers_, keys);
    if (whom.empty())
        return;
    auto held = held_all(whom);
    boost::asio::post(ex_, [whom = std::move(whom), held = std::move(held), masters] {
        for (auto* l : whom)
            for (std::size_t i = 0; i < masters.masters(); ++i)
                if (masters.contains(i))
                    l->on_invalidated(i);
    });
}

void waiting_room::tell(std::size_t master, std::vector<release_listener*>& whom)
{
    // A listener told may end another (or itself) before that one hears: each is held first,
    // and one that has completed ignores the news.
    std::sort(whom.begin(), whom.end());
    whom.erase(std::unique(whom.begin(), whom.end()), whom.end());
    const auto held = held_all(whom);
    for (auto* l : whom)
        l->on_invalidated(master);
}

}  // namespace redlock::detail
