// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "protocol/multiplexer.hpp"

#include <algorithm>
#include <cstring>

namespace redlock::detail {

multiplexer::multiplexer(resp::parser_limits limits) : slots_(64), rbuf_(32 * 1024), parser_(limits)
{}

// ---- requests -----------------------------------------------------------------------------------

void multiplexer::grow_slots()
{
    std::vector<slot> bigger(slots_.size() * 2);
    for (auto s = head_; s != tail_; ++s)
        bigger[s & (bigger.size() - 1)] = slots_[s & (slots_.size() - 1)];
    slots_.swap(bigger);
}

std::uint64_t multiplexer::add_batch(reply_sink* sink, std::string_view bytes, std::uint32_t count)
{
    queue_.append(bytes);
    const auto first = tail_;
    for (std::uint32_t i = 0; i < count; ++i)
        push_slot(sink, i);
    return first;
}

void multiplexer::abandon(std::uint64_t seq) noexcept
{
    if (seq >= head_ && seq < tail_)
        slots_[seq & (slots_.size() - 1)].sink = nullptr;
}

// ---- writing ------------------------------------------------------------------------------------

std::string_view multiplexer::prepare_write()
{
    writing_.clear();
    writing_.swap(queue_);
    written_ = 0;
    // Every request pushed so far has its bytes in writing_ (or written before).
    writing_upto_ = tail_;
    return writing_;
}

void multiplexer::commit_write() noexcept
{
    flushed_ = writing_upto_;
    written_ = writing_.size();
    writing_.clear();
}

std::string multiplexer::unsent() const
{
    std::string out;
    if (written_ < writing_.size())
        out.assign(writing_, written_);
    out += queue_;
    return out;
}

// ---- reading ------------------------------------------------------------------------------------

std::span<char> multiplexer::read_space(std::size_t min_free)
{
    if (rbeg_ == rend_)
        rbeg_ = rend_ = 0;
    if (rbuf_.size() - rend_ < min_free)
    {
        if (rbeg_ > 0)
        {
            std::memmove(rbuf_.data(), rbuf_.data() + rbeg_, rend_ - rbeg_);
            rend_ -= rbeg_;
            rbeg_ = 0;
        }
        if (rbuf_.size() - rend_ < min_free)
            rbuf_.resize(std::max(rbuf_.size() * 2, rend_ + min_free));
    }
    return {rbuf_.data() + rend_, rbuf_.size() - rend_};
}

multiplexer::consumed multiplexer::consume()
{
    // The driver delivers every reply before it reads again; should it not, the replies still
    // undelivered keep their requests at the FIFO's head, and new ones match the next.
    if (delivered_ == parsed_ends_.size())
    {
        parsed_nodes_.clear();
        parsed_ends_.clear();
        delivered_ = 0;
    }
    std::uint64_t matched = head_ + (parsed_ends_.size() - delivered_);
    for (;;)
    {
        const auto st = parser_.parse({rbuf_.data() + rbeg_, rend_ - rbeg_});
        if (st == resp::parse_status::needs_more)
            return consumed::ok;
        if (st == resp::parse_status::failed)
            return consumed::invalid_reply;
        const auto nodes = parser_.nodes();
        const auto used = parser_.consumed();
        if (nodes[0].data_type == resp::type::push)
        {
            pushes_.emplace_back();
            for (const auto& n : nodes)
                pushes_.back().push_back(
                    resp::node{n.data_type, n.depth, n.size, std::string(n.value)});
            rbeg_ += used;
            continue;
        }
        if (matched == tail_)
            return consumed::unexpected_reply;
        ++matched;
        parsed_nodes_.insert(parsed_nodes_.end(), nodes.begin(), nodes.end());
        parsed_ends_.push_back(parsed_nodes_.size());
        rbeg_ += used;  // the views stay valid: the buffer moves only in read_space()
    }
}

resp::parse_status multiplexer::parse_unmatched(std::span<const resp::node_view>& nodes)
{
    const auto st = parser_.parse({rbuf_.data() + rbeg_, rend_ - rbeg_});
    if (st == resp::parse_status::done)
    {
        nodes = parser_.nodes();
        rbeg_ += parser_.consumed();
    }
    return st;
}

bool multiplexer::next_reply(reply& out) noexcept
{
    while (delivered_ < parsed_ends_.size())
    {
        const std::size_t begin = delivered_ == 0 ? 0 : parsed_ends_[delivered_ - 1];
        const std::size_t end = parsed_ends_[delivered_];
        ++delivered_;
        ++replies_;
        const slot s = slots_[head_++ & (slots_.size() - 1)];
        if (!s.sink)
            continue;  // abandoned: its reply is dropped
        out = reply{s.sink, s.tag,
                    std::span<const resp::node_view>(parsed_nodes_.data() + begin, end - begin)};
        return true;
    }
    return false;
}

// ---- failure ------------------------------------------------------------------------------------

std::size_t multiplexer::awaited() const noexcept
{
    std::size_t n = 0;
    for (auto i = head_; i != tail_; ++i)
        n += slots_[i & (slots_.size() - 1)].sink != nullptr ? 1 : 0;
    return n;
}

bool multiplexer::next_failed(reply_sink*& sink, std::uint32_t& tag) noexcept
{
    // The parsed replies belong to requests at the FIFO's head, which now fail instead.
    parsed_nodes_.clear();
    parsed_ends_.clear();
    delivered_ = 0;
    while (head_ != tail_)
    {
        const slot s = slots_[head_++ & (slots_.size() - 1)];
        if (!s.sink)
            continue;
        sink = s.sink;
        tag = s.tag;
        return true;
    }
    return false;
}

void multiplexer::discard_input() noexcept
{
    parsed_nodes_.clear();
    parsed_ends_.clear();
    delivered_ = 0;
    rbeg_ = rend_ = 0;
    parser_.reset();
}

void multiplexer::reset() noexcept
{
    discard_input();
    queue_.clear();
    writing_.clear();
    written_ = 0;
}

}  // namespace redlock::detail
