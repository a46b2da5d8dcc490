// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_RELEASE_VERDICT_HPP
#define REDLOCK_SRC_OPERATION_RELEASE_VERDICT_HPP

#include <redlock/error.hpp>

#include "algorithm/quorum.hpp"

namespace redlock::detail {

/// @brief What a finished release (compare-and-delete on every master) means for whoever asked
/// for it: async_unlock and a holder's release.
///
/// Success when a majority deleted the key. Otherwise connection_closed when the client was
/// closed meanwhile (close() failed the requests, not the masters); no_quorum when more
/// masters failed or timed out than a majority can spare (nobody knows what they hold);
/// lock_lost when enough masters answered and too few still had our token (it expired or was
/// taken over).
inline error_code release_verdict(const quorum_tracker& q, bool client_closed) noexcept
{
    if (q.granted() >= q.quorum())
        return {};
    if (client_closed)
        return error::connection_closed;
    if (q.failed() > q.masters() - q.quorum())
        return error::no_quorum;
    return error::lock_lost;
}

/// @brief The one error of each situation in which a lock is found not held (docs/usage.md,
/// "Which error when"), from a round's failure_reason(): error::contended (the keys hold
/// another token, or none, on enough masters) becomes error::lock_expired when the lock's
/// validity had already ended, else error::lock_lost (taken over, or dropped by a master);
/// any other reason (no_quorum) is returned as it is.
inline error_code not_held_reason(error_code failure, bool validity_ended) noexcept
{
    if (failure != error::contended)
        return failure;
    return validity_ended ? error::lock_expired : error::lock_lost;
}

}  // namespace redlock::detail

#endif
