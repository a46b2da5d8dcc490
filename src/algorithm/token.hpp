// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_TOKEN_HPP
#define REDLOCK_SRC_ALGORITHM_TOKEN_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace redlock::detail {

/// @brief Produces lock tokens: 20 bytes from OpenSSL's CSPRNG, as 40 lowercase hex digits.
///
/// The token is what makes release and extension safe (only the owner's compare-and-delete
/// matches), so it must be unpredictable and unique: the spec's "20 bytes from /dev/urandom".
/// To keep the cost per token low, random bytes are drawn from RAND_bytes in batches
/// (4 KiB by default); every token consumes fresh bytes, and consumed bytes are wiped.
///
/// Fork safety: a child process inherits the parent's unused batch, so both would hand out
/// the same tokens. A fork handler bumps a generation counter and the next token after a
/// fork discards the inherited batch.
///
/// @par Thread safety
/// Not thread-safe: use one token_source per client (or per strand). Distinct objects are
/// safe to use concurrently (RAND_bytes itself is thread-safe).
class token_source
{
public:
    /// Random bytes per token.
    static constexpr std::size_t token_bytes = 20;
    /// Hex characters per token.
    static constexpr std::size_t token_chars = 2 * token_bytes;
    /// The default batch size.
    static constexpr std::size_t default_batch_bytes = 4096;

    /// @brief A source that refills `batch_bytes` random bytes at a time (at least 1; small
    /// values exist for tests of tokens that straddle two batches). Draws nothing yet.
    explicit token_source(std::size_t batch_bytes = default_batch_bytes);
    ~token_source();

    token_source(const token_source&) = delete;  // two copies would repeat tokens
    token_source& operator=(const token_source&) = delete;
    /// Moving transfers the batch; a moved-from source throws std::logic_error from next().
    token_source(token_source&&) noexcept;
    token_source& operator=(token_source&&) noexcept;

    /// @brief A new token, 40 lowercase hex characters.
    /// @throws std::runtime_error with OpenSSL's error string if RAND_bytes fails (there is
    /// no fallback to a weaker source).
    std::string next();

    /// @brief Writes a new token into `out` (no allocation). A `char[40]` converts to it.
    /// @throws std::runtime_error as next().
    void next(std::span<char, token_chars> out);

private:
    void take(unsigned char* dst, std::size_t n);
    void refill();

    std::unique_ptr<unsigned char[]> buffer_;
    std::size_t size_ = 0;  // batch size
    std::size_t pos_ = 0;   // first unused byte; == size_: empty
    std::uint64_t fork_generation_ = 0;
};

/// @brief 8 bytes from RAND_bytes, for seeding retry_schedule's PRNG.
/// @throws std::runtime_error with OpenSSL's error string if RAND_bytes fails.
std::uint64_t random_seed();

}  // namespace redlock::detail

#endif
