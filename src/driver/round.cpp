// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/round.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "driver/round_context.hpp"
#include "protocol/lock_command_table.hpp"
#include "protocol/lock_replies.hpp"
#include "protocol/scripts.hpp"
#include "routing/direct_link.hpp"

namespace redlock::detail {

namespace {

// What a reply read says, as the master's outcome.
master_outcome outcome_of(lock_answer a) noexcept
{
    switch (a)
    {
    case lock_answer::ours: return master_outcome::granted;
    case lock_answer::other_owner:
    case lock_answer::other_kind: return master_outcome::held_by_other;
    case lock_answer::unexpected: break;
    }
    return master_outcome::failed;
}

// Why a restarted master's grant does not count (round::settle). Out of line and cold: it is
// never on the hot path, and inlined its string building would lengthen settle(), which every
// answer goes through.
[[gnu::noinline, gnu::cold]] std::string round_quarantine_message(
    std::chrono::steady_clock::duration left)
{
    return "restarted lately: out of the quorum for " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(left).count()) +
           " ms more";
}

// What holds a resource that a semaphore's attempt found held as another kind of lock (the
// script's answer: the readers' mark, another semaphore's mark, or `redlock:owned` for a
// token, which is never shown).
[[gnu::noinline, gnu::cold]] std::string other_kind_message(std::string_view found)
{
    if (found.starts_with(permits_mark_prefix))
        return "held as a semaphore of " + std::string(found.substr(permits_mark_prefix.size())) +
               " permits";
    if (found == "redlock:readers")
        return "held by a read-write lock's readers";
    return "held as a mutex (or a read-write lock's writer)";
}

}  // namespace

// A cluster master counts a replicated write's answer once its replicas have it
// (client_config::cluster_replica_acks): the command's row says which (lock_command_row::
// replicated).
request_mode round::mode_of(kind k) noexcept
{
    return row_of(k).replicated ? request_mode::replicated : request_mode::plain;
}

void round::start_release(round_context& c, const lock_state& held,
                          std::chrono::steady_clock::duration timeout, round_listener* l,
                          time_point latest, time_point at)
{
    // The next waiter of this client, if it takes the lock, gets it at once: the keys stay,
    // and each master gives them its token. Everything the waiter sends afterwards goes behind
    // the hand-over on each connection, and a copy of our lock used later finds its token gone.
    // Only a claim still live is offered, with the validity last proven for it: a second
    // release of the lock (a copy), one after a failed extension or a lost hold, releases.
    auto& claim = held.claim();
    const bool live = !claim.over && claim.offerable;
    claim.over = true;
    const auto& held_kind = row_of(held.kind);
    // Only a kind that allows it (a mutex's lock) is handed over, and only to an acquisition of
    // that kind (take_over).
    if (live && held_kind.handoff && c.waiting.wants_releases())
        if (auto* next = c.waiting.successor(held.key);
            next && next->take_over(held, claim.valid_until,
                                    std::span<char, token_source::token_chars>(successor_)))
        {
            c.waiting.handed_over(held.key);
            c.waiting.changed_here(held.key_span());  // another holder: observers read again
            return start(c, kind::hand_over, held.key_span(), held.token, 0, timeout, l, nullptr,
                         nullptr, latest, at);
        }
    start(c, held_kind.release, held.release_span(), held.token, 0, timeout, l, nullptr, nullptr,
          latest, at);
}

void round::start(round_context& c, kind k, std::span<const std::string> keys,
                  std::string_view token, std::int64_t arg,
                  std::chrono::steady_clock::duration timeout, round_listener* l,
                  const master_set* to, const master_set* awaited, time_point latest, time_point at)
{
    const auto n = c.size();
    c_ = &c;
    l_ = l;
    k_ = k;
    keys_ = keys;
    token_ = token;
    arg_ = arg;
    m_.assign(n, per_master{});
    settled_.clear();
    told_ = 0;
    diag_.resize(n);
    const auto& row = row_of(k);
    per_master_ = row.values == reply_values::counter_per_resource ? keys.size() / 2 : 1;
    if (row.values == reply_values::holdings) [[unlikely]]
        rare().holdings.assign(n, master_holdings{});
    groups_ = 1;
    if (c.has_cluster_master && keys.size() > 1) [[unlikely]]
        group_by_slot();
    if (row.values != reply_values::none && row.values != reply_values::holdings) [[unlikely]]
        values_.assign(n * per_master_, row.fenced_attempt()                 ? 0
                                        : row.values == reply_values::permit ? -1
                                                                             : -3);
    for (std::size_t i = 0; i < n; ++i)
    {
        // Reset in place: the messages keep their capacity from the round before.
        auto& d = diag_[i];
        d.index = i;
        d.status = master_status::not_needed;
        d.ec = {};
        d.message.clear();
        d.latency = {};
    }
    outstanding_ = 0;
    active_ = true;
    if (deferred_notice_.masters() != 0) [[unlikely]]
        deferred_notice_ = master_set();

    // t0 is taken before the first byte is queued: validity counts every microsecond spent.
    t0_ = at == time_point{} ? std::chrono::steady_clock::now() : at;
    last_outcome_at_ = t0_;
    listener_keep keep(*l_);
    // Every master gets the same bytes (a release: one of two forms, EVAL or EVALSHA): each
    // form is encoded once, on first use, and copied to each connection's output.
    for (auto& s : c_->command_scratch)
        s.clear();
    if (row.releases && c_->waiting.wants_releases()) [[unlikely]]
    {
        // Waiters of this client on these keys: what they send from now on runs after this
        // release on each master it goes to (waiting_room::released_here). Told before the
        // sends, so that their wake-up is posted ahead of the connections' write kicks: their
        // SET then leaves in the same write as our DEL. (A master whose connection refuses the
        // release gets a wake-up all the same: an attempt too many, which it refuses.)
        master_set told(n);
        for (std::size_t i = 0; i < n; ++i)
            if (!to || to->contains(i))
                told.insert(i);
        if (to)
        {
            // A failed attempt's release (or an acquisition's stray permits, or a writer's
            // intent cleanup) frees what it took, if anything, but no holder let go: it is no
            // turn in a row of hand-offs, neither counted nor a yield.
            if (!told.empty())
                c_->waiting.notify_released(told, keys_);
        }
        else if (c_->waiting.released_here(told, keys_))
            deferred_notice_ = std::move(told);  // this hand-off yields: told once decided
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        // A master outside the plan (one that refused the attempt holds nothing of ours).
        if (to && !to->contains(i))
            continue;
        const bool waited = !awaited || awaited->contains(i);
        // Sent, not awaited (see start()): nobody will see a NOSCRIPT, so the body goes along.
        if (send(i, !waited, true) && !waited)
        {
            abandon_master(i);
            m_[i].outstanding = false;
            --outstanding_;
        }
    }
    if (outstanding_ > 0)
        c_->deadlines.schedule(*this, std::min(t0_ + timeout, latest));
    notify();
}

bool round::send(std::size_t i, bool fallback, bool from_start)
{
    if (split_for(i))
        return send_parts(i);
    auto& pm = m_[i];
    auto& conn = *c_->masters[i];
    if (const auto script = conn.is_cluster() ? cluster_script_for(k_, keys_.size()) : no_script;
        script != no_script)
    {
        // A cluster master sends EVALSHA or EVAL per node, and answers NOSCRIPT itself.
        return queued(i, true,
                      conn.submit_script(
                          this, static_cast<std::uint32_t>(i) | fallback_bit, keys_[0], script,
                          [&](std::string& out, bool eval) {
                              encode_lock_command(out, k_, eval, keys_, token_, arg_, fences_,
                                                  successor_token());
                          },
                          pm.ticket, mode_of(k_)));
    }
    // How the command goes is its row's eval_policy (lock_command_table.hpp): always the body
    // (a plain SET is encoded the same either way), EVALSHA first, or cached: EVAL to a
    // connection that has not seen the script run yet (the first after connecting, or after a
    // NOSCRIPT), which caches it there, so that for a release nothing it sends can need a
    // second request from us and it may complete at the quorum even when such a master is
    // silent (see runs_without_us); EVALSHA afterwards.
    const auto policy = row_of(k_).policy(keys_.size());
    if (policy == eval_policy::always_eval || policy == eval_policy::plain)
        fallback = true;
    if (cached_script() &&
        (!conn.caches_scripts() || !conn.scripts.known(script_id(), generation_of(conn))))
        fallback = true;
    const auto tag = static_cast<std::uint32_t>(i) | (fallback ? fallback_bit : 0u);
    const auto write = [&](std::string& out) {
        if (!from_start)
        {
            encode_lock_command(out, k_, fallback, keys_, token_, arg_, fences_, successor_token());
            return;
        }
        auto& bytes = c_->command_scratch[fallback ? 1 : 0];
        if (bytes.empty())
            encode_lock_command(bytes, k_, fallback, keys_, token_, arg_, fences_,
                                successor_token());
        out.append(bytes);
    };
    // A hand-over's bytes may wait to share a write (client_config::handover_write_delay):
    // nobody but the holder's release waits for them, and the new holder's commands queue
    // behind them.
    return queued(i, fallback,
                  submit_to(conn, this, tag, keys_[0], write, pm.ticket, mode_of(k_),
                            row_of(k_).shares_write));
}

void round::refused(std::size_t i, const error_code& ec)
{
    settle(i, master_outcome::failed, ec, c_->masters[i]->last_error_detail());
}

bool round::runs_without_us() const noexcept
{
    for (std::size_t i = 0; i < m_.size(); ++i)
    {
        if (!m_[i].outstanding)
            continue;
        const auto& conn = *c_->masters[i];
        if (!written_at(conn, m_[i].ticket))
            return false;
        // An EVALSHA that may meet NOSCRIPT needs us to send the body.
        if (row_of(k_).releases && !m_[i].fallback &&
            !conn.scripts.known(script_id(), generation_of(conn)))
            return false;
    }
    return true;
}

void round::halt() noexcept
{
    active_ = false;
    c_->deadlines.cancel(*this);
    // The release stays queued on its masters: a yielded notice still goes out, unless the
    // client is closing (its waiters complete with connection_closed: close() expires every
    // armed wait). Should the notice fail to go out (no memory), the waiters' own fallback, the
    // keys' TTL, still ends their wait.
    if (!c_->closed)
    {
        try
        {
            tell_deferred();
        }
        catch (...)
        {
            deferred_notice_ = master_set();
        }
    }
    for (std::size_t i = 0; i < m_.size(); ++i)
    {
        if (m_[i].outstanding)
        {
            abandon_master(i);
            m_[i].outstanding = false;
        }
    }
    outstanding_ = 0;
}

void round::settle(std::size_t i, master_outcome o, const error_code& ec, std::string_view msg,
                   time_point at)
{
    // A master that restarted lately may have forgotten other owners' keys and counters: its
    // grant does not count toward an acquisition (client_config::restart_quarantine).
    if (o == master_outcome::granted && row_of(k_).counts_for_acquisition && c_->quarantined(i, at))
        [[unlikely]]
        return settle(i, master_outcome::failed, error::master_restarted,
                      round_quarantine_message(c_->masters[i]->quarantine_end() - at), at);
    auto& d = diag_[i];
    switch (o)
    {
    case master_outcome::granted: d.status = master_status::granted; break;
    case master_outcome::held_by_other:
    case master_outcome::held_in_part: d.status = master_status::held_by_other; break;
    case master_outcome::timed_out: d.status = master_status::timed_out; break;
    default: d.status = master_status::error; break;
    }
    d.ec = ec;
    if (!msg.empty())
        d.message.assign(msg);
    d.latency = std::chrono::duration_cast<std::chrono::microseconds>(std::max(at, t0_) - t0_);
    last_outcome_at_ = std::max(last_outcome_at_, at);
    m_[i].outcome = o;
    settled_.push_back(static_cast<std::uint16_t>(i));  // told by notify()
}

void round::settle_other_kind(std::size_t i, std::string_view found, time_point at)
{
    settle(i, master_outcome::held_by_other, error::kind_mismatch, other_kind_message(found), at);
}

void round::on_reply(std::uint32_t tag, const error_code& ec,
                     std::span<const resp::node_view> nodes)
{
    const std::size_t i = tag & 0xffffu;
    const bool fallback = (tag & fallback_bit) != 0;
    if (const std::size_t part = (tag >> 16) & 0x7fffu; part != 0)
        return on_part_reply(i, part - 1, ec, nodes);
    auto& pm = m_[i];
    pm.outstanding = false;
    --outstanding_;
    // Nothing here calls the listener before notify(), which holds it while it does.

    if (ec)
    {
        settle(i, master_outcome::failed, ec, c_->masters[i]->last_error_detail());
    }
    else
    {
        auto& master = *c_->masters[i];
        const auto& v = nodes[0];
        const auto at = read_time_of(master);
        if (cached_script() && !resp::is_error(v.data_type))
            master.scripts.note(script_id(), true, generation_of(master));  // it ran there
        if (resp::is_error(v.data_type))
        {
            const auto e = error_from_server_reply(v.value);
            // A master that restarted or ran SCRIPT FLUSH lost the script: EVAL sends the body
            // (and caches it again). Only once per round and master.
            if (e == error::noscript && cached_script())
                master.scripts.note(script_id(), false, generation_of(master));
            if (e == error::noscript && !fallback && send(i, true))
                return;
            settle(i, master_outcome::failed, e, v.value, at);
        }
        else if (row_of(k_).values == reply_values::holdings)
        {
            // Its keys: the string keys, then the readers' set, the fence counter and its
            // record.
            std::string why;
            if (read_holders_reply(nodes, keys_.size() - 3, rare_->holdings[i], why))
                settle(i, master_outcome::granted, {}, {}, at);
            else
                settle(i, master_outcome::failed, error::unexpected_reply, why, at);
        }
        else
        {
            const auto r = read_lock_reply(k_, nodes, keys_.size(), counters_of(i));
            if (const auto values = row_of(k_).values; r.answer != lock_answer::ours)
                ;
            else if (values == reply_values::pttl)
                values_[i] = r.pttl;
            else if (values == reply_values::permit)
                values_[i] = r.permit;
            if (r.answer == lock_answer::unexpected)
                settle(i, master_outcome::failed, error::unexpected_reply, r.message(), at);
            else if (r.answer == lock_answer::other_kind) [[unlikely]]
                settle_other_kind(i, r.what, at);
            else
                settle(i, outcome_of(r.answer), {}, {}, at);
        }
    }
    notify();
}

void round::on_deadline()
{
    listener_keep keep(*l_);
    for (std::size_t i = 0; i < m_.size(); ++i)
    {
        if (!m_[i].outstanding)
            continue;
        auto& conn = *c_->masters[i];
        abandon_master(i);
        m_[i].outstanding = false;
        if (row_of(k_).releases && !m_[i].fallback)
        {
            // The EVALSHA will still run when the master gets to it, but a NOSCRIPT reply would
            // now reach no one. An EVAL queued behind it covers that case; when the EVALSHA did
            // delete the key, the EVAL finds nothing and returns 0.
            request_ticket ignored;
            (void)submit_to(
                conn, nullptr, 0, keys_[0],
                [&](std::string& out) {
                    encode_lock_command(out, k_, true, keys_, token_, arg_, fences_,
                                        successor_token());
                },
                ignored);
        }
        settle(i, master_outcome::timed_out, error::request_timeout, {});
    }
    outstanding_ = 0;
    notify();
}

void round::tell_deferred_now()
{
    const auto to = std::move(deferred_notice_);
    deferred_notice_ = master_set();
    c_->waiting.notify_released(to, keys_);
}

void round::notify()
{
    if (!active_)
        return;
    listener_keep keep(*l_);  // the listener told may let go of itself, and of this round
    // A listener that restarts the round from here hears nothing more of the old one: start()
    // empties settled_ (and its own notify() tells what the new round settled so far).
    while (told_ < settled_.size())
    {
        l_->on_round_outcome(*this, settled_[told_++]);
        if (!active_)
            return;  // stopped by the listener
    }
    if (outstanding_ == 0)
    {
        active_ = false;
        c_->deadlines.cancel(*this);
        // A yielded hand-off (waiting_room::released_here) is told by the end of the release
        // at the latest (decided() may have told it sooner).
        tell_deferred();
        l_->on_round_finished(*this);
    }
}

}  // namespace redlock::detail
