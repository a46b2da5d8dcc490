// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The accessors of redlock::lock, over its opaque state, and how a lock is rebuilt from its
// parts (client::lock_from_parts).
#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include <boost/system/system_error.hpp>

#include "algorithm/lock_value.hpp"
#include "driver/client_impl.hpp"
#include "runtime/lock_state.hpp"

namespace redlock {

std::string_view lock::resource() const noexcept
{
    return s_ ? std::string_view(s_->resource) : std::string_view();
}

std::string_view lock::key() const noexcept
{
    return s_ ? std::string_view(s_->key) : std::string_view();
}

std::span<const std::string> lock::keys() const noexcept
{
    return s_ ? s_->key_span() : std::span<const std::string>();
}

std::span<const std::string> lock::resources() const noexcept
{
    if (!s_)
        return {};
    return s_->resources.empty() ? std::span<const std::string>(&s_->resource, 1)
                                 : std::span<const std::string>(s_->resources);
}

std::string_view lock::token() const noexcept
{
    return s_ ? std::string_view(s_->token) : std::string_view();
}

std::string_view lock::identity() const noexcept { return detail::split_value(token()).identity; }

lock::clock::time_point lock::valid_until() const noexcept
{
    return s_ ? s_->valid_until : clock::time_point{};
}

std::chrono::milliseconds lock::ttl() const noexcept
{
    return s_ ? s_->ttl : std::chrono::milliseconds(0);
}

std::uint64_t lock::fencing_token() const noexcept
{
    return s_ && !s_->fences.empty() ? s_->fences.front() : 0;
}

std::span<const std::uint64_t> lock::fencing_tokens() const noexcept
{
    return s_ ? std::span<const std::uint64_t>(s_->fences) : std::span<const std::uint64_t>();
}

std::span<const master_diagnostic> lock::masters() const noexcept
{
    return s_ ? std::span<const master_diagnostic>(s_->masters)
              : std::span<const master_diagnostic>();
}

std::string_view to_string(master_status s) noexcept
{
    switch (s)
    {
    case master_status::not_needed: return "not_needed";
    case master_status::granted: return "granted";
    case master_status::held_by_other: return "held_by_other";
    case master_status::error: return "error";
    case master_status::timed_out: return "timed_out";
    }
    return "unknown";
}

std::string detail::describe_masters(std::span<const master_diagnostic> masters)
{
    std::string out;
    for (const auto& m : masters)
    {
        out += " [" + std::to_string(m.index) + "] " + std::string(to_string(m.status));
        if (m.ec)
            out += " (" + m.ec.message() + (m.message.empty() ? "" : ": " + m.message) + ")";
        out += " " + std::to_string(m.latency.count()) + "us";
    }
    return out;
}

std::string_view lock::reason() const noexcept
{
    return s_ ? std::string_view(s_->reason) : std::string_view();
}

std::string lock::describe() const
{
    std::string out = "lock '" + std::string(resource()) + "'";
    if (!identity().empty())
        out += " of '" + std::string(identity()) + "'";
    out += ": ";
    if (held())
        out += "held, " +
               std::to_string(
                   std::chrono::duration_cast<std::chrono::milliseconds>(remaining()).count()) +
               " ms left";
    else
        out += "not held";
    if (fencing_token() != 0)
        out += ", fencing token " + std::to_string(fencing_token());
    if (!reason().empty())
        out += " (" + std::string(reason()) + ")";
    out += "; masters:" + detail::describe_masters(masters());
    return out;
}

namespace {

// The state of a lock rebuilt from its parts (client::lock_from_parts).
std::shared_ptr<detail::lock_state> state_from_parts(const std::string& prefix,
                                                     std::span<const std::string> resources,
                                                     std::string_view token,
                                                     std::chrono::milliseconds ttl)
{
    auto fail = [](std::string why) {
        throw boost::system::system_error(error::invalid_argument, "lock_from_parts: " + why);
    };
    if (resources.empty())
        fail("no resource");
    if (token.empty() || token.size() > max_key_size)
        fail("the token must be 1 to max_key_size bytes long");
    if (ttl.count() <= 0)
        fail("the TTL must be positive");
    auto st = std::make_shared<detail::lock_state>();
    st->claim().offerable = false;  // its keys may be anyone's claim: never handed over
    for (std::size_t i = 0; i < resources.size(); ++i)
    {
        if (resources[i].empty())
            fail("resource " + std::to_string(i) + " is empty");
        if (prefix.size() + resources[i].size() > max_key_size)
            fail("the key of resource " + std::to_string(i) + " is longer than max_key_size");
        for (std::size_t j = 0; j < i; ++j)
            if (resources[i] == resources[j])
                fail("resource " + std::to_string(i) + " repeats resource " + std::to_string(j));
    }
    st->resource = resources.front();
    st->key = prefix + resources.front();
    if (resources.size() > 1)
    {
        st->resources.assign(resources.begin(), resources.end());
        for (const auto& r : resources)
            st->keys.push_back(prefix + r);
        st->kind = detail::lock_kind::multi;
    }
    st->token.assign(token);
    st->ttl = ttl;  // valid_until stays at the epoch: the validity is not known here
    return st;
}

}  // namespace

lock client::lock_from_parts(std::span<const std::string> resources, std::string_view token,
                             std::chrono::milliseconds ttl) const
{
    return detail::access::make(state_from_parts(impl_->cfg.key_prefix, resources, token, ttl));
}

lock client::lock_from_parts(std::string_view resource, std::string_view token,
                             std::chrono::milliseconds ttl, std::uint64_t fencing_token) const
{
    const std::string r(resource);
    auto st =
        state_from_parts(impl_->cfg.key_prefix, std::span<const std::string>(&r, 1), token, ttl);
    if (fencing_token != 0)
    {
        st->fences.assign(1, fencing_token);
        st->kind = detail::lock_kind::fenced;
    }
    return detail::access::make(std::move(st));
}

}  // namespace redlock
