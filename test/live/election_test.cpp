// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// Leader election (redlock::election) against real masters, in one process: one leader among
// candidates, its term and identity read back, observers told of each change, a resignation
// handing the lead to a waiting candidate, terms that grow with every leader.
#include <redlock/election.hpp>

#include "client_fixture.hpp"
#include "io_helpers.hpp"

using namespace redlock;
using namespace redlock::test;

namespace {

election_options quick_election()
{
    election_options o;
    o.ttl = 2000ms;
    o.observe_interval = 500ms;
    return o;
}

}  // namespace

TEST_CASE_METHOD(rivals_rig<5>,
                 "election: one leader among two clients' candidates, read back with its "
                 "identity and term, and a resignation hands the lead over",
                 "[live][election]")
{
    run(
        [&]() -> asio::awaitable<void> {
            election a(ours, "lead", "node-a:1", quick_election());
            election b(theirs, "lead", "node-b:2", quick_election());
            auto lead_a = co_await a.async_campaign(asio::use_awaitable);
            CHECK(lead_a.leading());
            CHECK(lead_a.identity() == "node-a:1");
            CHECK(lead_a.term() > 0);

            auto [lec, who] = co_await b.async_leader(tuple_awaitable);
            REQUIRE_FALSE(lec);
            REQUIRE(who.has_value());
            CHECK(who->identity == "node-a:1");
            CHECK(who->term == lead_a.term());
            CHECK(who->valid_for > 0ms);
            CHECK(who->valid_for <= 2000ms);

            // b campaigns while a leads; a resigns; b leads with a greater term.
            std::optional<leadership> lead_b;
            bool b_done = false;
            b.async_campaign([&](error_code ec, leadership l) {
                CHECK_FALSE(ec);
                lead_b.emplace(std::move(l));
                b_done = true;
            });
            co_await sleep_for(50ms);
            CHECK_FALSE(b_done);
            co_await lead_a.async_resign(asio::use_awaitable);
            CHECK_FALSE(lead_a.leading());
            for (int i = 0; i < 200 && !b_done; ++i)
                co_await sleep_for(5ms);
            REQUIRE(b_done);
            REQUIRE(lead_b.has_value());
            CHECK(lead_b->identity() == "node-b:2");
            CHECK(lead_b->term() > lead_a.term());
            auto [lec2, who2] = co_await a.async_leader(tuple_awaitable);
            REQUIRE_FALSE(lec2);
            REQUIRE(who2.has_value());
            CHECK(who2->identity == "node-b:2");
            CHECK(who2->term == lead_b->term());
            co_await lead_b->async_resign(asio::use_awaitable);
            auto [lec3, who3] = co_await a.async_leader(tuple_awaitable);
            CHECK_FALSE(lec3);
            CHECK_FALSE(who3.has_value());
        },
        30s);
}

TEST_CASE_METHOD(rivals_rig<5>,
                 "election: an observer is told of every leader, in another client and in the "
                 "leaders' own",
                 "[live][election]")
{
    run(
        [&]() -> asio::awaitable<void> {
            election watcher_there(theirs, "obs", "watcher", quick_election());
            election watcher_here(ours, "obs", "watcher-2", quick_election());
            election cand(ours, "obs", "cand-1", quick_election());
            std::vector<std::optional<leader_info>> there, here;
            bool stop = false;
            auto follow =
                [&](election& e,
                    std::vector<std::optional<leader_info>>& out) -> asio::awaitable<void> {
                std::optional<leader_info> seen;
                auto first = co_await e.async_leader(asio::use_awaitable);
                out.push_back(first);
                seen = first;
                while (!stop)
                {
                    auto [ec, next] = co_await e.async_observe(seen, tuple_awaitable);
                    if (ec)
                        break;
                    out.push_back(next);
                    seen = next;
                }
            };
            asio::cancellation_signal stop_there, stop_here;
            asio::co_spawn(c.get_executor(), follow(watcher_there, there),
                           asio::bind_cancellation_slot(stop_there.slot(), asio::detached));
            asio::co_spawn(c.get_executor(), follow(watcher_here, here),
                           asio::bind_cancellation_slot(stop_here.slot(), asio::detached));
            co_await sleep_for(100ms);
            std::vector<std::uint64_t> terms;
            for (int i = 0; i < 3; ++i)
            {
                auto l = co_await cand.async_campaign(asio::use_awaitable);
                terms.push_back(l.term());
                co_await sleep_for(100ms);
                co_await l.async_resign(asio::use_awaitable);
                co_await sleep_for(100ms);
            }
            stop = true;
            stop_there.emit(asio::cancellation_type::terminal);
            stop_here.emit(asio::cancellation_type::terminal);
            co_await sleep_for(20ms);
            for (auto* seen : {&there, &here})
            {
                // none, then (leader, none) three times.
                std::vector<std::uint64_t> leaders;
                std::size_t nones = 0;
                for (const auto& l : *seen)
                    if (l)
                        leaders.push_back(l->term);
                    else
                        ++nones;
                INFO("observer " << (seen == &there ? "in another client" : "in the leaders'"));
                CHECK(leaders == terms);
                CHECK(nones == 4);
            }
        },
        30s);
}

TEST_CASE_METHOD(rivals_rig<5>,
                 "election: a cancelled campaign ends with operation_aborted and leaves no key, "
                 "a cancelled observer ends at once, and a bad identity is invalid_option",
                 "[live][election]")
{
    run(
        [&]() -> asio::awaitable<void> {
            election a(ours, "cancel-me", "node-a:1", quick_election());
            election b(theirs, "cancel-me", "node-b:2", quick_election());
            auto lead = co_await a.async_campaign(asio::use_awaitable);

            // b waits for a's lead; cancelled, it gives up and takes nothing.
            asio::cancellation_signal stop_campaign;
            std::optional<error_code> campaign_ended;
            b.async_campaign(asio::bind_cancellation_slot(stop_campaign.slot(),
                                                          [&](error_code ec, leadership l) {
                                                              campaign_ended = ec;
                                                              CHECK_FALSE(l.leading());
                                                          }));
            co_await sleep_for(100ms);
            CHECK_FALSE(campaign_ended.has_value());
            stop_campaign.emit(asio::cancellation_type::terminal);
            CHECK(co_await eventually([&] { return campaign_ended.has_value(); }, 5s));
            CHECK(campaign_ended == error_code(asio::error::operation_aborted));

            // An observer waiting for a change is cancelled at once.
            auto [lec, who] = co_await b.async_leader(tuple_awaitable);
            REQUIRE_FALSE(lec);
            asio::cancellation_signal stop_observe;
            std::optional<error_code> observe_ended;
            b.async_observe(
                who, asio::bind_cancellation_slot(stop_observe.slot(),
                                                  [&](error_code ec, std::optional<leader_info> l) {
                                                      observe_ended = ec;
                                                      CHECK_FALSE(l.has_value());
                                                  }));
            co_await sleep_for(50ms);
            CHECK_FALSE(observe_ended.has_value());
            stop_observe.emit(asio::cancellation_type::terminal);
            CHECK(co_await eventually([&] { return observe_ended.has_value(); }, 5s));
            CHECK(observe_ended == error_code(asio::error::operation_aborted));

            co_await lead.async_resign(asio::use_awaitable);
            CHECK(co_await eventually([&] { return lock_keys(m) == 0; }, 5s));

            election bad(ours, "cancel-me", "two words\n", quick_election());
            auto [bec, none] = co_await bad.async_campaign(asio::as_tuple(asio::use_awaitable));
            CHECK(bec == error::invalid_option);
            CHECK_FALSE(none.leading());
        },
        30s);
}

TEST_CASE_METHOD(rivals_rig<5>,
                 "election: an observer that loses the majority reports no leader once the "
                 "leader's validity has ended, and the leader loses the lead",
                 "[live][election]")
{
    run(
        [&]() -> asio::awaitable<void> {
            election_options eo = quick_election();
            eo.ttl = 1000ms;
            election a(ours, "cut-off", "node-a:1", eo);
            election watcher(theirs, "cut-off", "watcher", eo);
            auto lead = co_await a.async_campaign(asio::use_awaitable);
            auto [lec, who] = co_await watcher.async_leader(tuple_awaitable);
            REQUIRE_FALSE(lec);
            REQUIRE(who.has_value());
            CHECK(who->term == lead.term());
            for (std::size_t i = 0; i < 3; ++i)
                m.pause(i);
            auto [oec, after] = co_await watcher.async_observe(who, tuple_awaitable);
            const auto told_at = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < 3; ++i)
                m.resume(i);
            CHECK_FALSE(oec);
            CHECK_FALSE(after.has_value());
            // Not before the validity it was told of had ended.
            CHECK(told_at >= who->valid_until);
            CHECK(co_await eventually([&] { return !lead.leading(); }, 5s));
        },
        30s);
}
