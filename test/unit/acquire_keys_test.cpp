// The keys an acquisition of each kind sends (src/driver/acquire_keys.hpp), written out by
// hand for every kind: the attempt's, a failed attempt's release, a waiter's watch, a fenced
// lock's commit, and the keys the granted lock holds; and the refusals before anything is sent.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "driver/acquire_keys.hpp"

using redlock::lock_options;
using redlock::lock_role;
using redlock::detail::acquire_keys;
using redlock::detail::lock_kind;
using redlock::detail::lock_state;
using strings = std::vector<std::string>;

namespace {

strings of(std::span<const std::string> keys) { return {keys.begin(), keys.end()}; }

lock_options with(std::uint32_t permits, lock_role role, bool fencing)
{
    lock_options o;
    o.permits = permits;
    o.role = role;
    o.fencing = fencing;
    return o;
}

}  // namespace

TEST_CASE("acquire keys: each kind's attempt, release, watch and commit keys, and the keys its "
          "granted lock holds (mutex, multi-resource, fenced, permit, reader, writer, fenced "
          "writer)",
          "[acquire_keys]")
{
    struct expected
    {
        const char* name;
        strings resources;
        lock_options o;
        lock_kind kind;
        strings attempt, release, watch, commit;
        std::string held_key;  // the granted lock's key (a permit's: the permit it won)
        strings permit_keys, reader_keys;
    };
    const expected kinds[] = {
        {"mutex",
         {"a"},
         with(1, lock_role::mutex, false),
         lock_kind::mutex,
         {"p:a"},
         {"p:a"},
         {"p:a"},
         {},
         "p:a",
         {},
         {}},
        {"multi-resource",
         {"a", "b"},
         with(1, lock_role::mutex, false),
         lock_kind::multi,
         {"p:a", "p:b"},
         {"p:a", "p:b"},
         {"p:a", "p:b"},
         {},
         "p:a",
         {},
         {}},
        {"fenced",
         {"a"},
         with(1, lock_role::mutex, true),
         lock_kind::fenced,
         {"p:a", "{p:a}:fence"},
         {"p:a"},
         {"p:a"},
         {"p:a", "{p:a}:fence", "{p:a}:fence:holder"},
         "p:a",
         {},
         {}},
        {"fenced multi-resource",
         {"{t}a", "{t}b"},
         with(1, lock_role::mutex, true),
         lock_kind::fenced,
         {"p:{t}a", "p:{t}b", "p:{t}a:fence", "p:{t}b:fence"},
         {"p:{t}a", "p:{t}b"},
         {"p:{t}a", "p:{t}b"},
         {"p:{t}a", "p:{t}b", "p:{t}a:fence", "p:{t}b:fence", "p:{t}a:fence:holder",
          "p:{t}b:fence:holder"},
         "p:{t}a",
         {},
         {}},
        // Rotated to start from permit 1 (rotate_permits(4): 4 mod 3); the majority won the
        // permit tried first.
        {"permit",
         {"a"},
         with(3, lock_role::mutex, false),
         lock_kind::permit,
         {"p:a", "{p:a}:permit:1", "{p:a}:permit:2", "{p:a}:permit:0"},
         {"p:a", "{p:a}:permit:1", "{p:a}:permit:2", "{p:a}:permit:0"},
         {"{p:a}:permit:1", "{p:a}:permit:2", "{p:a}:permit:0"},
         {},
         "{p:a}:permit:1",
         {"p:a", "{p:a}:permit:1", "{p:a}:permit:2", "{p:a}:permit:0"},
         {}},
        {"reader",
         {"a"},
         with(1, lock_role::reader, false),
         lock_kind::reader,
         {"p:a", "{p:a}:readers", "{p:a}:intent"},
         {"p:a", "{p:a}:readers"},
         {"p:a", "{p:a}:intent"},
         {},
         "{p:a}:readers",
         {},
         {"p:a", "{p:a}:readers"}},
        {"writer",
         {"a"},
         with(1, lock_role::writer, false),
         lock_kind::writer,
         {"p:a", "{p:a}:readers", "{p:a}:intent"},
         {"p:a"},
         {"p:a"},
         {},
         "p:a",
         {},
         {}},
        {"fenced writer",
         {"a"},
         with(1, lock_role::writer, true),
         lock_kind::fenced_writer,
         {"p:a", "{p:a}:readers", "{p:a}:intent", "{p:a}:fence"},
         {"p:a"},
         {"p:a"},
         {"p:a", "{p:a}:fence", "{p:a}:fence:holder"},
         "p:a",
         {},
         {}},
    };
    for (const auto& k : kinds)
    {
        SECTION(k.name)
        {
            acquire_keys keys("p:", k.resources);
            std::string reason;
            REQUIRE_FALSE(keys.prepare(k.o, false, reason));
            CHECK(reason.empty());
            CHECK(keys.kind() == k.kind);
            keys.rotate_permits(4);
            CHECK(of(keys.attempt_keys()) == k.attempt);
            CHECK(of(keys.release_keys()) == k.release);
            CHECK(of(keys.watch_keys()) == k.watch);
            CHECK(of(keys.commit_keys()) == k.commit);
            CHECK(keys.permits() == (k.kind == lock_kind::permit ? 3u : 0u));
            if (keys.read_write())
                CHECK(of(keys.intent_key()) == strings{"{p:a}:intent"});

            lock_state st;
            keys.move_kind_keys_into(st, 0);
            keys.move_names_into(st);
            CHECK(st.kind == k.kind);
            CHECK(st.resource == k.resources.front());
            CHECK(st.key == k.held_key);
            CHECK(st.permit_keys == k.permit_keys);
            CHECK(st.reader_keys == k.reader_keys);
            CHECK(st.role == k.o.role);
            CHECK(st.resources == (k.resources.size() > 1 ? k.resources : strings{}));
        }
    }
}

TEST_CASE("acquire keys: a semaphore's strays are released with the resource's key first (its "
          "mark), also after the names moved into the granted lock",
          "[acquire_keys][permit]")
{
    acquire_keys keys("p:", std::string("jobs"));
    std::string reason;
    REQUIRE_FALSE(keys.prepare(with(3, lock_role::mutex, false), false, reason));
    CHECK(keys.mark() == "redlock:permits:3");
    keys.rotate_permits(2);  // tried: 2, 0, 1
    CHECK(keys.tried_permit(0) == "{p:jobs}:permit:2");
    lock_state st;
    keys.move_kind_keys_into(st, 1);  // the majority set permit 0, tried second
    keys.move_names_into(st);
    CHECK(st.key == "{p:jobs}:permit:0");
    // The resource's key (it holds the mark), the permits not won, then the won one (only
    // looked at by release_permit).
    CHECK(of(keys.strays(1)) ==
          strings{"p:jobs", "{p:jobs}:permit:2", "{p:jobs}:permit:1", "{p:jobs}:permit:0"});
}

TEST_CASE("acquire keys: combinations no kind takes and resources that cannot be locked are "
          "refused before anything is sent, saying why",
          "[acquire_keys]")
{
    struct refused
    {
        const char* name;
        strings resources;
        lock_options o;
        bool cluster;
        redlock::error_code ec;
        const char* says;
    };
    using redlock::error;
    const std::string long_resource(redlock::max_key_size, 'x');
    const refused cases[] = {
        {"permits over several resources",
         {"a", "b"},
         with(2, lock_role::mutex, false),
         false,
         error::invalid_option,
         "async_lock_all locks resources, not permits"},
        {"a role over several resources",
         {"a", "b"},
         with(1, lock_role::reader, false),
         false,
         error::invalid_option,
         "not a read-write lock"},
        {"an empty resource",
         {""},
         with(1, lock_role::mutex, false),
         false,
         error::invalid_argument,
         "the resource is empty"},
        {"an empty resource among several",
         {"a", ""},
         with(1, lock_role::mutex, false),
         false,
         error::invalid_argument,
         "resource 1 is empty"},
        {"a resource named twice",
         {"a", "b", "a"},
         with(1, lock_role::mutex, false),
         false,
         error::invalid_argument,
         "resource 2 repeats resource 0"},
        {"a key over max_key_size",
         {long_resource},
         with(1, lock_role::mutex, false),
         false,
         error::invalid_argument,
         "longer than max_key_size"},
        {"a fenced lock over two slots on a cluster",
         {"a", "b"},
         with(1, lock_role::mutex, true),
         true,
         error::invalid_argument,
         "hash to different slots"},
        {"a semaphore whose key cannot share a slot with its permits on a cluster",
         {"x}y"},
         with(2, lock_role::mutex, false),
         true,
         error::invalid_argument,
         "permit keys"},
        {"a fenced writer whose keys cannot share a slot on a cluster",
         {"x}y"},
         with(1, lock_role::writer, true),
         true,
         error::invalid_argument,
         "readers' set, intent mark and fence counter"},
    };
    for (const auto& c : cases)
    {
        SECTION(c.name)
        {
            acquire_keys keys("p:", c.resources);
            std::string reason;
            CHECK(keys.prepare(c.o, c.cluster, reason) == c.ec);
            CHECK_THAT(reason, Catch::Contains(c.says));
        }
    }
    SECTION("the same keys without a cluster master are taken")
    {
        acquire_keys keys("p:", strings{"a", "b"});
        std::string reason;
        CHECK_FALSE(keys.prepare(with(1, lock_role::mutex, true), false, reason));
        CHECK(reason.empty());
    }
}
