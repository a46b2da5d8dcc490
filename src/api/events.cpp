// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/events.hpp>

namespace redlock {

std::string_view to_string(event_kind k) noexcept
{
    switch (k)
    {
    case event_kind::master_up: return "master_up";
    case event_kind::master_down: return "master_down";
    case event_kind::acquired: return "acquired";
    case event_kind::acquire_failed: return "acquire_failed";
    case event_kind::extended: return "extended";
    case event_kind::extend_failed: return "extend_failed";
    case event_kind::released: return "released";
    case event_kind::release_failed: return "release_failed";
    case event_kind::degraded: return "degraded";
    case event_kind::lost: return "lost";
    case event_kind::master_warning: return "master_warning";
    }
    return "unknown";
}

std::string_view to_string(master_state s) noexcept
{
    switch (s)
    {
    case master_state::connecting: return "connecting";
    case master_state::ready: return "ready";
    case master_state::down: return "down";
    case master_state::closed: return "closed";
    }
    return "unknown";
}

}  // namespace redlock
