// The torture test's fault schedule (see faults.hpp).
#include "faults.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace redlock::torture {

namespace {

using namespace std::chrono_literals;
using direction = test::fault_proxy::direction;
using stall_mode = test::fault_proxy::stall_mode;

}  // namespace

const char* to_string(fault_kind k) noexcept
{
    switch (k)
    {
    case fault_kind::pause: return "pause";
    case fault_kind::kill: return "kill+delayed-restart";
    case fault_kind::stall_buffer: return "stall-buffer";
    case fault_kind::stall_drop: return "stall-drop";
    case fault_kind::latency: return "latency";
    case fault_kind::refuse: return "refuse";
    case fault_kind::cut: return "cut";
    case fault_kind::unsafe_restart: return "UNSAFE-restart";
    case fault_kind::count_: break;
    }
    return "?";
}

fault_schedule::fault_schedule(test::local_masters& masters,
                               std::vector<std::unique_ptr<test::fault_proxy>>& proxies, options o)
    : masters_(masters),
      proxies_(proxies),
      o_(o),
      rng_(o.seed),
      state_(masters.size()),
      origin_(clock::now())
{
    next_ = origin_ + 500ms;  // let the clients connect first
}

std::size_t fault_schedule::total_injected() const noexcept
{
    std::size_t n = 0;
    for (auto c : injected_)
        n += c;
    return n;
}

std::size_t fault_schedule::impaired_now() const noexcept
{
    return static_cast<std::size_t>(
        std::count_if(state_.begin(), state_.end(), [](const auto& s) { return s.impaired; }));
}

void fault_schedule::log(const std::string& what) const
{
    if (!o_.verbose)
        return;
    const double t = std::chrono::duration<double>(clock::now() - origin_).count();
    // The monotonic time too, to match the ledgers and REDLOCK_TORTURE_DEBUG's lines.
    std::printf("  [%8.3f s | mono %.3f] %s\n", t,
                std::chrono::duration<double>(clock::now().time_since_epoch()).count(),
                what.c_str());
    std::fflush(stdout);
}

void fault_schedule::step(clock::time_point now)
{
    for (std::size_t i = 0; i < state_.size(); ++i)
        if (state_[i].impaired && now >= state_[i].until)
            lift(i, now);
    if (now >= next_)
    {
        inject(now);
        next_ = now + std::chrono::milliseconds(uniform(100, 500));
    }
    max_seen_ = std::max(max_seen_, impaired_now());
}

void fault_schedule::inject(clock::time_point now)
{
    const auto n = state_.size();
    auto ms = [](int v) { return std::chrono::milliseconds(v); };
    auto name = [](std::size_t i) { return "master " + std::to_string(i); };

    if (o_.unsafe_restarts && uniform(0, 99) < 15)
    {
        // Against the spec: a majority forgets its keys while locks are held.
        const std::size_t majority = n / 2 + 1;
        const std::size_t first = static_cast<std::size_t>(uniform(0, static_cast<int>(n) - 1));
        bool clear = true;
        for (std::size_t k = 0; k < majority; ++k)
            clear = clear && !state_[(first + k) % n].impaired;
        if (clear)
        {
            for (std::size_t k = 0; k < majority; ++k)
                masters_.kill((first + k) % n);
            for (std::size_t k = 0; k < majority; ++k)
                masters_.restart((first + k) % n);
            ++injected_[static_cast<std::size_t>(fault_kind::unsafe_restart)];
            log("UNSAFE: masters " + std::to_string(first) + ".." +
                std::to_string((first + majority - 1) % n) + " killed and restarted at once");
            return;
        }
    }

    // A healthy master to impair (or to cut).
    std::vector<std::size_t> healthy;
    for (std::size_t i = 0; i < n; ++i)
        if (!state_[i].impaired)
            healthy.push_back(i);
    if (healthy.empty())
        return;
    const std::size_t i =
        healthy[static_cast<std::size_t>(uniform(0, static_cast<int>(healthy.size()) - 1))];
    auto& proxy = *proxies_[i];
    auto& s = state_[i];

    const int roll = uniform(0, 99);
    if (impaired_now() >= o_.max_impaired || roll < 15)
    {
        if (impaired_now() >= o_.max_impaired && uniform(0, 1) == 0)
            return;  // leave the majority alone for a moment
        proxy.drop_connections();
        ++injected_[static_cast<std::size_t>(fault_kind::cut)];
        log("cut: " + name(i) + " connections reset");
        return;
    }

    const bool someone_killed = std::any_of(state_.begin(), state_.end(), [](const auto& m) {
        return m.impaired && m.kind == fault_kind::kill;
    });
    fault_kind kind;
    if (roll < 35)
        kind = fault_kind::pause;
    else if (roll < 45)
        kind = someone_killed ? fault_kind::pause : fault_kind::kill;
    else if (roll < 60)
        kind = fault_kind::stall_buffer;
    else if (roll < 70)
        kind = fault_kind::stall_drop;
    else if (roll < 88)
        kind = fault_kind::latency;
    else
        kind = fault_kind::refuse;

    s.impaired = true;
    s.kind = kind;
    std::string what;
    switch (kind)
    {
    case fault_kind::pause:
    {
        // Past 3 s the client's health check declares the connection dead and reconnects to a
        // master that still does not answer: both paths get exercised.
        const int d = uniform(200, 4000);
        s.until = now + ms(d);
        masters_.pause(i);
        what = "pause " + name(i) + " for " + std::to_string(d) + " ms";
        break;
    }
    case fault_kind::kill:
    {
        // The spec's delayed restart: the master comes back (empty) only once every key it
        // held has expired, i.e. after the largest TTL, plus a margin.
        const int d = static_cast<int>(o_.max_ttl.count()) + uniform(500, 1500);
        s.until = now + ms(d);
        s.killed_at = now;
        masters_.kill(i);
        what = "kill " + name(i) + ", restart in " + std::to_string(d) + " ms";
        break;
    }
    case fault_kind::stall_buffer:
    {
        const int d = uniform(200, 3000);
        const int which = uniform(1, 3);
        s.until = now + ms(d);
        proxy.stall(stall_mode::buffer, static_cast<direction>(which));
        what = "stall (buffer, " +
               std::string(which == 1   ? "requests"
                           : which == 2 ? "replies"
                                        : "both ways") +
               ") " + name(i) + " for " + std::to_string(d) + " ms";
        break;
    }
    case fault_kind::stall_drop:
    {
        const int d = uniform(200, 2000);
        s.until = now + ms(d);
        proxy.stall(stall_mode::drop, direction::both);
        what = "stall (drop, then cut) " + name(i) + " for " + std::to_string(d) + " ms";
        break;
    }
    case fault_kind::latency:
    {
        const int d = uniform(300, 3000);
        const int up = uniform(5, 150);
        const int down = uniform(0, 100);
        s.until = now + ms(d);
        proxy.set_latency(ms(up), ms(down));
        what = "latency " + std::to_string(up) + "+" + std::to_string(down) + " ms on " + name(i) +
               " for " + std::to_string(d) + " ms";
        break;
    }
    case fault_kind::refuse:
    {
        const int d = uniform(300, 2000);
        s.until = now + ms(d);
        proxy.refuse_connections(true);
        proxy.drop_connections();
        what = "refuse connections to " + name(i) + " for " + std::to_string(d) + " ms";
        break;
    }
    default: break;
    }
    ++injected_[static_cast<std::size_t>(kind)];
    log(what);
}

void fault_schedule::lift(std::size_t i, clock::time_point now)
{
    auto& s = state_[i];
    switch (s.kind)
    {
    case fault_kind::pause: masters_.resume(i); break;
    case fault_kind::kill:
    {
        masters_.restart(i);
        const auto down = std::chrono::duration_cast<std::chrono::milliseconds>(now - s.killed_at);
        if (min_downtime_.count() < 0 || down < min_downtime_)
            min_downtime_ = down;
        break;
    }
    case fault_kind::stall_buffer:
    case fault_kind::stall_drop: proxies_[i]->unstall(); break;
    case fault_kind::latency: proxies_[i]->set_latency(std::chrono::milliseconds(0)); break;
    case fault_kind::refuse: proxies_[i]->refuse_connections(false); break;
    default: break;
    }
    s.impaired = false;
    log(std::string("lift ") + to_string(s.kind) + " on master " + std::to_string(i));
}

void fault_schedule::heal_all()
{
    for (std::size_t i = 0; i < state_.size(); ++i)
    {
        if (!state_[i].impaired)
            continue;
        if (state_[i].kind == fault_kind::kill)
            std::this_thread::sleep_until(state_[i].until);  // the delayed restart, kept
        lift(i, clock::now());
    }
    for (auto& p : proxies_)
        p->heal();
}

}  // namespace redlock::torture
