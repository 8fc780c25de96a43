// Blocking commands on a connection (XREAD/XREADGROUP BLOCK). The command runs where its keys
// live; if it asks to block, it is registered on that shard in the same step (so no write can
// slip in between and be missed) and the connection waits on block_timer_, which doubles as
// the timeout and as the wake-up signal: a wake posts the result here and cancels the timer.
// The connection reads no further input meanwhile, as Redis does with a blocked client, but
// it watches the socket so a disconnect completes the wait at once.
#include <sys/socket.h>

#include <chrono>

#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/net/as_tuple.hpp"
#include "hotkv/net/connection.hpp"
#include "hotkv/shard/durability_barrier.hpp"

namespace hotkv {
namespace {


// The keys a re-run of the command waits on.
std::vector<std::string> waited_keys(const CommandSpec& spec, const std::vector<std::string>& argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  std::vector<size_t> idx;
  Table::key_indexes(spec, views, idx);
  std::vector<std::string> keys;
  for (size_t i : idx) {
    keys.push_back(argv[i]);
  }
  return keys;
}

// Runs the command on `shard` (its owner thread, or with it parked); if it asks to block,
// registers `c` there at once. Returns the reply, or nullopt when registered.
std::optional<std::string> execute_or_register(Engine& engine, Shard& shard,
                                               const std::shared_ptr<BlockedClient>& c,
                                               const std::vector<std::string>& argv,
                                               int64_t& timeout_ms) {
  // Clients an earlier command of the pipeline made ready come first (Redis served them when
  // that command ended).
  serve_blocked_now(engine, shard);
  std::string out;
  ReplyWriter w(out, c->proto);
  CommandContext::BlockRequest req;
  std::vector<std::string_view> views(argv.begin(), argv.end());
  ScopedTrackingCaller as(c->caller);
  execute_command(*c->spec, views, engine, shard, false, nullptr, c->db, w, &req, false);
  if (!req.requested) {
    DurabilityBarrier::pass(shard);  // the reply may leave this thread
    return out;
  }
  timeout_ms = req.timeout_ms;
  c->argv = std::move(req.argv);
  c->keys = waited_keys(*c->spec, c->argv);
  engine.stats().blocked_registered.fetch_add(1, std::memory_order_relaxed);
  shard.blocking().add(c);
  if (timeout_ms > 0) {
    // In-place clients time out on their shard's thread, like every other completion of
    // theirs, so a timeout can never race with a re-run that is serving them.
    c->timer = std::make_unique<asio::steady_timer>(shard.io());
    c->timer->expires_after(std::chrono::milliseconds(timeout_ms));
    std::weak_ptr<BlockedClient> weak = c;
    Shard* s = &shard;
    c->timer->async_wait([weak, s](const std::error_code& ec) {
      if (ec) {
        return;
      }
      if (auto bc = weak.lock()) {
        complete_blocked(*s, *bc, WakeResult{WakeKind::kTimeout, {}});
      }
    });
  }
  return std::nullopt;
}

}  // namespace

void Connection::cancel_block(WakeKind kind) {
  std::shared_ptr<BlockedClient> c = blocked_;
  if (!c || c->finished()) {
    return;
  }
  if (c->in_place) {
    Shard* s = &engine_.shard(c->shard);
    asio::post(s->io(), [c, s, kind] { complete_blocked(*s, *c, WakeResult{kind, {}}); });
  } else {
    c->finish(WakeResult{kind, {}});
  }
}

void Connection::watch_disconnect() {
  std::weak_ptr<Connection> weak = shared_from_this();
  socket_.async_wait(asio::ip::tcp::socket::wait_read, [weak](const std::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || !self->blocked_) {
      return;
    }
    char byte;
    ssize_t n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      self->closing_ = true;
      self->cancel_block(WakeKind::kCancelled);
    }
    // Otherwise pipelined input arrived: it waits in the socket until the client is served.
  });
}

asio::awaitable<std::string> Connection::run_blocking(const CommandSpec& spec) {
  std::vector<std::string> argv(args_.begin(), args_.end());
  // The command's plan (plan_ stays as it is while the connection waits here).
  const RunMode mode = plan_.mode;
  const size_t target = plan_.shard;
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  bool forever = false;
  asio::io_context* conn_io = &engine_.shard(shard_).io();
  std::weak_ptr<Connection> weak = shared_from_this();

  for (;;) {
    auto c = std::make_shared<BlockedClient>();
    c->spec = &spec;
    c->proto = session_.resp;
    c->db = session_.db;
    c->caller = caller_;
    c->on_wake = [weak, conn_io](WakeResult r) {
      asio::post(*conn_io, [weak, r = std::move(r)]() mutable {
        if (auto self = weak.lock()) {
          self->wake_result_ = std::move(r);
          self->block_timer_.cancel();
        }
      });
    };
    int64_t timeout_ms = 0;
    std::optional<std::string> reply;
    if (mode == RunMode::kAtomic) {
      // Keys on several shards: run atomically; if it blocks, register on every involved
      // shard while they are still parked. A wake is a retry through this same path.
      c->in_place = false;
      Engine* engine = &engine_;
      size_t home = shard_;
      auto task = [engine, home, c, &argv, &timeout_ms]() -> std::optional<std::string> {
        std::string out;
        ReplyWriter w(out, c->proto);
        CommandContext::BlockRequest req;
        std::vector<std::string_view> views(argv.begin(), argv.end());
        ScopedTrackingCaller as(c->caller);
        execute_command(*c->spec, views, *engine, engine->shard(home), true, nullptr, c->db, w,
                        &req, false);
        DurabilityBarrier::pass_all(*engine);
        if (!req.requested) {
          return out;
        }
        timeout_ms = req.timeout_ms;
        c->argv = std::move(req.argv);
        c->keys = waited_keys(*c->spec, c->argv);
        engine->stats().blocked_registered.fetch_add(1, std::memory_order_relaxed);
        for (const std::string& k : c->keys) {
          engine->shard(engine->shard_of(k)).blocking().add(c);
        }
        return std::nullopt;
      };
      std::vector<size_t> shards = plan_.shards;
      bool refused = false;
      try {
        reply = co_await engine_.run_atomic(shard_, std::move(shards), std::move(task));
      } catch (const ShardsBusy&) {
        refused = true;
      }
      if (refused) {
        std::string out;
        ReplyWriter(out, c->proto).error(engine_.scripts().busy_error());
        reply = std::move(out);
      }
    } else {
      c->in_place = true;
      c->shard = target;
      if (target == shard_) {
        reply = execute_or_register(engine_, engine_.shard(target), c, argv, timeout_ms);
      } else {
        Engine* engine = &engine_;
        std::vector<std::string> args = argv;
        auto task = [engine, target, c, args = std::move(args)]() mutable {
          int64_t t = 0;
          auto r = execute_or_register(*engine, engine->shard(target), c, args, t);
          return std::make_pair(std::move(r), t);
        };
        auto [r, t] = co_await engine_.call_on(shard_, target, std::move(task));
        reply = std::move(r);
        timeout_ms = t;
      }
    }
    if (reply) {
      co_return std::move(*reply);
    }

    // Registered: wait for a wake, the deadline, or the client going away.
    if (!deadline && !forever) {
      if (timeout_ms == 0) {
        forever = true;
      } else {
        deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
      }
    }
    blocked_ = c;
    session_.info->blocked.store(true, std::memory_order_relaxed);
    engine_.stats().blocked_clients.fetch_add(1, std::memory_order_relaxed);
    wake_result_.reset();
    watch_disconnect();
    // In-place clients time out on their shard; several-shard ones here.
    bool local_deadline = !c->in_place && deadline.has_value();
    block_timer_.expires_at(local_deadline ? *deadline : Clock::time_point::max());
    while (!wake_result_) {
      auto [ec] = co_await block_timer_.async_wait(kTuple);
      if (wake_result_) {
        break;
      }
      if (!ec) {
        cancel_block(WakeKind::kTimeout);  // the result arrives through on_wake
      }
      block_timer_.expires_at(Clock::time_point::max());
    }
    blocked_.reset();
    session_.info->blocked.store(false, std::memory_order_relaxed);
    engine_.stats().blocked_clients.fetch_sub(1, std::memory_order_relaxed);
    engine_.stats().blocked_registered.fetch_sub(1, std::memory_order_relaxed);
    std::error_code ignored;
    socket_.cancel(ignored);  // the disconnect watch
    if (!c->in_place) {
      // Drop the finished client from the other shards' lists now rather than at their next
      // write to the key.
      for (const std::string& k : c->keys) {
        Shard* s = &engine_.shard(engine_.shard_of(k));
        asio::post(s->io(), [s, k, db = c->db] { s->blocking().prune(db, k); });
      }
    }

    WakeResult result = std::move(*wake_result_);
    wake_result_.reset();
    DurabilityBarrier::absorb(engine_.shard(shard_), result.taint);
    // Answered without a run of its own: the call is counted here, once (a reply from a
    // re-run was counted by it).
    auto count_call = [&](std::string_view error) {
      std::vector<std::string_view> views(argv.begin(), argv.end());
      count_command(spec, views, engine_, engine_.shard(shard_), 0, error);
    };
    constexpr std::string_view kUnblocked = "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n";
    switch (result.kind) {
      case WakeKind::kReply:
        co_return std::move(result.reply);
      case WakeKind::kTimeout:
        count_call({});
        co_return timeout_reply(session_.resp);
      case WakeKind::kError:
        count_call(kUnblocked);
        co_return std::string(kUnblocked);
      case WakeKind::kCancelled:
        closing_ = true;
        co_return std::string();
      case WakeKind::kRetry:
        break;
    }
    if (deadline && Clock::now() >= *deadline) {
      count_call({});
      co_return timeout_reply(session_.resp);
    }
    argv = c->argv;  // the resolved form ("$" already replaced), re-run through routing
  }
}

}  // namespace hotkv
