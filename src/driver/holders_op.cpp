// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/holders_op.hpp"

#include <charconv>

#include "algorithm/attempt_timeout.hpp"
#include "algorithm/fencing.hpp"
#include "algorithm/holders.hpp"
#include "algorithm/lock_value.hpp"
#include "algorithm/quorum.hpp"
#include "protocol/scripts.hpp"
#include "routing/key_slot.hpp"

namespace redlock::detail {

std::vector<std::string> holders_keys(const std::string& key, const lock_options& o)
{
    std::vector<std::string> keys;
    // A semaphore's permit keys, then the resource's own key (where the semaphore's mark says
    // how many permits it has, or another kind's lock shows).
    if (o.permits > 1 && o.permits <= 1024)
        for (std::uint32_t i = 0; i < o.permits; ++i)
            keys.push_back(slot_sibling(key, ":permit:" + std::to_string(i)));
    keys.push_back(key);
    keys.push_back(slot_sibling(key, ":readers"));
    keys.push_back(fence_key(key));
    keys.push_back(fence_holder_key(key));
    return keys;
}

holders_op::holders_op(std::shared_ptr<op_context> c, std::string resource, const lock_options& o,
                       handler h)
    : lock_op_driver(std::move(c), lock{}, std::move(h)),
      o_(o)
{
    key_ = c_->cfg.key_prefix + resource;
    keys_ = holders_keys(key_, o_);
    if (resource.empty())
        reason_ = "the resource is empty";
    else if (key_.size() > max_key_size)
        reason_ = "the resource's key (key_prefix + resource) is longer than max_key_size (" +
                  std::to_string(max_key_size) + " bytes)";
    else if (o_.permits <= 1024)
        reason_ = refused_keys();  // (more permits: validate() says so)
}

std::string holders_op::refused_keys() const
{
    if (!c_->has_cluster_master)
        return {};
    for (const auto& k : keys_)
        if (key_slot(k) != key_slot(keys_.front()))
            return "the key " + key_ +
                   " has a '}' and no hash tag, so the keys read beside it cannot share its "
                   "slot on a Redis Cluster master: give it a hash tag of its own";
    return {};
}

void holders_op::start()
{
    if (answered_)
        return;  // cancelled before it started
    error_code ec;
    validate(o_, ec, reason_);
    if (ec)
        return refuse(ec);
    if (!reason_.empty())
        return refuse(error::invalid_argument);
    if (c_->closed)
        return refuse(error::connection_closed);
    timeout_ = attempt_timeout_of(o_);
    run(timeout_, c_->size());
}

void holders_op::execute(const fsm_action& a)
{
    switch (a.type)
    {
    case fsm_action::kind::send_attempt:
        read_id_ = a.round_id;
        read_.start(*c_, round::kind::read_holders, keys_, {}, 0, timeout_, this, nullptr, nullptr,
                    a.deadline, a.at);
        return;
    case fsm_action::kind::complete:
    {
        auto res = a.ec ? holders_result{} : result();
        if (!a.ec && fsm_->outcomes().granted() < fsm_->outcomes().quorum())
        {
            // Fewer than a majority answered: who holds it cannot be told. What each master
            // said is in the result all the same.
            res.holders.clear();
            read_.stop();
            deliver(error::no_quorum, std::move(res));
            c_->untrack(*this);
            return;
        }
        read_.stop();
        deliver(a.ec, std::move(res));
        c_->untrack(*this);
        return;
    }
    default: return;  // (a census sends nothing else)
    }
}

void holders_op::on_round_finished(round& r)
{
    // Read without the number of permits (or with another), the resource's key held a
    // semaphore's mark: read again, once, over that semaphore's permit keys, so that a census
    // that does not know the kind still names the holders. The machine has seen nothing of the
    // first read (a census decides once every master answered).
    if (!reread_)
        if (const auto n = marked_permits(); n > 1 && n != o_.permits)
        {
            reread_ = true;
            o_.permits = n;
            keys_ = holders_keys(key_, o_);
            if (refused_keys().empty())
                return read_.start(*c_, round::kind::read_holders, keys_, {}, 0, timeout_, this);
        }
    drive(finished_events(r, c_->closed, read_id_, r.last_outcome_at()));
}

std::uint32_t holders_op::marked_permits() const
{
    for (std::size_t i = 0; i < c_->size(); ++i)
        if (const auto* h = read_.holdings(i))
            for (const auto& v : h->held)
                if (!v.reader && v.value.starts_with(permits_mark_prefix))
                {
                    const auto digits =
                        std::string_view(v.value).substr(permits_mark_prefix.size());
                    std::uint32_t n = 0;
                    const auto [end, ec] =
                        std::from_chars(digits.data(), digits.data() + digits.size(), n);
                    if (ec == std::errc() && end == digits.data() + digits.size() && n <= 1024)
                        return n;
                }
    return 0;
}

holders_result holders_op::result() const
{
    holders_result res;
    std::vector<const master_holdings*> reads(c_->size());
    const auto& diags = read_.diagnostics();
    for (std::size_t i = 0; i < c_->size(); ++i)
    {
        reads[i] = read_.holdings(i);
        master_holdings_info m;
        m.diagnostic = diags[i];
        if (const auto* h = reads[i])
        {
            m.fence_counter = h->fence;
            for (const auto& v : h->held)
            {
                held_entry e;
                e.identity.assign(split_value(v.value).identity);
                e.reader = v.reader;
                e.foreign = v.foreign;
                e.ttl = std::chrono::milliseconds(v.pttl);
                m.entries.push_back(std::move(e));
            }
        }
        res.masters.push_back(std::move(m));
    }
    const auto elapsed = read_.last_outcome_at() - read_.started();
    for (auto& q :
         holders_on_quorum(reads, fsm_->outcomes().quorum(), elapsed, o_.ttl, o_.drift_factor))
    {
        holder_info h;
        h.identity.assign(split_value(q.value).identity);
        h.id = q.id;
        h.reader = q.reader;
        h.fencing_token = q.fence;
        h.valid_for = q.expires ? std::chrono::duration_cast<std::chrono::milliseconds>(q.valid_for)
                                : std::chrono::milliseconds(-1);
        h.masters = q.masters;
        res.holders.push_back(std::move(h));
    }
    res.permits = marked_permits();
    return res;
}

}  // namespace redlock::detail
