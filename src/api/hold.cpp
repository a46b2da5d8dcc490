// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/client.hpp>
#include <redlock/hold.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "driver/client_impl.hpp"
#include "driver/hold_state.hpp"
#include "runtime/completion.hpp"

namespace redlock {

namespace asio = boost::asio;

// ---- lock_holder ----------------------------------------------------------------------------

lock_holder::lock_holder(client& c, lock l)
    : lock_holder(c, std::move(l), hold_options{}, c.get_executor())
{}

lock_holder::lock_holder(client& c, lock l, hold_options o)
    : lock_holder(c, std::move(l), std::move(o), c.get_executor())
{}

lock_holder::lock_holder(client& c, lock l, executor_type work_executor)
    : lock_holder(c, std::move(l), hold_options{}, std::move(work_executor))
{}

lock_holder::lock_holder(client& c, lock l, hold_options o, executor_type work_executor)
    : s_(std::make_shared<detail::hold_state>(c.impl_, std::move(l), o, std::move(work_executor)))
{
    asio::dispatch(s_->strand(), [s = s_] { s->start(); });
}

lock_holder::lock_holder(lock_holder&&) noexcept = default;

lock_holder& lock_holder::operator=(lock_holder&& other) noexcept
{
    if (this != &other)
    {
        release();
        s_ = std::move(other.s_);
    }
    return *this;
}

lock_holder::~lock_holder() { release(); }

lock lock_holder::current() const { return s_ ? s_->current() : lock(); }
bool lock_holder::held() const { return s_ && s_->held(); }
error_code lock_holder::status() const
{
    return s_ ? s_->status() : error_code(error::invalid_argument);
}
std::uint32_t lock_holder::extensions() const { return s_ ? s_->extensions() : 0; }

std::size_t lock_holder::masters_holding() const { return s_ ? s_->holding() : 0; }

asio::cancellation_slot lock_holder::loss_slot()
{
    return s_ ? s_->loss_slot() : asio::cancellation_slot();
}

void lock_holder::release() noexcept
{
    if (!s_)
        return;
    try
    {
        asio::dispatch(s_->strand(), [s = s_] { s->release(std::nullopt); });
    }
    catch (...)
    {
        // Only an allocation failure can get here; the keys then expire by their TTL.
    }
}

void lock_holder::async_release_impl(asio::any_completion_handler<void(error_code)> handler)
{
    if (!s_)
    {
        // Nothing to release; complete through the handler's own executor, never inline.
        detail::post_completion(handler, asio::any_io_executor(asio::system_executor()),
                                error_code(error::invalid_argument));
        return;
    }
    const auto id = s_->next_waiter_id();
    // As the client's operations (client.cpp, connect_cancellation): connected here, on the
    // caller's thread, holding only a weak reference; the handler runs on the strand.
    if (auto slot = asio::get_associated_cancellation_slot(handler); slot.is_connected())
        slot.assign([weak = std::weak_ptr<detail::hold_state>(s_), id](asio::cancellation_type) {
            if (auto s = weak.lock())
                asio::post(s->strand(), [weak, id] {  // never inside emit()
                    if (auto st = weak.lock())
                        st->cancel_release_waiter(id);
                });
        });
    asio::dispatch(s_->strand(), [s = s_, h = std::move(handler), id]() mutable {
        s->release(std::move(h), id);
    });
}

}  // namespace redlock
