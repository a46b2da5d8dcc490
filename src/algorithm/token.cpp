// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#include "algorithm/token.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace redlock::detail {
namespace {

std::atomic<std::uint64_t> fork_counter{0};

void on_fork_in_child() noexcept { fork_counter.fetch_add(1, std::memory_order_relaxed); }

// Registered once per process, the first time a token_source is made.
std::uint64_t current_fork_generation()
{
    static const bool registered = [] {
        ::pthread_atfork(nullptr, nullptr, &on_fork_in_child);
        return true;
    }();
    (void)registered;
    return fork_counter.load(std::memory_order_relaxed);
}

[[noreturn]] void throw_rand_failure()
{
    const unsigned long code = ERR_get_error();
    std::string message = "RAND_bytes failed: ";
    if (code == 0)
    {
        message += "no OpenSSL error reported";
    }
    else
    {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        message += text;
    }
    ERR_clear_error();
    throw std::runtime_error(message);
}

void random_bytes(unsigned char* dst, std::size_t n)
{
    while (n > 0)
    {
        const auto chunk = std::min<std::size_t>(n, INT_MAX);
        if (RAND_bytes(dst, static_cast<int>(chunk)) != 1)
            throw_rand_failure();
        dst += chunk;
        n -= chunk;
    }
}

}  // namespace

token_source::token_source(std::size_t batch_bytes)
    : buffer_(new unsigned char[std::max<std::size_t>(batch_bytes, 1)]),
      size_(std::max<std::size_t>(batch_bytes, 1)),
      pos_(size_),
      fork_generation_(current_fork_generation())
{}

token_source::~token_source()
{
    if (buffer_)
        OPENSSL_cleanse(buffer_.get(), size_);
}

token_source::token_source(token_source&& other) noexcept
    : buffer_(std::move(other.buffer_)),
      size_(std::exchange(other.size_, 0)),
      pos_(std::exchange(other.pos_, 0)),
      fork_generation_(other.fork_generation_)
{}

token_source& token_source::operator=(token_source&& other) noexcept
{
    if (this != &other)
    {
        if (buffer_)
            OPENSSL_cleanse(buffer_.get(), size_);
        buffer_ = std::move(other.buffer_);
        size_ = std::exchange(other.size_, 0);
        pos_ = std::exchange(other.pos_, 0);
        fork_generation_ = other.fork_generation_;
    }
    return *this;
}

void token_source::refill()
{
    random_bytes(buffer_.get(), size_);
    pos_ = 0;
}

void token_source::take(unsigned char* dst, std::size_t n)
{
    if (!buffer_)
        throw std::logic_error("token_source used after move");
    if (const auto generation = current_fork_generation(); generation != fork_generation_)
    {
        OPENSSL_cleanse(buffer_.get(), size_);
        pos_ = size_;
        fork_generation_ = generation;
    }
    while (n > 0)
    {
        if (pos_ == size_)
            refill();
        const auto chunk = std::min(n, size_ - pos_);
        std::memcpy(dst, buffer_.get() + pos_, chunk);
        // Wiped so that a later memory disclosure cannot reveal tokens already handed out.
        OPENSSL_cleanse(buffer_.get() + pos_, chunk);
        pos_ += chunk;
        dst += chunk;
        n -= chunk;
    }
}

void token_source::next(std::span<char, token_chars> out)
{
    static constexpr char digits[] = "0123456789abcdef";
    unsigned char raw[token_bytes];
    take(raw, token_bytes);
    for (std::size_t i = 0; i != token_bytes; ++i)
    {
        out[2 * i] = digits[raw[i] >> 4];
        out[2 * i + 1] = digits[raw[i] & 0x0f];
    }
    OPENSSL_cleanse(raw, sizeof raw);
}

std::string token_source::next()
{
    std::string token(token_chars, '\0');
    next(std::span<char, token_chars>(token.data(), token_chars));
    return token;
}

std::uint64_t random_seed()
{
    unsigned char raw[sizeof(std::uint64_t)];
    random_bytes(raw, sizeof raw);
    std::uint64_t seed = 0;
    std::memcpy(&seed, raw, sizeof seed);
    return seed;
}

}  // namespace redlock::detail
