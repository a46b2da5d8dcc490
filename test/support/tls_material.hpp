// Throw-away PKI for the live TLS tests, generated at test time.
#pragma once

#include <filesystem>
#include <string>

namespace redlock::test {

/// @brief Paths of the PEM files written by @ref write_tls_material.
struct tls_material
{
    std::string ca_file;        ///< Self-signed CA certificate that signed `cert_file`.
    std::string cert_file;      ///< Server certificate, SAN `IP:127.0.0.1`, `DNS:localhost`.
    std::string key_file;       ///< Private key of `cert_file` (unencrypted).
    std::string other_ca_file;  ///< An unrelated self-signed CA, for "untrusted peer" tests.
};

/**
 * @brief Generates a CA, a server certificate signed by it and a second, unrelated CA.
 *
 * Uses the OpenSSL C API, so no `openssl` executable is needed. Keys are EC P-256 (fast to
 * generate); certificates are X.509 v3, SHA-256, valid from one hour ago for seven days.
 * The server certificate also carries `extendedKeyUsage clientAuth`, so tests of mutual
 * TLS can present it as a client certificate.
 *
 * @param dir An existing directory; files named `ca.crt`, `ca.key`, `server.crt`,
 *            `server.key`, `other-ca.crt` and `other-ca.key` are created in it.
 * @throws std::runtime_error naming the OpenSSL step that failed.
 */
tls_material write_tls_material(const std::filesystem::path& dir);

}  // namespace redlock::test
