// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/deployment_check.hpp"

namespace redlock::detail {

namespace {

constexpr error first_warning = error::eviction_can_drop_locks;
constexpr error last_warning = error::master_is_replica;

constexpr bool is_warning(error e) noexcept
{
    return static_cast<int>(e) >= static_cast<int>(first_warning) &&
           static_cast<int>(e) <= static_cast<int>(last_warning);
}

constexpr std::uint8_t bit_of(error e) noexcept
{
    return static_cast<std::uint8_t>(1u << (static_cast<int>(e) - static_cast<int>(first_warning)));
}

}  // namespace

void deployment_warnings::add(error e) noexcept
{
    if (is_warning(e))
        bits_ |= bit_of(e);
}

bool deployment_warnings::contains(error e) const noexcept
{
    return is_warning(e) && (bits_ & bit_of(e)) != 0;
}

deployment_warnings deployment_warnings::new_since(deployment_warnings before) const noexcept
{
    deployment_warnings out;
    out.bits_ = static_cast<std::uint8_t>(bits_ & ~before.bits_);
    return out;
}

std::vector<error_code> deployment_warnings::codes() const
{
    std::vector<error_code> out;
    for (int e = static_cast<int>(first_warning); e <= static_cast<int>(last_warning); ++e)
        if (contains(static_cast<error>(e)))
            out.emplace_back(static_cast<error>(e));
    return out;
}

deployment_warnings check_deployment(const server_facts& facts)
{
    deployment_warnings w;
    // Every policy but noeviction may pick a lock key: allkeys-* any key, volatile-* any key
    // with a TTL, and every lock key has one.
    if (facts.maxmemory.value_or(0) > 0 && !facts.maxmemory_policy.empty() &&
        facts.maxmemory_policy != "noeviction")
        w.add(error::eviction_can_drop_locks);
    if (facts.aof_enabled == false && facts.rdb_save_points == false)
        w.add(error::persistence_off);
    if (facts.role == "master" && facts.connected_replicas.value_or(0) > 0)
        w.add(error::master_has_replicas);
    if (facts.role == "slave")
        w.add(error::master_is_replica);
    return w;
}

}  // namespace redlock::detail
