// Read-write locks (lock_options::role) against real masters: readers hold together (and the
// resource's key holds their mark, which refuses any mutex), a writer holds alone, a writer's
// intent mark turns away the readers who come after it, a reader's expiry is its member's,
// and nothing is left behind (docs/algorithm.md, "A read-write lock").
#include "client_fixture.hpp"
#include "contenders.hpp"
#include "holder_witness.hpp"
#include "io_helpers.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

using namespace redlock;
using namespace redlock::test;

namespace {

lock_options side(lock_role r, std::chrono::milliseconds lock_ttl = 10000ms)
{
    lock_options o;
    o.ttl = lock_ttl;
    o.role = r;
    return o;
}

// A writer that retries every 10 ms or so for up to `budget`.
lock_options patient_writer(std::chrono::milliseconds budget)
{
    auto o = side(lock_role::writer);
    o.max_attempts = 100000;
    o.retry_delay = 10ms;
    o.retry_jitter = 5ms;
    o.max_wait = budget;
    return o;
}

// `o`, fenced (lock_options::fencing).
lock_options fenced(lock_options o)
{
    o.fencing = true;
    return o;
}

// How many masters have `token` in the readers' set `key` (ZSCORE answers a bulk string).
std::size_t members_on(const local_masters& m, const std::string& key, std::string_view token)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += m.command(i, {"ZSCORE", key, token}).rfind("$-1", 0) == 0 ? 0 : 1;
    return n;
}

// How many masters have `key` with the value `value`; with an empty `value`, with any value.
std::size_t masters_with(const local_masters& m, std::string_view key, std::string_view value = {})
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        if (const auto v = get_on(m, i, key); v && (value.empty() || *v == value))
            ++n;
    return n;
}

// "master 0: [doc:string {doc}:readers:zset] ..." for failure messages (describe_keys GETs
// every key, which a sorted set refuses).
std::string key_types(const local_masters& m)
{
    std::string out;
    for (std::size_t i = 0; i < m.size(); ++i)
    {
        out += "master " + std::to_string(i) + ": [";
        for (const auto& k : keys_on(m, i))
            out += " " + k + ":" + m.command(i, {"TYPE", k}).substr(1, 6);
        out += " ] ";
    }
    return out;
}

// Checks that no key is left on `m`'s masters once the releases in flight have landed (within
// 2 s), with the keys' types in the message.
asio::awaitable<void> expect_rwlock_keys_settled(const local_masters& m)
{
    INFO(key_types(m));
    const auto left = co_await settled_keys(m, 2s);
    CHECK(left == 0);
}

// Checks that no lock key is left on `m`'s masters (lock_keys: the fence counters stay) within
// 2 s, with the keys' types in the message.
asio::awaitable<void> expect_no_rwlock_lock_keys(const local_masters& m)
{
    INFO(key_types(m));
    const bool none = co_await eventually([&] { return lock_keys(m) == 0; }, 2s);
    CHECK(none);
}

}  // namespace

TEST_CASE_METHOD(masters_rig<5>,
                 "rwlock: readers hold together, a retrying writer marks its intent and the "
                 "readers who come after it are refused, the writer holds once the readers "
                 "leave, alone",
                 "[live][rwlock]")
{
    run(
        [&]() -> asio::awaitable<void> {
            REQUIRE(co_await settled_keys(m) == 0);
            const auto reader = side(lock_role::reader);
            auto r1 = co_await acquired(c, "doc", reader);
            auto r2 = co_await acquired(c, "doc", reader);
            CHECK(r1.resource() == "doc");
            CHECK(r1.key() == "{doc}:readers");
            CHECK(members_on(m, "{doc}:readers", r1.token()) >= 3);
            CHECK(members_on(m, "{doc}:readers", r2.token()) >= 3);
            // The resource's own key holds the readers' mark: any mutex is refused beside them.
            CHECK(masters_with(m, "doc", "redlock:readers") >= 3);
            auto [mec0, beside_readers] = co_await c.async_try_lock("doc", tuple_awaitable);
            CHECK_FALSE(mec0);
            CHECK_FALSE(beside_readers.has_value());

            // A writer that tries once is refused, and forgets the mark it left.
            auto [tec, once] =
                co_await c.async_try_lock("doc", side(lock_role::writer), tuple_awaitable);
            CHECK_FALSE(tec);
            CHECK_FALSE(once.has_value());
            CHECK(co_await eventually([&] { return masters_with(m, "{doc}:intent") == 0; }, 2s));

            // A writer that retries keeps its mark where the readers hold...
            error_code wec;
            std::optional<lock> w;
            bool writer_done = false;
            const auto wo = patient_writer(5000ms);
            asio::co_spawn(
                co_await asio::this_coro::executor,
                [&]() -> asio::awaitable<void> {
                    auto [ec, l] = co_await c.async_lock("doc", wo, tuple_awaitable);
                    wec = ec;
                    w = std::move(l);
                    writer_done = true;
                },
                asio::detached);
            REQUIRE(co_await eventually([&] { return masters_with(m, "{doc}:intent") >= 3; }, 2s));
            // ...so that a reader who comes now is refused: no majority without a mark.
            auto [rec, late] = co_await c.async_try_lock("doc", reader, tuple_awaitable);
            CHECK_FALSE(rec);
            CHECK_FALSE(late.has_value());
            CHECK_FALSE(writer_done);

            co_await c.async_unlock(r1, asio::use_awaitable);
            co_await c.async_unlock(r2, asio::use_awaitable);
            REQUIRE(co_await eventually([&] { return writer_done; }, 3s));
            INFO(w->describe());
            REQUIRE_FALSE(wec);
            CHECK(w->key() == "doc");
            CHECK(masters_with(m, "doc", w->token()) >= 3);

            // The writer holds alone: a reader is refused, and a mutex (the same key) too.
            auto [rec2, beside] = co_await c.async_try_lock("doc", reader, tuple_awaitable);
            CHECK_FALSE(rec2);
            CHECK_FALSE(beside.has_value());
            auto [mec, mutex] = co_await c.async_try_lock("doc", tuple_awaitable);
            CHECK_FALSE(mec);
            CHECK_FALSE(mutex.has_value());
            co_await c.async_unlock(*w, asio::use_awaitable);
            co_await expect_rwlock_keys_settled(m);  // no member, no mark
        },
        15s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "rwlock: a reader extends, checks and releases its own member of the readers' "
                 "set, and a reader whose expiry passed keeps no writer out",
                 "[live][rwlock]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto r = co_await acquired(c, "doc", side(lock_role::reader));
            r = co_await c.async_extend(r, 20000ms, asio::use_awaitable);
            for (std::size_t i = 0; i < m.size(); ++i)
                if (m.command(i, {"ZSCORE", "{doc}:readers", r.token()}).rfind("$-1", 0) != 0)
                    CHECK(std::stoll(m.command(i, {"PTTL", "{doc}:readers"}).substr(1)) > 10000);
            const auto checked = co_await c.async_check(r, asio::use_awaitable);
            CHECK(checked.holding >= 3);
            CHECK(checked.min_pttl > 10000ms);
            CHECK(checked.min_pttl <= 20000ms);
            co_await c.async_unlock(r, asio::use_awaitable);
            CHECK(members_on(m, "{doc}:readers", r.token()) == 0);
            auto [cec, gone] = co_await c.async_check(r, tuple_awaitable);
            CHECK(gone.holding == 0);

            // A short reader and a long one; the long one leaves, the short one's member stays
            // in the set (whose own expiry the long one pushed to 10 s) past its expiry.
            auto brief = co_await acquired(c, "doc", side(lock_role::reader, 300ms));
            auto longer = co_await acquired(c, "doc", side(lock_role::reader));
            co_await c.async_unlock(longer, asio::use_awaitable);
            CHECK(members_on(m, "{doc}:readers", brief.token()) >= 3);
            co_await sleep_for(400ms);
            auto [wec, w] =
                co_await c.async_try_lock("doc", side(lock_role::writer), tuple_awaitable);
            CHECK_FALSE(wec);
            REQUIRE(w.has_value());
            CHECK(members_on(m, "{doc}:readers", brief.token()) <= 2);  // dropped by the writer
            // The expired reader's extension and release find nothing of it.
            auto [xec, x] = co_await c.async_extend(brief, 1000ms, tuple_awaitable);
            CHECK(xec);
            CHECK(members_on(m, "{doc}:readers", brief.token()) <= 2);
            co_await c.async_unlock(*w, asio::use_awaitable);
            co_await expect_rwlock_keys_settled(m);
        },
        15s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "rwlock: what a read-write lock refuses: a reader's fencing, permits, several "
                 "resources",
                 "[live][rwlock][fencing]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // A reader shares the lock: no fencing token orders it (a writer's is below).
            const auto fenced_reader = fenced(side(lock_role::reader));
            const auto reader_why = co_await refused_option(c, fenced_reader);
            CHECK_THAT(reader_why,
                       Catch::Contains("fencing") && Catch::Contains("a reader shares"));
            for (const auto role : {lock_role::reader, lock_role::writer})
            {
                auto o = side(role);
                o.permits = 2;
                const auto why = co_await refused_option(c, o);
                CHECK_THAT(why, Catch::Contains("permits"));
                const std::vector<std::string> two{"a", "b"};  // named: GCC 12 and co_await
                auto [ec, l] = co_await c.async_lock_all(two, side(role), tuple_awaitable);
                CHECK(ec == error::invalid_option);
                CHECK_THAT(std::string(l.reason()), Catch::Contains("async_lock_all"));
            }
            auto o = side(lock_role::reader);
            o.role = static_cast<lock_role>(7);
            const auto why = co_await refused_option(c, o);
            CHECK_THAT(why, Catch::Contains("role"));
            CHECK(co_await settled_keys(m) == 0);
        },
        10s);
}

namespace {

// A reader of `resource`, and behind it a fenced writer retrying in the background (into `w`)
// until `marks` masters hold its intent mark. Returns the reader's lock.
asio::awaitable<lock> fenced_writer_behind_reader(client& c, const local_masters& m,
                                                  std::string resource, background_lock& w,
                                                  std::size_t marks)
{
    auto r = co_await acquired(c, resource, side(lock_role::reader));
    lock_in_background(co_await asio::this_coro::executor, c, resource,
                       fenced(patient_writer(5000ms)), w);
    const auto intent = "{" + resource + "}:intent";
    REQUIRE(co_await eventually([&] { return masters_with(m, intent) >= marks; }, 2s));
    co_return r;
}

}  // namespace

TEST_CASE_METHOD(masters_rig<5>,
                 "rwlock: a fenced writer's token, one sequence with a fenced mutex's on the "
                 "resource, committed on a majority",
                 "[live][rwlock][fencing]")
{
    run(
        [&]() -> asio::awaitable<void> {
            const auto writer = fenced(side(lock_role::writer));
            auto w1 = co_await acquired(c, "doc", writer);
            INFO(w1.describe());
            CHECK(w1.key() == "doc");
            CHECK(w1.fencing_token() > 0);
            CHECK(masters_with(m, "doc", w1.token()) >= 3);
            CHECK(counters_at(m, "doc", w1.fencing_token()) >= 3);
            // Its commit recorded it beside the counter: async_holders reports its own term.
            auto [hec, held] = co_await c.async_holders("doc", tuple_awaitable);
            REQUIRE_FALSE(hec);
            REQUIRE(held.holders.size() == 1);
            CHECK_FALSE(held.holders[0].reader);
            CHECK(held.holders[0].fencing_token == w1.fencing_token());
            // It holds as the unfenced writer does: a reader is refused beside it.
            auto [rec, beside] =
                co_await c.async_try_lock("doc", side(lock_role::reader), tuple_awaitable);
            CHECK_FALSE(rec);
            CHECK_FALSE(beside.has_value());
            // An extension keeps the token.
            auto e = co_await c.async_extend(w1, 5000ms, asio::use_awaitable);
            CHECK(e.fencing_token() == w1.fencing_token());
            co_await c.async_unlock(e, asio::use_awaitable);

            // A fenced mutex of the resource counts on from the writer's token, and the next
            // writer on from the mutex's: the writer and the mutex exclude each other.
            auto mutex = co_await acquired(c, "doc", fenced(lock_options{}));
            CHECK(mutex.fencing_token() > w1.fencing_token());
            co_await c.async_unlock(mutex, asio::use_awaitable);
            auto w2 = co_await acquired(c, "doc", writer);
            CHECK(w2.fencing_token() > mutex.fencing_token());
            co_await c.async_unlock(w2, asio::use_awaitable);
            co_await expect_no_rwlock_lock_keys(m);
        },
        15s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "rwlock: a fenced writer beside a reader is refused and marks its intent as the "
                 "unfenced writer does, and commits no token until it holds",
                 "[live][rwlock][fencing]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // A fenced writer that tries once beside a reader is refused, and forgets the mark
            // it left.
            auto first = co_await acquired(c, "doc", side(lock_role::reader));
            auto [tec, once] =
                co_await c.async_try_lock("doc", fenced(side(lock_role::writer)), tuple_awaitable);
            CHECK_FALSE(tec);
            CHECK_FALSE(once.has_value());
            CHECK(co_await eventually([&] { return masters_with(m, "{doc}:intent") == 0; }, 2s));

            // One that retries keeps its mark where the readers hold: a new reader is refused.
            background_lock w;
            auto r = co_await fenced_writer_behind_reader(c, m, "doc", w, 3);
            const auto reader = side(lock_role::reader);
            auto [rec, late] = co_await c.async_try_lock("doc", reader, tuple_awaitable);
            CHECK_FALSE(rec);
            CHECK_FALSE(late.has_value());
            CHECK_FALSE(w.done);
            CHECK(masters_with(m, "{doc}:fence") == 0);  // refused: nothing to commit

            co_await c.async_unlock(first, asio::use_awaitable);
            co_await c.async_unlock(r, asio::use_awaitable);
            REQUIRE(co_await eventually([&] { return w.done; }, 3s));
            REQUIRE_FALSE(w.ec);
            INFO(w.l->describe());
            CHECK(w.l->fencing_token() == 1);
            CHECK(counters_at(m, "doc", 1) >= 3);
            CHECK(masters_with(m, "{doc}:intent") == 0);  // deleted as it took the key
            co_await c.async_unlock(*w.l, asio::use_awaitable);
            co_await expect_no_rwlock_lock_keys(m);
        },
        15s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "rwlock: a broken fence counter fails a fenced writer on its master, which "
                 "neither marks its intent nor takes the key there",
                 "[live][rwlock][fencing]")
{
    // (Outside the coroutine: GCC 12 cannot hold an initializer_list of literals across one.)
    m.command(0, {"SET", "{doc}:fence", "not-a-number"});
    run(
        [&]() -> asio::awaitable<void> {
            background_lock w;
            auto r = co_await fenced_writer_behind_reader(c, m, "doc", w, 2);
            CHECK_FALSE(get_on(m, 0, "{doc}:intent").has_value());
            co_await c.async_unlock(r, asio::use_awaitable);
            REQUIRE(co_await eventually([&] { return w.done; }, 3s));
            REQUIRE_FALSE(w.ec);
            INFO(w.l->describe());
            CHECK(w.l->fencing_token() == 1);
            const auto& d0 = w.l->masters()[0];
            CHECK((d0.status == master_status::error || d0.status == master_status::not_needed));
            if (d0.status == master_status::error)
                CHECK_THAT(d0.message, Catch::Contains("not an integer"));
            CHECK(get_on(m, 0, "doc") != std::optional<std::string>(w.l->token()));
            CHECK(get_on(m, 0, "{doc}:fence") == std::optional<std::string>("not-a-number"));
            co_await c.async_unlock(*w.l, asio::use_awaitable);
        },
        15s);
}

namespace {

// Who holds one resource at once, as readers and writers see it across threads.
struct rw_witness
{
    std::atomic<int> readers{0};
    std::atomic<int> writers{0};
    holder_witness most_readers;  // the largest number of readers at once
    std::atomic<long> violations{0};
    std::atomic<long> reads{0};
    std::atomic<long> writes{0};
    std::atomic<long> longest_writer_wait_us{0};

    void enter(bool writer)
    {
        if (writer)
        {
            const int w = ++writers;
            if (w != 1 || readers.load() != 0)
                ++violations;
        }
        else
        {
            ++readers;
            most_readers.enter();
            if (writers.load() != 0)
                ++violations;
        }
    }
    void leave(bool writer)
    {
        if (writer)
        {
            --writers;
            ++writes;
        }
        else
        {
            most_readers.leave();
            --readers;
            ++reads;
        }
    }
    void writer_waited(steady::duration d)
    {
        const long us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
        long seen = longest_writer_wait_us.load();
        while (us > seen && !longest_writer_wait_us.compare_exchange_weak(seen, us))
        {}
    }
};

}  // namespace

TEST_CASE("rwlock: 9 contenders over 3 clients on 5 masters, a third of them writers, one "
          "master paused now and then: no writer beside anyone, readers together, every "
          "writer served",
          "[live][rwlock]")
{
    constexpr int n_clients = 3;
    constexpr int per_client = 3;
    constexpr auto run_time = 3000ms;
    local_masters m({.count = 5});

    const auto reader = [] {
        auto o = side(lock_role::reader, 2000ms);
        o.max_attempts = 100000;
        o.retry_delay = 0ms;
        o.retry_jitter = 5ms;
        o.max_wait = 300ms;
        return o;
    }();
    auto writer = patient_writer(2000ms);
    writer.ttl = 2000ms;

    rw_witness witness;
    error_log errors;
    const auto stop_at = steady::now() + run_time;
    {
        const master_pauser pauser(m, stop_at);
        run_contenders(m, n_clients, per_client, run_time + 10s, errors,
                       [&](client& c, int id, int k) -> asio::awaitable<void> {
                           const bool is_writer = k == 0;  // one writer, two readers per client
                           while (steady::now() < stop_at)
                           {
                               const auto asked = steady::now();
                               auto [ec, l] = co_await c.async_lock(
                                   "doc", is_writer ? writer : reader, tuple_awaitable);
                               if (ec == error::no_quorum || (ec == error::contended && !is_writer))
                                   continue;
                               if (ec)
                               {
                                   errors.add("client " + std::to_string(id) +
                                              (is_writer ? " writer: " : " reader: ") +
                                              ec.message() + " " + l.describe());
                                   co_await sleep_for(10ms);
                                   continue;
                               }
                               if (is_writer)
                                   witness.writer_waited(steady::now() - asked);
                               witness.enter(is_writer);
                               co_await sleep_for(is_writer ? 1ms : 3ms);
                               witness.leave(is_writer);
                               auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                               if (uec && uec != error::lock_lost && uec != error::no_quorum)
                                   errors.add("unlock: " + uec.message());
                           }
                       });
    }

    INFO(errors.str());
    CHECK(errors.size() == 0);  // a writer that waited 2 s in vain is an error: starved
    CHECK(witness.violations.load() == 0);
    CHECK(witness.most_readers.most() >= 2);  // readers held together
    CHECK(witness.writes.load() >= 3);
    CHECK(witness.reads.load() >= 20);
    WARN("rwlock: " << witness.reads << " reads and " << witness.writes << " writes, at most "
                    << witness.most_readers.most() << " readers at once, longest writer wait "
                    << witness.longest_writer_wait_us / 1000 << " ms");
    INFO(key_types(m));
    CHECK(settled_keys_sync(m, 2s) == 0);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "rwlock: a writer is not starved by a stream of readers who always overlap",
                 "[live][rwlock]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // Four readers, each holding 30 ms and taking it again at once: from the second
            // one on, some reader always holds.
            auto o = side(lock_role::reader);
            o.max_attempts = 100000;
            o.retry_delay = 2ms;
            o.retry_jitter = 2ms;
            bool stop = false;
            int readers_running = 0;
            long reads = 0;
            long refused = 0;  // readers turned away by the writer's mark
            auto ex = co_await asio::this_coro::executor;
            for (int k = 0; k < 4; ++k)
            {
                ++readers_running;
                asio::co_spawn(
                    ex,
                    [&, k]() -> asio::awaitable<void> {
                        co_await sleep_for(std::chrono::milliseconds(8 * k));
                        while (!stop)
                        {
                            auto [ec, l] = co_await c.async_try_lock("doc", o, tuple_awaitable);
                            if (!l)
                            {
                                ++refused;
                                co_await sleep_for(2ms);
                                continue;
                            }
                            ++reads;
                            co_await sleep_for(30ms);
                            co_await c.async_unlock(*l, asio::use_awaitable);
                        }
                        --readers_running;
                    },
                    asio::detached);
            }
            co_await sleep_for(200ms);
            const long refused_before = refused;
            const auto asked = steady::now();
            auto [wec, w] = co_await c.async_lock("doc", patient_writer(3000ms), tuple_awaitable);
            const auto waited = steady::now() - asked;
            INFO(w.describe());
            CHECK_FALSE(wec);
            if (!wec)
                co_await c.async_unlock(w, asio::use_awaitable);
            stop = true;
            CHECK(co_await eventually([&] { return readers_running == 0; }, 2s));
            CHECK(reads >= 10);
            CHECK(refused > refused_before);  // the mark turned readers away
            WARN("rwlock: a writer among 4 overlapping readers waited "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms ("
                 << reads << " reads)");
            co_await expect_rwlock_keys_settled(m);
        },
        15s);
}

TEST_CASE_METHOD(rivals_rig<5>,
                 "rwlock: waiting readers and writers are woken by the release they wait for, "
                 "of another client or of their own, long before the TTL",
                 "[live][rwlock][wait]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto reader = side(lock_role::reader);
            auto writer = side(lock_role::writer);
            const auto ex = co_await asio::this_coro::executor;
            reader.wait = 8000ms;
            writer.wait = 8000ms;

            // A writer of theirs holds: our reader waits until it releases.
            auto w = co_await acquired(theirs, "doc", side(lock_role::writer));
            background_lock r;
            lock_in_background(ex, ours, "doc", reader, r);
            co_await sleep_for(300ms);
            CHECK_FALSE(r.done);  // the writer holds: it waits
            auto released = steady::now();
            co_await theirs.async_unlock(w, asio::use_awaitable);
            REQUIRE(co_await eventually([&] { return r.done; }, 5s));
            REQUIRE_FALSE(r.ec);
            CHECK(r.finished - released < 3s);

            // Readers hold, theirs and ours: our writer waits until both leave; our own
            // reader's release reaches it within the client (the masters do not report a
            // connection's own writes to it).
            auto theirs_r = co_await acquired(theirs, "doc", side(lock_role::reader));
            background_lock wr;
            lock_in_background(ex, ours, "doc", writer, wr);
            co_await sleep_for(300ms);
            CHECK_FALSE(wr.done);  // readers hold: it waits
            co_await theirs.async_unlock(theirs_r, asio::use_awaitable);
            co_await sleep_for(200ms);
            CHECK_FALSE(wr.done);  // our reader still holds
            released = steady::now();
            co_await ours.async_unlock(*r.l, asio::use_awaitable);
            REQUIRE(co_await eventually([&] { return wr.done; }, 5s));
            INFO(wr.l->describe());
            REQUIRE_FALSE(wr.ec);
            CHECK(wr.finished - released < 3s);
            co_await ours.async_unlock(*wr.l, asio::use_awaitable);
            co_await expect_rwlock_keys_settled(m);
        },
        20s);
}

TEST_CASE_METHOD(masters_rig<5>,
                 "rwlock: async_with_lock keeps a reader's member alive past its TTL by "
                 "extension, beside another reader, and releases it after the work",
                 "[live][rwlock][hold]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto other = co_await acquired(c, "doc", side(lock_role::reader));
            const auto reader = side(lock_role::reader, 1000ms);
            std::string token;
            auto [ec, outlived] = co_await c.async_with_lock(
                "doc", reader, {},
                [&](lock l) -> asio::awaitable<bool> {
                    token = std::string(l.token());
                    CHECK(l.key() == "{doc}:readers");
                    // Three TTLs: without its extensions the member would expire after one.
                    co_await sleep_for(3000ms);
                    co_return members_on(m, "{doc}:readers", l.token()) >= 3 &&
                        masters_with(m, "doc", "redlock:readers") >= 3;
                },
                asio::use_awaitable);
            CHECK_FALSE(ec);
            CHECK(outlived);
            // Released after the work (the slower masters' releases may still be on their way).
            CHECK(co_await eventually([&] { return members_on(m, "{doc}:readers", token) == 0; },
                                      2s));
            CHECK(members_on(m, "{doc}:readers", other.token()) >= 3);
            co_await c.async_unlock(other, asio::use_awaitable);
            co_await expect_rwlock_keys_settled(m);
        },
        15s);
}
