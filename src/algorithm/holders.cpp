// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/holders.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include "algorithm/validity.hpp"
#include "protocol/scripts.hpp"

namespace redlock::detail {

std::string holder_id(std::string_view value) { return sha1_hex(value).substr(0, 16); }

std::vector<quorum_holder> holders_on_quorum(std::span<const master_holdings* const> reads,
                                             std::size_t quorum,
                                             std::chrono::steady_clock::duration elapsed,
                                             std::chrono::milliseconds ttl, double drift_factor)
{
    struct seen
    {
        quorum_holder h;
        std::vector<std::int64_t> ttls;     // one per master: its longest time left (-1: none)
        std::vector<std::uint64_t> fences;  // the counters whose record names it, one per master
        std::size_t last_master = static_cast<std::size_t>(-1);
    };
    std::vector<seen> all;
    for (std::size_t i = 0; i < reads.size(); ++i)
    {
        if (!reads[i])
            continue;
        for (const auto& v : reads[i]->held)
        {
            if (v.foreign ||
                (!v.reader &&
                 (v.value == readers_mark || v.value.starts_with(permits_mark_prefix))) ||
                (v.pttl <= 0 && v.pttl != -1))
                continue;
            auto it = std::find_if(all.begin(), all.end(), [&](const seen& s) {
                return s.h.reader == v.reader && s.h.key == v.key && s.h.value == v.value;
            });
            if (it == all.end())
            {
                all.push_back({});
                it = std::prev(all.end());
                it->h.value = v.value;
                it->h.id = holder_id(v.value);
                it->h.reader = v.reader;
                it->h.key = v.key;
            }
            const auto left = v.pttl == -1 ? std::numeric_limits<std::int64_t>::max() : v.pttl;
            if (it->last_master == i)
            {
                it->ttls.back() = std::max(it->ttls.back(), left);  // twice on one master
                continue;
            }
            it->last_master = i;
            it->ttls.push_back(left);
            if (reads[i]->fence_holder == it->h.id)
                it->fences.push_back(reads[i]->fence);
        }
    }
    std::vector<quorum_holder> out;
    for (auto& s : all)
    {
        if (quorum == 0 || s.ttls.size() < quorum)
            continue;
        std::nth_element(s.ttls.begin(), s.ttls.begin() + static_cast<std::ptrdiff_t>(quorum - 1),
                         s.ttls.end(), std::greater<>());
        const auto kth = s.ttls[quorum - 1];
        s.h.masters = s.ttls.size();
        // Its term: the largest counter whose record names it, once a quorum of masters holds
        // that counter for it. Before (between a fenced acquisition's two rounds, when its
        // first round found the counters apart), no term is committed for it, and it has none.
        if (!s.fences.empty())
        {
            const auto top = *std::max_element(s.fences.begin(), s.fences.end());
            if (static_cast<std::size_t>(std::count(s.fences.begin(), s.fences.end(), top)) >=
                quorum)
                s.h.fence = top;
        }
        if (kth == std::numeric_limits<std::int64_t>::max())
        {
            s.h.expires = false;
        }
        else
        {
            s.h.valid_for = std::chrono::milliseconds(kth) - elapsed -
                            std::chrono::steady_clock::duration{clock_drift(ttl, drift_factor)};
            if (s.h.valid_for <= std::chrono::steady_clock::duration::zero())
                continue;
        }
        out.push_back(std::move(s.h));
    }
    return out;
}

}  // namespace redlock::detail
