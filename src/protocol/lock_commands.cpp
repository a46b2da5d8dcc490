// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The lock commands' bytes: what each round kind sends, and which of them go as scripts.
#include "protocol/lock_commands.hpp"

#include "protocol/resp_encoder.hpp"
#include "protocol/scripts.hpp"

namespace redlock::detail {

namespace {

void append_script(std::string& out, const lua_script& script, bool eval,
                   std::span<const std::string> keys, std::string_view token, std::int64_t ttl_ms,
                   bool with_ttl, std::string_view extra = {})
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
    case lock_command::extend:
        // EVAL to a standalone master: once the quorum is reached the round stops listening to
        // the slower masters, so a NOSCRIPT from one of them (restarted, SCRIPT FLUSH) would
        // reach no one and leave it unextended. Extensions are rare enough for the longer
        // command. EVALSHA to a cluster master, which answers NOSCRIPT itself.
        append_script(out, multi ? extend_multi_script() : extend_script(), eval, keys, token,
                      ttl_ms, true);
        return;
    case lock_command::check:
        append_script(out, check_script(), eval, keys, token, ttl_ms, false);
        return;
    // EVALSHA where the connection has seen the script, as a release; a NOSCRIPT (the master
    // restarted or flushed its scripts) gets EVAL while the round still listens. One that comes
    // after the lock was decided only leaves that master without our key or commit: a master
    // less, as if it had been slow.
    case lock_command::acquire_fenced:
        append_script(out, fenced_acquire_script(), eval, keys, token, ttl_ms, true);
        return;
    case lock_command::commit_fence: append_commit(out, eval, keys, token, fences); return;
    // EVAL, as every acquisition to a standalone master (see acquire).
    case lock_command::acquire_permit:
        append_script(out, permit_acquire_script(), eval, keys, token, ttl_ms, true);
        return;
    // A read-write lock's: EVAL to a standalone master, as every acquisition and extension
    // (see acquire and extend), and as a release that no EVALSHA cache covers.
    case lock_command::acquire_reader:
        append_script(out, reader_acquire_script(), eval, keys, token, ttl_ms, true);
        return;
    case lock_command::acquire_writer:
        append_script(out, writer_acquire_script(), eval, keys, token, ttl_ms, true, next);
        return;
    case lock_command::release_reader:
        append_script(out, reader_release_script(), eval, keys, token, ttl_ms, false);
        return;
    case lock_command::extend_reader:
        append_script(out, reader_extend_script(), eval, keys, token, ttl_ms, true);
        return;
    case lock_command::check_reader:
        append_script(out, reader_check_script(), eval, keys, token, ttl_ms, false);
        return;
    }
}

}  // namespace redlock::detail
