// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "driver/next_holders_op.hpp"

#include <algorithm>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>

#include "algorithm/attempt_timeout.hpp"
#include "driver/holders_op.hpp"
#include "runtime/completion.hpp"

namespace redlock::detail {

holders_signature signature_of(const std::vector<holder_info>& holders)
{
    holders_signature s;
    s.reserve(holders.size());
    for (const auto& h : holders)
        s.emplace_back(h.id, h.reader, h.fencing_token);
    std::sort(s.begin(), s.end());
    return s;
}

next_holders_op::next_holders_op(std::shared_ptr<client_impl> c, std::string resource,
                                 const lock_options& o, holders_signature seen, bool seen_decided,
                                 std::chrono::milliseconds reread_every, handler h)
    : c_(std::move(c)),
      resource_(std::move(resource)),
      o_(o),
      seen_(std::move(seen)),
      seen_decided_(seen_decided),
      reread_every_(reread_every),
      h_(std::move(h))
{
    // The keys whose change may change the holders: those async_holders reads (the fence
    // counter's record is written with the counter, whose change is pushed too).
    keys_ = holders_keys(c_->cfg.key_prefix + resource_, o_);
    keys_.pop_back();
}

void next_holders_op::start()
{
    if (phase_ == phase::done)
        return;  // cancelled before it started
    if (reread_every_.count() <= 0)
    {
        holders_result r;
        r.message = "the re-read interval must be positive";
        return finish(error::invalid_option, std::move(r));
    }
    if (c_->closed)
        return finish(error::connection_closed, {});
    c_->track(*this, shared_from_this());
    c_->waiting.observe(keys_, this);
    observing_ = true;
    initiating_ = true;
    arm();
    initiating_ = false;
}

void next_holders_op::cancel()
{
    if (phase_ != phase::done)
        finish(asio::error::operation_aborted, {});
}

void next_holders_op::abandon() noexcept { stop(); }

void next_holders_op::stop() noexcept
{
    phase_ = phase::done;
    watch_.stop();
    c_->deadlines.cancel(*this);
    if (observing_)
        c_->waiting.unobserve(keys_, this);
    observing_ = false;
}

void next_holders_op::arm()
{
    if (c_->closed)
        return finish(error::connection_closed, {});
    phase_ = phase::arming;
    changed_ = false;
    answered_ = 0;
    armed_ = 0;
    watch_.stop();
    master_set all(c_->size());
    for (std::size_t i = 0; i < c_->size(); ++i)
        all.insert(i);
    // A master that cannot answer (a paused one) must not hold the read back for long.
    c_->deadlines.schedule(*this, clock::now() + attempt_timeout_of(o_));
    watch_.start(*c_, all, keys_, this, o_.permits > 1);
}

void next_holders_op::on_watched(std::size_t, master_outcome o, std::int64_t, bool tracked)
{
    if (phase_ != phase::arming)
        return;
    ++answered_;
    if (o == master_outcome::granted && tracked)
        ++armed_;
    // Once a majority tracks the keys, a change of the holders (which takes a majority) is
    // reported by at least one of them.
    if (armed_ >= c_->quorum() || answered_ == c_->size())
        read();
}

void next_holders_op::read()
{
    phase_ = phase::reading;
    c_->deadlines.cancel(*this);
    const auto n = ++reads_;
    auto op = std::make_shared<holders_op>(
        c_, resource_, o_,
        asio::bind_executor(c_->strand,
                            [self = shared_from_this(), n](error_code ec, holders_result r) {
                                self->on_read(n, ec, std::move(r));
                            }));
    // (A read that arms the watch from inside its start, all masters down, posts its answer.)
    op->start();
}

void next_holders_op::on_read(std::uint64_t read, error_code ec, holders_result r)
{
    if (phase_ != phase::reading || read != reads_)
        return;
    // Who holds it cannot be told now: a change when the caller could tell, else the same
    // (read again later).
    if (ec == error::no_quorum)
        return seen_decided_ ? finish(ec, std::move(r)) : wait(r);
    if (ec)
        return finish(ec, std::move(r));
    // The resource is a semaphore of other permits than this read was told: watch its permit
    // keys from now on (the read named their holders already), so that a permit's change is
    // pushed, not found by the next re-read.
    if (r.permits > 1 && r.permits != o_.permits)
    {
        c_->waiting.unobserve(keys_, this);
        o_.permits = r.permits;
        keys_ = holders_keys(c_->cfg.key_prefix + resource_, o_);
        keys_.pop_back();
        c_->waiting.observe(keys_, this);
        changed_ = true;  // the watch was armed on the old keys: arm again
    }
    if (!seen_decided_ || signature_of(r.holders) != seen_)
        return finish({}, std::move(r));
    if (changed_)
        return arm();
    wait(r);
}

void next_holders_op::wait(const holders_result& r)
{
    phase_ = phase::waiting;
    // A holder whose validity runs out is gone (for this read's rule) without any push: the
    // masters report an expiry only when they delete the key, which may be much later.
    auto next = std::chrono::steady_clock::duration(reread_every_);
    for (const auto& h : r.holders)
        if (h.valid_for.count() >= 0)
            next = std::min<std::chrono::steady_clock::duration>(
                next, h.valid_for + std::chrono::milliseconds(1));
    c_->deadlines.schedule(*this, clock::now() + next);
}

void next_holders_op::on_key_changed()
{
    switch (phase_)
    {
    case phase::arming:
    case phase::reading: changed_ = true; return;
    case phase::waiting: c_->deadlines.cancel(*this); return arm();
    default: return;
    }
}

void next_holders_op::on_deadline()
{
    auto keep = shared_from_this();  // the deadline list does not own its entries
    if (phase_ == phase::done)
        return;
    if (c_->closed)
        return finish(error::connection_closed, {});
    if (phase_ == phase::arming)
        return read();  // not every master answered in time: read with those that did
    if (phase_ == phase::waiting)
        arm();
}

void next_holders_op::finish(error_code ec, holders_result r)
{
    const bool was_started = phase_ != phase::idle;
    stop();
    if (!h_)
        return;
    auto h = std::move(*h_);
    h_.reset();
    if (initiating_ || !was_started)
        post_completion(h, c_->strand, ec, std::move(r));
    else
        dispatch_completion(h, c_->strand, ec, std::move(r));
    if (was_started)
        c_->untrack(*this);
}

}  // namespace redlock::detail
