// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// A master whose every answer the test writes: the driver-level tier's transport. It records
// each command a round submits (its bytes, tag, key, mode), refuses submissions on demand,
// honours abandon(), and delivers replies, errors and silence in whatever order the test
// scripts. No socket, no clock: a round over these is stepped by hand (round_test.cpp).
#ifndef REDLOCK_TEST_SUPPORT_SCRIPTED_MASTER_HPP
#define REDLOCK_TEST_SUPPORT_SCRIPTED_MASTER_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/resp.hpp>

#include "routing/master_link.hpp"

namespace redlock::test {

class scripted_master final : public detail::master_link
{
public:
    struct request
    {
        detail::reply_sink* sink = nullptr;
        std::uint32_t tag = 0;
        std::string key;
        std::string bytes;  // the command as it would be written (both forms for a script)
        std::uint64_t seq = 0;
        detail::request_mode mode = detail::request_mode::plain;
        bool lazy = false;
        bool script = false;  // through submit_script (a cluster master's)
        bool abandoned = false;
        bool answered = false;
    };

    explicit scripted_master(bool cluster = false) : master_link(cluster) {}

    /// The requests submitted so far, in order.
    std::vector<request> sent;
    /// While set, submissions fail with it (not_connected, connection_closed, ...).
    error_code refuse;
    /// Asked before each submission is recorded (when set), with the request as it would be:
    /// an error refuses that one submission.
    std::function<error_code(const request&)> gate;
    /// Told after each submission is recorded, with its index in `sent`.
    std::function<void(std::size_t)> on_sent;
    /// Whether written() says a request has left the client.
    bool all_written = false;
    std::uint64_t gen = 1;
    std::string detail = "scripted master";
    time_point read_at{};

    /// Delivers `nodes` as the answer to request `k`; false (and nothing delivered) when the
    /// round abandoned it or it was answered already.
    bool answer(std::size_t k, std::span<const resp::node_view> nodes)
    {
        auto& r = sent.at(k);
        if (r.abandoned || r.answered || !r.sink)
            return false;
        r.answered = true;
        r.sink->on_reply(r.tag, {}, nodes);
        return true;
    }
    bool answer(std::size_t k, resp::node_view node) { return answer(k, std::span(&node, 1)); }
    /// Fails request `k` as a dropped connection would.
    bool fail(std::size_t k, error_code ec)
    {
        auto& r = sent.at(k);
        if (r.abandoned || r.answered || !r.sink)
            return false;
        r.answered = true;
        r.sink->on_reply(r.tag, ec, {});
        return true;
    }
    /// The requests still awaited (neither abandoned nor answered, with a sink).
    std::size_t awaited() const
    {
        std::size_t n = 0;
        for (const auto& r : sent)
            n += !r.abandoned && !r.answered && r.sink ? 1 : 0;
        return n;
    }

    error_code submit(detail::reply_sink* sink, std::uint32_t tag, std::string_view key,
                      encoder encode, detail::request_ticket& ticket, detail::request_mode mode,
                      bool lazy) override
    {
        if (refuse)
            return refuse;
        request r{sink, tag, std::string(key), {}, ++seq_, mode, lazy};
        encode(r.bytes);
        return record(std::move(r), ticket);
    }
    error_code submit_script(detail::reply_sink* sink, std::uint32_t tag, std::string_view key,
                             unsigned, script_encoder encode, detail::request_ticket& ticket,
                             detail::request_mode mode) override
    {
        if (refuse)
            return refuse;
        request r{sink, tag, std::string(key), {}, ++seq_, mode, false, true};
        encode(r.bytes, false);
        encode(r.bytes, true);
        return record(std::move(r), ticket);
    }
    void abandon(detail::request_ticket ticket) noexcept override
    {
        for (auto& r : sent)
            if (r.seq == ticket.seq)
                r.abandoned = true;
    }
    bool written(detail::request_ticket) const noexcept override { return all_written; }
    std::uint64_t generation() const noexcept override { return gen; }
    bool tracks_keys() const noexcept override { return true; }
    time_point read_time() const noexcept override { return read_at; }
    const std::string& last_error_detail() const noexcept override { return detail; }
    master_info info() const override { return {}; }
    void start() override {}
    void close() override {}
    void wait_settled(std::function<void(error_code)> fn) override { fn({}); }
    void abandon_waiters() noexcept override {}
    void on_availability(std::function<void(bool, error_code)>) override {}
    void on_identity(std::function<void(std::size_t, const detail::server_identity&)>) override {}
    void on_deployment_warnings(std::function<void(detail::deployment_warnings)>) override {}
    void on_push(std::function<void(const resp::reply&)>) override {}
    void on_tracking_lost(std::function<void()>) override {}
    void append_connections(std::vector<std::shared_ptr<detail::node_connection>>&) const override
    {}

private:
    error_code record(request r, detail::request_ticket& ticket)
    {
        if (gate)
            if (const auto ec = gate(r))
                return ec;
        ticket.seq = r.seq;
        sent.push_back(std::move(r));
        if (on_sent)
            on_sent(sent.size() - 1);
        return {};
    }

    std::uint64_t seq_ = 0;
};

}  // namespace redlock::test

#endif
