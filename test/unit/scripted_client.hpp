// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// The scripted client: an op_context (what every operation uses of its client) over scripted
// masters (scripted_master.hpp), with one log of every command its operations submit, in the
// order they submitted them, each read back as the lock command it is (its row, keys and
// arguments). An operation of any kind is made over it as the client makes it, and stepped by
// hand: the test answers each command, or fails it, or leaves it silent and fires the earliest
// deadline when nothing else is left (deadline_list::expire_first). No socket, no clock.
#ifndef REDLOCK_TEST_UNIT_SCRIPTED_CLIENT_HPP
#define REDLOCK_TEST_UNIT_SCRIPTED_CLIENT_HPP

#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "driver/op_context.hpp"
#include "protocol/lock_command_table.hpp"
#include "scripted_master.hpp"

namespace redlock::test {

/// A command as a master would read it: which lock command, its keys and its arguments
/// (ARGV; a SET's token and what follows).
struct wire_command
{
    detail::lock_command command{};
    std::vector<std::string> keys;
    std::vector<std::string> argv;

    const detail::lock_command_row& row() const { return detail::row_of(command); }
    /// The value the command sets, compares or deletes: the token (ARGV[1]).
    const std::string& token() const { return argv.at(0); }
};

namespace wire {

// The first RESP array of bulk strings in `in` (a script's request holds both forms,
// EVALSHA then EVAL: the first is enough), or nullopt.
inline std::optional<std::vector<std::string>> first_array(std::string_view in)
{
    const auto number = [&](char lead) -> std::optional<std::size_t> {
        if (in.empty() || in[0] != lead)
            return std::nullopt;
        const auto end = in.find("\r\n");
        std::size_t n = 0;
        if (end == std::string_view::npos ||
            std::from_chars(in.data() + 1, in.data() + end, n).ec != std::errc())
            return std::nullopt;
        in.remove_prefix(end + 2);
        return n;
    };
    const auto count = number('*');
    if (!count)
        return std::nullopt;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < *count; ++i)
    {
        const auto len = number('$');
        if (!len || in.size() < *len + 2)
            return std::nullopt;
        out.emplace_back(in.substr(0, *len));
        in.remove_prefix(*len + 2);
    }
    return out;
}

}  // namespace wire

/// What `bytes` (a request as scripted_master recorded it) is: a SET NX PX is `acquire`, a
/// script is the command whose row names it (by body or SHA-1); nullopt for anything else.
inline std::optional<wire_command> read_command(std::string_view bytes)
{
    auto a = wire::first_array(bytes);
    if (!a || a->empty())
        return std::nullopt;
    wire_command w;
    if ((*a)[0] == "SET" && a->size() >= 3)
    {
        w.command = detail::lock_command::acquire;
        w.keys = {(*a)[1]};
        w.argv.assign(a->begin() + 2, a->end());
        return w;
    }
    if (((*a)[0] != "EVAL" && (*a)[0] != "EVALSHA") || a->size() < 3)
        return std::nullopt;
    const bool by_sha = (*a)[0] == "EVALSHA";
    bool found = false;
    for (const auto& row : detail::lock_command_rows::rows)
        for (const auto script : {row.script_one, row.script_many})
            if (!found && script && (*a)[1] == (by_sha ? script().sha1 : script().body))
            {
                w.command = row.command;
                found = true;
            }
    std::size_t keys = 0;
    if (!found ||
        std::from_chars((*a)[2].data(), (*a)[2].data() + (*a)[2].size(), keys).ec != std::errc() ||
        a->size() < 3 + keys)
        return std::nullopt;
    w.keys.assign(a->begin() + 3, a->begin() + 3 + static_cast<std::ptrdiff_t>(keys));
    w.argv.assign(a->begin() + 3 + static_cast<std::ptrdiff_t>(keys), a->end());
    return w;
}

/// One submission in the scripted client's log.
struct logged_request
{
    std::size_t master = 0;
    std::size_t index = 0;  // in that master's `sent` (when not refused)
    wire_command command;
    bool by_sha = false;   // sent as EVALSHA (a NOSCRIPT means it did not run)
    bool refused = false;  // its submission failed (refuse_step)
};

/// @brief A client over `n` scripted masters, for operations made over it directly.
class scripted_client final : public detail::op_context
{
public:
    scripted_client(boost::asio::io_context& io, std::size_t n, client_config config = {})
        : op_context(io.get_executor(), std::move(config))
    {
        for (std::size_t i = 0; i < n; ++i)
        {
            auto m = std::make_unique<scripted_master>();
            m->gate = [this, i](const scripted_master::request& r) {
                auto w = read_command(r.bytes);
                unreadable += w ? 0 : 1;
                log.push_back({i, 0, w ? *w : wire_command{},
                               r.bytes.starts_with("*") && r.bytes.find("EVALSHA") < 16});
                const auto ec = refuse_step ? refuse_step(log.size() - 1) : error_code();
                log.back().refused = static_cast<bool>(ec);
                return ec;
            };
            m->on_sent = [this](std::size_t k) { log.back().index = k; };
            masters_.push_back(m.get());
            add_master(std::move(m));
        }
    }

    scripted_master& master(std::size_t i) { return *masters_.at(i); }
    scripted_master::request& request(const logged_request& r)
    {
        return master(r.master).sent.at(r.index);
    }

    /// Every submission, in order, also those refused.
    std::vector<logged_request> log;
    /// Asked for each submission, by its index in `log`: an error refuses it.
    std::function<error_code(std::size_t)> refuse_step;
    /// Submissions that read as no lock command (read_command).
    std::size_t unreadable = 0;

private:
    std::vector<scripted_master*> masters_;
};

}  // namespace redlock::test

#endif
