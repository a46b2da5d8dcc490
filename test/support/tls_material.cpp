// Throw-away PKI for the live TLS tests, built with the OpenSSL C API.
#include "tls_material.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace redlock::test {
namespace {

template <auto Free>
struct openssl_deleter
{
    template <class T>
    void operator()(T* p) const noexcept
    {
        Free(p);
    }
};

using pkey_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter<EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, openssl_deleter<X509_free>>;
using bio_ptr = std::unique_ptr<BIO, openssl_deleter<BIO_free_all>>;
using extension_ptr = std::unique_ptr<X509_EXTENSION, openssl_deleter<X509_EXTENSION_free>>;

// OpenSSL reports the reason on its thread-local error queue; drain it into the message so
// a failure says more than "it failed" (and the queue does not leak into later TLS tests).
[[noreturn]] void fail(std::string_view step)
{
    std::string message = "write_tls_material: ";
    message += step;
    message += " failed";
    char text[256];
    while (const unsigned long code = ERR_get_error())
    {
        ERR_error_string_n(code, text, sizeof text);
        message += "; ";
        message += text;
    }
    throw std::runtime_error(message);
}

void check(bool ok, std::string_view step)
{
    if (!ok)
        fail(step);
}

pkey_ptr make_key()
{
    pkey_ptr key{EVP_EC_gen("P-256")};
    check(key != nullptr, "EC P-256 key generation");
    return key;
}

struct extension_spec
{
    int nid;
    const char* value;
};

/// Builds a v3 certificate for `subject_key`; self-signed when `issuer` is null.
x509_ptr make_certificate(EVP_PKEY* subject_key, const char* common_name, X509* issuer,
                          EVP_PKEY* signing_key, std::initializer_list<extension_spec> extensions)
{
    x509_ptr cert{X509_new()};
    check(cert != nullptr, "X509_new");
    check(X509_set_version(cert.get(), X509_VERSION_3) == 1, "X509_set_version");

    // Random serials: two runs' CAs must never look like the same certificate to a cache.
    std::uint64_t serial = 0;
    check(RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial) == 1, "RAND_bytes");
    serial >>= 1;  // keep the ASN.1 INTEGER positive and short
    check(ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial) == 1, "serial number");

    // Back-date by an hour so a small clock skew between steps cannot make it "not yet valid".
    check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr, "notBefore");
    check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7L * 24 * 3600) != nullptr, "notAfter");

    X509_NAME* name = X509_get_subject_name(cert.get());
    const auto add_entry = [&](const char* field, const char* value) {
        check(X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC,
                                         reinterpret_cast<const unsigned char*>(value), -1, -1,
                                         0) == 1,
              "subject name");
    };
    add_entry("O", "redlock tests");
    add_entry("CN", common_name);
    check(X509_set_issuer_name(cert.get(),
                               issuer != nullptr ? X509_get_subject_name(issuer) : name) == 1,
          "issuer name");
    check(X509_set_pubkey(cert.get(), subject_key) == 1, "X509_set_pubkey");

    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer != nullptr ? issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
    for (const auto& spec : extensions)
    {
        extension_ptr ext{X509V3_EXT_nconf_nid(nullptr, &ctx, spec.nid, spec.value)};
        check(ext != nullptr, spec.value);
        check(X509_add_ext(cert.get(), ext.get(), -1) == 1, "X509_add_ext");
    }

    check(X509_sign(cert.get(), signing_key, EVP_sha256()) > 0, "X509_sign");
    return cert;
}

x509_ptr make_ca(EVP_PKEY* key, const char* common_name)
{
    return make_certificate(key, common_name, nullptr, key,
                            {{NID_basic_constraints, "critical,CA:TRUE"},
                             {NID_key_usage, "critical,keyCertSign,cRLSign"},
                             {NID_subject_key_identifier, "hash"}});
}

bio_ptr open_for_writing(const std::filesystem::path& file)
{
    bio_ptr bio{BIO_new_file(file.c_str(), "w")};
    check(bio != nullptr, "opening " + file.string());
    return bio;
}

void write_certificate(const std::filesystem::path& file, X509* cert)
{
    const bio_ptr bio = open_for_writing(file);
    check(PEM_write_bio_X509(bio.get(), cert) == 1, "writing " + file.string());
}

void write_key(const std::filesystem::path& file, EVP_PKEY* key)
{
    const bio_ptr bio = open_for_writing(file);
    // Owner-only before any key bytes land in the file.
    std::filesystem::permissions(file, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
    check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "writing " + file.string());
}

}  // namespace

tls_material write_tls_material(const std::filesystem::path& dir)
{
    const pkey_ptr ca_key = make_key();
    const x509_ptr ca = make_ca(ca_key.get(), "redlock test CA");

    const pkey_ptr server_key = make_key();
    const x509_ptr server =
        make_certificate(server_key.get(), "localhost", ca.get(), ca_key.get(),
                         {{NID_basic_constraints, "critical,CA:FALSE"},
                          {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                          {NID_ext_key_usage, "serverAuth,clientAuth"},
                          {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                          {NID_subject_key_identifier, "hash"},
                          {NID_authority_key_identifier, "keyid:always"}});

    // Same subject name as the real CA on purpose: a client that matched issuers by name
    // instead of verifying signatures would wrongly accept the server with this one.
    const pkey_ptr other_key = make_key();
    const x509_ptr other = make_ca(other_key.get(), "redlock test CA");

    tls_material files{
        .ca_file = (dir / "ca.crt").string(),
        .cert_file = (dir / "server.crt").string(),
        .key_file = (dir / "server.key").string(),
        .other_ca_file = (dir / "other-ca.crt").string(),
    };
    write_certificate(files.ca_file, ca.get());
    write_key(dir / "ca.key", ca_key.get());
    write_certificate(files.cert_file, server.get());
    write_key(files.key_file, server_key.get());
    write_certificate(files.other_ca_file, other.get());
    write_key(dir / "other-ca.key", other_key.get());
    return files;
}

}  // namespace redlock::test
