// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
// A scripted Redis Cluster for the cluster router: scripted_run drives a cluster_router as
// cluster_master does (a small driver that carries out its decisions), over fake node
// connections that answer as a resharding cluster would, and fails the steps it is told to (a
// sending refused, or a reply lost with its connection and all it carried). See
// cluster_router_script_test.cpp.
#ifndef REDLOCK_TEST_UNIT_SCRIPTED_CLUSTER_HPP
#define REDLOCK_TEST_UNIT_SCRIPTED_CLUSTER_HPP

#include "routing/cluster_router.hpp"

#include "cluster_router_words.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace redlock_test::router {

// The cluster's truth, which the nodes answer by: slots 0-5460 on h:7001 but for slot 100,
// moved to h:7002; 5461-10922 on h:7002, slot 6000 migrating to h:7003; 10923-16383 on h:7003.
// The first CLUSTER SLOTS answered says slot 100 is still on h:7001 (stale); later ones not.
// From the second act on, slot 300 has moved to a new primary, h:7004, that no map named.
inline std::uint16_t owner_of(std::uint16_t slot, int act)
{
    if (slot == 100)
        return 7002;
    if (slot == 300 && act >= 2)
        return 7004;
    return slot <= 5460 ? 7001 : slot <= 10922 ? 7002 : 7003;
}
inline constexpr std::uint16_t migrating_slot = 6000;
inline constexpr std::uint16_t importing_port = 7003;
inline constexpr unsigned the_script = 3;

struct message
{
    enum class what : std::uint8_t
    {
        command,
        slots,
        wait
    } kind = what::command;
    std::size_t index = 0;  // a command's
    bool asking = false;
    bool by_sha = false;
};

struct fake_node
{
    std::uint16_t port = 0;
    std::deque<message> in_flight;
    bool has_script = false;    // the server's script cache (survives a client's reconnect)
    bool client_knows = false;  // the driver's script_cache for this connection
};

// A command as its owner sees it.
struct outcome
{
    std::uint16_t slot = 0;
    int endings = 0;  // answers or errors: must be exactly one
    error_code ec;
    std::string answer;
};

// One run of the script, in which the steps numbered in `failing` fail (none: the script as it
// is).
class scripted_run
{
public:
    explicit scripted_run(std::set<std::size_t> failing) : failing_(std::move(failing))
    {
        cluster_router::options o;
        o.name = "cluster h:7001";
        o.seeds = {{"h", 7001, {}}, {"h", 7002, {}}};
        o.replicas = 1;
        o.refresh_interval = 100ms;
        o.retry_min = 100ms;
        o.retry_max = 400ms;
        router_.emplace(std::move(o));
    }

    // Act 1: four commands before the map is known, one of each kind.
    void act1()
    {
        act_ = 1;
        run_map(router_->start(now_));
        submit(100, request_mode::plain);                // MOVED (stale map), then the refresh
        submit(12000, request_mode::replicated);         // held for its WAIT
        submit(migrating_slot, request_mode::plain);     // ASK
        submit(12500, request_mode::plain, the_script);  // EVALSHA, NOSCRIPT, EVAL
        run();
    }

    // Act 2, the map known: five commands routed at once, one to a slot that moved to a node no
    // map named yet.
    void act2() { commands(2); }

    // Last, with no failure: every slot is served again.
    void recover()
    {
        failing_.clear();
        commands(3);
    }

    void commands(int act)
    {
        act_ = act;
        first_new_ = outcomes_.size();
        for (const std::uint16_t slot :
             {std::uint16_t{100}, std::uint16_t{300}, std::uint16_t{12000}, migrating_slot,
              std::uint16_t{12500}})
            submit(slot, slot == 12000 ? request_mode::replicated : request_mode::plain,
                   slot == 12500 ? the_script : cluster_router::no_script);
        run();
    }

    std::size_t steps() const noexcept { return step_; }
    bool quiescent() const noexcept { return quiescent_; }
    const std::vector<outcome>& outcomes() const noexcept { return outcomes_; }
    std::size_t first_new() const noexcept { return first_new_; }
    std::size_t live_commands() const
    {
        std::size_t n = 0;
        for (std::size_t i = 0; i < router_->capacity(); ++i)
            n += router_->at(i).live ? 1 : 0;
        return n;
    }
    bool map_known() const { return router_->has_map(); }
    bool was_down() const noexcept { return was_down_; }

private:
    // One step of the conversation (a sending, a reply): true when it is the one that fails.
    bool step() { return failing_.count(step_++) != 0; }

    void sync_nodes()
    {
        while (nodes_.size() < router_->nodes().size())
        {
            fake_node n;
            n.port = router_->nodes()[nodes_.size()].port;
            // The driver believes h:7003 has the script, which it does not: NOSCRIPT.
            n.client_knows = n.port == 7003;
            nodes_.push_back(std::move(n));
        }
    }

    void end(std::size_t index, const error_code& ec, std::string answer)
    {
        auto& o = outcomes_[owner_.at(index)];
        ++o.endings;
        o.ec = ec;
        o.answer = std::move(answer);
        owner_.erase(index);
        router_->release(index);
    }

    void submit(std::uint16_t slot, request_mode mode, unsigned script = cluster_router::no_script)
    {
        const auto index = router_->take(slot, mode, script);
        owner_[index] = outcomes_.size();
        outcome o;
        o.slot = slot;
        outcomes_.push_back(std::move(o));
        const auto d = router_->route(index, now_);
        sync_nodes();
        run_map(d.map);
        const auto& s = d.command;
        if (s.what == kind::queued)
            return;
        if (s.what == kind::send)
        {
            const auto ec = transmit(index, *s.node, s.asking);
            if (!ec)
                return;
            run_map(router_->route_refused(now_));
            return end(index, ec, {});
        }
        end(index, s.ec, {});
    }

    error_code transmit(std::size_t index, std::size_t node, bool asking)
    {
        if (step())
            return error::not_connected;
        const auto& r = router_->at(index);
        auto& n = nodes_[node];
        const bool by_sha = r.script != cluster_router::no_script && !r.eval_only && n.client_knows;
        n.in_flight.push_back({message::what::command, index, asking, by_sha});
        if (router_->sent(index, node, asking, by_sha))
            posted_.push_back([this, node] { send_wait(node); });
        return {};
    }

    void send_wait(std::size_t node)
    {
        router_->wait_queued(node);
        if (step())
            return on_wait_reply(node, error::not_connected, {});
        nodes_[node].in_flight.push_back({message::what::wait});
    }

    void carry_out(const cluster_router::step& s, const std::string& reply)
    {
        switch (s.what)
        {
        case kind::send:
            if (const auto ec = transmit(s.index, *s.node, s.asking))
                end(s.index, ec, {});
            break;
        case kind::hold: held_[s.index] = reply; break;
        case kind::deliver: end(s.index, {}, reply); break;
        case kind::fail: end(s.index, s.ec, {}); break;
        case kind::none:
        case kind::queued:
        case kind::refuse: FAIL("a reply's step is never " << int(s.what)); break;
        }
    }

    void run_map(const cluster_router::map_step& m)
    {
        sync_nodes();
        if (m.what == map_kind::arm)
        {
            timer_ = m.at;
            return;
        }
        if (m.what != map_kind::fetch)
            return;
        const auto node = m.ask.front();  // every fake connection is ready
        if (step())
            return on_map_reply(node, error::not_connected, "");
        nodes_[node].in_flight.push_back({message::what::slots});
    }

    void on_map_reply(std::size_t node, const error_code& ec, const std::string& reply)
    {
        std::optional<wire> w;
        if (!ec)
            w.emplace(reply);
        auto d = router_->on_map_reply(node, ec, {},
                                       w ? w->nodes() : std::span<const resp::node_view>{}, now_);
        sync_nodes();
        was_down_ = was_down_ || d.news == change::down;
        for (const auto& s : d.commands)
            carry_out(s, {});
        run_map(d.next);
    }

    void on_wait_reply(std::size_t node, const error_code& ec, const std::string& reply)
    {
        std::optional<wire> w;
        if (!ec)
            w.emplace(reply);
        for (const auto& s : router_->on_wait_reply(node, ec, w ? w->head() : nullptr))
        {
            if (!router_->at(s.index).live || !router_->at(s.index).held)
                continue;
            if (s.what == kind::fail)
                end(s.index, s.ec, {});
            else
                end(s.index, {}, held_.at(s.index));
        }
    }

    void on_reply(std::size_t node, const message& m, const error_code& ec,
                  const std::string& reply)
    {
        if (m.kind == message::what::slots)
            return on_map_reply(node, ec, reply);
        if (m.kind == message::what::wait)
            return on_wait_reply(node, ec, reply);
        std::optional<wire> w;
        if (!ec)
            w.emplace(reply);
        const auto d = router_->on_reply(m.index, ec, w ? w->head() : nullptr, now_);
        sync_nodes();
        if (d.script != news::none)
            nodes_[node].client_knows = d.script == news::ran;
        run_map(d.map);
        carry_out(d.command, reply);
    }

    // What the node at `n` answers.
    std::string answer(fake_node& n, const message& m)
    {
        if (m.kind == message::what::slots)
        {
            if (slots_answered_++ == 0)
                return three_shards();
            if (act_ < 2)
                return slots({{0, 99, 7001},
                              {100, 100, 7002},
                              {101, 5460, 7001},
                              {5461, 10922, 7002},
                              {10923, 16383, 7003}});
            return slots({{0, 99, 7001},
                          {100, 100, 7002},
                          {101, 299, 7001},
                          {300, 300, 7004},
                          {301, 5460, 7001},
                          {5461, 10922, 7002},
                          {10923, 16383, 7003}});
        }
        if (m.kind == message::what::wait)
            return ":1\r\n";
        const auto& r = router_->at(m.index);
        const auto owner = owner_of(r.slot, act_);
        const bool importing = r.slot == migrating_slot && n.port == importing_port && m.asking;
        if (n.port != owner && !importing)
            return "-MOVED " + std::to_string(r.slot) + " h:" + std::to_string(owner) + "\r\n";
        if (r.slot == migrating_slot && !importing)
            return "-ASK " + std::to_string(r.slot) + " h:" + std::to_string(importing_port) +
                   "\r\n";
        if (r.script != cluster_router::no_script)
        {
            if (m.by_sha && !n.has_script)
                return "-NOSCRIPT No matching script. Please use EVAL.\r\n";
            n.has_script = true;
        }
        return "+OK\r\n";
    }

    // Runs until nothing is in flight, posted or armed; false if that never comes.
    void run()
    {
        quiescent_ = false;
        for (int turn = 0; turn < 10000; ++turn)
        {
            if (!posted_.empty())
            {
                auto task = std::move(posted_.front());
                posted_.pop_front();
                task();
                continue;
            }
            fake_node* next = nullptr;
            std::size_t at = 0;
            for (std::size_t k = 0; k < nodes_.size() && !next; ++k)
            {
                at = (next_node_ + k) % nodes_.size();
                if (!nodes_[at].in_flight.empty())
                    next = &nodes_[at];
            }
            if (next)
            {
                next_node_ = at + 1;
                now_ += 1ms;
                const auto m = next->in_flight.front();
                next->in_flight.pop_front();
                if (step())
                {
                    // The connection drops: everything in flight on it fails, in order; the
                    // driver's script knowledge goes with the connection.
                    auto lost = std::move(next->in_flight);
                    next->in_flight.clear();
                    next->client_knows = false;
                    lost.push_front(m);
                    for (const auto& l : lost)
                        on_reply(at, l, error::connection_lost, {});
                    continue;
                }
                const auto reply = answer(*next, m);
                on_reply(at, m, {}, reply);
                continue;
            }
            if (timer_)
            {
                now_ = std::max(now_, *timer_);
                timer_.reset();
                run_map(router_->on_timer(now_));
                continue;
            }
            quiescent_ = true;
            return;
        }
    }

    std::set<std::size_t> failing_;
    std::size_t step_ = 0;
    std::optional<cluster_router> router_;
    std::vector<fake_node> nodes_;
    std::deque<std::function<void()>> posted_;
    std::optional<time_point> timer_;
    time_point now_ = t0;
    std::size_t next_node_ = 0;
    int slots_answered_ = 0;
    int act_ = 1;
    std::map<std::size_t, std::size_t> owner_;  // router index -> outcomes_ index
    std::map<std::size_t, std::string> held_;
    std::vector<outcome> outcomes_;
    std::size_t first_new_ = 0;
    bool quiescent_ = false;
    bool was_down_ = false;
};

}  // namespace redlock_test::router

#endif
