// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "report.hpp"

#include "status_options.hpp"

namespace redlock::status {

namespace {

std::string who(const std::string& identity)
{
    return identity.empty() ? std::string("(no identity)") : identity;
}

std::string holder_text(const holder_info& h)
{
    std::string out = (h.reader ? "reader " : "") + who(h.identity) + " (holder " + h.id + ", ";
    if (h.fencing_token != 0)  // its own term (a fenced holder's, once its commit is read)
        out += "fencing token " + std::to_string(h.fencing_token) + ", ";
    out += h.valid_for.count() < 0 ? std::string("no expiry")
                                   : "valid for " + std::to_string(h.valid_for.count()) + " ms";
    return out + ", on " + std::to_string(h.masters) + " masters)";
}

std::string entry_text(const held_entry& e)
{
    if (e.foreign)
        return "a key that is no lock value";
    std::string out = (e.reader ? "reader " : "") + who(e.identity) + ", ";
    out +=
        e.ttl.count() < 0 ? std::string("no expiry") : std::to_string(e.ttl.count()) + " ms left";
    return out;
}

}  // namespace

std::string summary(std::string_view resource, error_code ec, const holders_result& r)
{
    std::string out(resource);
    if (ec == error::no_quorum)
        return out + ": unknown: fewer than a majority of the masters answered";
    if (ec)
        return out + ": unknown: " + (r.message.empty() ? ec.message() : r.message);
    if (!r.held())
        return out + ": free";
    out += ": held by ";
    if (r.holders.size() > 1)
        out += std::to_string(r.holders.size()) + " holders: ";
    for (std::size_t i = 0; i < r.holders.size(); ++i)
        out += (i == 0 ? "" : ", ") + holder_text(r.holders[i]);
    return out;
}

std::string report(std::string_view resource, error_code ec, const holders_result& r,
                   std::span<const std::string> endpoints)
{
    std::string out = summary(resource, ec, r) + "\n";
    for (std::size_t i = 0; i < r.masters.size(); ++i)
    {
        const auto& m = r.masters[i];
        out += "  master " + std::to_string(i);
        if (i < endpoints.size())
            out += " (" + endpoints[i] + ")";
        out += ": ";
        switch (m.diagnostic.status)
        {
        case master_status::granted:
            if (m.entries.empty())
                out += "nothing";
            for (std::size_t k = 0; k < m.entries.size(); ++k)
                out += (k == 0 ? "" : "; ") + entry_text(m.entries[k]);
            if (m.fence_counter != 0)
                out += "; fence counter " + std::to_string(m.fence_counter);
            break;
        case master_status::timed_out: out += "no answer in time"; break;
        default:
            out += "error: " + (m.diagnostic.message.empty() ? m.diagnostic.ec.message()
                                                             : m.diagnostic.message);
            break;
        }
        out += "\n";
    }
    return out;
}

std::string fingerprint(error_code ec, const holders_result& r)
{
    if (ec)
        return "unknown";
    std::string out = r.held() ? "held" : "free";
    for (const auto& h : r.holders)
        out += "|" + std::string(h.reader ? "r:" : "w:") + h.id + "#" +
               std::to_string(h.fencing_token);
    return out;
}

int exit_code_of(error_code ec, const holders_result& r)
{
    if (!ec)
        return r.held() ? exit_status::held : exit_status::free;
    if (ec == error::no_quorum || ec == error::connection_closed)
        return exit_status::unavailable;
    if (ec == error::invalid_argument || ec == error::invalid_option)
        return exit_status::usage;  // refused before anything was sent: nothing will change it
    return exit_status::internal;
}

}  // namespace redlock::status
