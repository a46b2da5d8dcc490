// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The lock commands' bytes: what each round kind sends, and which of them go as scripts.
#include "protocol/lock_commands.hpp"

#include "protocol/lock_command_table.hpp"

#include "protocol/resp_encoder.hpp"
#include "protocol/scripts.hpp"

namespace redlock::detail {

namespace {

// Out of line, as append_commit and encode_script_command: the lock cycle's two commands (a
// key's SET and its release) stay a short function, whose code the cache holds between rounds.
[[gnu::noinline]] void append_script(std::string& out, const lua_script& script, bool eval,
                                     std::span<const std::string> keys, std::string_view token,
                                     std::int64_t ttl_ms, bool with_ttl,
                                     std::string_view extra = {})
{
    resp::append_array_header(out,
                              3 + keys.size() + 1 + (with_ttl ? 1 : 0) + (extra.empty() ? 0 : 1));
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
    if (!extra.empty())
        resp::append_bulk(out, extra);
}

// The commit of fencing tokens: EVAL(SHA) <script> 3n K1..Kn F1..Fn H1..Hn token t1..tn (the
// lock keys, their fence counters, the counters' records: fence_commit_script).
[[gnu::noinline]] void append_commit(std::string& out, bool eval, std::span<const std::string> keys,
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

// The commands that are one script over the keys (encode_lock_command's other kinds).
[[gnu::noinline]] void encode_script_command(std::string& out, lock_command k, bool eval,
                                             std::span<const std::string> keys,
                                             std::string_view token, std::int64_t ttl_ms,
                                             std::string_view next)
{
    // One script over the keys, the token, for those that set an expiry the TTL, and for a
    // writer its intent id. Whether it goes as EVAL or EVALSHA is the round's choice
    // (round::send), by the command's eval_policy (lock_command_table.hpp).
    const auto& row = row_of(k);
    const auto script = keys.size() > 1 ? row.script_many : row.script_one;
    append_script(out, script(), eval, keys, token, ttl_ms, row.with_ttl,
                  row.next != next_arg::no_arg ? next : std::string_view());
}

}  // namespace

void encode_lock_command(std::string& out, lock_command k, bool eval,
                         std::span<const std::string> keys, std::string_view token,
                         std::int64_t ttl_ms, std::span<const std::uint64_t> fences,
                         std::string_view next)
{
    const bool multi = keys.size() > 1;
    switch (k)
    {
    case lock_command::acquire:
        if (!multi)
        {
            // The constant arguments are encoded once: a lock cycle sends these on every master.
            static const auto set = resp::encode_bulks("SET");
            static const auto nx_px = resp::encode_bulks("NX", "PX");
            resp::append_command(out, set, keys[0], token, nx_px, ttl_ms);
        }
        else
            // EVAL (eval_policy::always_eval): once the quorum is reached the round no longer
            // listens to the slower masters, so a NOSCRIPT from one of them would reach no one
            // and leave the lock on fewer masters than a single-key lock would be.
            append_script(out, acquire_multi_script(), eval, keys, token, ttl_ms, true);
        return;
    case lock_command::release:
        if (!multi)
        {
            static const auto by_body = resp::encode_bulks("EVAL", release_script().body, "1");
            static const auto by_sha1 = resp::encode_bulks("EVALSHA", release_script().sha1, "1");
            resp::append_command(out, eval ? by_body : by_sha1, keys[0], token);
        }
        else
            append_script(out, release_multi_script(), eval, keys, token, ttl_ms, false);
        return;
    case lock_command::hand_over:
    {
        // Always EVAL (its row's eval_policy): the body sent again after a NOSCRIPT would run
        // after what the new holder sent meanwhile.
        static const auto by_body = resp::encode_bulks("EVAL", handover_script().body, "1");
        resp::append_command(out, by_body, keys[0], token, next);
        return;
    }
    case lock_command::commit_fence: append_commit(out, eval, keys, token, fences); return;
    default: break;
    }
    encode_script_command(out, k, eval, keys, token, ttl_ms, next);
}

}  // namespace redlock::detail
