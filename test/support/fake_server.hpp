// A scripted fake Redis server on loopback, for the bad-input tests.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

/**
 * @brief What a fake_server does on one connection: a list of steps, one per command received.
 *
 * Each step matches one command and says what to answer. Build it with the chained calls:
 * `expect()`, `any()` or `at()` start a step; `reply()`, `normal()`, `silent()`, `slowly()`,
 * `after()` say what the step answers; `close()`, `reset()`, `stall()` what happens to the
 * connection after that.
 *
 * @code
 * fake_script s;
 * s.expect("CLIENT").normal()                   // the handshake's CLIENT SETNAME
 *  .expect("PING").reply("$5\r\nhel").close();  // half a reply, then FIN
 * @endcode
 *
 * When the steps are used up, the connection goes on as `then_normal()` (the default),
 * `then_stall()` or `then_close()` say.
 */
class fake_script
{
public:
    /// What happens to the connection after a step's reply (if any) has been written.
    enum class disposition : std::uint8_t
    {
        keep,   ///< Carry on with the next step.
        close,  ///< Orderly close: FIN after the bytes, then wait (bounded) for the peer's close.
        reset,  ///< Abortive close: RST (SO_LINGER 0); unread bytes may be lost.
        stall,  ///< Never write again; keep reading and discarding until the peer closes.
    };

    /// What a step answers.
    enum class answer : std::uint8_t
    {
        bytes,   ///< The scripted bytes, whatever they are.
        normal,  ///< What a well-behaved server would answer (see fake_server).
        none,    ///< Nothing: the command is swallowed.
    };

    struct step
    {
        std::string expect;        ///< Command name (case-insensitive); empty: any command.
        bool skip_others = false;  ///< at(): commands before the match are answered normally.
        answer what = answer::bytes;
        std::string bytes;
        std::chrono::milliseconds delay{0};        ///< Before the reply.
        std::size_t chunk = 0;                     ///< > 0: written in pieces of this size...
        std::chrono::milliseconds chunk_delay{0};  ///< ...with this pause between them.
        disposition then = disposition::keep;
    };

    /// Starts a step: the next command must be `name` (else the mismatch is recorded in
    /// fake_server::errors() and the connection closed).
    fake_script& expect(std::string_view name);
    /// Starts a step that matches whatever command comes next.
    fake_script& any();
    /// Starts a step that matches the first `name` to come; every other command before it is
    /// answered normally (e.g. the handshake).
    fake_script& at(std::string_view name);

    /// The current step answers these bytes (anything: garbage, half a reply, a huge length).
    fake_script& reply(std::string bytes);
    /// The current step answers as a well-behaved server would.
    fake_script& normal();
    /// The current step answers nothing (the command is swallowed).
    fake_script& silent();
    /// The current step waits `d` before answering.
    fake_script& after(std::chrono::milliseconds d);
    /// The current step's reply goes out `chunk` bytes at a time, `pause` apart.
    fake_script& slowly(std::size_t chunk, std::chrono::milliseconds pause);
    /// After the current step: orderly close (FIN).
    fake_script& close();
    /// After the current step: abortive close (RST).
    fake_script& reset();
    /// After the current step: stop answering, keep the connection open.
    fake_script& stall();

    /// Sent as soon as the connection is accepted, before any command is read.
    fake_script& on_accept(std::string bytes);
    /// Closes the connection as soon as it is accepted (orderly), without reading anything.
    fake_script& close_on_accept();
    /// Abortive close (RST) as soon as the connection is accepted.
    fake_script& reset_on_accept();

    /// When the steps are used up: `keep` answers normally (the default), `stall` stops
    /// answering and keeps the connection open, `close` closes it (orderly), `reset` (RST).
    fake_script& when_done(disposition d);

    const std::vector<step>& steps() const noexcept { return steps_; }
    const std::string& accept_bytes() const noexcept { return accept_bytes_; }
    std::optional<disposition> on_accept_disposition() const noexcept { return accept_then_; }
    disposition after_steps() const noexcept { return after_steps_; }

private:
    step& current();
    /// What happens after the current step.
    fake_script& then(disposition d);
    /// What happens as soon as a connection is accepted.
    fake_script& on_accept_then(disposition d);

    std::vector<step> steps_;
    std::string accept_bytes_;
    std::optional<disposition> accept_then_;
    disposition after_steps_ = disposition::keep;  // keep: answer normally
};

/**
 * @brief A fake Redis master on 127.0.0.1 (a free port) that follows a script per connection.
 *
 * It runs its own io_context on its own thread. The k-th connection it accepts follows the
 * k-th script given to push(); connections beyond those follow the default script (set by
 * set_default(), else: answer everything normally).
 *
 * "Normally" is a small, well-behaved Redis: `PING`, `ECHO`, `AUTH`, `SELECT`, `CLIENT`,
 * `HELLO` (-ERR, as a RESP2-only server would), `SET key value [NX] [PX ms]`, `GET`, `DEL`,
 * `PEXPIRE`, `KEYS *`, `SCRIPT ...`, and `EVAL`/`EVALSHA` with redlock's two scripts told apart
 * by their argument count (1 argument: compare-and-delete; 2: compare-and-PEXPIRE). Keys are
 * shared by all the connections of one server and expire. Anything else: `-ERR unknown command`.
 *
 * Commands must arrive as RESP arrays of bulk strings (what every client sends); anything
 * else is recorded in errors() and closes the connection.
 *
 * @par Thread safety
 * Every member may be called from any thread.
 *
 * @par Object lifetimes
 * The destructor closes every connection and joins the thread.
 */
class fake_server
{
public:
    fake_server();
    ~fake_server();
    fake_server(const fake_server&) = delete;
    fake_server& operator=(const fake_server&) = delete;

    /// The next accepted connection (after those already queued) follows `s`.
    void push(fake_script s);
    /// Connections with no queued script follow `s`.
    void set_default(fake_script s);

    std::uint16_t port() const noexcept;
    /// `redis://127.0.0.1:PORT`, or with `userinfo` (e.g. `":secret"`) before the host.
    std::string uri(std::string_view userinfo = {}, int db = 0) const;

    /// Connections accepted so far.
    std::size_t connections() const;
    /// Connections still open.
    std::size_t open_connections() const;
    /// Every command received on connection `k` (0-based, in accept order), as its arguments.
    std::vector<std::vector<std::string>> commands(std::size_t k) const;
    /// The command names (upper case) received on connection `k`, e.g. {"CLIENT", "PING"}.
    std::vector<std::string> command_names(std::size_t k) const;
    /// Script mismatches and malformed commands; empty when everything went as scripted.
    std::vector<std::string> errors() const;
    /// The value of `key` in the normal store, if set and not expired.
    std::optional<std::string> value_of(std::string_view key) const;
    /// Sets `key` in the normal store (as another client's SET would).
    void set_value(std::string_view key, std::string_view value);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace redlock::test
