// The connection's sans-io multiplexer (src/protocol/multiplexer.hpp): requests in, bytes out,
// bytes in, replies matched out — stepped by hand, no socket.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/multiplexer.hpp"

using redlock::error_code;
using redlock::detail::multiplexer;
using redlock::detail::reply_sink;

namespace {

/// Records what it is told; can act from inside on_reply (the re-entrancy cases).
struct recording_sink : reply_sink
{
    std::vector<std::pair<std::uint32_t, std::string>> got;  // (tag, first node's value or error)
    std::function<void(std::uint32_t)> on_each;

    void on_reply(std::uint32_t tag, const error_code& ec,
                  std::span<const redlock::resp::node_view> nodes) override
    {
        got.emplace_back(tag, ec ? "error:" + ec.message() : std::string(nodes[0].value));
        if (on_each)
            on_each(tag);
    }
};

void read_in(multiplexer& m, std::string_view bytes)
{
    auto space = m.read_space(bytes.size());
    REQUIRE(space.size() >= bytes.size());
    std::memcpy(space.data(), bytes.data(), bytes.size());
    m.commit_read(bytes.size());
}

std::uint64_t add(multiplexer& m, reply_sink* sink, std::uint32_t tag, std::string_view cmd)
{
    return m.add(sink, tag, [&](std::string& out) { out += cmd; });
}

void deliver_all(multiplexer& m)
{
    multiplexer::reply r;
    while (m.next_reply(r))
        r.sink->on_reply(r.tag, {}, r.nodes);
}

}  // namespace

TEST_CASE("multiplexer: requests coalesce into one write, replies match in FIFO order",
          "[multiplexer]")
{
    multiplexer m;
    recording_sink a, b;
    const auto s0 = add(m, &a, 7, "*1\r\n$4\r\nPING\r\n");
    const auto s1 = add(m, &b, 9, "*1\r\n$4\r\nPING\r\n");
    CHECK(m.pending() == 2);
    CHECK(m.prepare_write() == "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n");
    CHECK_FALSE(m.written(s0));
    // Added while the write is in flight: the next write.
    const auto s2 = add(m, &a, 8, "X");
    CHECK(m.has_output());
    m.commit_write();
    CHECK(m.written(s0));
    CHECK(m.written(s1));
    CHECK_FALSE(m.written(s2));
    CHECK(m.prepare_write() == "X");

    // Replies arrive split at any byte: nothing is matched until one is complete.
    read_in(m, "+PO");
    CHECK(m.consume() == multiplexer::consumed::ok);
    multiplexer::reply r;
    CHECK_FALSE(m.next_reply(r));
    read_in(m, "NG\r\n:1\r\n+third\r\n");
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    REQUIRE(a.got.size() == 2);
    CHECK(a.got[0] == std::pair<std::uint32_t, std::string>{7, "PONG"});
    CHECK(a.got[1] == std::pair<std::uint32_t, std::string>{8, "third"});
    REQUIRE(b.got.size() == 1);
    CHECK(b.got[0] == std::pair<std::uint32_t, std::string>{9, "1"});
    CHECK(m.pending() == 0);
    CHECK(m.replies() == 3);
}

TEST_CASE("multiplexer: push messages are set aside, not matched", "[multiplexer]")
{
    multiplexer m;
    recording_sink a;
    add(m, &a, 1, "GET k");
    read_in(m, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n$1\r\nv\r\n");
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    REQUIRE(a.got.size() == 1);
    CHECK(a.got[0].second == "v");
    REQUIRE(m.pushes().size() == 1);
    const auto& push = m.pushes()[0];
    REQUIRE(push.size() == 4);
    CHECK(push[1].value == "invalidate");
    CHECK(push[3].value == "k");
}

TEST_CASE(
    "multiplexer: a request abandoned during delivery is skipped, and the stream stays in step",
    "[multiplexer]")
{
    multiplexer m;
    recording_sink a, b;
    add(m, &a, 0, "A");
    const auto victim = add(m, &b, 1, "B");
    add(m, &b, 2, "C");
    (void)m.prepare_write();
    m.commit_write();
    // a's reply makes it abandon b's first request (a round stopped by a decision).
    a.on_each = [&](std::uint32_t) { m.abandon(victim); };
    read_in(m, "+a\r\n+b\r\n+c\r\n");
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    CHECK(a.got.size() == 1);
    REQUIRE(b.got.size() == 1);
    CHECK(b.got[0] == std::pair<std::uint32_t, std::string>{2, "c"});  // not "b"
    CHECK(m.pending() == 0);
}

TEST_CASE("multiplexer: awaited() counts the requests somebody waits for, not health PINGs or "
          "abandoned ones",
          "[multiplexer]")
{
    multiplexer m;
    recording_sink a;
    CHECK(m.awaited() == 0);
    add(m, &a, 0, "A");
    add(m, nullptr, 0, "PING");  // a health check: no sink
    const auto dropped = add(m, &a, 1, "B");
    add(m, &a, 2, "C");
    CHECK(m.pending() == 4);
    CHECK(m.awaited() == 3);
    m.abandon(dropped);
    CHECK(m.awaited() == 2);
    (void)m.prepare_write();
    m.commit_write();
    read_in(m, "+a\r\n");
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    CHECK(m.pending() == 3);
    CHECK(m.awaited() == 1);  // C
}

TEST_CASE("multiplexer: a sink that submits during delivery queues for the next write, consumption "
          "is over",
          "[multiplexer]")
{
    multiplexer m;
    recording_sink a;
    add(m, &a, 0, "A");
    add(m, &a, 1, "B");
    (void)m.prepare_write();
    m.commit_write();
    int submitted = 0;
    a.on_each = [&](std::uint32_t tag) {
        if (tag < 2)
        {
            add(m, &a, 10 + tag, "N");  // the release after a decision
            ++submitted;
        }
    };
    read_in(m, "+a\r\n+b\r\n");
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    CHECK(submitted == 2);
    CHECK(a.got.size() == 2);  // the new requests' replies have not come: nothing is mismatched
    CHECK(m.pending() == 2);
    CHECK(m.prepare_write() == "NN");
}

TEST_CASE("multiplexer: failing during delivery fails the rest instead, once each", "[multiplexer]")
{
    multiplexer m;
    recording_sink a, b;
    add(m, &a, 0, "A");
    add(m, &b, 1, "B");
    add(m, &b, 2, "C");
    (void)m.prepare_write();
    m.commit_write();
    const error_code lost = make_error_code(redlock::error::connection_lost);
    a.on_each = [&](std::uint32_t) {
        // The sink closes the connection: the driver fails what is pending.
        reply_sink* sink = nullptr;
        std::uint32_t tag = 0;
        while (m.next_failed(sink, tag))
            sink->on_reply(tag, lost, {});
        m.reset();
    };
    read_in(m, "+a\r\n+b\r\n");  // b's first reply came, its second not yet
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    REQUIRE(b.got.size() == 2);
    CHECK(b.got[0].second.rfind("error:", 0) == 0);
    CHECK(b.got[1].second.rfind("error:", 0) == 0);
    CHECK(m.pending() == 0);
    CHECK_FALSE(m.has_output());
}

TEST_CASE("multiplexer: protocol violations are reported, not matched", "[multiplexer]")
{
    SECTION("a reply with no request pending")
    {
        multiplexer m;
        read_in(m, "+OK\r\n");
        CHECK(m.consume() == multiplexer::consumed::unexpected_reply);
    }
    SECTION("bytes that are not RESP, after a good reply: the good one is still delivered")
    {
        multiplexer m;
        recording_sink a;
        add(m, &a, 0, "A");
        add(m, &a, 1, "B");
        read_in(m, "+fine\r\n?what\r\n");
        CHECK(m.consume() == multiplexer::consumed::invalid_reply);
        CHECK_FALSE(m.error().empty());
        deliver_all(m);
        REQUIRE(a.got.size() == 1);
        CHECK(a.got[0] == std::pair<std::uint32_t, std::string>{0, "fine"});
        CHECK(m.pending() == 1);  // the driver fails it with the protocol error
    }
}

TEST_CASE("multiplexer: unsent() is the rest of the write in flight, then the queue",
          "[multiplexer]")
{
    multiplexer m;
    recording_sink a;
    add(m, &a, 0, "abcdef");
    (void)m.prepare_write();
    m.note_written(4);
    add(m, &a, 1, "XY");
    CHECK(m.unsent() == "efXY");
    m.unanswered() += "Z";  // a request sent while closing
    CHECK(m.unsent() == "efXYZ");
}

TEST_CASE("multiplexer: the handshake's replies are parsed before any request is matched",
          "[multiplexer]")
{
    multiplexer m;
    recording_sink a;
    add(m, &a, 0, "queued while connecting");
    read_in(m, "+OK\r\n-ERR no\r\n+mine\r\n");
    std::span<const redlock::resp::node_view> nodes;
    REQUIRE(m.parse_unmatched(nodes) == redlock::resp::parse_status::done);
    CHECK(nodes[0].value == "OK");
    REQUIRE(m.parse_unmatched(nodes) == redlock::resp::parse_status::done);
    CHECK(redlock::resp::is_error(nodes[0].data_type));
    CHECK(m.consume() == multiplexer::consumed::ok);
    deliver_all(m);
    REQUIRE(a.got.size() == 1);
    CHECK(a.got[0].second == "mine");
}
