// Pub/sub messages on a connection (see deliver in connection.hpp). Messages arrive in
// batches on the connection's own thread at any moment: while the coroutine waits for input
// (the batch is written at once by flush), while it is busy executing (queued behind
// the replies it has produced, which it writes itself), or while its own write is in flight
// (held in deferred_ until that write ends). While a command whose reply is silenced runs,
// they wait beside it (ClientSession::pushes_while_silenced) so that dropping its reply cannot
// drop them.
#include <asio/write.hpp>

#include "hotkv/net/connection.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {

void Connection::deliver(const PubSubMessage& m) {
  if (closing_) {
    return;
  }
  if (session_.replies_silenced) {
    session_.pushes_while_silenced += m.wire(session_.resp);
    return;
  }
  (coro_sending_ ? deferred_ : out_) += m.wire(session_.resp);
}

void Connection::send_pushes_while_silenced() {
  session_.replies_silenced = false;
  if (!session_.pushes_while_silenced.empty()) {
    out_ += session_.pushes_while_silenced;
    session_.pushes_while_silenced.clear();
  }
}

void Connection::flush() {
  if (closing_) {
    return;
  }
  // The limit is checked once per batch: a batch is bounded by what arrived in one turn of
  // the publishers' loops, and the check is not free per message.
  if (!within_pubsub_limits()) {
    protocol_log().warn("closing client {}: over client-output-buffer-limit pubsub",
                        session_.info->addr);
    close();
    return;
  }
  // A reply queued for the end-of-batch pass goes out with the pass, after its log write;
  // these messages follow it then.
  if (reading_ && !push_sending_ && !coro_sending_ && !reply_deferred_ && !out_.empty()) {
    start_push_write();
  }
}

void Connection::start_push_write() {
  if (tls_ && !encrypt_output()) [[unlikely]] {
    return;  // closed
  }
  std::error_code ec;
  size_t written = socket_.send_now(asio::buffer(out_), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    ec.clear();
    written = 0;
  }
  if (ec) {
    close();
    return;
  }
  KeyspaceStats::bump(engine_.shard(shard_).net_output_bytes(), written);
  out_.erase(0, written);
  if (out_.empty()) {
    return;
  }
  // A slow reader: the rest goes asynchronously while the coroutine keeps waiting for input.
  inflight_.swap(out_);
  push_sending_ = true;
  std::weak_ptr<Connection> weak = shared_from_this();
  asio::async_write(socket_, asio::buffer(inflight_),
                    [weak](const std::error_code& wec, size_t n) {
                      auto self = weak.lock();
                      if (!self) {
                        return;
                      }
                      KeyspaceStats::bump(self->engine_.shard(self->shard_).net_output_bytes(), n);
                      self->push_sending_ = false;
                      self->inflight_.clear();
                      self->drain_timer_.cancel();
                      if (wec) {
                        self->close();
                        return;
                      }
                      if (self->reading_ && !self->out_.empty()) {
                        self->start_push_write();
                      }
                      // Shutdown waited for this write (see Connection::shutdown).
                      if (self->shutting_down_ && self->reading_ && !self->push_sending_) {
                        self->close();
                      }
                    });
}

bool Connection::within_pubsub_limits() {
  const Config& cfg = engine_.config();
  auto pending = static_cast<int64_t>(out_.size() + deferred_.size() + inflight_.size());
  int64_t hard = cfg.pubsub_buffer_hard.load(std::memory_order_relaxed);
  int64_t soft = cfg.pubsub_buffer_soft.load(std::memory_order_relaxed);
  int64_t secs = cfg.pubsub_buffer_soft_seconds.load(std::memory_order_relaxed);
  session_.info->output_buffer.store(static_cast<uint64_t>(pending), std::memory_order_relaxed);
  if (hard > 0 && pending > hard) {
    return false;
  }
  if (soft > 0 && pending > soft) {
    int64_t now = unix_ms();
    if (soft_limit_since_ms_ == 0) {
      soft_limit_since_ms_ = now;
    } else if (now - soft_limit_since_ms_ >= secs * 1000) {
      return false;
    }
  } else {
    soft_limit_since_ms_ = 0;
  }
  return true;
}

}  // namespace hotkv
