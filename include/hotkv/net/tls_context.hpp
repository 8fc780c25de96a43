// TLS configuration as OpenSSL contexts: the tls-* settings (Redis 7.0's names and meanings)
// turned into one server context, for clients on the tls-port, and one client context, for this
// server's own outgoing links (a replica's link to its master with tls-replication). A context
// is built whole from the settings and never changed afterwards: CONFIG SET of a tls-* setting
// builds a new one, which new connections take, while connections already open keep theirs
// (OpenSSL counts the references of each SSL to its context).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;

namespace hotkv {

class Config;

// The tls-* settings a context is built from.
struct TlsSettings {
  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;
  std::string client_cert_file;  // "" = the server's certificate serves outgoing links too
  std::string client_key_file;
  std::string client_key_file_pass;
  std::string ca_cert_file;
  std::string ca_cert_dir;
  std::string dh_params_file;
  std::string auth_clients = "yes";  // yes | no | optional
  std::string protocols;             // "" = "TLSv1.2 TLSv1.3"
  std::string ciphers;
  std::string ciphersuites;
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20480;
  int64_t session_cache_timeout = 300;
  bool replication = false;  // the CA is required for a replica's link as for client auth
  bool cluster = false;

  // Any thread: the current values of the tls-* settings.
  static TlsSettings from(const Config& config);
};

class TlsContext {
 public:
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Builds both contexts. nullptr with `error` set to the reason (a file that does not load,
  // a key that does not match its certificate, an unknown protocol or cipher, a CA missing
  // while clients must be verified), worded as Redis logs it where it has words for it.
  static std::shared_ptr<TlsContext> create(const TlsSettings& s, std::string& error);

  SSL_CTX* server() const { return server_; }
  SSL_CTX* client() const { return client_; }

 private:
  TlsContext() = default;
  SSL_CTX* server_ = nullptr;
  SSL_CTX* client_ = nullptr;
  // The passphrases OpenSSL's password callback reads while the keys load.
  std::string key_pass_;
  std::string client_key_pass_;
};

// The context new connections take, replaced as a whole by CONFIG SET tls-* (any thread).
class TlsContextHolder {
 public:
  std::shared_ptr<TlsContext> current() const {
    std::lock_guard lock(mutex_);
    return ctx_;
  }
  void set(std::shared_ptr<TlsContext> ctx) {
    std::lock_guard lock(mutex_);
    ctx_ = std::move(ctx);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<TlsContext> ctx_;
};

// The OpenSSL error queue as one line (and the queue emptied).
std::string tls_error_text();

}  // namespace hotkv
