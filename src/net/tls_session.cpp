// The memory-BIO filter (see tls_session.hpp).
#include "hotkv/net/tls_session.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "hotkv/net/tls_context.hpp"

namespace hotkv {

TlsSession::TlsSession(SSL_CTX* ctx, bool server) {
  ssl_ = SSL_new(ctx);
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  // An empty input buffer means "more to come" (want read), not an end of stream.
  BIO_set_mem_eof_return(in_, -1);
  BIO_set_mem_eof_return(out_, -1);
  SSL_set_bio(ssl_, in_, out_);  // the SSL owns both now
  if (server) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::feed(const char* data, size_t n) {
  if (n > 0) {
    BIO_write(in_, data, static_cast<int>(n));
  }
}

ssize_t TlsSession::decrypt(char* dst, size_t cap) {
  if (over_) {
    return -1;
  }
  if (!established_) {
    ERR_clear_error();
    int r = SSL_do_handshake(ssl_);
    if (r != 1) {
      int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_WANT_READ) {
        return 0;
      }
      over_ = true;
      long verify = SSL_get_verify_result(ssl_);
      error_ = "handshake failed: " + tls_error_text();
      if (verify != X509_V_OK) {
        error_ += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
      }
      return -1;
    }
    established_ = true;
  }
  size_t total = 0;
  while (total < cap) {
    size_t got = 0;
    ERR_clear_error();
    int r = SSL_read_ex(ssl_, dst + total, cap - total, &got);
    if (r == 1) {
      total += got;
      continue;
    }
    int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ) {
      break;
    }
    // The peer's close_notify, or a record that does not decrypt: the plaintext before it
    // still counts, the next call reports the end.
    over_ = true;
    error_ = e == SSL_ERROR_ZERO_RETURN ? "closed by the peer" : "bad record: " + tls_error_text();
    return total > 0 ? static_cast<ssize_t>(total) : -1;
  }
  return static_cast<ssize_t>(total);
}

bool TlsSession::encrypt(std::string_view plain, std::string& out) {
  if (over_) {
    return false;
  }
  while (!plain.empty()) {
    size_t n = 0;
    ERR_clear_error();
    // A memory BIO takes everything: one call writes the whole buffer as records.
    if (SSL_write_ex(ssl_, plain.data(), plain.size(), &n) != 1) {
      over_ = true;
      error_ = "write failed: " + tls_error_text();
      return false;
    }
    plain.remove_prefix(n);
  }
  take_output(out);
  return true;
}

bool TlsSession::has_output() const { return BIO_ctrl_pending(out_) > 0; }

void TlsSession::take_output(std::string& out) {
  size_t pending = BIO_ctrl_pending(out_);
  if (pending == 0) {
    return;
  }
  size_t at = out.size();
  out.resize(at + pending);
  int n = BIO_read(out_, out.data() + at, static_cast<int>(pending));
  out.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
}

bool TlsSession::peer_verified() const {
  X509* peer = SSL_get0_peer_certificate(ssl_);
  return peer != nullptr && SSL_get_verify_result(ssl_) == X509_V_OK;
}

}  // namespace hotkv
