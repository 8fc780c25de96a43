// MONITOR and CLIENT PAUSE on a connection (see connection.hpp).
//
// MONITOR: a monitoring connection registers a delivery with the engine's monitors
// (shard/monitors.hpp) that posts each line to the connection's current thread through its
// owner (as CLIENT KILL and tracking messages travel), so a connection that migrates keeps
// getting its lines. The line is formatted once, on the thread that ran the command.
//
// CLIENT PAUSE: the pause is two atomics in the engine; a command that must wait polls them
// every kPausePollMs, so CLIENT UNPAUSE (from any thread) needs no list of waiting clients,
// and a server that is not paused pays one relaxed load per command.
#include <algorithm>

#include <asio/experimental/as_tuple.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/commands/redaction.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/net/connection.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {
namespace {

constexpr int64_t kPausePollMs = 10;

}  // namespace

void Connection::feed_monitors(std::span<const std::string_view> argv, uint32_t db) {
  engine_.monitors().feed(db, session_.info->addr, redacted_args(argv));
}

void Connection::register_monitor() {
  monitor_registered_ = true;
  session_.info->monitor.store(true, std::memory_order_relaxed);
  std::shared_ptr<ConnectionOwner> owner = owner_;
  engine_.monitors().add(id(), [owner](std::shared_ptr<const std::string> line) {
    std::lock_guard lock(owner->mutex);
    if (owner->io == nullptr) {
      return;  // moving between threads: a monitor line is not worth holding
    }
    asio::post(*owner->io, [weak = owner->conn, line = std::move(line)] {
      if (auto c = weak.lock()) {
        c->deliver_monitor(*line);
      }
    });
  });
}

void Connection::deliver_monitor(const std::string& line) {
  if (closing_) {
    return;
  }
  (coro_sending_ ? deferred_ : out_) += line;
  flush();
}

bool Connection::paused_for(const CommandSpec& spec) const {
  Engine::ClientPause& pause = engine_.client_pause();
  int64_t until = pause.until_ms.load(std::memory_order_acquire);
  if (until == 0) {
    return false;
  }
  if (unix_ms() >= until) {
    // Over: cleared, so later commands stop at the first load (a newer pause is kept).
    pause.until_ms.compare_exchange_strong(until, 0, std::memory_order_relaxed);
    return false;
  }
  if (!pause.writes_only.load(std::memory_order_relaxed)) {
    return true;
  }
  if ((spec.flags & kWrite) != 0) {
    return true;
  }
  // EXEC waits when its transaction writes.
  return (spec.flags & kExec) != 0 && session_.multi.active &&
         std::any_of(session_.multi.queue.begin(), session_.multi.queue.end(),
                     [](const QueuedCommand& q) { return (q.spec->flags & kWrite) != 0; });
}

asio::awaitable<void> Connection::wait_while_paused(const CommandSpec& spec) {
  // A waiting client counts in INFO's blocked_clients, as Redis counts its paused clients.
  engine_.stats().blocked_clients.fetch_add(1, std::memory_order_relaxed);
  asio::steady_timer timer(engine_.shard(shard_).io());
  while (!closing_ && !shutting_down_ && paused_for(spec)) {
    int64_t left = engine_.client_pause().until_ms.load(std::memory_order_relaxed) - unix_ms();
    timer.expires_after(std::chrono::milliseconds(std::clamp<int64_t>(left, 1, kPausePollMs)));
    co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  engine_.stats().blocked_clients.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace hotkv
