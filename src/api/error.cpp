// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include <redlock/error.hpp>

#include <string>

namespace redlock {
namespace {

class redlock_category final : public boost::system::error_category
{
public:
    const char* name() const noexcept override { return "redlock"; }

    std::string message(int ev) const override
    {
        switch (static_cast<error>(ev))
        {
        case error::invalid_uri: return "invalid master URI";
        case error::invalid_option: return "invalid option value";
        case error::invalid_argument: return "invalid argument";
        case error::protocol_error:
            return "protocol error: the server sent invalid or over-limit RESP";
        case error::unexpected_reply: return "unexpected reply type for the command";
        case error::resolve_failed: return "could not resolve the master's host name";
        case error::connect_failed: return "could not connect to the master";
        case error::tls_handshake_failed: return "TLS handshake with the master failed";
        case error::handshake_failed: return "Redis handshake with the master failed";
        case error::not_connected: return "not connected to the master (reconnecting)";
        case error::connection_lost: return "connection to the master lost";
        case error::request_timeout: return "no reply from the master within the deadline";
        case error::connection_closed: return "connection closed by its owner";
        case error::server_error: return "the master replied with an error";
        case error::noscript: return "NOSCRIPT: script not in the master's cache";
        case error::noauth: return "NOAUTH: the master requires authentication";
        case error::wrongpass:
            return "WRONGPASS: authentication failed (wrong user name or password)";
        case error::noperm: return "NOPERM: the ACL user lacks permission";
        case error::readonly: return "READONLY: the master is a read-only replica";
        case error::oom: return "OOM: the master is out of memory";
        case error::busy: return "BUSY: the master is running a long script";
        case error::loading: return "LOADING: the master is loading its dataset";
        case error::masterdown: return "MASTERDOWN: the master's replication link is down";
        case error::wrongtype: return "WRONGTYPE: the key holds a value of another type";
        case error::contended: return "the resource is locked by another owner";
        case error::no_quorum: return "no quorum: too many masters failed or timed out";
        case error::validity_expired: return "validity expired: the majority was reached too late";
        case error::lock_lost:
            return "the lock was lost: its keys hold another token or are gone on enough masters";
        case error::lock_expired: return "the lock's validity has ended";
        case error::extension_limit:
            return "the extension limit was reached; the lock was left to expire";
        case error::released: return "the lock was released by its holder";
        case error::master_restarted:
            return "the master restarted less than the restart quarantine ago: it does not count "
                   "toward a quorum";
        case error::eviction_can_drop_locks:
            return "eviction can drop lock keys: the master has a maxmemory and an eviction policy "
                   "other than noeviction";
        case error::persistence_off:
            return "persistence is off (no AOF, no RDB save points): a restart of the master "
                   "forgets its lock keys";
        case error::master_has_replicas:
            return "the master has replicas: a failover can promote one that lacks a lock key "
                   "(replication is asynchronous)";
        case error::master_is_replica:
            return "the master is a replica: lock keys are refused there, or lost at its next sync";
        case error::not_replicated:
            return "not acknowledged by enough replicas in time: a failover of the shard could "
                   "lose it";
        case error::kind_mismatch:
            return "the resource is held as another kind of lock (a mutex, a read-write lock, or "
                   "a semaphore of another size)";
        }
        return "unknown redlock error";
    }
};

bool starts_with_word(std::string_view message, std::string_view prefix) noexcept
{
    return message.size() >= prefix.size() && message.substr(0, prefix.size()) == prefix &&
           (message.size() == prefix.size() || message[prefix.size()] == ' ');
}

}  // namespace

const boost::system::error_category& category() noexcept
{
    static const redlock_category instance;
    return instance;
}

error error_from_server_reply(std::string_view message) noexcept
{
    struct entry
    {
        std::string_view prefix;
        error value;
    };
    static constexpr entry table[] = {
        {"NOSCRIPT", error::noscript},
        {"NOAUTH", error::noauth},
        {"WRONGPASS", error::wrongpass},
        {"NOPERM", error::noperm},
        {"READONLY", error::readonly},
        {"OOM", error::oom},
        {"BUSY", error::busy},
        {"LOADING", error::loading},
        {"MASTERDOWN", error::masterdown},
        {"WRONGTYPE", error::wrongtype},
    };
    for (const auto& e : table)
        if (starts_with_word(message, e.prefix))
            return e.value;
    return error::server_error;
}

}  // namespace redlock
