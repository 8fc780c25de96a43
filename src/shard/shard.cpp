// Shard: active expiry scheduling. The timer is armed for the earliest deadline the wheel may
// hold rather than ticking every millisecond, so an idle shard (or one with no TTLs) costs no
// CPU; a mass expiry is worked off in bounded batches, yielding to clients between them.
#include "hotkv/shard/shard.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>
#include <asio/async_result.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {

Shard::Shard(size_t id, asio::io_context& io, size_t command_count, int64_t now_ms,
             size_t databases, const SplitSeals& seals)
    : id_(id), io_(io), seal_gate_(io, seals), command_stats_(new CommandStat[command_count]), timer_(io) {
  for (size_t db = 0; db < databases; ++db) {
    dbs_.push_back(std::make_unique<Keyspace>(now_ms, static_cast<uint32_t>(db)));
    dbs_.back()->set_schedule_hook([this](int64_t deadline) { arm_expiry(deadline); });
  }
  log_.set_after_flush([this](bool ok) { after_log_flush(ok); });
}

void Shard::after_log(std::function<void()> send, bool hold) {
  if (!hold && !pushes_wait()) {
    send();
    return;
  }
  held_pushes_.push_back(std::move(send));
}

void Shard::publish_after_log(PubSubHub& hub, std::string_view channel,
                              std::string_view payload) {
  if (!pushes_wait()) {
    hub.publish(channel, payload);  // the common case, without a copy of the message
    return;
  }
  after_log([&hub, channel = std::string(channel), payload = std::string(payload)] {
    hub.publish(channel, payload);
  });
}

void Shard::release_pushes() {
  if (!log_.needs_flush()) {
    send_held_pushes();
  }  // else the next flush sends them
}

void Shard::send_held_pushes() {
  if (held_pushes_.empty()) {
    return;
  }
  if (seal_gate_.pending()) {
    if (!pushes_wait_for_seal_) {
      pushes_wait_for_seal_ = true;
      seal_gate_.when_sealed([this] {
        pushes_wait_for_seal_ = false;
        release_pushes();
      });
    }
    return;
  }
  std::vector<std::function<void()>> pushes;
  pushes.swap(held_pushes_);
  for (auto& send : pushes) {
    send();
  }
}

void Shard::after_log_flush(bool ok) {
  if (ok) {
    send_held_pushes();
    return;
  }
  if (log_.policy() == FsyncPolicy::kAlways) {
    // The records of commands already executed are not on disk, and under always nothing
    // may acknowledge them: answering -MISCONF now would still leave the writes visible in
    // memory. Like Redis, stop instead; a restart replays what is durable, and every reply
    // already sent covers only that (docs/persistence.md).
    spdlog::critical("Can't persist the append only file under appendfsync always ({}): "
                     "exiting so that no reply acknowledges a write that is not on disk",
                     std::strerror(log_.last_errno()));
    spdlog::default_logger()->flush();
    std::_Exit(1);
  }
}

void Shard::swap_dbs(uint32_t a, uint32_t b) { dbs_[a]->swap_contents(*dbs_[b]); }

int64_t Shard::now_ms() const { return manual_clock_ != nullptr ? *manual_clock_ : unix_ms(); }

void Shard::arm_expiry(int64_t deadline_ms) {
  if (stopped_ || deadline_ms >= armed_at_ms_) {
    return;
  }
  armed_at_ms_ = deadline_ms;
  // A deadline centuries away (a hold or TTL set far ahead) would overflow the timer's
  // nanoseconds: wait at most a day; the wake-up finds nothing due and re-arms for the rest.
  constexpr int64_t kMaxDelayMs = 24LL * 3600 * 1000;
  int64_t delay = std::clamp<int64_t>(deadline_ms - now_ms(), 0, kMaxDelayMs);
  timer_.expires_after(std::chrono::milliseconds(delay));
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

std::optional<size_t> Shard::expire_holds(int64_t now_ms, size_t max_items) {
  if (!hold_hook_) {
    return std::nullopt;
  }
  return hold_hook_(now_ms, max_items);
}

void Shard::run_expiry() {
  if (serving_while_busy_) {
    // A busy script is half way through its changes: nothing expires under it.
    defer_until_idle([this] {
      if (!stopped_) {
        run_expiry();
      }
    });
    return;
  }
  if (expiry_gate_ && !expiry_gate_()) {
    arm_expiry(now_ms() + kGateRecheckMs);
    return;
  }
  int64_t now = now_ms();
  // Each database's wheel gets a batch per round; holds get a batch of their own, so a mass
  // expiry of keys cannot starve them (or back).
  bool more = false;
  bool any_holds = false;
  int64_t started_us = mono_us();
  for (auto& ks : dbs_) {
    ks->expire_due(now, kExpiryBatch);
    more = more || ks->expiry_backlog(now) > 0;
    any_holds = any_holds || ks->hold_entries() > 0;
  }
  // The deletions logged by the round are one record of their own (see the engine's expired
  // hook), written before anything else runs here.
  log_.end_record(0, 1);
  DurabilityBarrier::pass(*this);  // no reply covers these deletions
  if (latency_ != nullptr) {
    // A slow round (big values freed, a crowd of deadlines) held this thread's clients up.
    auto took_ms = static_cast<uint64_t>((mono_us() - started_us) / 1000);
    latency_->add_if_needed("expire-cycle", unix_ms() / 1000, took_ms);
  }
  bool holds_wait = any_holds && !expire_holds(now, kExpiryBatch);
  if (!holds_wait) {
    for (auto& ks : dbs_) {
      more = more || ks->hold_backlog(now) > 0;
    }
  }
  if (more) {
    // More is due: continue after the clients queued on this loop had their turn.
    asio::post(io_, [this] {
      if (!stopped_) {
        run_expiry();
      }
    });
    return;
  }
  std::optional<int64_t> next;
  auto earliest = [&next](std::optional<int64_t> t) {
    if (t && (!next || *t < *next)) {
      next = t;
    }
  };
  for (auto& ks : dbs_) {
    earliest(ks->next_deadline_hint());
    if (!holds_wait) {
      earliest(ks->next_hold_deadline_hint());
    }
  }
  if (holds_wait) {
    earliest(now + kHoldRetryMs);
  }
  if (next) {
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

void Shard::flush_log_now() {
  if (log_.needs_flush() || !barrier_waiters_.empty()) {
    run_group_flush();
  }
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

void Shard::serve_while_busy() {
  if (serving_while_busy_) {
    return;
  }
  serving_while_busy_ = true;
  if (io_.stopped()) {
    io_.restart();  // a loop driven by poll() (the test server) stops whenever it runs dry
  }
  try {
    for (int i = 0; i < kBusyHandlersPerServe && io_.poll_one() > 0; ++i) {
    }
  } catch (const std::exception& e) {
    // Nothing may unwind into the script that called this.
    spdlog::error("handler failed while a script was busy: {}", e.what());
  }
  serving_while_busy_ = false;
}

void Shard::release_deferred() {
  if (deferred_.empty()) {
    return;
  }
  std::vector<std::function<void()>> waiting;
  waiting.swap(deferred_);
  for (auto& fn : waiting) {
    asio::post(io_, std::move(fn));
  }
}

void Shard::stop() {
  stopped_ = true;
  timer_.cancel();
  // Blocked clients end with the server: their connections close without a reply.
  for (const auto& c : blocking_.all()) {
    blocking_.remove(*c);
    if (c->timer) {
      c->timer->cancel();
    }
    c->finish(WakeResult{WakeKind::kCancelled, {}});
  }
}

}  // namespace hotkv
