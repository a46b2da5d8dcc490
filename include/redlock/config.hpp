// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_CONFIG_HPP
#define REDLOCK_CONFIG_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>

namespace redlock {

/// @brief How a master's TLS connection is set up (`rediss://` URIs).
///
/// Peer verification and SNI are on by default. With no CA file nor CA directory, the system's
/// default trust store is used.
struct tls_options
{
    bool verify_peer = true;  ///< Verify the server certificate chain and host name.
    std::string ca_file;      ///< PEM file of trusted CAs.
    std::string ca_dir;       ///< Directory of hashed CA certificates (c_rehash layout).
    std::string cert_file;    ///< Client certificate (PEM), for mutual TLS.
    std::string key_file;     ///< Client private key (PEM), for mutual TLS.
    std::string server_name;  ///< Name for SNI and verification; empty: the URI's host.
};

/// @brief Where one Redis master is and how to log in to it.
///
/// Usually made by parse_master_uri(). The password is a secret: to_string() and every error
/// message redlock produces leave it out.
struct master_config
{
    /// How the master is reached; the URI's scheme.
    enum class transport_kind : std::uint8_t
    {
        tcp,          ///< `redis://host:port`
        tls,          ///< `rediss://host:port`
        unix_socket,  ///< `unix:///path/to/socket`
    };

    transport_kind transport = transport_kind::tcp;  ///< How the master is reached.
    std::string host = "127.0.0.1";                  ///< Host name or IP literal (tcp, tls).
    std::uint16_t port = 6379;                       ///< TCP port (tcp, tls).
    std::string path;                                ///< Socket path (unix_socket).
    std::string username;  ///< ACL user; empty with a password: the default user.
    std::string password;  ///< Empty: no AUTH.
    int db = 0;            ///< SELECT this database after connecting (0: no SELECT).
    tls_options tls;       ///< TLS settings of a `rediss://` master. For a URI in
                           ///< client_config::masters, client_config::tls is used.

    /// A node of a Redis Cluster, named as a seed (`host:port`).
    struct node_address
    {
        std::string host;           ///< Host name or IP literal (IPv6 without brackets).
        std::uint16_t port = 6379;  ///< TCP port.
        /// Equal when host and port are (as written: no name resolution).
        friend bool operator==(const node_address&, const node_address&) = default;
    };
    /// @brief Non-empty: this master is a whole Redis Cluster (`redis-cluster://`,
    /// `rediss-cluster://`), and these are the nodes the client asks for its slot map, in
    /// order, until one answers. `host` and `port` are then unused (parse_master_uri sets them
    /// to the first seed); `transport` is tcp or tls; `db` is 0 (a cluster has one database).
    /// The user name, password and TLS settings apply to every node of the cluster.
    std::vector<node_address> cluster_seeds;
    /// Whether this master is a Redis Cluster (cluster_seeds is not empty).
    bool is_cluster() const noexcept { return !cluster_seeds.empty(); }

    /// The URI of this master with any password replaced by "***".
    std::string to_string() const;
};

/// @brief Parses `redis://[user:password@]host[:port][/db]`,
/// `rediss://[user:password@]host[:port][/db]`, `unix://[user:password@]/path[?db=N]`, or a
/// Redis Cluster as one master: `redis-cluster://[user:password@]host[:port][,host[:port]...]`
/// (`rediss-cluster://` for TLS).
///
/// User name and password are percent-decoded; an IPv6 host is written in brackets
/// (`redis://[::1]:6379`, a zone as `[fe80::1%25eth0]`). The default port is 6379. The scheme
/// is case-insensitive.
///
/// Details:
/// - `redis://:password@host` gives a password for the default user. A user name without a
///   password (`redis://name@host`, `redis://name:@host`) is rejected: it is ambiguous, and
///   an empty password would silently skip AUTH.
/// - In the user name and password, `@ / ? # [ ]` must be percent-encoded (`%40`...); `+` is
///   a plus, not a space.
/// - For redis:// and rediss:// the db is the path (`/2`) and no query is accepted; for
///   unix:// the db is `?db=2`. The db is 0 to 2147483647.
/// - A cluster URI gives its seeds (master_config::cluster_seeds), in order, at least one, each
///   host[:port] as above; an empty or repeated seed is rejected. Its path may only be empty or
///   `/0` (a cluster has only database 0), and it takes no query.
/// - The unix socket path is percent-decoded and must be absolute, at most 107 bytes, with
///   no NUL.
/// - Spaces and control characters anywhere are rejected (percent-encode them).
///
/// @param uri  The URI.
/// @param ec   Set to error::invalid_uri on failure.
/// @param why  On failure, a message that names the problem; it never contains the password.
/// @returns The configuration; unspecified on failure.
master_config parse_master_uri(std::string_view uri, error_code& ec, std::string& why);

/// Like the overload above; throws boost::system::system_error (error::invalid_uri, with the
/// message that names the problem) on failure.
master_config parse_master_uri(std::string_view uri);

/// @brief How one connection to a master behaves.
struct connection_options
{
    /// Sent with CLIENT SETNAME during the handshake; empty: not sent.
    std::string client_name = "redlock";

    /// Resolve + connect + TLS handshake + Redis handshake must finish within this time.
    std::chrono::milliseconds connect_timeout{2000};

    /// An idle connection sends PING after this long without traffic. Zero disables it.
    std::chrono::milliseconds health_check_interval{1000};

    /// A request (user request or health PING) that has waited for its reply longer than
    /// this declares the connection dead: in-flight requests fail with connection_lost and
    /// the connection reconnects. Zero disables it.
    std::chrono::milliseconds health_check_timeout{3000};

    /// How long close() may drain a connection that has requests written or queued: the queued
    /// bytes are written, the sending side is shut down, and replies are read and dropped until
    /// the master closes its side, so that it executes every command that left this process
    /// (a master drops the unread commands of a client whose socket is reset). Past this bound
    /// the socket is closed as it is. Zero closes at once. The io_context must run meanwhile.
    std::chrono::milliseconds close_timeout{1000};

    /// Reconnect backoff: the first delay, doubled after each failed attempt up to the
    /// maximum; each delay is drawn uniformly from [delay/2, delay] (jitter).
    std::chrono::milliseconds reconnect_min_delay{50};
    /// The longest reconnect delay, where the doubling stops; not less than reconnect_min_delay.
    std::chrono::milliseconds reconnect_max_delay{2000};

    /// Limits on what the server may send (protection against a broken or hostile peer): a
    /// reply past one of them drops the connection with error::protocol_error (the requests in
    /// flight fail with it), and it reconnects. max_nesting_depth is the most aggregates open
    /// at once, attributes included (a top-level array is depth 1): 1 to 1024.
    std::size_t max_nesting_depth = 32;
    /// The longest payload of one bulk string, bulk error or verbatim string, in bytes; positive.
    std::size_t max_bulk_length = 64u * 1024 * 1024;
    /// The most elements of one aggregate as sent (a map of n pairs has 2n); positive.
    std::size_t max_aggregate_size = 1u << 20;

    /// Checks every field; on failure sets ec to error::invalid_option and why to a message
    /// that names the field, on success clears both. Besides the ranges above, client_name
    /// may hold only printable ASCII without spaces (what CLIENT SETNAME accepts), and
    /// max_nesting_depth is at most 1024.
    void validate(error_code& ec, std::string& why) const;
};

}  // namespace redlock

#endif
