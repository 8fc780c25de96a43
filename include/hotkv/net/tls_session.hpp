// One TLS connection's state as a filter between ciphertext and plaintext, with OpenSSL
// reading from and writing to memory buffers (memory BIOs) rather than the socket. The
// connection keeps doing its own socket I/O on raw bytes: what it reads is fed in and decrypted
// into its input buffer; what it would send is encrypted first. The handshake is nothing more
// than the first reads and writes. No asio here, so the filter is tested without sockets.
//
// Owner thread only (the connection's); it moves with the connection to another thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct bio_st BIO;

namespace hotkv {

class TlsSession {
 public:
  // `server`: accept a handshake (clients on the tls-port); otherwise start one (a replica's
  // link to its master). The session holds its own reference to `ctx`.
  TlsSession(SSL_CTX* ctx, bool server);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Ciphertext received from the peer.
  void feed(const char* data, size_t n);
  // Drives the handshake while it is unfinished, then decrypts into dst (at most cap bytes).
  // Returns the plaintext bytes written, 0 when more ciphertext is needed first, or -1 when
  // the session is over (a failed handshake, a bad record, the peer's close_notify): error()
  // says why. Plaintext the call could not fit stays inside for the next call.
  ssize_t decrypt(char* dst, size_t cap);
  // Encrypts `plain` and appends the records (after any ciphertext already waiting, so the
  // order is kept) to `out`. False on failure.
  bool encrypt(std::string_view plain, std::string& out);
  // Ciphertext waiting to be sent that no encrypt carried yet: handshake messages, session
  // tickets, alerts. Appended to `out`.
  bool has_output() const;
  void take_output(std::string& out);
  bool established() const { return established_; }
  const std::string& error() const { return error_; }
  // The peer presented a certificate that verified.
  bool peer_verified() const;

 private:
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // ciphertext from the peer, read by OpenSSL
  BIO* out_ = nullptr;  // ciphertext for the peer, written by OpenSSL
  bool established_ = false;
  bool over_ = false;
  std::string error_;
};

}  // namespace hotkv
