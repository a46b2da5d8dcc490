// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "spawned_masters.hpp"

#include <algorithm>

namespace redlock::bench {

spawned_masters::spawned_masters(std::size_t count, std::size_t shards, std::size_t replicas)
{
    if (shards == 0)
    {
        standalone_.emplace(test::local_masters::options{.count = count});
        return;
    }
    // One after the other: each cluster waits until all its nodes agree on the slot map, and a
    // failure stops the clusters already formed (their destructors) before it propagates.
    clusters_.reserve(count);
    for (std::size_t m = 0; m < count; ++m)
        clusters_.emplace_back(
            test::local_cluster::options{.shards = shards, .replicas = replicas});
}

std::vector<std::string> spawned_masters::uris() const
{
    if (standalone_)
        return standalone_->uris();
    std::vector<std::string> out;
    for (const auto& c : clusters_)
        out.push_back(c.uri());
    return out;
}

std::vector<server_process> spawned_masters::processes() const
{
    std::vector<server_process> out;
    if (standalone_)
    {
        for (std::size_t m = 0; m < standalone_->size(); ++m)
            out.push_back({.master = m, .node = 0, .pid = standalone_->pid(m)});
        return out;
    }
    for (std::size_t m = 0; m < clusters_.size(); ++m)
    {
        const auto& primaries = clusters_[m].primaries();
        for (std::size_t k = 0; k < clusters_[m].node_count(); ++k)
            out.push_back(
                {.master = m,
                 .node = k,
                 .pid = clusters_[m].pid(k),
                 .replica = std::find(primaries.begin(), primaries.end(), k) == primaries.end()});
    }
    return out;
}

}  // namespace redlock::bench
