// Counting semaphores (lock_options::permits > 1) against real masters: at most N holders,
// each permit a mutex key held on a majority, no permit key left behind, the options a
// semaphore refuses (docs/algorithm.md, "A counting semaphore").
#include "client_fixture.hpp"
#include "contenders.hpp"
#include "hold_fixture.hpp"
#include "holder_witness.hpp"
#include "io_helpers.hpp"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

using namespace redlock;
using namespace redlock::test;

namespace {

lock_options permits(std::uint32_t n, std::chrono::milliseconds lock_ttl = 10000ms)
{
    lock_options o;
    o.ttl = lock_ttl;
    o.permits = n;
    return o;
}

bool mentions(std::string_view text, std::string_view part)
{
    return text.find(part) != std::string_view::npos;
}

// How many masters hold `key` with `token`.
std::size_t holding(const local_masters& m, const std::string& key, std::string_view token)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        n += m.command(i, {"GET", key}) ==
                     "$" + std::to_string(token.size()) + "\r\n" + std::string(token) + "\r\n"
                 ? 1
                 : 0;
    return n;
}

// How many times master i ran `command` since its statistics were reset (INFO commandstats;
// a script's own calls count too).
long calls(const local_masters& m, std::size_t i, const std::string& command)
{
    const auto stats = m.command(i, {"INFO", "commandstats"});
    const auto at = stats.find("cmdstat_" + command + ":calls=");
    return at == std::string::npos ? 0 : std::stol(stats.substr(at + command.size() + 15));
}

}  // namespace

TEST_CASE_METHOD(masters_rig<5>,
                 "semaphore: two permits on 5 masters: two holders at once, each on its own "
                 "permit key on a majority, the third refused until one releases",
                 "[live][semaphore]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto o = permits(2);
            // One round trip: one script per master, which sets the first free permit itself
            // (INFO commandstats: a SET within it). A master the round did not need may never
            // get it (abandoned before it was written); none gets a second.
            // The fixture's warm-up lock is released first (its keys gone everywhere).
            REQUIRE(co_await settled_keys(m) == 0);
            for (std::size_t i = 0; i < m.size(); ++i)
                REQUIRE(m.command(i, {"CONFIG", "RESETSTAT"}) == "+OK\r\n");
            auto a = co_await acquired(c, "jobs", o);
            auto b = co_await acquired(c, "jobs", o);
            long sets = 0;
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                const auto n = calls(m, i, "set");
                // a's script: one SET NX and the semaphore's mark; b's: one or two (a's permit
                // first, when b's order starts there), the mark only PEXPIREd. A second
                // attempt would add more.
                CHECK(n <= 4);
                sets += n;
            }
            CHECK(sets >= 6);  // each acquisition's script ran on a majority
            CHECK(a.resource() == "jobs");
            CHECK(b.resource() == "jobs");
            const std::set<std::string> keys{std::string(a.key()), std::string(b.key())};
            CHECK(keys == std::set<std::string>{"{jobs}:permit:0", "{jobs}:permit:1"});
            CHECK(holding(m, std::string(a.key()), a.token()) >= 3);
            CHECK(holding(m, std::string(b.key()), b.token()) >= 3);
            // No master keeps a token of ours on the other permit: the strays are released,
            // by a release queued behind the SET on a master that answered late, which may
            // still be on its way when the acquisition completes (at most 2 s here).
            const auto strays = [&] {
                return holding(m, std::string(b.key()), a.token()) +
                       holding(m, std::string(a.key()), b.token());
            };
            for (int k = 0; k < 100 && strays() > 0; ++k)
                co_await sleep_for(20ms);
            CHECK(strays() == 0);

            auto [ec, third] = co_await c.async_try_lock("jobs", o, tuple_awaitable);
            CHECK_FALSE(third.has_value());
            CHECK_FALSE(ec);  // contention is an empty optional

            co_await c.async_unlock(a, asio::use_awaitable);
            auto d = co_await acquired(c, "jobs", o);
            CHECK(d.key() == a.key());  // the permit freed
            // Extended and released like a mutex.
            d = co_await c.async_extend(d, 20000ms, asio::use_awaitable);
            // On every master that holds it (a majority, not always master 0).
            std::size_t extended = 0;
            for (std::size_t i = 0; i < m.size(); ++i)
                if (get_on(m, i, d.key()) == std::string(d.token()))
                {
                    ++extended;
                    CHECK(std::stoll(m.command(i, {"PTTL", std::string(d.key())}).substr(1)) >
                          10000);
                }
            CHECK(extended >= 3);
            co_await c.async_unlock(d, asio::use_awaitable);
            co_await c.async_unlock(b, asio::use_awaitable);
            CHECK(co_await settled_keys(m) == 0);
        },
        10s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "semaphore: what a semaphore refuses: fencing, several resources, 0 or more "
                 "than 1024 permits",
                 "[live][semaphore]")
{
    run(
        [&]() -> asio::awaitable<void> {
            const auto refused = [&](lock_options o) { return refused_option(c, o); };
            auto o = permits(3);
            o.fencing = true;
            const auto fencing = co_await refused(o);
            CHECK(mentions(fencing, "fencing"));
            const auto none = co_await refused(permits(0));
            CHECK(mentions(none, "permits"));
            const auto many = co_await refused(permits(1025));
            CHECK(mentions(many, "permits"));
            const std::vector<std::string> two{"a", "b"};  // named: GCC 12 and co_await
            auto [ec, l] = co_await c.async_lock_all(two, permits(2), tuple_awaitable);
            CHECK(ec == error::invalid_option);
            CHECK(mentions(l.reason(), "async_lock_all"));
            CHECK(co_await settled_keys(m) == 0);
        },
        10s);
}

TEST_CASE("semaphore: 6 contenders in 3 processes' worth of clients on 2 permits over 5 "
          "masters, one master paused now and then: a witness never sees more than 2 holders, "
          "and no permit key is left",
          "[live][semaphore]")
{
    constexpr std::uint32_t n_permits = 2;
    constexpr int n_clients = 3;
    constexpr int per_client = 2;
    constexpr auto run_time = 3000ms;
    local_masters m({.count = 5});

    auto opts = permits(n_permits, 2000ms);
    opts.max_attempts = 1000;
    opts.retry_delay = 0ms;
    opts.retry_jitter = 5ms;
    opts.max_wait = 300ms;

    holder_witness witness;
    std::atomic<long> acquisitions{0};
    std::atomic<long> together{0};  // acquisitions that saw another holder while holding
    error_log errors;
    const auto stop_at = steady::now() + run_time;

    // Refused: all permits taken, or too few masters answered (one is paused).
    const auto refused = [](error_code ec) {
        return ec == error::contended || ec == error::no_quorum;
    };
    {
        // A master paused for 150 ms every 500 ms, in turn: the quorum goes on without it.
        const master_pauser pauser(m, stop_at);
        run_contenders(m, n_clients, per_client, run_time + 10s, errors,
                       [&](client& c, int id, int) -> asio::awaitable<void> {
                           while (steady::now() < stop_at)
                           {
                               const auto granted =
                                   co_await contend_for(c, "vendor", opts, id, errors, refused);
                               if (!granted)
                                   continue;
                               const lock& l = *granted;
                               witness.enter();
                               co_await sleep_for(2ms);
                               if (witness.now() > 1)
                                   ++together;
                               witness.leave();
                               auto [uec] = co_await c.async_unlock(l, tuple_awaitable);
                               if (uec && uec != error::lock_lost && uec != error::no_quorum)
                                   errors.add("unlock: " + uec.message());
                               ++acquisitions;
                           }
                       });
    }

    INFO(errors.str());
    CHECK(errors.size() == 0);
    CHECK(witness.most() <= static_cast<int>(n_permits));
    CHECK(witness.most() == static_cast<int>(n_permits));  // the permits were shared
    CHECK(together.load() > 0);
    CHECK(acquisitions.load() >= 50);
    WARN("semaphore: " << acquisitions << " acquisitions of 2 permits by 6 contenders, " << together
                       << " of them beside another holder, at most " << witness.most()
                       << " holders");
    INFO(describe_keys(m));
    CHECK(settled_keys_sync(m) == 0);
}

TEST_CASE_METHOD(rivals_rig<5>,
                 "semaphore: a waiting acquisition takes the permit another client releases, "
                 "woken by the release long before the TTL",
                 "[live][semaphore][wait]")
{
    run(
        [&]() -> asio::awaitable<void> {
            auto a = co_await acquired(theirs, "jobs", permits(2));
            auto b = co_await acquired(theirs, "jobs", permits(2));
            auto o = permits(2);
            o.wait = 8000ms;
            background_lock waiter;
            lock_in_background(co_await asio::this_coro::executor, ours, "jobs", o, waiter);
            co_await sleep_for(300ms);
            CHECK_FALSE(waiter.done);  // both permits held: it waits
            const auto released = steady::now();
            co_await theirs.async_unlock(a, asio::use_awaitable);
            REQUIRE(co_await eventually([&] { return waiter.done; }, 5s));
            INFO(waiter.l->describe());
            REQUIRE_FALSE(waiter.ec);
            CHECK(waiter.l->key() == a.key());  // the permit released
            // Woken by the release, not by the keys' expiry 10 s after they were set.
            CHECK(waiter.finished - released < 3s);
            co_await ours.async_unlock(*waiter.l, asio::use_awaitable);
            co_await theirs.async_unlock(b, asio::use_awaitable);
            CHECK(co_await settled_keys(m) == 0);
        },
        15s);
}

TEST_CASE_METHOD(rivals_rig<3>,
                 "semaphore: one kind per resource, across clients: beside a 3-permit semaphore's "
                 "holders a mutex, a reader, a writer, a fenced writer and a semaphore of another "
                 "size are refused, a census without "
                 "the permit count names the holders, and nothing is left after the releases",
                 "[live][semaphore][kinds]")
{
    run(
        [&]() -> asio::awaitable<void> {
            std::vector<lock> held;
            for (int i = 0; i < 3; ++i)
                held.push_back(co_await acquired(theirs, "vendor", permits(3)));
            // A mutex of the same name: refused, never granted beside (the semaphore's mark
            // holds the resource's key). Its SET NX cannot tell what holds it: contended.
            auto [mec, mutex] = co_await ours.async_try_lock("vendor", tuple_awaitable);
            CHECK_FALSE(mec);
            CHECK_FALSE(mutex.has_value());
            // A read-write lock's reader, writer and fenced writer: refused with kind_mismatch
            // (their scripts answer the semaphore's mark), no writer's intent left behind.
            for (int side = 0; side < 3; ++side)
            {
                lock_options o = permits(1);
                o.role = side == 0 ? lock_role::reader : lock_role::writer;
                o.fencing = side == 2;
                CAPTURE(side);
                auto [rec, rw] = co_await ours.async_lock("vendor", o, tuple_awaitable);
                INFO(rw.describe());
                CHECK(rec == error::kind_mismatch);
                CHECK_FALSE(rw.held());
                CHECK(std::count_if(rw.masters().begin(), rw.masters().end(), [](const auto& d) {
                          return d.message == "held as a semaphore of 3 permits";
                      }) >= 2);
            }
            // A semaphore of another size: refused with kind_mismatch, naming what holds it.
            auto [sec, other] = co_await ours.async_lock("vendor", permits(5), tuple_awaitable);
            INFO(other.describe());
            CHECK(sec == error::kind_mismatch);
            CHECK_FALSE(other.held());
            CHECK(std::count_if(other.masters().begin(), other.masters().end(), [](const auto& d) {
                      return d.ec == error::kind_mismatch &&
                             d.message == "held as a semaphore of 3 permits";
                  }) >= 2);
            // try_lock says so too: an error, not an empty optional.
            auto [tec, tried] = co_await ours.async_try_lock("vendor", permits(4), tuple_awaitable);
            CHECK(tec == error::kind_mismatch);
            CHECK_FALSE(tried.has_value());
            // A census that does not know the kind (no permits, or another count) still names
            // the three holders.
            for (const std::uint32_t n : {1u, 2u})
            {
                INFO("census with permits = " << n);
                auto [hec, who] =
                    co_await ours.async_holders("vendor", permits(n), tuple_awaitable);
                CHECK_FALSE(hec);
                CHECK(who.holders.size() == 3);
            }
            // Extended past the first TTL, the permits keep the mark: still refused.
            for (auto& l : held)
            {
                auto [eec, ext] = co_await theirs.async_extend(l, 20000ms, tuple_awaitable);
                REQUIRE_FALSE(eec);
                l = std::move(ext);
            }
            for (std::size_t i = 0; i < m.size(); ++i)
                CHECK(pttl_on(m, i, "vendor") > 10000);
            for (auto& l : held)
            {
                auto [uec] = co_await theirs.async_unlock(l, tuple_awaitable);
                CHECK_FALSE(uec);
            }
            // The last permit's release took the mark: nothing is left, and a mutex gets in.
            CHECK(co_await settled_keys(m) == 0);
            lock mine = co_await acquired(ours, "vendor");
            // A semaphore on a mutex's name: refused with kind_mismatch.
            auto [kec, sem] = co_await theirs.async_lock("vendor", permits(3), tuple_awaitable);
            INFO(sem.describe());
            CHECK(kec == error::kind_mismatch);
            CHECK(std::count_if(sem.masters().begin(), sem.masters().end(), [](const auto& d) {
                      return d.message == "held as a mutex (or a read-write lock's writer)";
                  }) >= 2);
            co_await unlock_and_expect_no_keys(ours, mine, m);
        },
        30s);
}

TEST_CASE_METHOD(rivals_rig<3>,
                 "semaphore: a release that finds its permit gone (expired, and the mark with it) "
                 "leaves alone the mutex that took the resource's key since, and a release that "
                 "deletes the last permit takes the mark with it",
                 "[live][semaphore][kinds]")
{
    run(
        [&]() -> asio::awaitable<void> {
            // The permit and its mark expire (the test waits for the keys to go, not a time).
            lock gone = co_await acquired(theirs, "vendor", permits(2, 200ms));
            REQUIRE(co_await settled_keys(m, 5s) == 0);
            lock mine = co_await acquired_everywhere(ours, m, "vendor");
            // The late release deletes no permit of ours: it reads the resource's key before
            // deleting it, and a mutex's token is no mark.
            auto [lec] = co_await theirs.async_unlock(gone, tuple_awaitable);
            CHECK(lec);
            CHECK(on_every_master(m, "vendor", mine.token()));
            auto [cec, still] = co_await ours.async_check(mine, tuple_awaitable);
            CHECK_FALSE(cec);
            CHECK(still.holding == m.size());
            co_await unlock_and_expect_no_keys(ours, mine, m);
            // Two permits held, released one after the other: the mark stays while one is
            // held, and goes with the last (deleted unread: our permit stood until then).
            lock a = co_await acquired(theirs, "vendor", permits(2));
            lock b = co_await acquired(theirs, "vendor", permits(2));
            REQUIRE(co_await eventually([&] { return total_keys(m) == 3 * m.size(); }));
            auto [aec] = co_await theirs.async_unlock(a, tuple_awaitable);
            CHECK_FALSE(aec);
            for (std::size_t i = 0; i < m.size(); ++i)
                CHECK(get_on(m, i, "vendor") == std::string("redlock:permits:2"));
            co_await unlock_and_expect_no_keys(theirs, b, m);
        },
        30s);
}

TEST_CASE_METHOD(rivals_rig<3>,
                 "semaphore: async_next_holders without the permit count follows a semaphore's "
                 "permits: a permit taken and one released are each pushed, long before the "
                 "re-read interval, and the result says how many permits the semaphore has",
                 "[live][semaphore][kinds]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock first = co_await acquired(theirs, "quota", permits(3));
            auto [hec, seen] =
                co_await ours.async_holders("quota", lock_options(), tuple_awaitable);
            REQUIRE_FALSE(hec);
            CHECK(seen.permits == 3);
            REQUIRE(seen.holders.size() == 1);
            // The re-read interval is a minute: only a push ends these waits within the test's
            // limit. A permit taken (not the resource's key: the mark is there already)...
            auto executor = co_await asio::this_coro::executor;
            auto next = asio::co_spawn(
                executor,
                ours.async_next_holders("quota", lock_options(), seen, 60s, asio::use_awaitable),
                asio::use_awaitable);
            co_await sleep_for(200ms);
            lock second = co_await acquired(theirs, "quota", permits(3));
            holders_result two = co_await std::move(next);
            CHECK(two.permits == 3);
            CHECK(two.holders.size() == 2);
            // ...and one released.
            auto after = asio::co_spawn(
                executor,
                ours.async_next_holders("quota", lock_options(), two, 60s, asio::use_awaitable),
                asio::use_awaitable);
            co_await sleep_for(200ms);
            auto [uec] = co_await theirs.async_unlock(first, tuple_awaitable);
            CHECK_FALSE(uec);
            holders_result one = co_await std::move(after);
            CHECK(one.holders.size() == 1);
            CHECK(one.permits == 3);
            co_await unlock_and_expect_no_keys(theirs, second, m);
        },
        30s);
}
