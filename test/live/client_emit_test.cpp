// Acceptance: no operation completes inside cancellation_signal::emit(), as no Asio operation
// does. Each operation is left pending, then its signal is emitted from inside the callback of
// another operation of the same client: that callback runs on the client's strand, where a
// cancellation that hopped onto the strand by dispatch() would run, and complete, inline. The
// completion frees the state that the emitter touches on the line after emit() (a coroutine
// resumed and ended inside emit(): a heap-use-after-free under ASan), and records whether it
// ran inside emit().
#include "client_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <memory>
#include <optional>
#include <string>

#include <redlock/election.hpp>

using namespace redlock;
using namespace redlock::test;

namespace {

/// An operation's cancellation signal, how its completions went, and what a completion frees.
struct emit_probe
{
    asio::cancellation_signal sig;
    bool emitting = false;
    int completions = 0;
    int inside_emit = 0;
    // What the cancelled operation's completion frees: the frame of the coroutine it resumes.
    std::unique_ptr<std::string> frame = std::make_unique<std::string>("alive");

    /// The completion token of the operation under test: any completion signature.
    auto token()
    {
        return asio::bind_cancellation_slot(sig.slot(), [this](auto&&...) {
            ++completions;
            if (emitting)
                ++inside_emit;
            frame.reset();
        });
    }

    /// Emits a terminal cancellation, then uses what the completion frees.
    void emit()
    {
        std::string* f = frame.get();
        emitting = true;
        sig.emit(asio::cancellation_type::terminal);
        emitting = false;
        CHECK(f->size() == 5);  // freed if the completion ran inside emit()
    }
};

/// Emits `p`'s signal from inside a callback of `c` (an operation that completes without any
/// master: an unlock of an empty lock, refused at once, on the client's strand), then waits
/// for `p`'s operation to complete, and checks that it completed once, after emit() returned.
asio::awaitable<void> emit_from_a_callback(client& c, emit_probe& p)
{
    REQUIRE(p.completions == 0);  // pending until the signal
    bool emitted = false;
    c.async_unlock(lock(), [&](error_code) {
        p.emit();
        emitted = true;
    });
    CHECK(co_await eventually([&] { return emitted && p.completions == 1; }, 5s));
    CHECK(p.inside_emit == 0);
    CHECK(p.completions == 1);
}

/// Starts an operation with `start(token)`, lets it reach its wait (`settle`), then
/// emit_from_a_callback.
template <class Start>
asio::awaitable<void> cancel_pending(client& c, Start start, steady::duration settle)
{
    emit_probe p;
    start(p.token());
    co_await sleep_for(settle);
    co_await emit_from_a_callback(c, p);
}

lock_options waits_for(std::chrono::milliseconds wait)
{
    lock_options o;
    o.wait = wait;
    return o;
}

}  // namespace

TEST_CASE_METHOD(rivals_rig<3>,
                 "client: cancellation: a waiting async_lock, async_lock_all and election::"
                 "async_campaign complete after emit() returns, never inside it",
                 "[live][client][cancel]")
{
    run(
        [&]() -> asio::awaitable<void> {
            lock held = co_await acquired(theirs, "emit-wait");
            lock held_all = co_await acquired(theirs, "emit-all");
            INFO("async_lock, waiting for the release");
            co_await cancel_pending(
                ours, [&](auto t) { ours.async_lock("emit-wait", waits_for(10s), std::move(t)); },
                100ms);  // refused once, then in the waiting room
            INFO("async_lock, in its backoff delay");
            co_await cancel_pending(
                ours,
                [&](auto t) { ours.async_lock("emit-wait", retrying(10, 2000ms), std::move(t)); },
                100ms);
            INFO("async_lock_all, waiting");
            co_await cancel_pending(
                ours,
                [&](auto t) {
                    ours.async_lock_all({"emit-all", "emit-other"}, waits_for(10s), std::move(t));
                },
                100ms);
            {
                INFO("election::async_campaign, behind a leader");
                election leader(theirs, "emit-election", "leader");
                auto [lec, lead] = co_await leader.async_campaign(tuple_awaitable);
                REQUIRE_FALSE(lec);
                election candidate(ours, "emit-election", "candidate");
                emit_probe p;
                candidate.async_campaign(p.token());
                co_await sleep_for(100ms);
                co_await emit_from_a_callback(ours, p);
                {
                    INFO("election::async_observe, waiting for a change");
                    election observer(ours, "emit-election", "observer");
                    auto [oec, now] = co_await observer.async_leader(tuple_awaitable);
                    REQUIRE_FALSE(oec);
                    emit_probe o;
                    observer.async_observe(now, o.token());
                    co_await sleep_for(100ms);
                    co_await emit_from_a_callback(ours, o);
                }
                co_await lead.async_resign(tuple_awaitable);
            }
            {
                INFO("async_next_holders, waiting for a change");
                auto [hec, seen] = co_await ours.async_holders("emit-wait", tuple_awaitable);
                REQUIRE_FALSE(hec);
                co_await cancel_pending(
                    ours,
                    [&](auto t) {
                        ours.async_next_holders("emit-wait", lock_options(), seen, 10s,
                                                std::move(t));
                    },
                    100ms);
            }
            co_await theirs.async_unlock(held, tuple_awaitable);
            co_await theirs.async_unlock(held_all, tuple_awaitable);
        },
        30s);
}

TEST_CASE_METHOD(masters_rig<3>,
                 "client: cancellation: operations whose masters do not answer (try_lock, extend, "
                 "check, unlock, holders) complete after emit() returns, never inside it",
                 "[live][client][cancel]")
{
    lock_options slow;
    slow.attempt_timeout = 5000ms;  // far beyond the signal: only the cancellation ends them
    slow.release_timeout = 200ms;
    slow.max_attempts = 1;
    run(
        [&]() -> asio::awaitable<void> {
            lock l = co_await acquired(c, "emit-held", slow);
            for (std::size_t i = 0; i < m.size(); ++i)
                m.pause(i);
            INFO("async_try_lock");
            co_await cancel_pending(
                c, [&](auto t) { c.async_try_lock("emit-try", slow, std::move(t)); }, 50ms);
            INFO("async_extend");
            co_await cancel_pending(
                c, [&](auto t) { c.async_extend(l, 3000ms, std::move(t)); }, 50ms);
            INFO("async_check");
            co_await cancel_pending(
                c, [&](auto t) { c.async_check(l, std::move(t)); }, 50ms);
            INFO("async_holders");
            co_await cancel_pending(
                c, [&](auto t) { c.async_holders("emit-held", slow, std::move(t)); }, 50ms);
            INFO("async_unlock");
            co_await cancel_pending(
                c, [&](auto t) { c.async_unlock(l, std::move(t)); }, 50ms);
            co_await expect_no_keys_after_resume(m);
        },
        30s);
}
