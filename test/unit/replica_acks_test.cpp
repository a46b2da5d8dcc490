// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// The group commit of replica acknowledgements (cluster/replica_acks.hpp), stepped by hand.
#include "routing/replica_acks.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using redlock::detail::read_wait_reply;
using redlock::detail::replica_ack_queue;
namespace resp = redlock::resp;
using sent = replica_ack_queue::sent_command;

TEST_CASE("replica acks: one WAIT covers the commands sent before it was queued, in order",
          "[cluster][unit]")
{
    replica_ack_queue q;
    CHECK(q.wait_answered().empty());  // no WAIT in flight: nothing to settle

    // The first command schedules a WAIT; the next ones of the same turn share it.
    CHECK(q.sent({3, 1}));
    CHECK_FALSE(q.sent({5, 1}));
    CHECK_FALSE(q.sent({3, 2}));  // a command sent again (after a redirection) is covered again
    q.wait_queued();
    CHECK(q.waits_in_flight() == 1);

    // A command sent after the WAIT was queued needs the next one.
    CHECK(q.sent({7, 1}));
    q.wait_queued();
    CHECK(q.sent({8, 4}));  // not queued yet: no WAIT covers it
    CHECK(q.waits_in_flight() == 2);

    CHECK(q.wait_answered() == std::vector<sent>{{3, 1}, {5, 1}, {3, 2}});
    CHECK(q.wait_answered() == std::vector<sent>{{7, 1}});
    CHECK(q.waits_in_flight() == 0);
    CHECK(q.wait_answered().empty());
    q.wait_queued();
    CHECK(q.wait_answered() == std::vector<sent>{{8, 4}});
}

TEST_CASE("replica acks: a WAIT counts when enough replicas answered, and says why not otherwise",
          "[cluster][unit]")
{
    std::string detail;
    CHECK_FALSE(read_wait_reply({resp::type::integer, 0, 0, "1"}, 1, detail));
    CHECK_FALSE(read_wait_reply({resp::type::integer, 0, 0, "2"}, 1, detail));
    CHECK_FALSE(read_wait_reply({resp::type::integer, 0, 0, "0"}, 0, detail));

    CHECK(read_wait_reply({resp::type::integer, 0, 0, "1"}, 2, detail) ==
          redlock::error::not_replicated);
    CHECK(detail == "WAIT saw 1 of the 2 replica acknowledgement(s) required in time");

    CHECK(read_wait_reply(
              {resp::type::simple_error, 0, 0, "ERR WAIT cannot be used with replica instances"}, 1,
              detail) == redlock::error::not_replicated);
    CHECK(detail == "WAIT was refused: ERR WAIT cannot be used with replica instances");

    for (const auto& head : {resp::node_view{resp::type::bulk_string, 0, 0, "1"},
                             resp::node_view{resp::type::integer, 0, 0, "x"},
                             resp::node_view{resp::type::null, 0, 0, {}}})
    {
        CHECK(read_wait_reply(head, 1, detail) == redlock::error::not_replicated);
        CHECK(detail == "WAIT sent an unreadable reply");
    }
}
