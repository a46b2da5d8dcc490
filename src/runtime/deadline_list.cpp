// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "runtime/deadline_list.hpp"

namespace redlock::detail {

void deadline_list::schedule(timed_entry& e, timed_entry::time_point when)
{
    if (e.linked_)
        cancel(e);
    e.deadline_ = when;
    e.linked_ = true;
    // Walk back from the tail: operations mostly share one timeout, so this stops at once.
    timed_entry* after = tail_;
    while (after && after->deadline_ > when)
        after = after->prev_;
    e.prev_ = after;
    e.next_ = after ? after->next_ : head_;
    (e.next_ ? e.next_->prev_ : tail_) = &e;
    (after ? after->next_ : head_) = &e;
    if (when < armed_for_)
        arm(when);
}

void deadline_list::cancel(timed_entry& e) noexcept
{
    if (!e.linked_)
        return;
    (e.prev_ ? e.prev_->next_ : head_) = e.next_;
    (e.next_ ? e.next_->prev_ : tail_) = e.prev_;
    e.prev_ = e.next_ = nullptr;
    e.linked_ = false;
}

void deadline_list::expire_all()
{
    while (head_)
    {
        timed_entry& e = *head_;
        cancel(e);
        e.on_deadline();
    }
    timer_.cancel();
    armed_for_ = timed_entry::time_point::max();
}

bool deadline_list::expire_first()
{
    if (!head_)
        return false;
    timed_entry& e = *head_;
    cancel(e);
    e.on_deadline();
    return true;
}

void deadline_list::arm(timed_entry::time_point when)
{
    armed_for_ = when;
    timer_.expires_at(when);
    timer_.async_wait(
        [this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
            if (!ec && !alive.expired())
                on_timer();
        });
}

void deadline_list::on_timer()
{
    armed_for_ = timed_entry::time_point::max();
    const auto now = std::chrono::steady_clock::now();
    while (head_ && head_->deadline_ <= now)
    {
        timed_entry& e = *head_;
        cancel(e);
        e.on_deadline();  // may schedule or cancel other entries, and re-arm
    }
    if (head_ && head_->deadline_ < armed_for_)
        arm(head_->deadline_);
}

}  // namespace redlock::detail
