// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_PROTOCOL_RESP_ENCODER_HPP
#define REDLOCK_SRC_PROTOCOL_RESP_ENCODER_HPP

/// @file
/// @brief Binary-safe encoding of commands as RESP arrays of bulk strings.
///
/// Every function appends to `out` and never clears it, so several commands can be
/// pipelined into one write buffer. A command is sized before it is written and `out`
/// grows at most once per call: this is on the request hot path.

#include <cassert>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace redlock::resp {

/// @brief Bulk strings encoded once and copied into commands as they are: the constant
/// arguments of a command sent on every lock cycle (`NX PX`, `EVALSHA <sha1> 1`) cost a
/// memcpy instead of being encoded again each time.
///
/// Made by encode_bulks(); an argument of append_command that stands for `count()` arguments.
class encoded_bulks
{
public:
    encoded_bulks() = default;
    /// `bytes`: `count` bulk strings, encoded (what encode_bulks makes).
    encoded_bulks(std::string bytes, std::size_t count) : bytes_(std::move(bytes)), count_(count) {}
    std::string_view bytes() const noexcept { return bytes_; }
    std::size_t count() const noexcept { return count_; }

private:
    std::string bytes_;
    std::size_t count_ = 0;
};

namespace detail {

/// Integers that are encoded as their decimal text. bool and the character types are left
/// out on purpose: `append_command(out, "SET", key, true)` or a `char` argument is far more
/// likely a bug than a wish to send "1" or "65".
template <class T>
concept integer_arg =
    std::integral<T> && !std::same_as<std::remove_cv_t<T>, bool> &&
    !std::same_as<std::remove_cv_t<T>, char> && !std::same_as<std::remove_cv_t<T>, signed char> &&
    !std::same_as<std::remove_cv_t<T>, unsigned char> &&
    !std::same_as<std::remove_cv_t<T>, wchar_t> && !std::same_as<std::remove_cv_t<T>, char8_t> &&
    !std::same_as<std::remove_cv_t<T>, char16_t> && !std::same_as<std::remove_cv_t<T>, char32_t>;

template <class T>
concept string_arg = std::is_convertible_v<const T&, std::string_view>;

template <class T>
concept command_arg = string_arg<T> || integer_arg<T> || std::same_as<T, encoded_bulks>;

constexpr std::size_t decimal_digits(std::uint64_t v) noexcept
{
    // Four comparisons per division keep the common one- to four-digit lengths division-free.
    std::size_t n = 1;
    for (;;)
    {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

template <integer_arg T>
constexpr std::size_t decimal_length(T v) noexcept
{
    if constexpr (std::is_signed_v<T>)
    {
        if (v < 0)
        {
            // Negating in unsigned arithmetic is defined for the minimum value too.
            return 1 + decimal_digits(std::uint64_t{0} - static_cast<std::uint64_t>(v));
        }
    }
    return decimal_digits(static_cast<std::uint64_t>(v));
}

inline char* write_header(char* p, char prefix, std::size_t n) noexcept
{
    *p++ = prefix;
    // Argument lengths and counts are nearly always below 100: skip to_chars for them.
    if (n < 10)
    {
        *p++ = static_cast<char>('0' + n);
    }
    else if (n < 100)
    {
        *p++ = static_cast<char>('0' + n / 10);
        *p++ = static_cast<char>('0' + n % 10);
    }
    else
    {
        p = std::to_chars(p, p + decimal_digits(n), static_cast<std::uint64_t>(n)).ptr;
    }
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

constexpr std::size_t header_size(std::size_t n) noexcept { return 1 + decimal_digits(n) + 2; }

constexpr std::size_t bulk_size(std::string_view s) noexcept
{
    return header_size(s.size()) + s.size() + 2;
}

inline std::size_t bulk_size(const encoded_bulks& e) noexcept { return e.bytes().size(); }

template <integer_arg T>
constexpr std::size_t bulk_size(T v) noexcept
{
    const std::size_t len = decimal_length(v);
    return header_size(len) + len + 2;
}

inline char* write_bulk(char* p, std::string_view s) noexcept
{
    p = write_header(p, '$', s.size());
    if (!s.empty())  // memcpy from a null data() is undefined even for zero bytes
    {
        std::memcpy(p, s.data(), s.size());
        p += s.size();
    }
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

template <integer_arg T>
char* write_bulk(char* p, T v) noexcept
{
    const std::size_t len = decimal_length(v);
    p = write_header(p, '$', len);
    [[maybe_unused]] const auto r = std::to_chars(p, p + len, v);
    assert(r.ec == std::errc{} && r.ptr == p + len);
    p += len;
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

inline char* write_bulk(char* p, const encoded_bulks& e) noexcept
{
    std::memcpy(p, e.bytes().data(), e.bytes().size());
    return p + e.bytes().size();
}

/// How many of a command's arguments a piece stands for.
template <class T>
constexpr std::size_t arg_count(const T&) noexcept
{
    return 1;
}

inline std::size_t arg_count(const encoded_bulks& e) noexcept { return e.count(); }

/// Grows `out` by exactly `n` bytes and returns where they start. A single resize (rather than
/// a reserve followed by many appends) drops the capacity check from every piece.
inline char* grow(std::string& out, std::size_t n)
{
    const std::size_t old = out.size();
    out.resize(old + n);
    return out.data() + old;
}

/// Converts a command argument once, so a `const char*` is measured by a single strlen.
template <command_arg T>
constexpr decltype(auto) as_piece(const T& v) noexcept
{
    if constexpr (integer_arg<T>)
        return T{v};
    else if constexpr (std::same_as<T, encoded_bulks>)
        return (v);  // a reference: no copy of the bytes
    else
        return std::string_view(v);
}

}  // namespace detail

/// Appends the header of an array of `n` elements: `*n\r\n`.
inline void append_array_header(std::string& out, std::size_t n)
{
    char* const end = detail::write_header(detail::grow(out, detail::header_size(n)), '*', n);
    assert(end == out.data() + out.size());
    (void)end;
}

/// Appends `s` as a bulk string: `$len\r\n<bytes>\r\n`. Binary-safe.
inline void append_bulk(std::string& out, std::string_view s)
{
    char* const end = detail::write_bulk(detail::grow(out, detail::bulk_size(s)), s);
    assert(end == out.data() + out.size());
    (void)end;
}

/// Appends the decimal text of `v` as a bulk string (`$2\r\n-5\r\n`), as Redis expects
/// integer arguments (EX seconds, PX milliseconds...).
template <detail::integer_arg T>
void append_bulk(std::string& out, T v)
{
    char* const end = detail::write_bulk(detail::grow(out, detail::bulk_size(v)), v);
    assert(end == out.data() + out.size());
    (void)end;
}

/// The int64 overload named in the design; exact matches of other integer types pick the
/// template above, so no call is ambiguous.
inline void append_bulk(std::string& out, std::int64_t v) { append_bulk<std::int64_t>(out, v); }

/// bool, the character types and floating point would otherwise convert silently to the
/// int64 overload.
template <class T>
requires(std::is_arithmetic_v<T> && !detail::integer_arg<T>) void append_bulk(std::string& out,
                                                                              T v) = delete;

/// @brief Appends one command: an array header and one bulk string per argument.
///
/// Each argument is either convertible to `std::string_view` (sent as is, binary-safe), an
/// integer (sent as its decimal text), or encoded_bulks (copied as they are, counting as the
/// arguments they hold). `out` grows once, by the exact encoded size.
template <class... Args>
requires(detail::command_arg<Args>&&...) void append_command(std::string& out, const Args&... args)
{
    const std::tuple<decltype(detail::as_piece(args))...> pieces{detail::as_piece(args)...};
    const std::size_t argc = std::apply(
        [](const auto&... piece) { return (std::size_t{0} + ... + detail::arg_count(piece)); },
        pieces);
    const std::size_t total = std::apply(
        [argc](const auto&... piece) {
            return detail::header_size(argc) + (std::size_t{0} + ... + detail::bulk_size(piece));
        },
        pieces);
    char* p = detail::write_header(detail::grow(out, total), '*', argc);
    std::apply([&p](const auto&... piece) { ((p = detail::write_bulk(p, piece)), ...); }, pieces);
    assert(p == out.data() + out.size());
}

/// Encodes `args` once as bulk strings (no array header), for use as one argument of
/// append_command that stands for all of them.
template <class... Args>
requires((detail::string_arg<Args> || detail::integer_arg<Args>)&&...) encoded_bulks
    encode_bulks(const Args&... args)
{
    std::string bytes;
    (append_bulk(bytes, args), ...);
    return encoded_bulks(std::move(bytes), sizeof...(Args));
}

/// Appends one command whose arguments are only known at run time.
inline void append_command(std::string& out, std::span<const std::string_view> args)
{
    std::size_t total = detail::header_size(args.size());
    for (const std::string_view a : args)
        total += detail::bulk_size(a);
    char* p = detail::write_header(detail::grow(out, total), '*', args.size());
    for (const std::string_view a : args)
        p = detail::write_bulk(p, a);
    assert(p == out.data() + out.size());
}

}  // namespace redlock::resp

#endif
