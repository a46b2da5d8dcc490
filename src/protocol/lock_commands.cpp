// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The lock commands' bytes: what each round kind sends, and which of them go as scripts.
#include "protocol/lock_commands.hpp"

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
    const bool multi = keys.size() > 1;
    // One script over the keys, the token and, for those that set an expiry,
    // the TTL. Whether they go as EVAL or EVALSHA is the round's choice (round::send):
    // - an extension (a reader's too) always as EVAL to a standalone master: once the quorum
    //   is reached the round stops listening to the slower masters, so a NOSCRIPT from one of
    //   them (restarted, SCRIPT FLUSH) would reach no one and leave it unextended; extensions
    //   are rare enough for the longer command;
    // - a fenced acquisition, a read-write lock's acquisitions and a reader's release as EVALSHA
    //   where the connection has seen the script, as a release; a NOSCRIPT gets EVAL while the
    //   round still listens, and one that comes after the lock was decided only leaves that
    //   master without our key: a master less, as if it had been slow;
    // - a semaphore's acquisition always as EVAL, as every acquisition over several keys;
    // - to a cluster master, the scripts of cluster_script_for by id (it answers NOSCRIPT
    //   itself), every acquisition as EVAL.
    const lua_script* script = nullptr;
    bool with_ttl = true;
    switch (k)
    {
    case lock_command::extend: script = multi ? &extend_multi_script() : &extend_script(); break;
    case lock_command::check: script = &check_script(), with_ttl = false; break;
    case lock_command::acquire_fenced: script = &fenced_acquire_script(); break;
    case lock_command::acquire_permit: script = &permit_acquire_script(); break;
    case lock_command::acquire_reader: script = &reader_acquire_script(); break;
    case lock_command::acquire_writer: script = &writer_acquire_script(); break;
    case lock_command::acquire_writer_fenced: script = &fenced_writer_acquire_script(); break;
    case lock_command::release_reader: script = &reader_release_script(), with_ttl = false; break;
    case lock_command::extend_reader: script = &reader_extend_script(); break;
    case lock_command::check_reader: script = &reader_check_script(), with_ttl = false; break;
    case lock_command::read_holders: script = &holders_read_script(), with_ttl = false; break;
    default: return;  // (handled above)
    }
    append_script(out, *script, eval, keys, token, ttl_ms, with_ttl,
                  k == lock_command::acquire_writer || k == lock_command::acquire_writer_fenced
                      ? next
                      : std::string_view());
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
            // EVAL to a standalone master, as the extension (round::send in src/driver/round.cpp): once the quorum is
            // reached the round no longer listens to the slower masters, so a NOSCRIPT from one
            // of them would reach no one and leave the lock on fewer masters than a single-key
            // lock would be. A cluster master answers NOSCRIPT itself: EVALSHA is safe there.
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
        // Always EVAL (see round::send in src/driver/round.cpp).
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
