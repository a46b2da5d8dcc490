// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/round.hpp"

#include <algorithm>
#include <cstdlib>

#include "driver/round_context.hpp"
#include "protocol/resp_encoder.hpp"
#include "protocol/scripts.hpp"
#include "routing/key_slot.hpp"

namespace redlock::detail {

namespace {

constexpr std::uint32_t fallback_bit = 1u << 31;

void append_script(std::string& out, const lua_script& script, bool eval,
                   std::span<const std::string> keys, std::string_view token, std::int64_t ttl_ms,
                   bool with_ttl)
{
    resp::append_array_header(out, 3 + keys.size() + 1 + (with_ttl ? 1 : 0));
    if (eval)
    {
        resp::append_bulk(out, "EVAL");
        resp::append_bulk(out, script.body);
    }
    else
    {
        resp::append_bulk(out, "EVALSHA");
        resp::append_bulk(out, script.sha1);
    }
    resp::append_bulk(out, static_cast<std::int64_t>(keys.size()));
    for (const auto& k : keys)
        resp::append_bulk(out, k);
    resp::append_bulk(out, token);
    if (with_ttl)
        resp::append_bulk(out, ttl_ms);
}

// The commit of fencing tokens: EVAL(SHA) <script> 2n K1..Kn F1..Fn token t1..tn.
void append_commit(std::string& out, bool eval, std::span<const std::string> keys,
                   std::string_view token, std::span<const std::uint64_t> fences)
{
    resp::append_array_header(out, 3 + keys.size() + 1 + fences.size());
    resp::append_bulk(out, eval ? "EVAL" : "EVALSHA");
    resp::append_bulk(out, eval ? std::string_view(fence_commit_script().body)
                                : fence_commit_script().sha1);
    resp::append_bulk(out, static_cast<std::int64_t>(keys.size()));
    for (const auto& k : keys)
        resp::append_bulk(out, k);
    resp::append_bulk(out, token);
    for (const auto t : fences)
        resp::append_bulk(out, static_cast<std::int64_t>(t));
}

// `eval`: send the script's body (EVAL) rather than its SHA1 (EVALSHA).
// `next`: kind::hand_over's new token.
void encode(std::string& out, round::kind k, bool eval, std::span<const std::string> keys,
            std::string_view token, std::int64_t ttl_ms, std::span<const std::uint64_t> fences,
            std::string_view next)
{
    const bool multi = keys.size() > 1;
    switch (k)
    {
    case round::kind::acquire:
        if (!multi)
        {
            // The constant arguments are encoded once: a lock cycle sends these on every master.
            static const auto set = resp::encode_bulks("SET");
            static const auto nx_px = resp::encode_bulks("NX", "PX");
            resp::append_command(out, set, keys[0], token, nx_px, ttl_ms);
        }
        else
            // EVAL to a standalone master, as the extension (round::send): once the quorum is
            // reached the round no longer listens to the slower masters, so a NOSCRIPT from one
            // of them would reach no one and leave the lock on fewer masters than a single-key
            // lock would be. A cluster master answers NOSCRIPT itself: EVALSHA is safe there.
            append_script(out, acquire_multi_script(), eval, keys, token, ttl_ms, true);
        return;
    case round::kind::release:
        if (!multi)
        {
            static const auto by_body = resp::encode_bulks("EVAL", release_script().body, "1");
            static const auto by_sha1 = resp::encode_bulks("EVALSHA", release_script().sha1, "1");
            resp::append_command(out, eval ? by_body : by_sha1, keys[0], token);
        }
        else
            append_script(out, release_multi_script(), eval, keys, token, ttl_ms, false);
        return;
    case round::kind::hand_over:
    {
        // Always EVAL (see round::send).
        static const auto by_body = resp::encode_bulks("EVAL", handover_script().body, "1");
        resp::append_command(out, by_body, keys[0], token, next);
        return;
    }
    case round::kind::extend:
        // EVAL to a standalone master: once the quorum is reached the round stops listening to
        // the slower masters, so a NOSCRIPT from one of them (restarted, SCRIPT FLUSH) would
        // reach no one and leave it unextended. Extensions are rare enough for the longer
        // command. EVALSHA to a cluster master, which answers NOSCRIPT itself.
        append_script(out, multi ? extend_multi_script() : extend_script(), eval, keys, token,
                      ttl_ms, true);
        return;
    case round::kind::check:
        append_script(out, check_script(), eval, keys, token, ttl_ms, false);
        return;
    // EVALSHA where the connection has seen the script, as a release; a NOSCRIPT (the master
    // restarted or flushed its scripts) gets EVAL while the round still listens. One that comes
    // after the lock was decided only leaves that master without our key or commit: a master
    // less, as if it had been slow.
    case round::kind::acquire_fenced:
        append_script(out, fenced_acquire_script(), eval, keys, token, ttl_ms, true);
        return;
    case round::kind::commit_fence: append_commit(out, eval, keys, token, fences); return;
    }
}

// The writes whose answers a cluster master may count only once its replicas have them
// (client_config::cluster_replica_acks): what a failover must not lose. A release or a check
// loses nothing there.
request_mode mode_of(round::kind k)
{
    switch (k)
    {
    case round::kind::acquire:
    case round::kind::acquire_fenced:
    case round::kind::commit_fence:
    case round::kind::extend: return request_mode::replicated;
    case round::kind::release:
    case round::kind::hand_over:  // a failover that loses it leaves the key to its TTL, held
    case round::kind::check: return request_mode::plain;
    }
    return request_mode::plain;
}

// The script a command of kind `k` over `keys` keys runs, as a script_cache id, for a cluster
// master (cluster_master::submit_script), which sends the body again after a NOSCRIPT even when
// the round no longer listens. Not for acquisitions (no_script: EVAL, or SET NX for a lone
// key): one sent again after the round gave up could land after the release of its failed
// attempt, and leave keys there until their TTL. Everything else is guarded by the token.
constexpr unsigned no_script = 32;
unsigned script_for(round::kind k, std::size_t keys)
{
    const bool multi = keys > 1;
    switch (k)
    {
    case round::kind::acquire:
    case round::kind::acquire_fenced: return no_script;
    case round::kind::release: return multi ? 1u : 0u;
    case round::kind::commit_fence: return 3;
    case round::kind::extend: return multi ? 6u : 5u;
    case round::kind::check: return 7;
    case round::kind::hand_over: return no_script;  // see send()
    }
    return no_script;
}

// A part's tag holds its slot group above the master's index, under fallback_bit: a cluster
// has 16384 slots, so a lock has at most that many groups.
static_assert(16384 + 1 < (fallback_bit >> 16), "a part's tag would overflow");

}  // namespace

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
    if (live && c.waiting.wants_releases() && held.keys.empty() && held.fences.empty())
        if (auto* next = c.waiting.successor(held.key);
            next && next->take_over(held, claim.valid_until,
                                    std::span<char, token_source::token_chars>(successor_)))
        {
            c.waiting.handed_over(held.key);
            return start(c, kind::hand_over, held.key_span(), held.token, 0, timeout, l, nullptr,
                         latest, at);
        }
    start(c, kind::release, held.key_span(), held.token, 0, timeout, l, nullptr, latest, at);
}

void round::start(round_context& c, kind k, std::span<const std::string> keys,
                  std::string_view token, std::int64_t arg,
                  std::chrono::steady_clock::duration timeout, round_listener* l,
                  const quorum_tracker* previous, time_point latest, time_point at)
{
    const auto n = c.size();
    c_ = &c;
    l_ = l;
    k_ = k;
    keys_ = keys;
    token_ = token;
    arg_ = arg;
    q_ = quorum_tracker(n);
    m_.assign(n, per_master{});
    diag_.resize(n);
    per_master_ = k == kind::acquire_fenced ? keys.size() / 2 : 1;
    group_by_slot();
    if (k == kind::check || k == kind::acquire_fenced)
        values_.assign(n * per_master_, k == kind::check ? -3 : 0);
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
    decided_sent_ = false;
    deferred_notice_ = master_set();

    // t0 is taken before the first byte is queued: validity counts every microsecond spent.
    t0_ = at == time_point{} ? std::chrono::steady_clock::now() : at;
    last_outcome_at_ = t0_;
    auto hold = l_->hold();
    // Every master gets the same bytes (a release: one of two forms, EVAL or EVALSHA): each
    // form is encoded once, on first use, and copied to each connection's output.
    for (auto& s : c_->command_scratch)
        s.clear();
    if (k == kind::release && c_->waiting.wants_releases())
    {
        // Waiters of this client on these keys: what they send from now on runs after this
        // release on each master it goes to (waiting_room::released_here). Told before the
        // sends, so that their wake-up is posted ahead of the connections' write kicks: their
        // SET then leaves in the same write as our DEL. (A master whose connection refuses the
        // release gets a wake-up all the same: an attempt too many, which it refuses.)
        master_set to(n);
        for (std::size_t i = 0; i < n; ++i)
            if (!previous || previous->outcome(i) != master_outcome::held_by_other)
                to.insert(i);
        if (c_->waiting.released_here(to, keys_))
            deferred_notice_ = std::move(to);  // this hand-off yields: told once decided
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        // A master that refused the attempt holds nothing of ours (release_targets).
        if (previous && previous->outcome(i) == master_outcome::held_by_other)
            continue;
        const bool awaited = !previous || previous->outcome(i) != master_outcome::timed_out;
        // Sent, not awaited (see start()): nobody will see a NOSCRIPT, so the body goes along.
        if (send(i, !awaited, true) && !awaited)
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

void round::group_by_slot()
{
    groups_ = 1;
    // The kinds whose keys are all lock keys; a fenced lock's keys are kept in one slot by
    // acquire_op (refused_by_cluster).
    const bool splittable =
        k_ == kind::acquire || k_ == kind::release || k_ == kind::extend || k_ == kind::check;
    if (!c_->has_cluster_master || keys_.size() < 2 || !splittable)
        return;
    std::vector<std::pair<std::uint16_t, std::size_t>> order;
    order.reserve(keys_.size());
    for (std::size_t k = 0; k < keys_.size(); ++k)
        order.emplace_back(key_slot(keys_[k]), k);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (order.front().first == order.back().first)
        return;  // one slot: one command, as for a standalone master
    slot_keys_.clear();
    group_start_.clear();
    for (std::size_t k = 0; k < order.size(); ++k)
    {
        if (k == 0 || order[k].first != order[k - 1].first)
            group_start_.push_back(k);
        slot_keys_.push_back(keys_[order[k].second]);
    }
    group_start_.push_back(order.size());
    groups_ = group_start_.size() - 1;
    part_tickets_.assign(m_.size() * groups_, request_ticket{});
    parts_.assign(m_.size(), parts_state{});
}

// A cluster master runs a command on one slot only: keys of several slots go as one command
// per slot, all at once, each as a script over its slot's keys (SET NX for a single key). The
// master's outcome is all of theirs: granted when every part is, held by another owner when
// every part is, failed when one part failed; a mix (some slots ours, some another's) is
// held_in_part: held for the decision, and released after a failed attempt, as a failure is.
bool round::send_parts(std::size_t i)
{
    auto& conn = *c_->masters[i];
    parts_[i] = parts_state{};
    parts_[i].left = groups_;
    for (std::size_t g = 0; g < groups_; ++g)
    {
        const auto keys = group_keys(g);
        const auto tag = static_cast<std::uint32_t>(i) | static_cast<std::uint32_t>((g + 1) << 16) |
                         fallback_bit;
        const auto script = script_for(k_, keys.size());
        const error_code ec =
            script == no_script
                ? conn.submit(
                      this, tag, keys[0],
                      [&](std::string& out) {
                          encode(out, k_, true, keys, token_, arg_, fences_, successor_token());
                      },
                      part_tickets_[i * groups_ + g], mode_of(k_))
                : conn.submit_script(
                      this, tag, keys[0], script,
                      [&](std::string& out, bool eval) {
                          encode(out, k_, eval, keys, token_, arg_, fences_, successor_token());
                      },
                      part_tickets_[i * groups_ + g], mode_of(k_));
        if (ec)
        {
            for (std::size_t h = 0; h < g; ++h)
                conn.abandon(part_tickets_[i * groups_ + h]);
            return queued(i, true, ec);
        }
    }
    return queued(i, true, {});
}

bool round::split_for(std::size_t i) const noexcept
{
    return groups_ > 1 && c_->masters[i]->is_cluster();
}

void round::abandon_master(std::size_t i) noexcept
{
    if (!split_for(i))
        return c_->masters[i]->abandon(m_[i].ticket);
    for (std::size_t g = 0; g < groups_; ++g)
        c_->masters[i]->abandon(part_tickets_[i * groups_ + g]);
}

bool round::send(std::size_t i, bool fallback, bool from_start)
{
    if (split_for(i))
        return send_parts(i);
    auto& pm = m_[i];
    auto& conn = *c_->masters[i];
    if (const auto script = script_for(k_, keys_.size()); conn.is_cluster() && script != no_script)
    {
        // A cluster master sends EVALSHA or EVAL per node, and answers NOSCRIPT itself.
        return queued(i, true,
                      conn.submit_script(
                          this, static_cast<std::uint32_t>(i) | fallback_bit, keys_[0], script,
                          [&](std::string& out, bool eval) {
                              encode(out, k_, eval, keys_, token_, arg_, fences_,
                                     successor_token());
                          },
                          pm.ticket, mode_of(k_)));
    }
    // An acquisition over several keys and an extension go as EVAL (see encode()). So does a
    // hand-over: the body sent again after a NOSCRIPT (or behind a silent EVALSHA at the
    // deadline) would run after what the new holder sent meanwhile, and could give the key its
    // token after its release.
    if (k_ == kind::extend || k_ == kind::acquire || k_ == kind::hand_over)
        fallback = true;
    // A release (and a fenced acquisition's round) goes as EVAL to a connection that has not
    // seen its script run yet (the first after connecting, or after a NOSCRIPT): it caches the
    // script there, and for a release nothing
    // it sends can need a second request from us, so a release may complete at the quorum
    // even when such a master is silent (see runs_without_us). EVALSHA afterwards.
    if (cached_script() &&
        (!conn.caches_scripts() || !conn.scripts.known(script_id(), conn.generation())))
        fallback = true;
    const auto tag = static_cast<std::uint32_t>(i) | (fallback ? fallback_bit : 0u);
    const auto write = [&](std::string& out) {
        if (!from_start)
        {
            encode(out, k_, fallback, keys_, token_, arg_, fences_, successor_token());
            return;
        }
        auto& bytes = c_->command_scratch[fallback ? 1 : 0];
        if (bytes.empty())
            encode(bytes, k_, fallback, keys_, token_, arg_, fences_, successor_token());
        out.append(bytes);
    };
    // A hand-over's bytes may wait to share a write (client_config::handover_write_delay):
    // nobody but the holder's release waits for them, and the new holder's commands queue
    // behind them.
    return queued(
        i, fallback,
        conn.submit(this, tag, keys_[0], write, pm.ticket, mode_of(k_), k_ == kind::hand_over));
}

bool round::queued(std::size_t i, bool fallback, const error_code& ec)
{
    if (ec)
    {
        settle(i, master_outcome::failed, ec, c_->masters[i]->last_error_detail());
        return false;
    }
    m_[i].outstanding = true;
    m_[i].fallback = fallback;
    ++outstanding_;
    return true;
}

bool round::runs_without_us() const noexcept
{
    for (std::size_t i = 0; i < m_.size(); ++i)
    {
        if (!m_[i].outstanding)
            continue;
        const auto& conn = *c_->masters[i];
        if (!conn.written(m_[i].ticket))
            return false;
        // An EVALSHA that may meet NOSCRIPT needs us to send the body.
        if (k_ == kind::release && !m_[i].fallback &&
            !conn.scripts.known(script_id(), conn.generation()))
            return false;
    }
    return true;
}

void round::stop() noexcept
{
    if (!active_)
        return;
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
    if (o == master_outcome::granted &&
        (k_ == kind::acquire || k_ == kind::acquire_fenced || k_ == kind::commit_fence) &&
        c_->quarantined(i, at))
    {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            c_->masters[i]->quarantine_end() - at);
        return settle(i, master_outcome::failed, error::master_restarted,
                      "restarted lately: out of the quorum for " + std::to_string(left.count()) +
                          " ms more",
                      at);
    }
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
    q_.record(i, o);
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
    auto hold = l_->hold();

    if (ec)
    {
        settle(i, master_outcome::failed, ec, c_->masters[i]->last_error_detail());
    }
    else
    {
        auto& master = *c_->masters[i];
        const auto& v = nodes[0];
        const auto at = master.read_time();
        if (cached_script() && !resp::is_error(v.data_type))
            master.scripts.note(script_id(), true, master.generation());  // it ran there
        if (resp::is_error(v.data_type))
        {
            const auto e = error_from_server_reply(v.value);
            // A master that restarted or ran SCRIPT FLUSH lost the script: EVAL sends the body
            // (and caches it again). Only once per round and master.
            if (e == error::noscript && cached_script())
                master.scripts.note(script_id(), false, master.generation());
            if (e == error::noscript && !fallback && send(i, true))
                return;
            settle(i, master_outcome::failed, e, v.value, at);
        }
        else
        {
            const auto r = read_reply(i, nodes, keys_.size());
            if (k_ == kind::check && r.outcome == master_outcome::granted)
                values_[i] = r.pttl;
            if (r.what.empty())
                settle(i, r.outcome, r.ec, {}, at);
            else
                settle(i, r.outcome, r.ec, r.message(), at);
        }
    }
    notify();
}

round::verdict round::read_reply(std::size_t i, std::span<const resp::node_view> nodes,
                                 std::size_t key_count)
{
    using resp::type;
    const auto& v = nodes[0];
    verdict r;
    const auto unexpected = [&](std::string_view what) {
        r.outcome = master_outcome::failed;
        r.ec = error::unexpected_reply;
        r.what = what;
        r.type = v.data_type;
    };
    if (k_ == kind::acquire_fenced || (k_ == kind::acquire && key_count == 1))
    {
        // SET NX answers OK or nil; the fenced script, an array of the n counters or nil.
        const bool fenced = k_ == kind::acquire_fenced;
        const bool set = fenced ? read_counters(i, nodes)
                                : v.data_type == type::simple_string && v.value == "OK";
        if (set)
            r.outcome = master_outcome::granted;
        // A script's `false` reads as a null in RESP2 and as `#f` on a connection that
        // switched to RESP3 (a waiting acquisition's watch).
        else if (v.data_type == type::null || (v.data_type == type::boolean && v.value == "f"))
            r.outcome = master_outcome::held_by_other;
        else
            unexpected(fenced ? "fenced SET returned " : "SET returned ");
    }
    else if (k_ == kind::check)
    {
        if (v.data_type != type::integer)
            unexpected("script returned ");
        else if ((r.pttl = std::strtoll(std::string(v.value).c_str(), nullptr, 10)) == -3)
            r.outcome = master_outcome::held_by_other;
        else
            r.outcome = master_outcome::granted;
    }
    else if (v.data_type == type::integer && v.value == "1")
        r.outcome = master_outcome::granted;
    else if (v.data_type == type::integer && v.value == "0")
        r.outcome = master_outcome::held_by_other;
    else
        unexpected("script returned ");
    return r;
}

void round::on_part_reply(std::size_t i, std::size_t part, const error_code& ec,
                          std::span<const resp::node_view> nodes)
{
    auto& ps = parts_[i];
    if (!m_[i].outstanding || ps.left == 0)
        return;
    auto hold = l_->hold();
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
    else if (const auto r = read_reply(i, nodes, group_keys(part).size());
             r.outcome == master_outcome::granted)
    {
        ps.any_granted = true;
        // The smallest PTTL of the parts (-1: no expiry, larger than any).
        if (ps.pttl == -3 || (r.pttl != -1 && (ps.pttl == -1 || r.pttl < ps.pttl)))
            ps.pttl = r.pttl;
    }
    else if (r.outcome == master_outcome::held_by_other)
        ps.any_held = true;
    else
        fail(r.ec, r.message());
    if (--ps.left > 0)
        return;
    m_[i].outstanding = false;
    --outstanding_;
    const auto at = ec ? std::chrono::steady_clock::now() : master.read_time();
    if (ps.failed)
        settle(i, master_outcome::failed, ps.ec, ps.message, at);
    else if (ps.any_held && (!ps.any_granted || k_ == kind::check))
        settle(i, master_outcome::held_by_other, {}, {}, at);
    else if (ps.any_held)
        settle(i, master_outcome::held_in_part, {},
               "ours on some hash slots of this cluster master, another owner's on others", at);
    else
    {
        if (k_ == kind::check)
            values_[i] = ps.pttl;
        settle(i, master_outcome::granted, {}, {}, at);
    }
    notify();
}

bool round::read_counters(std::size_t i, std::span<const resp::node_view> nodes)
{
    const auto& head = nodes[0];
    if (head.data_type != resp::type::array || head.size != per_master_ ||
        nodes.size() != per_master_ + 1)
        return false;
    for (std::size_t r = 0; r < per_master_; ++r)
    {
        const auto& v = nodes[1 + r];
        if (v.data_type != resp::type::integer || v.value.empty() || v.value[0] == '-')
            return false;
        values_[i * per_master_ + r] = std::strtoll(std::string(v.value).c_str(), nullptr, 10);
    }
    return true;
}

void round::on_deadline()
{
    auto hold = l_->hold();
    for (std::size_t i = 0; i < m_.size(); ++i)
    {
        if (!m_[i].outstanding)
            continue;
        auto& conn = *c_->masters[i];
        abandon_master(i);
        m_[i].outstanding = false;
        if (k_ == kind::release && !m_[i].fallback)
        {
            // The EVALSHA will still run when the master gets to it, but a NOSCRIPT reply would
            // now reach no one. An EVAL queued behind it covers that case; when the EVALSHA did
            // delete the key, the EVAL finds nothing and returns 0.
            request_ticket ignored;
            (void)conn.submit(
                nullptr, 0, keys_[0],
                [&](std::string& out) {
                    encode(out, k_, true, keys_, token_, arg_, fences_, successor_token());
                },
                ignored);
        }
        settle(i, master_outcome::timed_out, error::request_timeout, {});
    }
    outstanding_ = 0;
    notify();
}

void round::tell_deferred()
{
    if (deferred_notice_.masters() == 0)
        return;
    const auto to = std::move(deferred_notice_);
    deferred_notice_ = master_set();
    c_->waiting.notify_released(to, keys_);
}

void round::notify()
{
    if (!active_)
        return;
    // A yielded hand-off (waiting_room::released_here) is told once the release is decided,
    // or finished without a decision.
    if (q_.state() != quorum_state::undecided || outstanding_ == 0)
        tell_deferred();
    if (!decided_sent_ && q_.state() != quorum_state::undecided)
    {
        decided_sent_ = true;
        l_->on_round_decided(*this);
        if (!active_ || !decided_sent_)
            return;  // stopped or restarted by the listener
    }
    if (outstanding_ == 0)
    {
        active_ = false;
        c_->deadlines.cancel(*this);
        l_->on_round_finished(*this);
    }
}

}  // namespace redlock::detail
