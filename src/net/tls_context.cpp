// Building the OpenSSL contexts from the tls-* settings (see tls_context.hpp). The choices
// follow Redis 7.0's: TLSv1.2 and TLSv1.3 unless tls-protocols says otherwise, no compression,
// no renegotiation, peers verified against the CA file or directory, a server-side session
// cache unless tls-session-caching is off.
#include "hotkv/net/tls_context.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "hotkv/util/config.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// The session id context ties cached sessions to this server (required by OpenSSL when it
// verifies client certificates and resumes sessions).
constexpr unsigned char kSessionIdContext[] = "hotkv";

int password_callback(char* buf, int size, int /*rwflag*/, void* userdata) {
  const auto* pass = static_cast<const std::string*>(userdata);
  if (pass == nullptr || size <= 0) {
    return 0;
  }
  int n = static_cast<int>(std::min<size_t>(pass->size(), static_cast<size_t>(size)));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  return n;
}

// tls-protocols: which of TLSv1, TLSv1.1, TLSv1.2, TLSv1.3 are allowed, as SSL_OP_NO_* bits
// for the others; -1 for an unknown word.
long protocol_options(const std::string& protocols) {
  constexpr long kAll = SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 | SSL_OP_NO_TLSv1_2 | SSL_OP_NO_TLSv1_3;
  if (protocols.find_first_not_of(' ') == std::string::npos) {
    return SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;  // TLSv1.2 and TLSv1.3
  }
  long off = kAll;
  std::istringstream words(protocols);
  std::string w;
  while (words >> w) {
    std::string l = ascii_lower(w);
    if (l == "tlsv1") {
      off &= ~SSL_OP_NO_TLSv1;
    } else if (l == "tlsv1.1") {
      off &= ~SSL_OP_NO_TLSv1_1;
    } else if (l == "tlsv1.2") {
      off &= ~SSL_OP_NO_TLSv1_2;
    } else if (l == "tlsv1.3") {
      off &= ~SSL_OP_NO_TLSv1_3;
    } else {
      return -1;
    }
  }
  return off;
}

// One context, server or client side. nullptr with `error` set.
SSL_CTX* build(const TlsSettings& s, bool server_side, const std::string& cert,
               const std::string& key, std::string* pass, std::string& error) {
  SSL_CTX* ctx = SSL_CTX_new(server_side ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) {
    error = "failed to allocate SSL context: " + tls_error_text();
    return nullptr;
  }
  auto fail = [&](std::string why) {
    error = std::move(why);
    SSL_CTX_free(ctx);
    return nullptr;
  };
  long no_protocols = protocol_options(s.protocols);
  if (no_protocols < 0) {
    return fail("Invalid tls-protocols specified");
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                               SSL_OP_NO_RENEGOTIATION |
                               no_protocols);
  if (s.prefer_server_ciphers) {
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  }
  // An idle connection gives its record buffers back (as parked connections give theirs).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  if (server_side) {
    if (s.session_caching) {
      SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
      SSL_CTX_sess_set_cache_size(ctx, s.session_cache_size);
      SSL_CTX_set_timeout(ctx, s.session_cache_timeout);
      SSL_CTX_set_session_id_context(ctx, kSessionIdContext, sizeof(kSessionIdContext) - 1);
    } else {
      SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
      SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    }
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  SSL_CTX_set_default_passwd_cb(ctx, password_callback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, pass);
  if (!cert.empty() && SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) <= 0) {
    return fail("Failed to load certificate: " + cert + ": " + tls_error_text());
  }
  if (!key.empty() && SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return fail("Failed to load private key: " + key + ": " + tls_error_text());
  }
  if (!cert.empty() && !key.empty() && SSL_CTX_check_private_key(ctx) <= 0) {
    return fail("The private key does not match the certificate " + cert + ": " +
                tls_error_text());
  }
  if ((!s.ca_cert_file.empty() || !s.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, s.ca_cert_file.empty() ? nullptr : s.ca_cert_file.c_str(),
                                    s.ca_cert_dir.empty() ? nullptr : s.ca_cert_dir.c_str()) <=
          0) {
    return fail("Failed to configure CA certificate(s) file/directory: " + tls_error_text());
  }
  if (!s.dh_params_file.empty()) {
    BIO* bio = BIO_new_file(s.dh_params_file.c_str(), "r");
    EVP_PKEY* dh = bio != nullptr ? PEM_read_bio_Parameters(bio, nullptr) : nullptr;
    if (bio != nullptr) {
      BIO_free(bio);
    }
    if (dh == nullptr) {
      return fail("Failed to load " + s.dh_params_file + ": " + tls_error_text());
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh) <= 0) {
      EVP_PKEY_free(dh);
      return fail("Failed to load DH params file: " + s.dh_params_file + ": " + tls_error_text());
    }
  } else {
    SSL_CTX_set_dh_auto(ctx, 1);
  }
  if (!s.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, s.ciphers.c_str()) <= 0) {
    return fail("Failed to configure ciphers: " + s.ciphers);
  }
  if (!s.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, s.ciphersuites.c_str()) <= 0) {
    return fail("Failed to configure ciphersuites: " + s.ciphersuites);
  }
  if (server_side) {
    int verify = SSL_VERIFY_NONE;
    if (s.auth_clients == "yes") {
      verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    } else if (s.auth_clients == "optional") {
      verify = SSL_VERIFY_PEER;
    }
    SSL_CTX_set_verify(ctx, verify, nullptr);
  } else {
    // A master's certificate is checked against the CA (not its host name), as Redis does.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return ctx;
}

}  // namespace

std::string tls_error_text() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) {
      out += "; ";
    }
    out += buf;
  }
  return out.empty() ? "unknown error" : out;
}

TlsSettings TlsSettings::from(const Config& c) {
  TlsSettings s;
  s.cert_file = c.get_string("tls-cert-file");
  s.key_file = c.get_string("tls-key-file");
  s.key_file_pass = c.get_string("tls-key-file-pass");
  s.client_cert_file = c.get_string("tls-client-cert-file");
  s.client_key_file = c.get_string("tls-client-key-file");
  s.client_key_file_pass = c.get_string("tls-client-key-file-pass");
  s.ca_cert_file = c.get_string("tls-ca-cert-file");
  s.ca_cert_dir = c.get_string("tls-ca-cert-dir");
  s.dh_params_file = c.get_string("tls-dh-params-file");
  s.auth_clients = c.get_string("tls-auth-clients");
  s.protocols = c.get_string("tls-protocols");
  s.ciphers = c.get_string("tls-ciphers");
  s.ciphersuites = c.get_string("tls-ciphersuites");
  s.prefer_server_ciphers = c.get_string("tls-prefer-server-ciphers") == "yes";
  s.session_caching = c.get_string("tls-session-caching") == "yes";
  s.session_cache_size = c.tls_session_cache_size.load(std::memory_order_relaxed);
  s.session_cache_timeout = c.tls_session_cache_timeout.load(std::memory_order_relaxed);
  s.replication = c.tls_replication.load(std::memory_order_relaxed);
  s.cluster = c.get_string("tls-cluster") == "yes";
  return s;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(server_);
  SSL_CTX_free(client_);
}

std::shared_ptr<TlsContext> TlsContext::create(const TlsSettings& s, std::string& error) {
  if (s.cert_file.empty()) {
    error = "No tls-cert-file configured!";
    return nullptr;
  }
  if (s.key_file.empty()) {
    error = "No tls-key-file configured!";
    return nullptr;
  }
  if ((s.auth_clients != "no" || s.replication || s.cluster) && s.ca_cert_file.empty() &&
      s.ca_cert_dir.empty()) {
    error = "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
            "tls-replication or tls-auth-clients are enabled!";
    return nullptr;
  }
  std::shared_ptr<TlsContext> ctx(new TlsContext());
  ctx->key_pass_ = s.key_file_pass;
  ctx->server_ = build(s, true, s.cert_file, s.key_file, &ctx->key_pass_, error);
  if (ctx->server_ == nullptr) {
    return nullptr;
  }
  bool own_client_cert = !s.client_cert_file.empty();
  ctx->client_key_pass_ = own_client_cert ? s.client_key_file_pass : s.key_file_pass;
  ctx->client_ = build(s, false, own_client_cert ? s.client_cert_file : s.cert_file,
                       own_client_cert ? s.client_key_file : s.key_file, &ctx->client_key_pass_,
                       error);
  if (ctx->client_ == nullptr) {
    return nullptr;
  }
  return ctx;
}

}  // namespace hotkv
