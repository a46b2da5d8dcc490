// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DETAIL_DEADLINE_LIST_HPP
#define REDLOCK_SRC_DETAIL_DEADLINE_LIST_HPP

#include <chrono>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

namespace redlock::detail {

namespace asio = boost::asio;

/// Something with a deadline in a deadline_list.
class timed_entry
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// Called on the list's executor once the deadline has passed; the entry is unlinked.
    virtual void on_deadline() = 0;

    bool scheduled() const noexcept { return linked_; }
    time_point deadline() const noexcept { return deadline_; }

protected:
    ~timed_entry() = default;

private:
    friend class deadline_list;
    time_point deadline_{};
    timed_entry* prev_ = nullptr;
    timed_entry* next_ = nullptr;
    bool linked_ = false;
};

/// @brief Many deadlines, one timer.
///
/// Every lock operation has a deadline, and almost all of them finish long before it. A
/// steady_timer per operation would re-program the kernel timer each time the earliest one is
/// cancelled, i.e. once per operation. Here deadlines sit in an intrusive list sorted by time
/// (new ones nearly always go at the tail, in O(1)); removing one is O(1) and leaves the timer
/// alone, and the single timer is re-armed only when it fires or when an earlier deadline
/// arrives.
///
/// Not thread-safe: used on one strand.
class deadline_list
{
public:
    explicit deadline_list(asio::any_io_executor ex) : timer_(std::move(ex)) {}

    deadline_list(const deadline_list&) = delete;
    deadline_list& operator=(const deadline_list&) = delete;

    void schedule(timed_entry& e, timed_entry::time_point when);
    void cancel(timed_entry& e) noexcept;
    /// Calls on_deadline for every entry now, in order (used when closing: each operation
    /// then completes instead of waiting for a timer that will not fire), then stops the timer.
    void expire_all();
    /// Calls on_deadline for the earliest entry now, as if its time had come; false when there
    /// is none. (A stepped test's clock: what the entry schedules in turn waits for the next.)
    bool expire_first();

private:
    void arm(timed_entry::time_point when);
    void on_timer();

    asio::steady_timer timer_;
    // A wait that has already expired cannot be cancelled: its handler may run after the list
    // is gone. The handler holds a weak reference to this and does nothing once it is expired.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
    timed_entry::time_point armed_for_ = timed_entry::time_point::max();
    timed_entry* head_ = nullptr;
    timed_entry* tail_ = nullptr;
};

}  // namespace redlock::detail

#endif
