// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// A round's per-slot parts: a cluster master given keys of several hash slots gets one command
// per slot, and its outcome combines theirs. The rest of the round is in round.cpp.
#include <algorithm>
#include <utility>
#include <vector>

#include "driver/round.hpp"
#include "driver/round_context.hpp"
#include "protocol/lock_replies.hpp"
#include "routing/direct_link.hpp"
#include "routing/key_slot.hpp"

namespace redlock::detail {

void round::group_by_slot()
{
    groups_ = 1;
    // Only the commands whose keys are all lock keys (lock_command_row::splittable); a fenced
    // lock's keys are kept in one slot by acquire_op (refused_by_cluster).
    if (!c_->has_cluster_master || keys_.size() < 2 || !row_of(k_).splittable)
        return;
    std::vector<std::pair<std::uint16_t, std::size_t>> order;
    order.reserve(keys_.size());
    for (std::size_t k = 0; k < keys_.size(); ++k)
        order.emplace_back(key_slot(keys_[k]), k);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (order.front().first == order.back().first)
        return;  // one slot: one command, as for a standalone master
    auto& r = rare();
    r.slot_keys.clear();
    r.group_start.clear();
    for (std::size_t k = 0; k < order.size(); ++k)
    {
        if (k == 0 || order[k].first != order[k - 1].first)
            r.group_start.push_back(k);
        r.slot_keys.push_back(keys_[order[k].second]);
    }
    r.group_start.push_back(order.size());
    groups_ = r.group_start.size() - 1;
    r.part_tickets.assign(m_.size() * groups_, request_ticket{});
    r.parts.assign(m_.size(), parts_state{});
}

// A cluster master runs a command on one slot only: keys of several slots go as one command
// per slot, all at once, each as a script over its slot's keys (SET NX for a single key). The
// master's outcome is all of theirs: granted when every part is, held by another owner when
// every part is, failed when one part failed; a mix (some slots ours, some another's) is
// held_in_part: held for the decision, and released after a failed attempt, as a failure is.
bool round::send_parts(std::size_t i)
{
    auto& conn = *c_->masters[i];
    auto& parts = rare_->parts;
    auto& tickets = rare_->part_tickets;
    parts[i] = parts_state{};
    parts[i].left = groups_;
    for (std::size_t g = 0; g < groups_; ++g)
    {
        const auto keys = group_keys(g);
        const auto tag = static_cast<std::uint32_t>(i) | static_cast<std::uint32_t>((g + 1) << 16) |
                         fallback_bit;
        const auto script = cluster_script_for(k_, keys.size());
        const error_code ec = script == no_script
                                  ? conn.submit(
                                        this, tag, keys[0],
                                        [&](std::string& out) {
                                            encode_lock_command(out, k_, true, keys, token_, arg_,
                                                                fences_, successor_token());
                                        },
                                        tickets[i * groups_ + g], mode_of(k_))
                                  : conn.submit_script(
                                        this, tag, keys[0], script,
                                        [&](std::string& out, bool eval) {
                                            encode_lock_command(out, k_, eval, keys, token_, arg_,
                                                                fences_, successor_token());
                                        },
                                        tickets[i * groups_ + g], mode_of(k_));
        if (ec)
        {
            for (std::size_t h = 0; h < g; ++h)
                conn.abandon(tickets[i * groups_ + h]);
            return queued(i, true, ec);
        }
    }
    return queued(i, true, {});
}

bool round::split_master(std::size_t i) const noexcept { return c_->masters[i]->is_cluster(); }

void round::abandon_master(std::size_t i) noexcept
{
    if (!split_for(i))
        return abandon_at(*c_->masters[i], m_[i].ticket);
    for (std::size_t g = 0; g < groups_; ++g)
        c_->masters[i]->abandon(rare_->part_tickets[i * groups_ + g]);
}

void round::on_part_reply(std::size_t i, std::size_t part, const error_code& ec,
                          std::span<const resp::node_view> nodes)
{
    auto& ps = rare_->parts[i];
    if (!m_[i].outstanding || ps.left == 0)
        return;
    listener_keep keep(*l_);
    auto& master = *c_->masters[i];
    const auto fail = [&](const error_code& e, std::string_view message) {
        if (ps.failed)
            return;  // the first failed part speaks
        ps.failed = true;
        ps.ec = e;
        ps.message.assign(message);
    };
    if (ec)
        fail(ec, master.last_error_detail());
    else if (resp::is_error(nodes[0].data_type))
        fail(error_from_server_reply(nodes[0].value), nodes[0].value);
    else if (const auto r = read_lock_reply(k_, nodes, group_keys(part).size());
             r.answer == lock_answer::ours)
    {
        ps.any_granted = true;
        // The smallest PTTL of the parts (-1: no expiry, larger than any).
        if (ps.pttl == -3 || (r.pttl != -1 && (ps.pttl == -1 || r.pttl < ps.pttl)))
            ps.pttl = r.pttl;
    }
    else if (r.answer == lock_answer::other_owner)
        ps.any_held = true;
    else
        fail(error::unexpected_reply, r.message());
    if (--ps.left > 0)
        return;
    m_[i].outstanding = false;
    --outstanding_;
    const auto at = ec ? std::chrono::steady_clock::now() : master.read_time();
    if (ps.failed)
        settle(i, master_outcome::failed, ps.ec, ps.message, at);
    else if (ps.any_held && (!ps.any_granted || row_of(k_).values == reply_values::pttl))
        settle(i, master_outcome::held_by_other, {}, {}, at);
    else if (ps.any_held)
        settle(i, master_outcome::held_in_part, {},
               "ours on some hash slots of this cluster master, another owner's on others", at);
    else
    {
        if (row_of(k_).values == reply_values::pttl)
            values_[i] = ps.pttl;
        settle(i, master_outcome::granted, {}, {}, at);
    }
    notify();
}

}  // namespace redlock::detail
