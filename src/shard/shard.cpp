// Shard: active expiry scheduling. The timer is armed for the earliest deadline the wheel may
// hold rather than ticking every millisecond, so an idle shard (or one with no TTLs) costs no
// CPU; a mass expiry is worked off in bounded batches, yielding to clients between them.
#include "hotkv/shard/shard.hpp"

#include <asio/async_result.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/util/clock.hpp"

namespace hotkv {

Shard::Shard(size_t id, asio::io_context& io, size_t command_count, int64_t now_ms)
    : id_(id),
      io_(io),
      keyspace_(now_ms),
      command_stats_(new CommandStat[command_count]),
      timer_(io) {
  keyspace_.set_schedule_hook([this](int64_t deadline) { arm_expiry(deadline); });
}

void Shard::arm_expiry(int64_t deadline_ms) {
  if (stopped_ || deadline_ms >= armed_at_ms_) {
    return;
  }
  armed_at_ms_ = deadline_ms;
  int64_t delay = deadline_ms - unix_ms();
  timer_.expires_after(std::chrono::milliseconds(delay < 0 ? 0 : delay));
  timer_.async_wait([this](const std::error_code& ec) {
    if (ec) {
      return;  // cancelled by a re-arm or by stop()
    }
    on_timer();
  });
}

void Shard::on_timer() {
  armed_at_ms_ = INT64_MAX;
  run_expiry();
}

void Shard::run_expiry() {
  int64_t now = unix_ms();
  keyspace_.expire_due(now, kExpiryBatch);
  if (keyspace_.expiry_backlog(now) > 0) {
    // More is due: continue after the clients queued on this loop had their turn.
    asio::post(io_, [this] {
      if (!stopped_) {
        run_expiry();
      }
    });
    return;
  }
  if (auto next = keyspace_.next_deadline_hint()) {
    arm_expiry(*next <= now ? now + 1 : *next);
  }
}

asio::awaitable<void> Shard::log_barrier() {
  if (!log_.needs_flush()) {
    co_return;
  }
  auto initiation = [this](auto handler) {
    auto shared = std::make_shared<decltype(handler)>(std::move(handler));
    // Resumed inline by run_group_flush (already on this shard's thread): each connection
    // continues straight to writing its replies, with no extra hand-off per connection.
    barrier_waiters_.push_back([shared]() mutable { std::move(*shared)(); });
    if (!flush_posted_) {
      flush_posted_ = true;
      // Posted behind the handlers already queued, so the connections served in this turn
      // append their records first and the one write (and fsync) covers all of them.
      asio::post(io_, [this] { run_group_flush(); });
    }
  };
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(std::move(initiation),
                                                                        asio::use_awaitable);
}

void Shard::run_group_flush() {
  flush_posted_ = false;
  log_.flush();
  std::vector<std::function<void()>> waiters;
  waiters.swap(barrier_waiters_);
  for (auto& w : waiters) {
    w();
  }
}

void Shard::stop() {
  stopped_ = true;
  timer_.cancel();
}

}  // namespace hotkv
