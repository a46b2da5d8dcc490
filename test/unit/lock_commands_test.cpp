// The lock commands' bytes and the reading of their replies (src/protocol/lock_commands.*,
// lock_replies.*): the protocol side of a round, without a round.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "protocol/lock_command_table.hpp"
#include "protocol/lock_commands.hpp"
#include "protocol/lock_replies.hpp"
#include "protocol/scripts.hpp"

using redlock::detail::lock_answer;
using redlock::detail::lock_command;
using redlock::resp::node_view;
using redlock::resp::type;

namespace {

std::string encoded(lock_command k, bool eval, const std::vector<std::string>& keys,
                    std::int64_t arg = 0, std::span<const std::uint64_t> fences = {},
                    std::string_view next = {})
{
    std::string out;
    redlock::detail::encode_lock_command(out, k, eval, keys, "tok", arg, fences, next);
    return out;
}

std::string bulk(std::string_view s)
{
    return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

}  // namespace

TEST_CASE("lock commands: each kind's bytes, as EVAL or EVALSHA", "[lock_commands]")
{
    const auto& release = redlock::detail::release_script();
    const std::vector<std::string> one{"k"};
    CHECK(encoded(lock_command::acquire, false, one, 500) ==
          "*6\r\n" + bulk("SET") + bulk("k") + bulk("tok") + bulk("NX") + bulk("PX") + bulk("500"));
    CHECK(encoded(lock_command::release, true, one) ==
          "*5\r\n" + bulk("EVAL") + bulk(release.body) + bulk("1") + bulk("k") + bulk("tok"));
    CHECK(encoded(lock_command::release, false, one) ==
          "*5\r\n" + bulk("EVALSHA") + bulk(release.sha1) + bulk("1") + bulk("k") + bulk("tok"));
    CHECK(encoded(lock_command::hand_over, false, one, 0, {}, "next") ==
          "*6\r\n" + bulk("EVAL") + bulk(redlock::detail::handover_script().body) + bulk("1") +
              bulk("k") + bulk("tok") + bulk("next"));
    // Several keys: a script over all of them, with the TTL where the command sets one.
    const std::vector<std::string> two{"a", "b"};
    CHECK(encoded(lock_command::acquire, true, two, 700) ==
          "*7\r\n" + bulk("EVAL") + bulk(redlock::detail::acquire_multi_script().body) + bulk("2") +
              bulk("a") + bulk("b") + bulk("tok") + bulk("700"));
    // A semaphore's attempt: the resource's key (its mark), the permit keys in the order to
    // try, the token, the TTL and the mark.
    const std::vector<std::string> permits{"s", "{s}:permit:1", "{s}:permit:0"};
    CHECK(encoded(lock_command::acquire_permit, true, permits, 900, {}, "redlock:permits:2") ==
          "*9\r\n" + bulk("EVAL") + bulk(redlock::detail::permit_acquire_script().body) +
              bulk("3") + bulk("s") + bulk("{s}:permit:1") + bulk("{s}:permit:0") + bulk("tok") +
              bulk("900") + bulk("redlock:permits:2"));
    // A permit's extension: the resource's key and its own, the token and the TTL.
    const std::vector<std::string> held_permit{"s", "{s}:permit:1"};
    CHECK(encoded(lock_command::extend_permit, true, held_permit, 700) ==
          "*7\r\n" + bulk("EVAL") + bulk(redlock::detail::permit_extend_script().body) + bulk("2") +
              bulk("s") + bulk("{s}:permit:1") + bulk("tok") + bulk("700"));
    const std::array<std::uint64_t, 1> fence{42};
    // The commit: the lock key, its counter and the counter's record, then the token and the
    // term.
    const std::vector<std::string> fenced{"k", "{k}:fence", "{k}:fence:holder"};
    CHECK(encoded(lock_command::commit_fence, false, fenced, 0, fence) ==
          "*8\r\n" + bulk("EVALSHA") + bulk(redlock::detail::fence_commit_script().sha1) +
              bulk("3") + bulk("k") + bulk("{k}:fence") + bulk("{k}:fence:holder") + bulk("tok") +
              bulk("42"));
}

TEST_CASE("lock commands: which scripts a cluster master runs, and which may go as EVALSHA",
          "[lock_commands]")
{
    using redlock::detail::cached_script_for;
    using redlock::detail::cluster_script_for;
    using redlock::detail::no_script;
    // Never an acquisition's or a hand-over's on a cluster master: sent again after the round
    // gave up, it could land after the release.
    CHECK(cluster_script_for(lock_command::acquire, 2) == no_script);
    CHECK(cluster_script_for(lock_command::acquire_fenced, 2) == no_script);
    CHECK(cluster_script_for(lock_command::hand_over, 1) == no_script);
    CHECK(cluster_script_for(lock_command::acquire_permit, 3) == no_script);
    CHECK(cached_script_for(lock_command::acquire_permit, 3) == 14);
    CHECK(cluster_script_for(lock_command::release, 1) == 0);
    CHECK(cluster_script_for(lock_command::release, 3) == 1);
    CHECK(cluster_script_for(lock_command::extend, 1) == 5);
    CHECK(cluster_script_for(lock_command::extend, 2) == 6);
    CHECK(cluster_script_for(lock_command::check, 1) == 7);
    CHECK(cluster_script_for(lock_command::commit_fence, 2) == 3);
    // EVALSHA to a standalone master that has run it: releases, the fenced rounds, a permit's.
    CHECK(cached_script_for(lock_command::release, 1) == 0);
    CHECK(cached_script_for(lock_command::release, 2) == 1);
    CHECK(cached_script_for(lock_command::acquire_fenced, 2) == 2);
    CHECK(cached_script_for(lock_command::commit_fence, 2) == 3);
    CHECK(cached_script_for(lock_command::acquire, 1) == no_script);
    CHECK(cached_script_for(lock_command::extend, 1) == no_script);
    CHECK(cached_script_for(lock_command::hand_over, 1) == no_script);
    CHECK(cached_script_for(lock_command::check, 1) == no_script);
}

TEST_CASE("lock replies: what each reply says, for each command", "[lock_commands]")
{
    struct row
    {
        lock_command k;
        node_view reply;
        std::size_t keys;
        lock_answer answer;
        std::int64_t pttl;
        std::string message;  // for unexpected replies
    };
    const std::vector<row> rows{
        {lock_command::acquire, {type::simple_string, 0, 0, "OK"}, 1, lock_answer::ours, -3, ""},
        {lock_command::acquire, {type::null, 0, 0, {}}, 1, lock_answer::other_owner, -3, ""},
        {lock_command::acquire, {type::boolean, 0, 0, "f"}, 1, lock_answer::other_owner, -3, ""},
        {lock_command::acquire,
         {type::boolean, 0, 0, "t"},
         1,
         lock_answer::unexpected,
         -3,
         "SET returned boolean"},
        {lock_command::acquire,
         {type::simple_string, 0, 0, "QUEUED"},
         1,
         lock_answer::unexpected,
         -3,
         "SET returned simple_string"},
        {lock_command::acquire, {type::integer, 0, 0, "1"}, 2, lock_answer::ours, -3, ""},
        {lock_command::release, {type::integer, 0, 0, "1"}, 1, lock_answer::ours, -3, ""},
        {lock_command::release, {type::integer, 0, 0, "0"}, 1, lock_answer::other_owner, -3, ""},
        {lock_command::release,
         {type::integer, 0, 0, "2"},
         1,
         lock_answer::unexpected,
         -3,
         "script returned integer"},
        {lock_command::extend,
         {type::bulk_string, 0, 0, "1"},
         1,
         lock_answer::unexpected,
         -3,
         "script returned bulk_string"},
        {lock_command::check, {type::integer, 0, 0, "1234"}, 1, lock_answer::ours, 1234, ""},
        {lock_command::check, {type::integer, 0, 0, "-1"}, 1, lock_answer::ours, -1, ""},
        {lock_command::check, {type::integer, 0, 0, "-3"}, 1, lock_answer::other_owner, -3, ""},
        {lock_command::check,
         {type::null, 0, 0, {}},
         1,
         lock_answer::unexpected,
         -3,
         "script returned null"},
        // Three keys: the resource's, then two permit keys.
        {lock_command::acquire_permit, {type::integer, 0, 0, "0"}, 3, lock_answer::ours, -3, ""},
        {lock_command::acquire_permit, {type::integer, 0, 0, "1"}, 3, lock_answer::ours, -3, ""},
        {lock_command::acquire_permit,
         {type::bulk_string, 0, 0, "redlock:permits:4"},
         3,
         lock_answer::other_kind,
         -3,
         ""},
        {lock_command::acquire_permit,
         {type::bulk_string, 0, 0, "redlock:owned"},
         3,
         lock_answer::other_kind,
         -3,
         ""},
        {lock_command::acquire_permit,
         {type::integer, 0, 0, "-1"},
         3,
         lock_answer::other_owner,
         -3,
         ""},
        {lock_command::acquire_permit,
         {type::integer, 0, 0, "2"},
         3,
         lock_answer::unexpected,
         -3,
         "permit script returned integer"},
        {lock_command::acquire_permit,
         {type::integer, 0, 0, "-2"},
         3,
         lock_answer::unexpected,
         -3,
         "permit script returned integer"},
        {lock_command::acquire_permit,
         {type::bulk_string, 0, 0, "0"},
         3,
         lock_answer::unexpected,
         -3,
         "permit script returned bulk_string"},
    };
    for (const auto& r : rows)
    {
        INFO("command " << int(r.k) << ", reply " << r.reply.value);
        const auto got = redlock::detail::read_lock_reply(r.k, std::span(&r.reply, 1), r.keys);
        CHECK(got.answer == r.answer);
        CHECK(got.pttl == r.pttl);
        if (r.answer == lock_answer::unexpected)
            CHECK(got.message() == r.message);
        if (r.k == lock_command::acquire_permit && r.answer == lock_answer::ours)
            CHECK(got.permit == std::stoul(std::string(r.reply.value)));
    }
}

TEST_CASE("lock replies: a fenced acquisition's counters, one non-negative integer per resource",
          "[lock_commands]")
{
    std::array<std::int64_t, 2> counters{};
    const node_view good[] = {
        {type::array, 0, 2, {}}, {type::integer, 1, 0, "7"}, {type::integer, 1, 0, "0"}};
    auto r = redlock::detail::read_lock_reply(lock_command::acquire_fenced, good, 4, counters);
    CHECK(r.answer == lock_answer::ours);
    CHECK(counters == std::array<std::int64_t, 2>{7, 0});
    const node_view short_array[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "7"}};
    CHECK(redlock::detail::read_lock_reply(lock_command::acquire_fenced, short_array, 4, counters)
              .answer == lock_answer::unexpected);
    const node_view negative[] = {
        {type::array, 0, 2, {}}, {type::integer, 1, 0, "7"}, {type::integer, 1, 0, "-2"}};
    r = redlock::detail::read_lock_reply(lock_command::acquire_fenced, negative, 4, counters);
    CHECK(r.answer == lock_answer::unexpected);
    CHECK(r.message() == "fenced SET returned array");
    const node_view refused{type::null, 0, 0, {}};
    CHECK(redlock::detail::read_lock_reply(lock_command::acquire_fenced, std::span(&refused, 1), 4,
                                           counters)
              .answer == lock_answer::other_owner);
}

TEST_CASE("lock replies: a fenced writer's, its counter where it set the key, 0 where refused",
          "[lock_commands][rwlock][fencing]")
{
    std::array<std::int64_t, 1> counter{};
    const node_view good[] = {{type::array, 0, 1, {}}, {type::integer, 1, 0, "9"}};
    auto r =
        redlock::detail::read_lock_reply(lock_command::acquire_writer_fenced, good, 4, counter);
    CHECK(r.answer == lock_answer::ours);
    CHECK(counter[0] == 9);
    // Refused (another holder, readers: the intent mark set) as the unfenced writer's: 0.
    const node_view refused{type::integer, 0, 0, "0"};
    CHECK(redlock::detail::read_lock_reply(lock_command::acquire_writer_fenced,
                                           std::span(&refused, 1), 4, counter)
              .answer == lock_answer::other_owner);
    // Not a mutex's refusal, nor the unfenced writer's grant, nor a counter per key.
    const node_view nil{type::null, 0, 0, {}};
    const node_view one{type::integer, 0, 0, "1"};
    const node_view two[] = {
        {type::array, 0, 2, {}}, {type::integer, 1, 0, "9"}, {type::integer, 1, 0, "9"}};
    for (const auto& reply : {std::span<const node_view>(&nil, 1),
                              std::span<const node_view>(&one, 1), std::span<const node_view>(two)})
    {
        r = redlock::detail::read_lock_reply(lock_command::acquire_writer_fenced, reply, 4,
                                             counter);
        CHECK(r.answer == lock_answer::unexpected);
        CHECK_THAT(r.message(), Catch::StartsWith("fenced writer script returned "));
    }
}

TEST_CASE("lock commands: a read-write lock's, and the variant a reader's lock sends",
          "[lock_commands]")
{
    const std::vector<std::string> rw{"d", "{d}:readers", "{d}:intent"};
    CHECK(encoded(lock_command::acquire_reader, true, rw, 900) ==
          "*8\r\n" + bulk("EVAL") + bulk(redlock::detail::reader_acquire_script().body) +
              bulk("3") + bulk("d") + bulk("{d}:readers") + bulk("{d}:intent") + bulk("tok") +
              bulk("900"));
    // A writer's carries its intent id after the TTL.
    CHECK(encoded(lock_command::acquire_writer, true, rw, 900, {}, "id") ==
          "*9\r\n" + bulk("EVAL") + bulk(redlock::detail::writer_acquire_script().body) +
              bulk("3") + bulk("d") + bulk("{d}:readers") + bulk("{d}:intent") + bulk("tok") +
              bulk("900") + bulk("id"));
    // A fenced writer's: the writer's keys and the resource's fence counter, its own script.
    const std::vector<std::string> fenced_rw{"d", "{d}:readers", "{d}:intent", "{d}:fence"};
    CHECK(encoded(lock_command::acquire_writer_fenced, false, fenced_rw, 900, {}, "id") ==
          "*10\r\n" + bulk("EVALSHA") + bulk(redlock::detail::fenced_writer_acquire_script().sha1) +
              bulk("4") + bulk("d") + bulk("{d}:readers") + bulk("{d}:intent") + bulk("{d}:fence") +
              bulk("tok") + bulk("900") + bulk("id"));
    CHECK(redlock::detail::fenced_writer_acquire_script().sha1 !=
          redlock::detail::writer_acquire_script().sha1);
    // A reader's lock: the writer's key (the readers' shared mark) and the readers' set.
    const std::vector<std::string> held{"d", "{d}:readers"};
    CHECK(encoded(lock_command::release_reader, true, held) ==
          "*6\r\n" + bulk("EVAL") + bulk(redlock::detail::reader_release_script().body) +
              bulk("2") + bulk("d") + bulk("{d}:readers") + bulk("tok"));
    CHECK(encoded(lock_command::extend_reader, false, held, 700) ==
          "*7\r\n" + bulk("EVALSHA") + bulk(redlock::detail::reader_extend_script().sha1) +
              bulk("2") + bulk("d") + bulk("{d}:readers") + bulk("tok") + bulk("700"));
    CHECK(encoded(lock_command::check_reader, false, held) ==
          "*6\r\n" + bulk("EVALSHA") + bulk(redlock::detail::reader_check_script().sha1) +
              bulk("2") + bulk("d") + bulk("{d}:readers") + bulk("tok"));

    // A cluster master runs a reader's release, extension and check as scripts of their own
    // (ids no other command uses); never an acquisition.
    using redlock::detail::cluster_script_for;
    using redlock::detail::no_script;
    CHECK(cluster_script_for(lock_command::acquire_reader, 3) == no_script);
    CHECK(cluster_script_for(lock_command::acquire_writer, 3) == no_script);
    CHECK(cluster_script_for(lock_command::acquire_writer_fenced, 4) == no_script);
    std::vector<unsigned> ids;
    for (const auto k : {lock_command::release, lock_command::extend, lock_command::check,
                         lock_command::commit_fence, lock_command::release_reader,
                         lock_command::extend_reader, lock_command::check_reader})
        for (std::size_t keys : {1u, 2u})
            if (const auto id = cluster_script_for(k, keys); id != no_script)
                ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    CHECK(ids.size() == 9);  // release 0/1, commit 3, extend 5/6, check 7, a reader's 8 9 10
    CHECK(ids.back() < no_script);
    // A standalone master gets a reader's release and both acquisitions as EVALSHA once its
    // connection has seen them run; a reader's extension and check as a mutex's (not cached).
    using redlock::detail::cached_script_for;
    CHECK(cached_script_for(lock_command::release_reader, 2) == 8);
    CHECK(cached_script_for(lock_command::acquire_reader, 3) == 11);
    CHECK(cached_script_for(lock_command::acquire_writer, 3) == 12);
    CHECK(cached_script_for(lock_command::acquire_writer_fenced, 4) == 13);
    CHECK(cached_script_for(lock_command::extend_reader, 2) == no_script);
    CHECK(cached_script_for(lock_command::check_reader, 2) == no_script);

    // A reader's check answers the ms left, or -3 when the member is not ours.
    const std::array<node_view, 1> left{node_view{type::integer, 0, 0, "1200"}};
    const auto r = redlock::detail::read_lock_reply(lock_command::check_reader, left, 1, {});
    CHECK(r.answer == lock_answer::ours);
    CHECK(r.pttl == 1200);
    const std::array<node_view, 1> gone{node_view{type::integer, 0, 0, "-3"}};
    CHECK(redlock::detail::read_lock_reply(lock_command::check_reader, gone, 1, {}).answer ==
          lock_answer::other_owner);
}
