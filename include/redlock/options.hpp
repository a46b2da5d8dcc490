// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_OPTIONS_HPP
#define REDLOCK_OPTIONS_HPP

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <redlock/config.hpp>
#include <redlock/events.hpp>

namespace redlock {

/// @brief Which side of a resource a lock takes (lock_options::role).
enum class lock_role : std::uint8_t
{
    /// A mutex: the key, on a majority of the masters. The default.
    mutex,
    /// A read-write lock's shared side: held beside other readers, never beside a writer.
    reader,
    /// A read-write lock's exclusive side: held beside nobody, neither reader nor writer nor
    /// mutex; readers that arrive while it waits for earlier readers to leave are refused.
    writer,
};

/// The longest lock_options::identity, in bytes.
inline constexpr std::size_t max_identity_size = 128;

/// @brief lock_options::identity's text, stored in place (no heap), so that lock_options
/// stays trivially destructible: a braced `lock_options{}` in a co_awaited call's arguments
/// remains safe on GCC 12 (docs/usage.md, "Coroutines on GCC 12"), as it was before the
/// identity existed. Assigned from any string; it keeps up to max_identity_size bytes and the
/// length it was given, so that a longer text is still refused (error::invalid_option).
class identity_text
{
public:
    identity_text() = default;
    /// Keeps `text` (its first max_identity_size bytes, and its length).
    identity_text(std::string_view text) noexcept { assign(text); }
    /// Keeps the NUL-terminated `text`, as from a std::string_view.
    identity_text(const char* text) noexcept : identity_text(std::string_view(text)) {}
    /// Keeps `text`, as from a std::string_view.
    identity_text(const std::string& text) noexcept : identity_text(std::string_view(text)) {}

    /// The text (its first max_identity_size bytes when it was given a longer one).
    std::string_view view() const noexcept
    {
        return {data_, size_ < max_identity_size ? size_ : max_identity_size};
    }
    /// view(), for the functions that take a std::string_view.
    operator std::string_view() const noexcept { return view(); }
    /// The length of the text it was given, which may exceed max_identity_size.
    std::size_t size() const noexcept { return size_; }
    /// No identity: nothing is published.
    bool empty() const noexcept { return size_ == 0; }

    /// Whether it holds exactly `b` (a longer text it was given never equals its view).
    friend bool operator==(const identity_text& a, std::string_view b) noexcept
    {
        return a.size_ == b.size() && a.view() == b;
    }

private:
    void assign(std::string_view text) noexcept
    {
        size_ = text.size();
        text.copy(data_, max_identity_size);
    }

    std::size_t size_ = 0;
    char data_[max_identity_size]{};
};

/// @brief How one lock is taken. The defaults, and why, are in docs/algorithm.md.
struct lock_options
{
    /// Time to live of the keys (PX). The lock's validity is at most ttl - drift.
    std::chrono::milliseconds ttl{10000};

    /// How long one attempt waits for the masters' answers. Zero: derived from the TTL,
    /// ttl / 20 clamped to [10 ms, 200 ms] — small compared with the TTL, as the spec asks,
    /// yet many round trips long. Must not be longer than the TTL (the derived value
    /// included: a TTL under 10 ms needs an explicit, shorter attempt_timeout): a grant that
    /// arrives at such a deadline is already expired.
    std::chrono::milliseconds attempt_timeout{0};

    /// Clock drift allowance: drift = ttl * drift_factor + 2 ms is subtracted from validity.
    double drift_factor = 0.01;

    /// Attempts in all (1: a single attempt). Used by async_lock; async_try_lock makes one.
    std::uint32_t max_attempts = 3;

    /// Delay between attempts: retry_delay + a uniform random part in [0, retry_jitter].
    std::chrono::milliseconds retry_delay{50};
    /// The upper bound of the random part of that delay (zero: none). Neither may be negative.
    std::chrono::milliseconds retry_jitter{150};

    /// Optional budget for the whole acquisition (attempts + delays); zero: no budget.
    std::chrono::milliseconds max_wait{0};

    /// @brief How long async_lock (and async_lock_all) waits for a lock that other owners
    /// hold, woken by its release rather than polling (docs/algorithm.md, "Waiting for the
    /// release"). Refused by holders, the acquisition asks the masters to tell it when the
    /// keys change (RESP3 client tracking) and tries again as soon as a quorum can be had:
    /// after the holder's release, whoever makes it (this client, another one, a DEL by hand)
    /// or its keys' expiry. Attempts refused by holders do not count toward max_attempts;
    /// the wait ends after this long (and max_wait, when set) with error::contended.
    /// Acquisitions of one client waiting for the same resource take their turns in order
    /// (first come, first served); only the first of them competes with other processes.
    /// Zero: no waiting: a refused attempt is retried after retry_delay like any failed one.
    /// async_try_lock never waits.
    std::chrono::milliseconds wait{0};
    /// @brief Whether a waiting acquisition of one resource may take the lock straight from
    /// a holder of the same client (docs/algorithm.md, "Hand-off within a process"). When the
    /// holder releases and this acquisition is next in the resource's queue, the keys are not
    /// deleted: each master gives them this acquisition's new token and keeps their expiry,
    /// and the acquisition completes at once, without a round trip, with the holder's
    /// validity (lock::valid_until()). Only while at least half of this acquisition's ttl
    /// is left; never for fenced locks (a new holder needs a new fencing token) nor
    /// multi-resource ones. The lock is this acquisition's alone: the holder's copies are no
    /// longer valid (its token is gone from the keys). False: the holder deletes the keys and
    /// this acquisition sets them anew, one quorum round trip later. An acquisition with an
    /// `identity` declines the hand-off for now and takes the lock anew after the release;
    /// a holder with one hands over to an acquisition without one.
    bool handoff = true;
    /// Deadline of the release sent after a failed attempt (and by async_unlock). The
    /// caller's cancellation does not cut it short.
    std::chrono::milliseconds release_timeout{200};

    /// Hand out a fencing token with the lock (lock::fencing_token()): a number that grows
    /// with each new holder of the resource, for the protected resource to refuse a holder
    /// older than one it has seen (docs/algorithm.md, "Fencing tokens across a quorum"). It
    /// costs a second round trip only when the masters' counters differ (one missed earlier
    /// acquisitions; that round brings them together), and one counter key per resource, kept on
    /// every master without expiry (`{key}:fence`, or `key:fence` when the key has a hash
    /// tag; a key with a `}` but no valid hash tag, e.g. `x}y`, cannot be wrapped, and its
    /// `key:fence` lands in another Redis Cluster slot), with beside it, in the same slot and
    /// without expiry too, the record of whose term the counter is (`{key}:fence:holder`: 16
    /// hex characters of a hash of the holder's value, never its token), which
    /// client::async_holders reads. A multi-resource lock (async_lock_all) gets one token per resource
    /// (lock::fencing_tokens()), each resource with its own sequence. A read-write lock's
    /// writer (`role`) gets one too, from the same counter as a fenced mutex of its resource:
    /// the two exclude each other, and their tokens form one sequence. Not for a reader
    /// (error::invalid_option): a reader shares the lock with other readers, and a fencing
    /// token orders holders that exclude each other.
    bool fencing = false;

    /// @brief A counting semaphore's number of permits (docs/algorithm.md, "A counting
    /// semaphore"): the lock is one of `permits` permits of the resource, held by at most that
    /// many holders at once. Every holder of a resource asks for the same number: while
    /// permits are held, the resource's own key holds the semaphore's mark
    /// (`redlock:permits:<N>`), so that a semaphore of another size, or one on a resource
    /// that a mutex or a read-write lock holds, is refused with error::kind_mismatch, and a
    /// mutex of the resource is refused (docs/algorithm.md, "One kind per resource"). 1, the
    /// default: a mutex. Each permit is a key of its own,
    /// `{resource}:permit:<i>` (the fence counter's hash-tag rule, so that a Redis Cluster keeps
    /// them in one slot), held as a mutex's key is: on a majority of the masters, with the
    /// mutex's validity, extension, release and fault tolerance. One round trip when a permit
    /// is free: each master sets the first free permit key in an order the attempt draws at
    /// random, and the lock is the permit a majority set (lock::key() names it). With `wait`,
    /// an acquisition that finds every permit held is woken by the release of any of them.
    /// Not with `fencing` nor async_lock_all (error::invalid_option); at most 1024.
    std::uint32_t permits = 1;

    /// @brief A read-write lock's side (docs/algorithm.md, "A read-write lock"): many readers
    /// or one writer, each on a majority of the masters. `lock_role::reader` takes the lock
    /// beside other readers, `lock_role::writer` alone; a writer that finds readers leaves a
    /// mark on those masters that refuses the readers who come after it, so that a stream of
    /// readers drains instead of starving it. The keys: the writer's is the resource's own key
    /// (a mutex's); the readers are the members of a sorted set `{resource}:readers` (token →
    /// expiry in ms by the master's clock), and while any holds, the resource's key holds the
    /// mark `redlock:readers` with the latest reader's expiry, so that a mutex (of this client
    /// or any other Redlock client) is refused beside readers as beside a writer. The writer's
    /// mark is `{resource}:intent` (the fence counter's hash-tag rule keeps the three in one
    /// Redis Cluster slot). One round trip when the lock is free, as a mutex. A reader's
    /// lock::key() names the readers' set. With `wait`, a reader is woken when the writer's key
    /// or mark goes, a writer when the resource's key (a writer's, or the readers' mark) goes;
    /// never handed a lock within the client (`handoff` applies to mutexes). A writer with
    /// `fencing` gets a fencing token (as a fenced mutex does), in one
    /// sequence with the fenced mutexes of its resource; a reader with `fencing` is refused
    /// (a reader shares the lock: no token orders it). Not with `permits` nor async_lock_all
    /// (error::invalid_option).
    lock_role role = lock_role::mutex;

    /// @brief Who holds the lock, published in its keys for anyone to read (docs/usage.md,
    /// "Publishing the holder's identity"): a short public text such as "web-3:8080" or a
    /// host name and pid. Empty (the default): nothing is published. Otherwise 1 to
    /// max_identity_size bytes of printable ASCII (0x20 to 0x7E, spaces allowed), else
    /// error::invalid_option. The value every key of the lock holds on the masters is then
    /// `<token> <identity>` (the 40 hex characters of the token, one space, the identity)
    /// instead of the token alone: a mutex's or a writer's key, a semaphore's permit key, a
    /// reader's member of the readers' set (docs/algorithm.md, "The value of a key"). The
    /// identity is public: lock::identity(), events and tools may show it; the token, which
    /// releases the lock, is never shown. Nothing checks that two holders publish different
    /// identities. A waiting acquisition with an identity declines a hand-off within the
    /// client (`handoff`): the holder releases and it takes the lock anew, one round trip
    /// later, so that the keys never carry another holder's identity; a holder with one
    /// hands its keys to a waiter without one as usual (the keys then hold the waiter's bare
    /// token). Stored in place (identity_text), so that lock_options stays trivially
    /// destructible.
    identity_text identity;
};

// A braced lock_options{} in a co_awaited call's arguments is safe on GCC 12 only while the
// struct is trivially destructible (docs/usage.md, "Coroutines on GCC 12").
static_assert(std::is_trivially_destructible_v<lock_options>,
              "lock_options must stay trivially destructible: GCC 12 frees a braced temporary "
              "of a type with a destructor twice inside co_await");

/// The longest key (key_prefix + resource) a lock accepts, in bytes: every command of the lock
/// carries it to every master, and one huge key stalls the other locks of the connection
/// behind it. A longer one fails with error::invalid_argument.
inline constexpr std::size_t max_key_size = 4096;

/// @brief What a client needs to know: its masters and the defaults of its locks.
struct client_config
{
    /// The masters, e.g. "redis://127.0.0.1:6379". An odd number (3, 5, 7) is usual. They must
    /// be independent servers: the same server given twice is rejected (error::invalid_option,
    /// naming both entries), comparing the scheme family (redis:// and rediss:// alike), the
    /// host case-insensitively without a trailing dot, IP literals as addresses, `localhost`,
    /// 127.0.0.1 and ::1 as one loopback host, the port, and a Unix socket's normalised path
    /// (the db index does not make another server). What cannot be seen before resolving names
    /// is not caught: two host names of one server, a port forward, 127.0.0.2 beside 127.0.0.1
    /// on a server listening on every address.
    std::vector<std::string> masters;

    /// More masters, given as structures rather than URIs: each with its own TLS settings
    /// (a private CA, a client certificate for mutual TLS, SNI, verification), log-in and db.
    /// They follow those of `masters` (the index in diagnostics counts both lists in that
    /// order) and are checked for duplicates with them. `tls` below does not apply to them.
    std::vector<master_config> master_configs;

    /// TLS settings for the `rediss://` masters given as URIs in `masters` (a URI cannot carry
    /// them): trusted CAs, a client certificate and key, the SNI / verification name, and
    /// whether the peer is verified (yes by default). Without a CA file or directory, the
    /// system's default trust store is used.
    tls_options tls;

    /// Prepended to every resource name to form the key; empty by default, so that the key is
    /// the resource name exactly as the Redlock spec (and node-redlock, redsync) write it.
    std::string key_prefix;

    /// How each master's connection behaves: timeouts, health checks, reconnection, limits.
    connection_options connection;
    /// The lock options of the operations called without any (client::default_options()).
    lock_options defaults;

    /// @brief The delayed restart, enforced by the client (docs/algorithm.md, "Masters that
    /// restart"). A master seen to restart — its `run_id` (INFO server, asked at every
    /// connection) differs from the one the client saw before — may have forgotten keys and
    /// fence counters that other clients count on: until this long after its start, its
    /// answers do not count toward the quorum of an acquisition (its grants count as
    /// error::master_restarted; extensions, releases and checks are not affected).
    /// Negative (the default): the longest TTL this client has used, its defaults' at least.
    /// Zero: off. A master that refuses INFO cannot be watched.
    std::chrono::milliseconds restart_quarantine{-1};

    /// Also quarantine a master that the client sees for the first time with an uptime below
    /// the quarantine: the client cannot tell a fresh deployment from a restart it did not
    /// see, so with this on, freshly started masters are unusable for a quarantine. For
    /// clients that come and go in front of masters that run without persistence.
    bool quarantine_young_masters = false;

    /// @brief The deployment checks (docs/algorithm.md, "Deployment checks"): at every
    /// connection the client asks the master `INFO` and `CONFIG GET save`, in the handshake's
    /// one write, and warns of a master that can lose lock keys — an eviction policy that can
    /// drop them, no persistence, replicas, a master that is a replica. The warnings are in
    /// master_info::warnings and reported as event_kind::master_warning; they never refuse a
    /// connection. A master that refuses INFO or CONFIG (an ACL rule, a renamed command) is
    /// not checked for what those would have told. False: not asked.
    bool deployment_checks = true;

    /// @brief Redis Cluster masters only (docs/algorithm.md, "A Redis Cluster as one
    /// master"): count a cluster master's answer to a write — an acquisition, a fencing
    /// token's commit, an extension — only once this many replicas of its shard have
    /// acknowledged it (`WAIT`), so that a failover promoting one of them keeps the key. One
    /// WAIT per shard connection covers every write sent before it (a group commit, not one
    /// per lock). An answer not acknowledged in time fails that master's vote with
    /// error::not_replicated. 0 (the default): answers count as the primary gives them.
    /// At most 16.
    unsigned cluster_replica_acks = 0;
    /// How long each WAIT waits for cluster_replica_acks replicas, from 1 ms to 10 s. Commands
    /// queued behind a WAIT on its connection wait with it, so a shard whose replicas are gone
    /// slows that master's answers by this much — or more: a server ends a WAIT that cannot be
    /// met when its event loop next wakes after the timeout, which on a quiet server is its
    /// next timer tick (up to 100 ms at the default `hz 10`; docs/performance.md measured it).
    /// With acknowledgements on, it must be more than 100 ms below
    /// connection_options::health_check_timeout (when that is on), which would otherwise drop
    /// a connection held up by a WAIT.
    std::chrono::milliseconds cluster_replica_ack_timeout{50};

    /// @brief How long the hand-over of a lock to the next waiter of this client
    /// (lock_options::handoff) may wait to leave in one write with what follows it on each
    /// standalone master's connection: 0 to 10 ms, default 500 µs.
    ///
    /// Nothing waits for those bytes but the holder's async_unlock: the waiter has the lock
    /// already, no other client can take the keys meanwhile, and what the new holder sends
    /// queues behind them. Sharing writes saves system calls and the masters' wake-ups
    /// (docs/performance.md, "Hand-offs written lazily"); the holder's release answers up to
    /// this much later. 0: each hand-over is written at once. Cluster masters write at once.
    std::chrono::microseconds handover_write_delay{500};

    /// Told of masters going up and down, deployment warnings, acquisitions, extensions,
    /// releases, degraded and lost locks (see events.hpp); for metrics and logs. Empty by
    /// default: one test per event, nothing else.
    event_handler on_event;
};

/// Checks the values of a lock_options; on failure ec = error::invalid_option and `why`
/// names the field.
void validate(const lock_options& o, error_code& ec, std::string& why);

}  // namespace redlock

#endif
