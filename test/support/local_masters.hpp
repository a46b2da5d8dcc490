// Real redis-server masters on loopback, started and stopped by the test itself.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

/**
 * @brief A set of independent `redis-server` masters owned by one test.
 *
 * The constructor starts `options::count` processes, each with a generated `redis.conf` in
 * its own fresh directory below one `mkdtemp` directory (under `$TMPDIR`, else `/tmp`),
 * listening on 127.0.0.1 only, with persistence off, and waits until each answers `PING`.
 * Ports are chosen at run time, never fixed.
 *
 * Everything started is stopped by PID: the destructor resumes, terminates and reaps every
 * child and removes the directories, also during stack unwinding. Children are also killed
 * by the kernel if the thread that started them dies (`PR_SET_PDEATHSIG`), so a crashed or
 * killed test run does not leave servers behind.
 *
 * @par Thread safety
 * Distinct objects: safe. Shared object: unsafe. Construct it (and call @ref restart) on a
 * thread that outlives the masters: the death signal follows the *thread* that forked.
 *
 * @par Object lifetimes
 * Moving transfers the processes; a moved-from object may only be destroyed or assigned to.
 */
class local_masters
{
public:
    /// @brief How to start the masters.
    struct options
    {
        /// Number of masters.
        std::size_t count = 5;
        /// Also listen on `<dir>/redis.sock` (mode 0700).
        bool unix_sockets = false;
        /// Also listen with TLS on a second port; generates a CA and a server certificate.
        bool tls = false;
        // The `{}` initialisers keep GCC 12's -Wmissing-field-initializers quiet for
        // designated initialisers such as `{.count = 3}`.

        /// Lines appended verbatim to each `redis.conf` (later lines win), e.g. ACL users.
        std::vector<std::string> extra_config{};
        /// The server executable, looked up in `PATH` when it has no slash.
        std::string redis_server = "redis-server";
        /// Per master, how long to wait for the first `PONG` before failing.
        std::chrono::milliseconds start_timeout{10000};
        /// If non-empty, the harness's own connections (readiness probe, @ref command)
        /// send `AUTH` first: use it when `extra_config` locks out the default user.
        std::string admin_user{};
        /// Password for `admin_user` (or for the default user when `admin_user` is empty).
        std::string admin_password{};
    };

    /**
     * @brief Starts the masters and waits until each answers `PING`.
     * @throws std::runtime_error if a server cannot be started or does not answer within
     *         `start_timeout`; the message carries the tail of that server's log. Nothing
     *         started is left running.
     */
    explicit local_masters(options opts);

    /// @brief Starts five plain TCP masters.
    local_masters();

    /// @brief Resumes, terminates and reaps every master, then removes the directories.
    ~local_masters();

    local_masters(const local_masters&) = delete;
    local_masters& operator=(const local_masters&) = delete;
    /// @brief Takes over the other object's processes.
    local_masters(local_masters&&) noexcept;
    /// @brief Stops this object's processes, then takes over the other's.
    local_masters& operator=(local_masters&&) noexcept;

    /// @brief Number of masters.
    std::size_t size() const noexcept;

    /// @brief Plain TCP port of master `i`; stays the same across @ref restart.
    std::uint16_t port(std::size_t i) const;
    /// @brief TLS port of master `i`. @throws std::logic_error unless `options::tls`.
    std::uint16_t tls_port(std::size_t i) const;
    /// @brief Unix socket path of master `i`. @throws std::logic_error unless `options::unix_sockets`.
    std::string unix_path(std::size_t i) const;
    /// @brief The master's working directory (config, log, socket).
    std::string dir(std::size_t i) const;
    /// @brief The master's log file, handy in failure messages.
    std::string log_file(std::size_t i) const;

    /**
     * @brief PID of the running process of master `i`.
     * @throws std::logic_error if it is not running: handing out -1 or 0 would let a caller's
     *         `::kill(pid, sig)` signal a whole process group.
     */
    pid_t pid(std::size_t i) const;

    /// @brief `redis://127.0.0.1:PORT`.
    std::string uri(std::size_t i) const;
    /// @brief `rediss://127.0.0.1:TLSPORT`. @throws std::logic_error unless `options::tls`.
    std::string tls_uri(std::size_t i) const;
    /// @brief `unix://PATH`. @throws std::logic_error unless `options::unix_sockets`.
    std::string unix_uri(std::size_t i) const;
    /// @brief The plain URIs of all masters, in order.
    std::vector<std::string> uris() const;

    /// @brief CA certificate (PEM) that signed the servers' certificate. @throws std::logic_error unless `options::tls`.
    std::string ca_file() const;
    /// @brief A CA certificate (PEM) unrelated to the servers'; verifying against it must fail.
    /// @throws std::logic_error unless `options::tls`.
    std::string other_ca_file() const;
    /// @brief The servers' certificate (PEM, SAN IP:127.0.0.1 and DNS:localhost, also valid as a client certificate).
    std::string cert_file() const;
    /// @brief The private key (PEM) of @ref cert_file.
    std::string key_file() const;

    /// @brief SIGKILL master `i` and reap it. No-op if it is not running.
    void kill(std::size_t i);
    /// @brief SIGSTOP master `i`: it keeps its sockets but answers nothing.
    void pause(std::size_t i);
    /// @brief SIGCONT master `i`.
    void resume(std::size_t i);
    /// @brief SIGTERM master `i`, SIGKILL if it has not exited within 5 s, and reap it.
    void stop(std::size_t i);
    /**
     * @brief Starts master `i` again with the same config, port(s) and socket path, and waits
     *        for `PING`. A still-running process is killed first. Data is not kept.
     * @throws std::runtime_error as the constructor does.
     */
    void restart(std::size_t i);
    /// @brief Whether the process of master `i` exists and has not exited (paused counts as running).
    bool is_running(std::size_t i) const;

    /**
     * @brief Sends one command over a fresh TCP connection and returns the raw bytes of its
     *        one reply, e.g. `"+OK\r\n"`, `":1\r\n"`, `"$1\r\nv\r\n"`, `"-ERR ...\r\n"`.
     *
     * Lets a test look at or change a master behind the client's back (GET, SCAN, DEL,
     * CONFIG SET ...). Authenticates first when `options::admin_password` is set.
     * @throws std::runtime_error if the master cannot be reached or does not reply within
     *         2 s (e.g. it is paused).
     */
    std::string command(std::size_t i, std::initializer_list<std::string_view> args) const;

    /// @brief As @ref command, with arguments built at run time.
    std::string command(std::size_t i, const std::vector<std::string>& args) const;

    /// @brief As @ref command, over the master's Unix socket. @throws std::logic_error unless `options::unix_sockets`.
    std::string unix_command(std::size_t i, std::initializer_list<std::string_view> args) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace redlock::test
