// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "routing/slot_map.hpp"

#include <charconv>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace redlock::detail {
namespace {

using resp::node_view;
using resp::type;

/// "a bulk_string", "an integer": a type's name for messages.
std::string a_type(type t)
{
    const std::string_view name = resp::to_string(t);
    const bool vowel =
        !name.empty() && std::string_view("aeiou").find(name.front()) != std::string_view::npos;
    return (vowel ? "an " : "a ") + std::string(name);
}

bool is_string(type t) noexcept
{
    // Not verbatim strings: their value starts with a format ("txt:"), and no server sends one here.
    return t == type::bulk_string || t == type::simple_string;
}

/// Walks a reply given as pre-order nodes and reads a CLUSTER SLOTS reply from it; the first
/// problem found is kept in `error` and ends the walk.
class slots_reader
{
public:
    slots_reader(std::span<const node_view> nodes, std::string_view answering_host)
        : nodes_(nodes),
          answering_host_(answering_host)
    {}

    /// A slot range and the primary serving it.
    struct range
    {
        std::uint16_t start;
        std::uint16_t end;
        cluster_endpoint primary;
    };

    /// The entries of the reply, in order; nullopt (and `error`) if the reply is not valid.
    std::optional<std::vector<range>> read()
    {
        if (nodes_.empty())
            return fail("the reply is empty");
        const std::size_t top = skip_attributes(0);
        if (top >= nodes_.size())
            return fail("the reply is an attribute without a value");
        const node_view& reply = nodes_[top];
        if (resp::is_error(reply.data_type))
            return fail("the node answered an error: " + std::string(reply.value));
        if (reply.data_type != type::array)
            return fail("the reply is " + a_type(reply.data_type) + ", not an array");
        const auto entries = children(top);
        if (!entries)
            return std::nullopt;

        std::vector<range> out;
        out.reserve(entries->size());
        for (std::size_t k = 0; k < entries->size(); ++k)
        {
            auto r = read_entry((*entries)[k], "entry " + std::to_string(k));
            if (!r)
                return std::nullopt;
            out.push_back(std::move(*r));
        }
        return out;
    }

    std::string error;

private:
    std::nullopt_t fail(std::string message)
    {
        error = "CLUSTER SLOTS reply: " + std::move(message);
        return std::nullopt;
    }

    std::uint32_t depth(std::size_t i) const noexcept { return nodes_[i].depth; }

    /// The first index at or after `i` that is not an attribute or inside one.
    std::size_t skip_attributes(std::size_t i) const noexcept
    {
        while (i < nodes_.size() && nodes_[i].data_type == type::attribute)
            i = subtree_end(i);
        return i;
    }

    /// One past the last node of the value at `i`: the next node no deeper than it.
    std::size_t subtree_end(std::size_t i) const noexcept
    {
        std::size_t j = i + 1;
        while (j < nodes_.size() && depth(j) > depth(i))
            ++j;
        return j;
    }

    /// The indices of the elements of the aggregate at `i`, attributes left out, checked
    /// against the count the aggregate declares.
    std::optional<std::vector<std::size_t>> children(std::size_t i)
    {
        const std::size_t end = subtree_end(i);
        std::vector<std::size_t> out;
        for (std::size_t j = i + 1; j < end; j = subtree_end(j))
        {
            if (depth(j) != depth(i) + 1)
                return fail("the nodes skip a nesting level");
            if (nodes_[j].data_type != type::attribute)
                out.push_back(j);
        }
        const bool pairs = nodes_[i].data_type == type::map;
        if (out.size() != (pairs ? 2 * nodes_[i].size : nodes_[i].size))
            return fail("an aggregate's element count does not match its nodes");
        return out;
    }

    /// The integer at `i`, within [min, max].
    std::optional<std::int64_t> integer(std::size_t i, std::int64_t min, std::int64_t max,
                                        const std::string& what)
    {
        const node_view& n = nodes_[i];
        if (n.data_type != type::integer)
            return fail(what + " is " + a_type(n.data_type) + ", not an integer");
        std::int64_t value = 0;
        const char* const last = n.value.data() + n.value.size();
        const auto [p, ec] = std::from_chars(n.value.data(), last, value);
        if (ec != std::errc() || p != last)
            return fail(what + " is not a 64-bit integer");
        if (value < min || value > max)
            return fail(what + " is " + std::to_string(value) + ", outside " + std::to_string(min) +
                        " to " + std::to_string(max));
        return value;
    }

    /// The elements of the array at `i`, at least `min` of them (`shape` names them).
    std::optional<std::vector<std::size_t>> array(std::size_t i, std::size_t min,
                                                  const std::string& where, std::string_view shape)
    {
        if (nodes_[i].data_type != type::array)
            return fail(where + " is " + a_type(nodes_[i].data_type) + ", not an array");
        auto elements = children(i);
        if (elements && elements->size() < min)
            return fail(where + " has " + std::to_string(elements->size()) + " elements, not " +
                        std::string(shape));
        return elements;
    }

    std::optional<range> read_entry(std::size_t i, const std::string& where)
    {
        const auto elements = array(i, 3, where, "[start, end, primary, replicas...]");
        if (!elements)
            return std::nullopt;
        constexpr std::int64_t last_slot = slot_count - 1;
        const auto start = integer((*elements)[0], 0, last_slot, where + ": the start slot");
        if (!start)
            return std::nullopt;
        const auto end = integer((*elements)[1], 0, last_slot, where + ": the end slot");
        if (!end)
            return std::nullopt;
        if (*start > *end)
            return fail(where + ": the slot range " + std::to_string(*start) + "-" +
                        std::to_string(*end) + " is reversed");
        auto primary = read_node((*elements)[2], where + ": the primary");
        if (!primary)
            return std::nullopt;
        // Replicas are not routed to, but a reply with a malformed one is not trusted either.
        for (std::size_t k = 3; k < elements->size(); ++k)
            if (!read_node((*elements)[k], where + ": replica " + std::to_string(k - 3)))
                return std::nullopt;
        return range{static_cast<std::uint16_t>(*start), static_cast<std::uint16_t>(*end),
                     std::move(*primary)};
    }

    std::optional<cluster_endpoint> read_node(std::size_t i, const std::string& where)
    {
        const auto elements = array(i, 2, where, "[host, port, id, metadata]");
        if (!elements)
            return std::nullopt;

        cluster_endpoint node;
        const node_view& host = nodes_[(*elements)[0]];
        if (host.data_type != type::null && !is_string(host.data_type))
            return fail(where + ": the host is " + a_type(host.data_type) +
                        ", not a string or null");
        const auto port = integer((*elements)[1], 1, 65535, where + ": the port");
        if (!port)
            return std::nullopt;
        node.port = static_cast<std::uint16_t>(*port);
        if (elements->size() >= 3)
        {
            const node_view& id = nodes_[(*elements)[2]];
            if (!is_string(id.data_type))
                return fail(where + ": the node id is " + a_type(id.data_type) + ", not a string");
            node.id.assign(id.value);
        }

        std::optional<std::string_view> metadata_ip;
        if (elements->size() >= 4)
        {
            const auto ip = read_ip((*elements)[3], where);
            if (!ip)
                return std::nullopt;
            metadata_ip = *ip;
        }

        // Per the CLUSTER SLOTS documentation: null (unknown-endpoint) and "" (a node that does
        // not know its own address yet) mean the node the reply came from; "?" is a node with
        // hostname endpoints but no hostname, which may be any node: only its ip helps.
        if (host.data_type == type::null || host.value.empty())
        {
            if (answering_host_.empty())
                return fail(where + " has no host and the answering host is not known");
            node.host.assign(answering_host_);
        }
        else if (host.value == "?")
        {
            if (!metadata_ip || metadata_ip->empty())
                return fail(where +
                            " has an unknown endpoint ('?': hostname endpoints without a hostname) "
                            "and no ip in its metadata");
            node.host.assign(*metadata_ip);
        }
        else
        {
            node.host.assign(host.value);
        }
        return node;
    }

    /// The `ip` field of the metadata at `i` (empty if absent); nullopt if the metadata is not
    /// a map or a flat array of pairs. Other fields may hold any type: they are skipped.
    std::optional<std::string_view> read_ip(std::size_t i, const std::string& where)
    {
        const node_view& metadata = nodes_[i];
        if (metadata.data_type != type::map && metadata.data_type != type::array)
            return fail(where + ": the metadata is " + a_type(metadata.data_type) +
                        ", not a map or an array");
        const auto fields = children(i);
        if (!fields)
            return std::nullopt;
        if (fields->size() % 2 != 0)
            return fail(where + ": the metadata has an odd number of elements");
        std::string_view ip;
        for (std::size_t k = 0; k < fields->size(); k += 2)
        {
            const node_view& name = nodes_[(*fields)[k]];
            const node_view& value = nodes_[(*fields)[k + 1]];
            if (is_string(name.data_type) && name.value == "ip" && is_string(value.data_type))
                ip = value.value;
        }
        return ip;
    }

    std::span<const node_view> nodes_;
    std::string_view answering_host_;
};

std::string address_of(const cluster_endpoint& e) { return e.host + ":" + std::to_string(e.port); }

}  // namespace

slot_map::slot_map() : owner_(slot_count, 0) {}

parsed_slot_map slot_map::parse(std::span<const resp::node_view> nodes,
                                std::string_view answering_host)
{
    slots_reader reader(nodes, answering_host);
    auto ranges = reader.read();
    if (!ranges)
        return {std::nullopt, std::move(reader.error)};

    slot_map map;
    // Indexed, as a hostile reply may hold 16384 entries with a primary each.
    std::unordered_map<std::string, std::size_t> shard_at_address;
    std::unordered_map<std::string_view, std::size_t> shard_with_id;  // views ids in shards_
    // Never reallocated below, so the views in shard_with_id stay valid (short ids live inside
    // the std::string and would move with it).
    map.shards_.reserve(ranges->size());
    for (std::size_t k = 0; k < ranges->size(); ++k)
    {
        auto& r = (*ranges)[k];
        const std::string where = "CLUSTER SLOTS reply: entry " + std::to_string(k) + ": ";
        const auto [at_address, new_address] =
            shard_at_address.try_emplace(address_of(r.primary), map.shards_.size());
        const std::size_t shard = at_address->second;
        if (new_address)
        {
            // At most one shard per entry, and each entry covers a slot of its own (overlaps
            // are refused below), so the count stays within slot_count and fits owner_.
            map.shards_.push_back(std::move(r.primary));
        }
        else if (!r.primary.id.empty() && !map.shards_[shard].id.empty() &&
                 r.primary.id != map.shards_[shard].id)
        {
            return {std::nullopt, where + at_address->first + " appears with two node ids"};
        }
        // Keyed by the id the shard keeps: the first one seen at its address.
        if (const auto& id = map.shards_[shard].id; !id.empty())
        {
            const auto [with_id, new_id] = shard_with_id.try_emplace(id, shard);
            if (!new_id && with_id->second != shard)
                return {std::nullopt, where + "node " + id + " appears at " +
                                          address_of(map.shards_[with_id->second]) + " and at " +
                                          address_of(map.shards_[shard])};
        }
        for (std::size_t slot = r.start; slot <= r.end; ++slot)
        {
            if (map.owner_[slot] != 0)
                return {std::nullopt,
                        where + "slot " + std::to_string(slot) + " is also in an earlier range"};
            map.owner_[slot] = static_cast<std::uint16_t>(shard + 1);
        }
        map.covered_ += std::size_t{r.end} - r.start + 1;
    }
    return {std::move(map), {}};
}

std::optional<std::size_t> slot_map::find(const cluster_endpoint& to) const noexcept
{
    for (std::size_t s = 0; s < shards_.size(); ++s)
        if (same_address(shards_[s], to))
            return s;
    return std::nullopt;
}

std::optional<std::size_t> slot_map::moved(std::uint16_t slot, const cluster_endpoint& to)
{
    if (slot >= slot_count || to.host.empty() || to.host == "?" || to.port == 0)
        return std::nullopt;
    auto shard = find(to);
    if (!shard)
    {
        if (shards_.size() >= slot_count)
            return std::nullopt;
        shard = shards_.size();
        shards_.push_back(to);
    }
    if (owner_[slot] == 0)
        ++covered_;
    owner_[slot] = static_cast<std::uint16_t>(*shard + 1);
    return shard;
}

}  // namespace redlock::detail
