// A TLS connection's reads and writes (see tls_session.hpp for the design): the socket carries
// records, the connection's buffers plaintext. A read decrypts into the input buffer, in the
// space the records were read into (OpenSSL has copied them by then); a write encrypts the
// output buffer in place just before it is sent. Everything else -- parking, output limits,
// pushes, migration -- sees plaintext sizes and the same buffers as on the plain path.
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include "hotkv/net/as_tuple.hpp"
#include "hotkv/net/connection.hpp"

namespace hotkv {
namespace {


RateLimitedLog& tls_log() {
  static RateLimitedLog log;
  return log;
}

}  // namespace

asio::awaitable<std::tuple<std::error_code, size_t>> Connection::read_tls() {
  for (;;) {
    // What earlier records left inside (plaintext that did not fit) comes first: the socket
    // may have nothing more to say.
    const bool was_established = tls_->established();
    ssize_t got = tls_->decrypt(in_.write_ptr(), in_.writable());
    // Handshake messages (and the session tickets that follow the last one) are sent here.
    // Once established, what OpenSSL queues on its own goes with the next reply instead: a
    // write of ours may be in flight, and records must not interleave.
    if (!was_established && tls_->has_output()) {
      std::string records;
      tls_->take_output(records);
      std::error_code ec;
      size_t sent = socket_.send_now(asio::buffer(records), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) {
        ec.clear();
      }
      if (!ec && sent < records.size()) {
        auto [wec, n] = co_await asio::async_write(
            socket_, asio::buffer(records.data() + sent, records.size() - sent), kTuple);
        ec = wec;
      }
      if (ec) {
        co_return std::tuple{ec, size_t{0}};
      }
    }
    if (got > 0) {
      co_return std::tuple{std::error_code(), static_cast<size_t>(got)};
    }
    if (got < 0) {
      if (!tls_->established()) {
        tls_log().warn("Error accepting a client connection: {} (addr={} laddr={})",
                       tls_->error(), session_.info->addr, session_.info->laddr);
      }
      co_return std::tuple{std::error_code(asio::error::eof), size_t{0}};
    }
    auto [ec, n] =
        co_await socket_.read_some(asio::buffer(in_.write_ptr(), in_.writable()), kTuple);
    if (ec || n == 0) {
      co_return std::tuple{ec ? ec : std::error_code(asio::error::eof), size_t{0}};
    }
    tls_->feed(in_.write_ptr(), n);
  }
}

asio::awaitable<std::tuple<std::error_code, size_t>> Connection::read_input() {
  if (tls_) {
    co_return co_await read_tls();
  }
  auto [ec, n] = co_await socket_.read_some(asio::buffer(in_.write_ptr(), in_.writable()), kTuple);
  co_return std::tuple{ec, n};
}

bool Connection::encrypt_output() {
  tls_scratch_.clear();
  if (!tls_->encrypt(out_, tls_scratch_)) {
    tls_log().warn("closing TLS client {}: {}", session_.info->addr, tls_->error());
    close();
    return false;
  }
  out_.swap(tls_scratch_);
  return true;
}

bool Connection::tls_handshake_overdue(int64_t now_ms) {
  if (!tls_ || tls_->established() || closing_ ||
      now_ms - session_.info->created_ms < kTlsHandshakeMs) {
    return false;
  }
  tls_log().warn("closing client {}: no TLS handshake within {} ms", session_.info->addr,
                 kTlsHandshakeMs);
  close();
  return true;
}

}  // namespace hotkv
