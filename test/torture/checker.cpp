// The mutual-exclusion checker (see checker.hpp).
#include "checker.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string_view>

namespace redlock::torture {

namespace {

constexpr nanos ns_per_ms = 1'000'000;
// valid_until is computed in microseconds of drift, then stored in nanoseconds.
constexpr nanos tolerance = 1'000;

struct window
{
    nanos from;
    nanos to;
    const record* r;
};

std::string_view token_of(const record& r) { return {r.token, sizeof r.token}; }

/// Whether holds `a` and `b` (of one resource, other tokens) may not overlap: every pair but
/// two readers, and two permits (whose number the permit sweep bounds instead).
bool excludes(const record& a, const record& b)
{
    if (a.lock_kind == held_kind::reader && b.lock_kind == held_kind::reader)
        return false;
    if (a.lock_kind == held_kind::permit && b.lock_kind == held_kind::permit &&
        a.permits == b.permits)
        return false;
    return true;
}

std::string ms_text(nanos t, nanos origin)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(t - origin) / 1e6);
    return buf;
}

std::string describe(const record& r, nanos origin)
{
    std::string s = std::string(to_string(r.lock_kind)) + " p" + std::to_string(r.process) + "/w" +
                    std::to_string(r.worker) + " token " + std::string(token_of(r).substr(0, 8)) +
                    "… ttl " + std::to_string(r.ttl_ms) + " ms: start " +
                    ms_text(r.t_start, origin) + ", acquired " + ms_text(r.t_acquired, origin) +
                    ", valid until " + ms_text(r.valid_until, origin);
    if (r.flags & flag_extend_tried)
        s += std::string(", extend ") + ((r.flags & flag_extend_ok) ? "ok" : "failed") + " at " +
             ms_text(r.t_extend, origin) + ".." + ms_text(r.t_extend_done, origin) +
             ((r.flags & flag_extend_ok) ? " valid until " + ms_text(r.valid_until_ext, origin)
                                         : std::string());
    s += ", release " + ms_text(r.t_release, origin);
    return s;
}

/// The windows in which `r` held its lock exclusively, by the rules of checker.hpp.
void windows_of(const record& r, bool keep_failed_extend, std::vector<window>& out)
{
    auto add = [&](nanos from, nanos to) {
        if (from < to)
            out.push_back({from, to, &r});
    };
    const nanos v1 = r.valid_until;
    if (!(r.flags & flag_extend_tried))
    {
        add(r.t_acquired, std::min(v1, r.t_release));
        return;
    }
    if (!(r.flags & flag_extend_ok))
    {
        add(r.t_acquired, std::min(v1, keep_failed_extend ? r.t_extend_done : r.t_extend));
        return;
    }
    const nanos end2 = std::min(r.valid_until_ext, r.t_release);
    if (r.t_extend < v1)
    {
        add(r.t_acquired, end2);
    }
    else
    {
        add(r.t_acquired, v1);
        add(r.t_extend_done, end2);
    }
}

/// Sorted windows per resource.
std::map<std::uint32_t, std::vector<window>> by_resource(const std::vector<const record*>& holds,
                                                         bool keep_failed_extend)
{
    std::map<std::uint32_t, std::vector<window>> out;
    for (const record* r : holds)
        windows_of(*r, keep_failed_extend, out[r->resource]);
    for (auto& [res, ws] : out)
        std::sort(ws.begin(), ws.end(),
                  [](const window& a, const window& b) { return a.from < b.from; });
    return out;
}

using kind_counts = std::array<std::size_t, static_cast<std::size_t>(held_kind::count_)>;

std::size_t count_overlaps(const std::map<std::uint32_t, std::vector<window>>& windows,
                           nanos origin, std::vector<std::string>* details, nanos* min_gap,
                           kind_counts* by_kind = nullptr)
{
    std::size_t n = 0;
    for (const auto& [res, ws] : windows)
    {
        nanos max_end = 0;
        const record* max_owner = nullptr;
        for (std::size_t i = 0; i < ws.size(); ++i)
        {
            for (std::size_t j = i + 1; j < ws.size() && ws[j].from < ws[i].to; ++j)
            {
                if (token_of(*ws[i].r) == token_of(*ws[j].r) || !excludes(*ws[i].r, *ws[j].r))
                    continue;
                ++n;
                if (by_kind)
                {
                    const auto a = ws[i].r->lock_kind;
                    const auto b = ws[j].r->lock_kind;
                    ++(*by_kind)[static_cast<std::size_t>(a)];
                    if (b != a)
                        ++(*by_kind)[static_cast<std::size_t>(b)];
                }
                if (details && details->size() < 20)
                    details->push_back("OVERLAP on resource " + std::to_string(res) + " for " +
                                       ms_text(std::min(ws[i].to, ws[j].to) - ws[j].from, 0) +
                                       " ms:\n      " + describe(*ws[i].r, origin) + "\n      " +
                                       describe(*ws[j].r, origin));
            }
            if (min_gap && max_owner && token_of(*max_owner) != token_of(*ws[i].r) &&
                ws[i].from >= max_end)
            {
                const nanos gap = ws[i].from - max_end;
                if (*min_gap < 0 || gap < *min_gap)
                    *min_gap = gap;
            }
            if (!max_owner || ws[i].to > max_end)
            {
                max_end = ws[i].to;
                max_owner = ws[i].r;
            }
        }
    }
    return n;
}

/// Holders of one semaphore beyond its permits: a sweep over each resource's permit windows,
/// one count for each window that starts while `permits` others are open.
std::size_t count_excess_permits(const std::map<std::uint32_t, std::vector<window>>& windows,
                                 nanos origin, std::vector<std::string>* details)
{
    std::size_t n = 0;
    for (const auto& [res, ws] : windows)
    {
        std::vector<const window*> open;  // permit windows not ended yet
        for (const auto& w : ws)          // sorted by start
        {
            if (w.r->lock_kind != held_kind::permit)
                continue;
            std::erase_if(open, [&](const window* o) { return o->to <= w.from; });
            std::size_t others = 0;
            for (const window* o : open)
                others += token_of(*o->r) != token_of(*w.r) ? 1 : 0;
            if (others >= w.r->permits)
            {
                ++n;
                if (details && details->size() < 20)
                {
                    std::string d = "PERMITS: " + std::to_string(others + 1) + " holders of " +
                                    std::to_string(w.r->permits) + " permits of resource " +
                                    std::to_string(res) + ":";
                    for (const window* o : open)
                        d += "\n      " + describe(*o->r, origin);
                    d += "\n      " + describe(*w.r, origin);
                    details->push_back(d);
                }
            }
            open.push_back(&w);
        }
    }
    return n;
}

}  // namespace

nanos drift_ns(std::int32_t ttl_ms, double drift_factor)
{
    // As the library: ttl × factor rounded up to microseconds, plus 2 ms.
    const double us = static_cast<double>(ttl_ms) * 1000.0 * drift_factor;
    auto whole = static_cast<nanos>(us - us * 1e-12);
    if (static_cast<double>(whole) < us - us * 1e-12)
        ++whole;
    return (whole + 2000) * 1000;
}

namespace {

/// The fencing rules of check_result over the fenced holds of every resource.
void check_fencing(const std::vector<const record*>& holds, nanos origin, check_result& res)
{
    std::map<std::uint32_t, std::vector<const record*>> by_start;
    for (const record* r : holds)
        if (r->fence > 0)
            by_start[r->resource].push_back(r);
    for (auto& [resource, rs] : by_start)
    {
        res.fenced_holds += rs.size();
        auto by_acquired = rs;
        std::sort(rs.begin(), rs.end(),
                  [](const record* a, const record* b) { return a->t_start < b->t_start; });
        std::sort(by_acquired.begin(), by_acquired.end(),
                  [](const record* a, const record* b) { return a->t_acquired < b->t_acquired; });
        // Sweep B in order of start; `highest` is the largest token of the holds complete by then.
        std::size_t done = 0;
        const record* highest = nullptr;
        for (const record* b : rs)
        {
            for (; done < by_acquired.size() && by_acquired[done]->t_acquired < b->t_start; ++done)
                if (!highest || by_acquired[done]->fence > highest->fence)
                    highest = by_acquired[done];
            if (highest && b->fence <= highest->fence)
            {
                ++res.fencing_order_errors;
                if (res.details.size() < 20)
                    res.details.push_back("FENCING: token " + std::to_string(b->fence) +
                                          " not above token " + std::to_string(highest->fence) +
                                          " of a holder complete before it started:\n      " +
                                          describe(*highest, origin) + "\n      " +
                                          describe(*b, origin));
            }
        }
        std::sort(by_acquired.begin(), by_acquired.end(),
                  [](const record* a, const record* b) { return a->fence < b->fence; });
        for (std::size_t k = 1; k < by_acquired.size(); ++k)
            if (by_acquired[k]->fence == by_acquired[k - 1]->fence &&
                token_of(*by_acquired[k]) != token_of(*by_acquired[k - 1]))
                ++res.fencing_repeats;
    }
}

}  // namespace

check_result check(const std::vector<record>& records, double drift_factor)
{
    check_result res;
    std::vector<const record*> holds;
    nanos origin = 0;
    for (const auto& r : records)
    {
        if (r.kind == record_kind::failure)
            ++res.failures;
        if (r.kind != record_kind::hold)
            continue;
        holds.push_back(&r);
        if (!(r.flags & flag_further_resource) && r.lock_kind < held_kind::count_)
            ++res.holds_by_kind[static_cast<std::size_t>(r.lock_kind)];
        if (origin == 0 || r.t_start < origin)
            origin = r.t_start;
    }
    res.holds =
        static_cast<std::size_t>(std::count_if(holds.begin(), holds.end(), [](const record* r) {
            return !(r->flags & flag_further_resource);
        }));

    for (const record* r : holds)
    {
        auto problem = [&](std::size_t& counter, const std::string& what) {
            ++counter;
            if (res.details.size() < 20)
                res.details.push_back(what + ":\n      " + describe(*r, origin));
        };
        bool ordered = r->t_start <= r->t_acquired && r->t_acquired <= r->t_release;
        if (r->flags & flag_extend_tried)
            ordered = ordered && r->t_acquired <= r->t_extend && r->t_extend <= r->t_extend_done &&
                      r->t_extend <= r->t_release;
        if (r->flags & flag_unlock_called)
            ordered = ordered && r->t_release <= r->t_released;
        if (!ordered)
            problem(res.order_errors, "TIMES OUT OF ORDER");

        // valid_until = t0 + ttl − drift with t_start <= t0 <= t_acquired.
        const nanos span =
            static_cast<nanos>(r->ttl_ms) * ns_per_ms - drift_ns(r->ttl_ms, drift_factor);
        if (r->valid_until < r->t_start + span - tolerance ||
            r->valid_until > r->t_acquired + span + tolerance)
            problem(res.validity_errors, "VALIDITY outside [t_start, t_acquired] + ttl - drift");
        if ((r->flags & flag_extend_ok) != 0)
        {
            const nanos span2 = static_cast<nanos>(r->extend_ttl_ms) * ns_per_ms -
                                drift_ns(r->extend_ttl_ms, drift_factor);
            if (r->valid_until_ext < r->t_extend + span2 - tolerance ||
                r->valid_until_ext > r->t_extend_done + span2 + tolerance)
                problem(res.validity_errors,
                        "EXTENDED VALIDITY outside [t_extend, t_extend_done] + ttl - drift");
        }
        if (r->t_acquired >= r->valid_until)
            ++res.empty_holds;
    }

    check_fencing(holds, origin, res);
    const auto contract = by_resource(holds, false);
    res.overlaps =
        count_overlaps(contract, origin, &res.details, &res.min_gap, &res.overlaps_by_kind);
    res.excess_permits = count_excess_permits(contract, origin, &res.details);
    res.overlaps_by_kind[static_cast<std::size_t>(held_kind::permit)] += res.excess_permits;
    res.overlaps_if_failed_extend_kept =
        count_overlaps(by_resource(holds, true), origin, nullptr, nullptr);

    // Takeovers after expiry: the previous holder overran its validity (still "working" when
    // the next one got the lock) without an overlap of validity windows.
    for (const auto& [res_id, ws] : contract)
    {
        for (const auto& w : ws)
        {
            const record& r = *w.r;
            if (w.to != r.valid_until || r.t_release <= r.valid_until ||
                (r.flags & flag_extend_tried))
                continue;
            auto it = std::lower_bound(ws.begin(), ws.end(), w.to,
                                       [](const window& x, nanos t) { return x.from < t; });
            for (; it != ws.end() && it->from < r.t_release; ++it)
                if (token_of(*it->r) != token_of(r) && excludes(*it->r, r))
                {
                    ++res.expiry_takeovers;
                    break;
                }
        }
    }
    return res;
}

// ---- Self-test -------------------------------------------------------------------------------

namespace {

constexpr nanos ms(double v) { return static_cast<nanos>(v * 1e6); }

/// A hold acquired at `acq` (ms) whose validity ends at `valid` (ms), released at `rel`.
/// With drift factor 0 the drift is 2 ms, so the TTL is valid − acq + 2 ms.
record hold(std::uint32_t resource, char token, double acq, double valid, double rel)
{
    record r;
    r.kind = record_kind::hold;
    r.resource = resource;
    std::memset(r.token, token, sizeof r.token);
    r.ttl_ms = static_cast<std::int32_t>(std::lround(valid - acq + 2.0));
    r.t_start = ms(acq) - ms(0.5);
    r.t_acquired = ms(acq);
    r.valid_until = ms(acq) + static_cast<nanos>(r.ttl_ms) * ns_per_ms - ms(2);
    r.t_release = ms(rel);
    r.t_released = ms(rel) + ms(0.5);
    r.flags = flag_unlock_called;
    return r;
}

record extended(record r, double t_ext, double t_done, double valid_ext, bool ok)
{
    r.flags = flag_extend_tried | (ok ? flag_extend_ok : 0u) | (ok ? flag_unlock_called : 0u);
    r.t_extend = ms(t_ext);
    r.t_extend_done = ms(t_done);
    if (ok)
    {
        r.extend_ttl_ms = static_cast<std::int32_t>(std::lround(valid_ext - t_done + 2.0));
        r.valid_until_ext = ms(t_done) + static_cast<nanos>(r.extend_ttl_ms) * ns_per_ms - ms(2);
    }
    else
    {
        r.t_release = r.t_extend;  // the worker stops at a failed extension
        r.t_released = 0;
    }
    return r;
}

}  // namespace

std::vector<std::string> self_test()
{
    std::vector<std::string> failures;
    auto expect = [&](const char* name, const std::vector<record>& recs, std::size_t overlaps,
                      std::size_t strict, std::size_t validity, std::size_t takeovers,
                      std::size_t empty) {
        const auto r = check(recs, 0.0);
        if (r.overlaps != overlaps || r.overlaps_if_failed_extend_kept != strict ||
            r.validity_errors != validity || r.expiry_takeovers != takeovers ||
            r.empty_holds != empty)
            failures.push_back(std::string(name) + ": got overlaps " + std::to_string(r.overlaps) +
                               ", kept " + std::to_string(r.overlaps_if_failed_extend_kept) +
                               ", validity " + std::to_string(r.validity_errors) + ", takeovers " +
                               std::to_string(r.expiry_takeovers) + ", empty " +
                               std::to_string(r.empty_holds));
    };

    expect("disjoint holds", {hold(0, 'a', 0, 100, 50), hold(0, 'b', 60, 160, 90)}, 0, 0, 0, 0, 0);
    expect("other resources do not interfere",
           {hold(0, 'a', 0, 100, 90), hold(1, 'b', 10, 110, 80)}, 0, 0, 0, 0, 0);
    expect("acquired while the other is valid and working",
           {hold(0, 'a', 0, 100, 120), hold(0, 'b', 50, 150, 140)}, 1, 1, 0, 0, 0);
    expect("three holders at once make three pairs",
           {hold(0, 'a', 0, 100, 90), hold(0, 'b', 10, 100, 90), hold(0, 'c', 20, 100, 90)}, 3, 3,
           0, 0, 0);
    expect("the same token twice is one holder",
           {hold(0, 'a', 0, 100, 90), hold(0, 'a', 0, 100, 90)}, 0, 0, 0, 0, 0);
    expect("takeover after the holder's validity ended",
           {hold(0, 'a', 0, 100, 200), hold(0, 'b', 150, 250, 240)}, 0, 0, 0, 1, 0);
    expect("acquired right after the release",
           {hold(0, 'a', 0, 100, 80), hold(0, 'b', 80.001, 180, 170)}, 0, 0, 0, 0, 0);
    expect("extension before the end of validity covers the gap",
           {extended(hold(0, 'a', 0, 100, 250), 50, 51, 300, true), hold(0, 'b', 200, 300, 290)}, 1,
           1, 0, 0, 0);
    expect("extension after the end of validity leaves a gap",
           {extended(hold(0, 'a', 0, 100, 350), 150, 160, 400, true), hold(0, 'b', 110, 210, 140)},
           0, 0, 0, 0, 0);
    expect("extension after the end of validity covers from its completion",
           {extended(hold(0, 'a', 0, 100, 350), 150, 160, 400, true), hold(0, 'b', 170, 270, 260)},
           1, 1, 0, 0, 0);
    expect("a failed extension ends the hold when it is called",
           {extended(hold(0, 'a', 0, 100, 0), 50, 60, 0, false), hold(0, 'b', 55, 155, 150)}, 0, 1,
           0, 0, 0);
    {
        auto bad = hold(0, 'a', 0, 100, 50);
        bad.valid_until += ms(1);  // later than t_acquired + ttl - drift
        expect("validity longer than the rule allows", {bad}, 0, 0, 1, 0, 0);
    }
    {
        auto late = hold(0, 'a', 0, 100, 150);
        late.t_acquired = ms(120);  // completed after its own validity: never usable
        late.valid_until = ms(0) + static_cast<nanos>(late.ttl_ms) * ns_per_ms - ms(2);
        late.t_start = 0;
        expect("a hold completed after its validity is empty", {late, hold(0, 'b', 110, 200, 190)},
               0, 0, 0, 0, 1);
    }
    auto expect_fencing = [&](const char* name, const std::vector<record>& recs, std::size_t order,
                              std::size_t repeats) {
        const auto r = check(recs, 0.0);
        if (r.fencing_order_errors != order || r.fencing_repeats != repeats)
            failures.push_back(std::string(name) + ": got fencing order errors " +
                               std::to_string(r.fencing_order_errors) + ", repeats " +
                               std::to_string(r.fencing_repeats));
    };
    auto fenced = [](record r, std::uint64_t fence) {
        r.fence = fence;
        return r;
    };
    expect_fencing("tokens growing with the holders",
                   {fenced(hold(0, 'a', 0, 100, 50), 1), fenced(hold(0, 'b', 60, 160, 90), 2),
                    fenced(hold(0, 'c', 100, 200, 150), 5)},
                   0, 0);
    expect_fencing("a later holder with a smaller token",
                   {fenced(hold(0, 'a', 0, 100, 50), 3), fenced(hold(0, 'b', 60, 160, 90), 2)}, 1,
                   0);
    expect_fencing("a paused holder superseded: still ordered by start",
                   {fenced(hold(0, 'a', 0, 100, 300), 1), fenced(hold(0, 'b', 150, 250, 240), 2)},
                   0, 0);
    expect_fencing("two holders with one token",
                   {fenced(hold(0, 'a', 0, 100, 50), 4), fenced(hold(1, 'b', 0, 100, 50), 4),
                    fenced(hold(0, 'c', 60, 160, 90), 4)},
                   1, 1);
    expect_fencing("acquisitions that overlap in time are not ordered",
                   {fenced(hold(0, 'a', 10, 100, 50), 2),
                    [&] {
                        auto b = fenced(hold(0, 'b', 60, 160, 90), 1);
                        b.t_start = ms(5);  // started before a completed
                        return b;
                    }()},
                   0, 0);
    auto expect_kinds = [&](const char* name, const std::vector<record>& recs, std::size_t overlaps,
                            std::size_t excess) {
        const auto r = check(recs, 0.0);
        if (r.overlaps != overlaps || r.excess_permits != excess)
            failures.push_back(std::string(name) + ": got overlaps " + std::to_string(r.overlaps) +
                               ", excess permits " + std::to_string(r.excess_permits));
    };
    auto as = [](record r, held_kind k, std::uint16_t permits = 0) {
        r.lock_kind = k;
        r.permits = permits;
        return r;
    };
    expect_kinds("readers beside readers",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::reader),
                  as(hold(0, 'b', 10, 110, 100), held_kind::reader)},
                 0, 0);
    expect_kinds("a writer beside a reader",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::reader),
                  as(hold(0, 'b', 10, 110, 100), held_kind::writer)},
                 1, 0);
    expect_kinds("a fenced writer beside a writer",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::fenced_writer),
                  as(hold(0, 'b', 10, 110, 100), held_kind::writer)},
                 1, 0);
    expect_kinds("two permits of two",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::permit, 2),
                  as(hold(0, 'b', 10, 110, 100), held_kind::permit, 2)},
                 0, 0);
    expect_kinds("three permits of two at once",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::permit, 2),
                  as(hold(0, 'b', 10, 110, 100), held_kind::permit, 2),
                  as(hold(0, 'c', 20, 120, 110), held_kind::permit, 2)},
                 0, 1);
    expect_kinds("three permits of two, one after another's release",
                 {as(hold(0, 'a', 0, 100, 15), held_kind::permit, 2),
                  as(hold(0, 'b', 10, 110, 100), held_kind::permit, 2),
                  as(hold(0, 'c', 20, 120, 110), held_kind::permit, 2)},
                 0, 0);
    expect_kinds("a mutex beside a permit",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::permit, 2),
                  as(hold(0, 'b', 10, 110, 100), held_kind::mutex)},
                 1, 0);
    expect_kinds("semaphores of other sizes on one resource",
                 {as(hold(0, 'a', 0, 100, 90), held_kind::permit, 2),
                  as(hold(0, 'b', 10, 110, 100), held_kind::permit, 3)},
                 1, 0);
    {
        // The counts by kind: a writer beside a reader counts for both kinds, a permit too
        // many for permit, a mutex beside a mutex once.
        const auto r = check({as(hold(0, 'a', 0, 100, 90), held_kind::reader),
                              as(hold(0, 'b', 10, 110, 100), held_kind::writer),
                              as(hold(1, 'c', 0, 100, 90), held_kind::permit, 1),
                              as(hold(1, 'd', 10, 110, 100), held_kind::permit, 1),
                              as(hold(2, 'e', 0, 100, 90), held_kind::mutex),
                              as(hold(2, 'f', 10, 110, 100), held_kind::mutex)},
                             0.0);
        const auto count = [&](held_kind k) {
            return r.overlaps_by_kind[static_cast<std::size_t>(k)];
        };
        if (count(held_kind::reader) != 1 || count(held_kind::writer) != 1 ||
            count(held_kind::permit) != 1 || count(held_kind::mutex) != 1 ||
            count(held_kind::fenced) != 0)
            failures.push_back("overlaps by kind: reader " +
                               std::to_string(count(held_kind::reader)) + ", writer " +
                               std::to_string(count(held_kind::writer)) + ", permit " +
                               std::to_string(count(held_kind::permit)) + ", mutex " +
                               std::to_string(count(held_kind::mutex)));
    }
    {
        auto first = as(hold(0, 'a', 0, 100, 90), held_kind::multi);
        auto further = first;
        further.resource = 1;
        further.flags |= flag_further_resource;
        expect_kinds("a multi-resource lock against a mutex of its second resource",
                     {first, further, as(hold(1, 'b', 10, 110, 100), held_kind::mutex)}, 1, 0);
    }
    expect_fencing("unfenced holds are not checked",
                   {hold(0, 'a', 0, 100, 50), hold(0, 'b', 60, 160, 90)}, 0, 0);
    return failures;
}

}  // namespace redlock::torture
