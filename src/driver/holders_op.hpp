// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_DRIVER_HOLDERS_OP_HPP
#define REDLOCK_SRC_DRIVER_HOLDERS_OP_HPP

#include <string>
#include <vector>

#include <redlock/holders.hpp>
#include <redlock/options.hpp>

#include "driver/lock_op_driver.hpp"
#include "fsm/check_fsm.hpp"

namespace redlock::detail {

/// The keys async_holders reads for `key` (key_prefix + resource): the resource's key or its
/// permit keys, the readers' set, the fence counter and its record; in that order.
std::vector<std::string> holders_keys(const std::string& key, const lock_options& o);

/// @brief The Asio side of async_holders: a census of the masters (check_fsm: every master or
/// the deadline) with a read_holders round, then the holders a majority agrees on
/// (holders_on_quorum). It holds no lock: lock_op_driver's lock stays empty.
class holders_op final
    : public lock_op_driver<holders_op, check_fsm, void(error_code, holders_result)>
{
public:
    holders_op(std::shared_ptr<op_context> c, std::string resource, const lock_options& o,
               handler h);

    void start();
    void abandon() noexcept override
    {
        read_.stop();
        answered_ = true;
    }

private:
    friend lock_op_driver;
    friend driver_base;

    void execute(const fsm_action& a);
    void refuse(error_code ec)
    {
        holders_result r;
        r.message = reason_;
        deliver(ec, std::move(r));
    }
    void on_round_outcome(round&, std::size_t) override {}  // a census waits for every master
    void on_round_finished(round& r) override;
    // Why the keys cannot be read (a cluster master needs them in one slot), or empty.
    std::string refused_keys() const;
    holders_result result() const;
    // The number of permits of the semaphore whose mark the read found in the resource's key
    // (on any master), or 0.
    std::uint32_t marked_permits() const;

    lock_options o_;
    std::string key_;
    // The string keys (the resource's key, or its permit keys), the readers' set, the fence
    // counter and its record: what holders_read_script reads.
    std::vector<std::string> keys_;
    std::string reason_;
    round read_;
    std::chrono::milliseconds timeout_{0};
    std::uint64_t read_id_ = 0;
    bool reread_ = false;  // read again over a semaphore's permit keys (on_round_finished)
};

}  // namespace redlock::detail

#endif
