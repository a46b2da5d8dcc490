// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/release_watch.hpp"

#include <algorithm>
#include <charconv>

#include "driver/round_context.hpp"
#include "protocol/resp_encoder.hpp"

namespace redlock::detail {

namespace {

// Tags: the master's index in the high half, the step in the low half.
constexpr std::uint32_t tag_of(std::size_t master, std::uint32_t step)
{
    return static_cast<std::uint32_t>(master) << 16 | step;
}

void append_words(std::string& out, std::initializer_list<std::string_view> words)
{
    resp::append_array_header(out, words.size());
    for (const auto w : words)
        resp::append_bulk(out, w);
}

}  // namespace

void release_watch::start(round_context& c, const master_set& masters,
                          std::span<const std::string> keys, watch_listener* l, bool any_frees)
{
    stop();
    c_ = &c;
    l_ = l;
    keys_ = keys;
    any_frees_ = any_frees;
    m_.assign(c.size(), per_master{});
    active_ = true;
    auto hold = l_->hold();
    for (std::size_t i = 0; i < c.size() && active_; ++i)
        if (masters.contains(i))
            send(i);
}

void release_watch::send(std::size_t i)
{
    auto& conn = *c_->masters[i];
    auto& pm = m_[i];
    pm.active = true;
    const auto gen = conn.generation();
    // A cluster master asks each node for tracking itself and sends each read after CLIENT
    // CACHING on the node of its key (request_mode::tracked_read): one PTTL per key.
    pm.cluster = conn.is_cluster();
    const auto tracking = pm.cluster           ? waiting_room::tracking::asked
                          : conn.tracks_keys() ? c_->waiting.tracking_of(i, gen)
                                               : waiting_room::tracking::refused;
    pm.asked_tracking = tracking == waiting_room::tracking::unknown;
    pm.tracked = pm.cluster ? conn.tracks_keys() : tracking != waiting_room::tracking::refused;
    std::uint32_t step = 0;
    // `key`: what a cluster master routes the command by (the key it reads, or caches for).
    const auto submit = [&](std::initializer_list<std::string_view> words, std::string_view key,
                            request_mode mode = request_mode::plain) {
        request_ticket t;
        const auto ec = conn.submit(
            this, tag_of(i, step++), key, [&](std::string& out) { append_words(out, words); }, t,
            mode);
        if (!ec)
            pm.tickets.push_back(t);
        return !ec;
    };
    bool ok = true;
    if (pm.asked_tracking)
    {
        ok = submit({"HELLO", "3"}, keys_[0]) &&
             submit({"CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP"}, keys_[0]);
        if (ok)
            c_->waiting.set_tracking(i, gen, waiting_room::tracking::asked);
    }
    for (std::size_t k = 0; ok && k < keys_.size(); ++k)
        ok = pm.cluster ? submit({"PTTL", keys_[k]}, keys_[k], request_mode::tracked_read)
                        : submit({"CLIENT", "CACHING", "yes"}, keys_[k]) &&
                              submit({"PTTL", keys_[k]}, keys_[k]);
    pm.expected = step;
    if (!ok)
    {
        // The connection refused a request (down, closed): none of its replies will come.
        for (const auto t : pm.tickets)
            conn.abandon(t);
        pm.tickets.clear();
        finish(i, master_outcome::failed);
    }
}

void release_watch::on_reply(std::uint32_t tag, const error_code& ec,
                             std::span<const resp::node_view> nodes)
{
    const std::size_t i = tag >> 16;
    const std::uint32_t step = tag & 0xffff;
    if (!active_ || i >= m_.size() || !m_[i].active)
        return;
    auto& pm = m_[i];
    ++pm.received;
    auto hold = l_->hold();
    if (ec)
        return finish(i, master_outcome::failed);
    const auto& v = nodes[0];
    const bool error = resp::is_error(v.data_type);
    const std::uint32_t first_key_step = pm.asked_tracking ? 2 : 0;
    if (step < first_key_step)
    {
        // HELLO 3 or CLIENT TRACKING refused (a server before 6.0, an ACL rule): no pushes
        // will come over this connection; its keys are polled instead.
        if (error)
        {
            pm.tracked = false;
            c_->waiting.set_tracking(i, c_->masters[i]->generation(),
                                     waiting_room::tracking::refused);
        }
    }
    else if (!pm.cluster && (step - first_key_step) % 2 == 0)
    {
        if (error)
            pm.tracked = false;  // CLIENT CACHING refused
    }
    else if (error && pm.cluster && v.value.starts_with("ASK "))
    {
        // The key's slot migrates: cluster_master does not follow ASK for a tracked read
        // (ASKING and CLIENT CACHING both apply to the next command only), so no node tracks
        // the key for this waiter and its PTTL is unknown. That master is polled at the retry
        // delay, as one that refuses tracking.
        pm.tracked = false;
        if (pm.pttl == -2)
            pm.pttl = -1;
    }
    else
    {
        std::int64_t t = 0;
        if (v.data_type != resp::type::integer ||
            std::from_chars(v.value.data(), v.value.data() + v.value.size(), t).ec != std::errc{})
            pm.failed = true;
        else if (t == -2)
            pm.one_gone = true;
        // The smallest time left of a key still there (-1: no expiry), or -2 when none is.
        else
            pm.pttl = pm.pttl == -2
                          ? t
                          : (t == -1 ? pm.pttl : (pm.pttl == -1 ? t : std::min(pm.pttl, t)));
    }
    if (pm.received == pm.expected)
        finish(i, pm.failed ? master_outcome::failed : master_outcome::granted);
}

void release_watch::finish(std::size_t i, master_outcome o)
{
    auto& pm = m_[i];
    if (!pm.active)
        return;
    pm.active = false;
    // A failure abandons what is still outstanding there: a standalone master's connection
    // failed it all; a cluster master's reads went to several nodes, and a late answer from
    // another one must not count in a later watch.
    if (o == master_outcome::failed && c_->masters[i]->is_cluster())
        for (const auto t : pm.tickets)
            c_->masters[i]->abandon(t);
    pm.tickets.clear();
    l_->on_watched(i, o, any_frees_ && pm.one_gone ? -2 : pm.pttl, pm.tracked);
}

void release_watch::stop() noexcept
{
    if (!active_)
        return;
    active_ = false;
    for (std::size_t i = 0; i < m_.size(); ++i)
    {
        if (!m_[i].active)
            continue;
        for (const auto t : m_[i].tickets)
            c_->masters[i]->abandon(t);
        m_[i].tickets.clear();
        m_[i].active = false;
    }
}

}  // namespace redlock::detail
