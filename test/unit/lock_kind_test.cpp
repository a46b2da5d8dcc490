// The kinds of lock (src/protocol/lock_kind.hpp): which kind each set of options takes, and
// each kind's commands and rules, written out here by hand for every kind, so that a row
// changed by mistake fails.
#include <catch2/catch.hpp>

#include <string>

#include "protocol/lock_command_table.hpp"
#include "protocol/lock_kind.hpp"

using redlock::lock_role;
using redlock::detail::kind_of;
using redlock::detail::lock_command;
using redlock::detail::lock_kind;
using redlock::detail::row_of;

TEST_CASE("lock kinds: the kind each acquisition's options take", "[lock_kind]")
{
    CHECK(kind_of(1, lock_role::mutex, false, 1) == lock_kind::mutex);
    CHECK(kind_of(1, lock_role::mutex, false, 3) == lock_kind::multi);
    CHECK(kind_of(1, lock_role::mutex, true, 1) == lock_kind::fenced);
    CHECK(kind_of(1, lock_role::mutex, true, 2) == lock_kind::fenced);   // fenced multi-resource
    CHECK(kind_of(2, lock_role::mutex, false, 2) == lock_kind::permit);  // its 2 permit keys
    CHECK(kind_of(1, lock_role::reader, false, 3) == lock_kind::reader);
    CHECK(kind_of(1, lock_role::writer, false, 3) == lock_kind::writer);
    CHECK(kind_of(1, lock_role::writer, true, 4) == lock_kind::fenced_writer);
}

TEST_CASE("lock kinds: every kind's commands, and whether it is fenced, shared, handed off, "
          "marks an intent, takes one resource only",
          "[lock_kind]")
{
    using c = lock_command;
    struct expected
    {
        lock_kind kind;
        lock_command acquire, release, extend, check;
        bool fenced, shared, handoff, intent, one;
    };
    const expected kinds[] = {
        {lock_kind::mutex, c::acquire, c::release, c::extend, c::check, false, false, true, false,
         false},
        {lock_kind::multi, c::acquire, c::release, c::extend, c::check, false, false, false, false,
         false},
        {lock_kind::fenced, c::acquire_fenced, c::release, c::extend, c::check, true, false, false,
         false, false},
        // A permit, once held, is a mutex lock on its permit key; its extension also keeps the
        // semaphore's mark in the resource's key.
        {lock_kind::permit, c::acquire_permit, c::release_permit, c::extend_permit, c::check, false,
         true, false, false, true},
        // A reader releases, extends and checks its member of the readers' set.
        {lock_kind::reader, c::acquire_reader, c::release_reader, c::extend_reader, c::check_reader,
         false, true, false, false, true},
        // A writer's key is a mutex's.
        {lock_kind::writer, c::acquire_writer, c::release, c::extend, c::check, false, false, false,
         true, true},
        {lock_kind::fenced_writer, c::acquire_writer_fenced, c::release, c::extend, c::check, true,
         false, false, true, true},
    };
    STATIC_REQUIRE(std::size(kinds) == static_cast<std::size_t>(lock_kind::count_));
    for (const auto& e : kinds)
    {
        const auto& r = row_of(e.kind);
        CAPTURE(std::string(r.name));
        CHECK(r.kind == e.kind);
        CHECK(r.acquire == e.acquire);
        CHECK(r.release == e.release);
        CHECK(r.extend == e.extend);
        CHECK(r.check == e.check);
        CHECK(r.fenced == e.fenced);
        CHECK(r.shared == e.shared);
        CHECK(r.handoff == e.handoff);
        CHECK(r.marks_intent == e.intent);
        CHECK(r.one_resource == e.one);
        // Its acquisition counts toward the quarantine; its held lock's commands do not.
        CHECK(row_of(r.acquire).counts_for_acquisition);
        for (const auto held : {r.release, r.extend, r.check})
            CHECK_FALSE(row_of(held).counts_for_acquisition);
        CHECK(row_of(r.release).releases);
        // A fenced kind's attempt reads the counters; the others' do not.
        CHECK(row_of(r.acquire).fenced_attempt() == r.fenced);
    }
}
