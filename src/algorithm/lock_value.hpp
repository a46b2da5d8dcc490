// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_ALGORITHM_LOCK_VALUE_HPP
#define REDLOCK_SRC_ALGORITHM_LOCK_VALUE_HPP

#include <cstddef>
#include <string>
#include <string_view>

namespace redlock::detail {

/// @brief The value a lock's keys hold (docs/algorithm.md, "The value of a key: token and
/// identity"): the random token alone, or, with lock_options::identity, the token, one space
/// and the identity. Every script compares the whole value, so it is what the rest of the
/// client calls the token. A token the client makes has no space (lowercase hex), so the first
/// space ends it.

/// Why `identity` cannot be published (lock_options::identity), naming the field and the first
/// offending byte; empty when it can: empty (nothing published), or 1 to max_identity_size
/// bytes of printable ASCII (0x20 to 0x7E). `length`: the length of the text given, which
/// identity_text keeps beside its first max_identity_size bytes (`identity`).
std::string identity_problem(std::string_view identity, std::size_t length);
inline std::string identity_problem(std::string_view identity)
{
    return identity_problem(identity, identity.size());
}

/// Writes the value of a key into `out`: `token`, then " " and `identity` when there is one.
/// Reuses out's storage (no allocation once it is large enough).
void compose_value_into(std::string& out, std::string_view token, std::string_view identity);

/// The value of a key: `token` alone, or `token` + " " + `identity`.
inline std::string compose_value(std::string_view token, std::string_view identity)
{
    std::string out;
    compose_value_into(out, token, identity);
    return out;
}

/// A key's value taken apart: the token and the identity (empty when none).
struct value_parts
{
    std::string_view token;
    std::string_view identity;
};

/// Takes a value apart: `<40 lowercase hex> <identity>` (a token of this library's, one
/// space, at least one byte) gives both parts; any other value is a token alone, identity
/// empty: this library's without an identity, another Redlock client's (whatever its text),
/// a lock_from_parts token.
value_parts split_value(std::string_view value) noexcept;

}  // namespace redlock::detail

#endif
