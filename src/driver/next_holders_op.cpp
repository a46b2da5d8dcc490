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

next_holders_op::next_holders_op(std::shared_ptr<op_context> c, std::string resource,
                                 const lock_options& o, holders_signature seen, bool seen_decided,
                                 std::chrono::milliseconds reread_every, handler h)
    : op_base(std::move(c)),
      resource_(std::move(resource)),
      o_(o),
      seen_(std::move(seen)),
      fsm_(c_->size(), c_->quorum(), seen_decided, reread_every, attempt_timeout_of(o_)),
      h_(std::move(h))
{
    // The keys whose change may change the holders: those async_holders reads (the fence
    // counter's record is written with the counter, whose change is pushed too).
    keys_ = holders_keys(c_->cfg.key_prefix + resource_, o_);
    keys_.pop_back();
}

void next_holders_op::start()
{
    if (fsm_.done())
        return;  // cancelled before it started
    const auto a = fsm_.start(clock::now(), c_->closed);
    if (a.type == observe_action::kind::finish)
        return execute(a);  // refused: posted, never tracked
    keep_alive();
    c_->waiting.observe(keys_, this);
    observing_ = true;
    initiate([&] { execute(a); });
}

void next_holders_op::cancel() { execute(fsm_.cancel()); }

void next_holders_op::abandon() noexcept
{
    (void)fsm_.cancel();  // nothing more is decided, nor delivered
    stop();
}

void next_holders_op::stop() noexcept
{
    watch_.stop();
    c_->deadlines.cancel(*this);
    if (observing_)
        c_->waiting.unobserve(keys_, this);
    observing_ = false;
}

void next_holders_op::execute(const observe_action& a)
{
    using kind = observe_action::kind;
    switch (a.type)
    {
    case kind::none: return;
    case kind::arm: return arm(a.until);
    case kind::read: return read(a.read_id);
    case kind::wait_until: c_->deadlines.schedule(*this, a.until); return;
    case kind::finish:
    {
        holders_result r;
        if (a.with_read)
            r = std::move(last_);
        else if (a.ec == error::invalid_option)
            r.message = "the re-read interval must be positive";
        return finish(a.ec, std::move(r));
    }
    }
}

void next_holders_op::arm(std::chrono::steady_clock::time_point until)
{
    if (c_->closed)
        return execute(fsm_.closed());
    watch_.stop();
    master_set all(c_->size());
    for (std::size_t i = 0; i < c_->size(); ++i)
        all.insert(i);
    c_->deadlines.schedule(*this, until);
    watch_.start(*c_, all, keys_, this, o_.permits > 1);
}

void next_holders_op::on_watched(std::size_t, master_outcome o, std::int64_t, bool tracked)
{
    execute(fsm_.watched(o == master_outcome::granted && tracked, clock::now()));
}

void next_holders_op::read(std::uint64_t id)
{
    c_->deadlines.cancel(*this);
    auto op = std::make_shared<holders_op>(
        c_, resource_, o_,
        asio::bind_executor(c_->strand,
                            [self = shared_from_this(), id](error_code ec, holders_result r) {
                                self->on_read(id, ec, std::move(r));
                            }));
    // (A read that arms the watch from inside its start, all masters down, posts its answer.)
    op->start();
}

void next_holders_op::on_read(std::uint64_t read, error_code ec, holders_result r)
{
    if (!fsm_.awaits(read))
        return;
    // The resource is a semaphore of other permits than this read was told: watch its permit
    // keys from now on (the read named their holders already), so that a permit's change is
    // pushed, not found by the next re-read.
    bool rekeyed = false;
    if (!ec && r.permits > 1 && r.permits != o_.permits)
    {
        c_->waiting.unobserve(keys_, this);
        o_.permits = r.permits;
        keys_ = holders_keys(c_->cfg.key_prefix + resource_, o_);
        keys_.pop_back();
        c_->waiting.observe(keys_, this);
        rekeyed = true;  // the watch was armed on the old keys: arm again
    }
    // A holder whose validity runs out is gone without any push: read again then.
    auto next = std::chrono::steady_clock::duration::max();
    for (const auto& h : r.holders)
        if (h.valid_for.count() >= 0)
            next = std::min<std::chrono::steady_clock::duration>(
                next, h.valid_for + std::chrono::milliseconds(1));
    const bool differs = signature_of(r.holders) != seen_;
    last_ = std::move(r);
    execute(fsm_.read_answered(read, ec, differs, rekeyed, next, clock::now()));
}

void next_holders_op::on_key_changed()
{
    const auto a = fsm_.key_changed(clock::now());
    if (a.type != observe_action::kind::none)
        c_->deadlines.cancel(*this);  // the wait is over
    execute(a);
}

void next_holders_op::on_deadline()
{
    auto keep = shared_from_this();  // the deadline list does not own its entries
    if (fsm_.done())
        return;
    if (c_->closed)
        return execute(fsm_.closed());
    execute(fsm_.deadline(clock::now()));
}

void next_holders_op::finish(error_code ec, holders_result r)
{
    stop();
    if (!h_)
        return;
    auto h = std::move(*h_);
    h_.reset();
    deliver(h, ec, std::move(r));
    let_go();
}

}  // namespace redlock::detail
