// Where code runs: a completion handler on its associated executor, the event handler on the
// client's strand (and allowed to call the client), a holder's loss signal on the executor the
// holder was given (docs/guarantees.md, rows 59, 112 and 130).
#include "client_fixture.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <vector>

using namespace redlock;
using namespace redlock::test;

TEST_CASE("client: handlers run on their executor, events on the client's strand, a loss on the "
          "holder's executor",
          "[live][client]")
{
    local_masters m({.count = 3});
    asio::io_context io;
    client* self = nullptr;
    std::vector<bool> events_on_strand;
    std::size_t states_seen = 0;
    auto cfg = config_for(m);
    cfg.on_event = [&](const event& e) {
        const auto ex = self->get_executor();  // target() points into it: keep it alive
        const auto* strand = ex.target<asio::strand<asio::io_context::executor_type>>();
        events_on_strand.push_back(strand != nullptr && strand->running_in_this_thread());
        if (e.kind == event_kind::acquired)
            states_seen = self->master_states().size();  // the handler may call the client
    };
    client c(io.get_executor(), cfg);
    self = &c;
    auto run_until = [&](const bool& flag) {
        const auto deadline = steady::now() + 10s;
        while (!flag && steady::now() < deadline)
            io.run_one_until(std::min(deadline, steady::now() + 10ms));
        return flag;
    };

    // A completion handler bound to a strand of the caller's runs there.
    auto mine = asio::make_strand(io);
    bool acquired = false, on_mine = false;
    lock l;
    auto o = lasting(1000ms);
    c.async_lock("exec:a", o, asio::bind_executor(mine, [&](error_code ec, lock got) {
                     on_mine = mine.running_in_this_thread();
                     CHECK_FALSE(ec);
                     l = std::move(got);
                     acquired = true;
                 }));
    REQUIRE(run_until(acquired));
    CHECK(on_mine);

    // The holder's loss signal is emitted on the executor the holder was given.
    auto work = asio::make_strand(io);
    lock_holder h(c, l, work);
    bool lost = false, loss_on_work = false;
    h.loss_slot().assign([&](asio::cancellation_type) {
        loss_on_work = work.running_in_this_thread();
        lost = true;
    });
    for (std::size_t i = 0; i < m.size(); ++i)
        m.command(i, {"SET", "exec:a", "someone-else", "PX", "60000"});
    REQUIRE(run_until(lost));
    CHECK(loss_on_work);

    REQUIRE_FALSE(events_on_strand.empty());
    CHECK(std::all_of(events_on_strand.begin(), events_on_strand.end(), [](bool b) { return b; }));
    CHECK(states_seen == m.size());
}
