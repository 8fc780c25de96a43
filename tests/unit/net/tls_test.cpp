// Unit tests for the TLS context (built from the tls-* settings, refused with Redis's reasons)
// and the memory-BIO session: a server and a client session shake hands and exchange data by
// passing their records to each other, with no socket. The certificates are made here, in a
// temporary directory, with OpenSSL's API: a CA, a server and a client certificate it signs,
// and a second CA that signs nothing of ours.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/net/tls_context.hpp"
#include "hotkv/net/tls_session.hpp"
#include "hotkv/util/config.hpp"

using hotkv::TlsContext;
using hotkv::TlsSession;
using hotkv::TlsSettings;

namespace {

struct KeyAndCert {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
};

void write_pem(const std::string& path, EVP_PKEY* key, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  if (key != nullptr) {
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  }
  if (cert != nullptr) {
    PEM_write_X509(f, cert);
  }
  std::fclose(f);
}

// A certificate for `cn`, signed by `issuer` (self-signed when null).
KeyAndCert make_cert(const char* cn, const KeyAndCert* issuer, bool ca) {
  KeyAndCert kc;
  kc.key = EVP_EC_gen("P-256");
  kc.cert = X509_new();
  X509_set_version(kc.cert, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(kc.cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(kc.cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(kc.cert), 3600);
  X509_set_pubkey(kc.cert, kc.key);
  X509_NAME* name = X509_get_subject_name(kc.cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(kc.cert, issuer ? X509_get_subject_name(issuer->cert) : name);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, issuer ? issuer->cert : kc.cert, kc.cert, nullptr, nullptr, 0);
  X509_EXTENSION* bc = X509V3_EXT_conf_nid(nullptr, &v3, NID_basic_constraints,
                                           ca ? "critical,CA:TRUE" : "CA:FALSE");
  X509_add_ext(kc.cert, bc, -1);
  X509_EXTENSION_free(bc);
  X509_sign(kc.cert, issuer ? issuer->key : kc.key, EVP_sha256());
  return kc;
}

// The files every test uses, made once.
struct Certs {
  std::string dir;
  std::string ca, server_cert, server_key, client_cert, client_key, other_ca, encrypted_key;
  Certs() {
    char tmpl[] = "/tmp/hotkv-tls-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
    KeyAndCert ca_kc = make_cert("Test CA", nullptr, true);
    KeyAndCert other = make_cert("Other CA", nullptr, true);
    KeyAndCert server = make_cert("localhost", &ca_kc, false);
    KeyAndCert client = make_cert("client", &ca_kc, false);
    ca = dir + "/ca.crt";
    other_ca = dir + "/other.crt";
    server_cert = dir + "/server.crt";
    server_key = dir + "/server.key";
    client_cert = dir + "/client.crt";
    client_key = dir + "/client.key";
    encrypted_key = dir + "/server-enc.key";
    write_pem(ca, nullptr, ca_kc.cert);
    write_pem(other_ca, nullptr, other.cert);
    write_pem(server_cert, nullptr, server.cert);
    write_pem(server_key, server.key, nullptr);
    write_pem(client_cert, nullptr, client.cert);
    write_pem(client_key, client.key, nullptr);
    FILE* f = std::fopen(encrypted_key.c_str(), "w");
    const char pass[] = "sesame";
    PEM_write_PrivateKey(f, server.key, EVP_aes_128_cbc(), nullptr, 0, nullptr,
                         const_cast<char*>(pass));
    std::fclose(f);
    for (KeyAndCert* kc : {&ca_kc, &other, &server, &client}) {
      EVP_PKEY_free(kc->key);
      X509_free(kc->cert);
    }
  }
  ~Certs() { std::filesystem::remove_all(dir); }
};

const Certs& certs() {
  static Certs c;
  return c;
}

TlsSettings server_settings() {
  TlsSettings s;
  s.cert_file = certs().server_cert;
  s.key_file = certs().server_key;
  s.ca_cert_file = certs().ca;
  return s;
}

// A client's context (what redis-cli or a replica would have): its CA, optionally the client
// certificate, and optionally a highest protocol version.
struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using ClientCtx = std::unique_ptr<SSL_CTX, CtxFree>;

ClientCtx client_context(const std::string& ca, bool with_cert, int max_version = 0) {
  ClientCtx ctx(SSL_CTX_new(TLS_client_method()));
  REQUIRE(SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr) == 1);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (with_cert) {
    REQUIRE(SSL_CTX_use_certificate_file(ctx.get(), certs().client_cert.c_str(),
                                         SSL_FILETYPE_PEM) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(ctx.get(), certs().client_key.c_str(),
                                        SSL_FILETYPE_PEM) == 1);
  }
  if (max_version != 0) {
    SSL_CTX_set_max_proto_version(ctx.get(), max_version);
  }
  return ctx;
}

// Passes records both ways until neither side has anything to say. Returns false as soon as
// either side fails.
bool pump(TlsSession& server, TlsSession& client, std::string* server_got = nullptr,
          std::string* client_got = nullptr) {
  char buf[65536];
  for (int round = 0; round < 50; ++round) {
    std::string a;
    std::string b;
    ssize_t cr = client.decrypt(buf, client_got ? sizeof(buf) : 0);
    if (cr < 0) {
      return false;
    }
    if (client_got != nullptr) {
      client_got->append(buf, static_cast<size_t>(cr));
    }
    client.take_output(a);
    server.feed(a.data(), a.size());
    ssize_t sr = server.decrypt(buf, server_got ? sizeof(buf) : 0);
    if (sr < 0) {
      return false;
    }
    if (server_got != nullptr) {
      server_got->append(buf, static_cast<size_t>(sr));
    }
    server.take_output(b);
    client.feed(b.data(), b.size());
    if (a.empty() && b.empty() && cr == 0 && sr == 0) {
      return true;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("a TLS context needs a certificate, its key, and a CA while clients are verified",
          "[net][tls]") {
  std::string err;
  TlsSettings s;
  CHECK(TlsContext::create(s, err) == nullptr);
  CHECK(err == "No tls-cert-file configured!");
  s.cert_file = certs().server_cert;
  CHECK(TlsContext::create(s, err) == nullptr);
  CHECK(err == "No tls-key-file configured!");
  s.key_file = certs().server_key;
  CHECK(TlsContext::create(s, err) == nullptr);
  CHECK(err.starts_with("Either tls-ca-cert-file or tls-ca-cert-dir must be specified"));
  SECTION("tls-auth-clients no needs no CA") {
    s.auth_clients = "no";
    CHECK(TlsContext::create(s, err) != nullptr);
    SECTION("unless the replica's link uses TLS") {
      s.replication = true;
      CHECK(TlsContext::create(s, err) == nullptr);
    }
  }
  SECTION("a CA directory serves as well as a file") {
    s.ca_cert_dir = certs().dir;
    CHECK(TlsContext::create(s, err) != nullptr);
  }
}

TEST_CASE("a TLS context refuses files that do not load and settings OpenSSL does not know",
          "[net][tls]") {
  std::string err;
  TlsSettings s = server_settings();
  SECTION("a missing certificate") {
    s.cert_file = certs().dir + "/nope.crt";
    CHECK(TlsContext::create(s, err) == nullptr);
    CHECK(err.starts_with("Failed to load certificate"));
  }
  SECTION("a key that is not the certificate's") {
    s.key_file = certs().client_key;
    CHECK(TlsContext::create(s, err) == nullptr);
    // OpenSSL checks the pair as it loads the key.
    CHECK(err.find("key values mismatch") != std::string::npos);
  }
  SECTION("an encrypted key needs its passphrase") {
    s.key_file = certs().encrypted_key;
    s.key_file_pass = "wrong";
    CHECK(TlsContext::create(s, err) == nullptr);
    s.key_file_pass = "sesame";
    CHECK(TlsContext::create(s, err) != nullptr);
  }
  SECTION("an unknown protocol version") {
    s.protocols = "TLSv1.2 TLSv1.9";
    CHECK(TlsContext::create(s, err) == nullptr);
    CHECK(err == "Invalid tls-protocols specified");
  }
  SECTION("protocol names are case-insensitive") {
    s.protocols = "tlsv1.3";
    CHECK(TlsContext::create(s, err) != nullptr);
  }
  SECTION("unknown ciphers") {
    s.ciphers = "NOT-A-CIPHER";
    CHECK(TlsContext::create(s, err) == nullptr);
    CHECK(err.starts_with("Failed to configure ciphers"));
  }
  SECTION("unknown TLSv1.3 cipher suites") {
    s.ciphersuites = "TLS_NOT_A_SUITE";
    CHECK(TlsContext::create(s, err) == nullptr);
    CHECK(err.starts_with("Failed to configure ciphersuites"));
  }
  SECTION("a missing CA file") {
    s.ca_cert_file = certs().dir + "/nope.crt";
    CHECK(TlsContext::create(s, err) == nullptr);
    CHECK(err.starts_with("Failed to configure CA certificate"));
  }
}

TEST_CASE("two TLS sessions shake hands and carry data both ways through memory",
          "[net][tls]") {
  std::string err;
  TlsSettings s = server_settings();
  s.auth_clients = "no";
  auto server_ctx = TlsContext::create(s, err);
  REQUIRE(server_ctx != nullptr);
  auto client_ctx = client_context(certs().ca, false);
  TlsSession server(server_ctx->server(), true);
  TlsSession client(client_ctx.get(), false);
  REQUIRE(pump(server, client));
  CHECK(server.established());
  CHECK(client.established());
  CHECK_FALSE(server.peer_verified());

  // A request, and a reply bigger than one record (16 KB), decrypted in small pieces.
  std::string records;
  REQUIRE(client.encrypt("*1\r\n$4\r\nPING\r\n", records));
  server.feed(records.data(), records.size());
  char buf[4096];
  ssize_t n = server.decrypt(buf, sizeof(buf));
  REQUIRE(n == 14);
  CHECK(std::string(buf, 14) == "*1\r\n$4\r\nPING\r\n");
  std::string big(200000, 'x');
  for (size_t i = 0; i < big.size(); i += 997) {
    big[i] = static_cast<char>('a' + i % 26);
  }
  records.clear();
  REQUIRE(server.encrypt(big, records));
  CHECK(records.size() > big.size());
  std::string got;
  // Fed a byte range at a time, as a socket delivers it.
  for (size_t at = 0; at < records.size(); at += 3000) {
    size_t len = std::min<size_t>(3000, records.size() - at);
    client.feed(records.data() + at, len);
    for (;;) {
      ssize_t k = client.decrypt(buf, sizeof(buf));
      REQUIRE(k >= 0);
      if (k == 0) {
        break;
      }
      got.append(buf, static_cast<size_t>(k));
    }
  }
  CHECK(got == big);
}

TEST_CASE("tls-auth-clients decides whether a client without a certificate gets in",
          "[net][tls]") {
  std::string err;
  TlsSettings s = server_settings();
  auto run = [&](const std::string& auth, bool client_cert) {
    s.auth_clients = auth;
    auto server_ctx = TlsContext::create(s, err);
    REQUIRE(server_ctx != nullptr);
    auto client_ctx = client_context(certs().ca, client_cert);
    TlsSession server(server_ctx->server(), true);
    TlsSession client(client_ctx.get(), false);
    bool ok = pump(server, client);
    // TLSv1.3 sends the verdict on the client's certificate after the client finished:
    // the server's first read is where a refusal shows.
    std::string records;
    if (ok && client.encrypt("PING\r\n", records)) {
      server.feed(records.data(), records.size());
      char buf[64];
      ok = server.decrypt(buf, sizeof(buf)) == 6;
    }
    return std::pair{ok, server.peer_verified()};
  };
  CHECK(run("yes", true) == std::pair{true, true});
  CHECK(run("yes", false).first == false);
  CHECK(run("optional", false) == std::pair{true, false});
  CHECK(run("optional", true) == std::pair{true, true});
  CHECK(run("no", false) == std::pair{true, false});
}

TEST_CASE("a TLS client refuses a server its CA did not sign", "[net][tls]") {
  std::string err;
  TlsSettings s = server_settings();
  s.auth_clients = "no";
  auto server_ctx = TlsContext::create(s, err);
  auto client_ctx = client_context(certs().other_ca, false);
  TlsSession server(server_ctx->server(), true);
  TlsSession client(client_ctx.get(), false);
  CHECK_FALSE(pump(server, client));
  CHECK_FALSE(client.established());
  CHECK(client.error().find("certificate verify failed") != std::string::npos);
}

TEST_CASE("tls-protocols TLSv1.3 refuses a client that speaks only TLSv1.2", "[net][tls]") {
  std::string err;
  TlsSettings s = server_settings();
  s.auth_clients = "no";
  s.protocols = "TLSv1.3";
  auto server_ctx = TlsContext::create(s, err);
  REQUIRE(server_ctx != nullptr);
  auto old_client = client_context(certs().ca, false, TLS1_2_VERSION);
  TlsSession server(server_ctx->server(), true);
  TlsSession client(old_client.get(), false);
  CHECK_FALSE(pump(server, client));
  CHECK_FALSE(server.established());
}

TEST_CASE("bytes that are not TLS end the server's session", "[net][tls]") {
  std::string err;
  TlsSettings s = server_settings();
  auto server_ctx = TlsContext::create(s, err);
  TlsSession server(server_ctx->server(), true);
  std::string garbage = "*1\r\n$4\r\nPING\r\n";
  server.feed(garbage.data(), garbage.size());
  char buf[64];
  CHECK(server.decrypt(buf, sizeof(buf)) == -1);
  CHECK_FALSE(server.established());
  CHECK(server.decrypt(buf, sizeof(buf)) == -1);  // and stays over
  std::string out;
  CHECK_FALSE(server.encrypt("x", out));
}

TEST_CASE("CONFIG SET of TLS settings applies them together through the TLS hook",
          "[config][tls]") {
  hotkv::Config c;
  int calls = 0;
  std::string refuse;
  c.set_tls_hook([&] {
    ++calls;
    return refuse;
  });
  std::string failed;
  std::pair<std::string_view, std::string_view> pairs[] = {{"tls-cert-file", "a.crt"},
                                                           {"tls-key-file", "a.key"},
                                                           {"maxclients", "77"}};
  REQUIRE(c.set_many(pairs, failed).is_ok());
  CHECK(calls == 1);
  CHECK(c.get_string("tls-cert-file") == "a.crt");
  SECTION("the same value again reloads (certificate rotation)") {
    REQUIRE(c.set("tls-cert-file", "a.crt", false).is_ok());
    CHECK(calls == 2);
  }
  SECTION("a refusal puts every setting back") {
    refuse = "Unable to update TLS configuration. Check server logs.";
    std::pair<std::string_view, std::string_view> more[] = {{"maxclients", "5"},
                                                            {"tls-key-file", "b.key"}};
    hotkv::Status st = c.set_many(more, failed);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message() == refuse);
    CHECK(failed == "tls-key-file");
    CHECK(c.get_string("tls-key-file") == "a.key");
    CHECK(c.get_string("maxclients") == "77");
  }
  SECTION("settings outside the TLS context do not call it") {
    REQUIRE(c.set("maxclients", "9", false).is_ok());
    REQUIRE(c.set("tls-port", "0", false).is_ok());
    CHECK(calls == 1);
  }
  SECTION("the start-up settings never call it") {
    REQUIRE(c.set("tls-ca-cert-file", "ca.crt", true).is_ok());
    CHECK(calls == 1);
  }
  SECTION("tls-auth-clients takes Redis's three values") {
    CHECK(c.set("tls-auth-clients", "optional", false).is_ok());
    CHECK(c.set("tls-auth-clients", "maybe", false).message() ==
          "argument(s) must be one of the following: no, yes, optional");
  }
}
