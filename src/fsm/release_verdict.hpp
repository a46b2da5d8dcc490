// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_OPERATION_RELEASE_VERDICT_HPP
#define REDLOCK_SRC_OPERATION_RELEASE_VERDICT_HPP

#include <redlock/error.hpp>

#include "algorithm/quorum.hpp"

namespace redlock::detail {

/// @brief What a finished release (compare-and-delete on every master) means for whoever asked
/// for it: async_unlock and a holder's release.
///
/// Whether the masters' answers show that a majority does not hold our token (another token,
/// or none): only then is a lock known to be lost. Masters that failed or did not answer may
/// still hold it, so with them a majority is not known either way.
inline bool known_not_held(const quorum_tracker& q) noexcept
{
    return q.held_by_other() >= q.quorum();
}

/// Success when a majority deleted the key. Otherwise connection_closed when the client was
/// closed meanwhile (close() failed the requests, not the masters); lock_lost when a majority
/// answered that they do not hold our token (it expired or was taken over: known_not_held);
/// else no_quorum: the masters that deleted it and those that did not answer could make a
/// majority, so nobody knows that the lock was lost, nor that it is gone.
inline error_code release_verdict(const quorum_tracker& q, bool client_closed) noexcept
{
    if (q.granted() >= q.quorum())
        return {};
    if (client_closed)
        return error::connection_closed;
    return known_not_held(q) ? error::lock_lost : error::no_quorum;
}

/// What a failed extension of a held lock says: error::contended (read by not_held_reason as
/// lost, or expired) only when a majority answered without our token (known_not_held), else
/// error::no_quorum (retried while the validity lasts). The same rule as release_verdict's.
inline error_code extension_failure(const quorum_tracker& q) noexcept
{
    return known_not_held(q) ? error::contended : error::no_quorum;
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
