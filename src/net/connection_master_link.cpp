// A replica's link to its master, once the full or partial sync is done (MasterLink hands the
// socket over): the master's command stream is applied like any client's commands, with
// Redis's rules for the master client. No reply goes back except the acknowledgements (on
// REPLCONF GETACK, and every second); every byte applied advances the replication offset
// and joins the backlog unchanged, so this server's offsets are its master's and a replica of
// it, or a promotion, can continue partially. The link never migrates (it reads no keyed
// streak: commands are routed here, to shard_, which is worker 0) and the idle timeout spares
// it; repl-timeout closes it when the master falls silent.
#include <cstring>

#include <fmt/format.h>

#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/commands/client_tracking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/replication.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/transactions.hpp"
#include "hotkv/exec/command_checks.hpp"
#include "hotkv/net/connection.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {
namespace {

// Redis's replicas acknowledge their offset once a second.
constexpr auto kAckInterval = std::chrono::seconds(1);

RateLimitedLog& master_log() {
  static RateLimitedLog log;
  return log;
}

bool is_getack(std::span<const std::string_view> argv) { return is_replconf(argv, "GETACK"); }

std::string ack_command(uint64_t offset) {
  std::string n = std::to_string(offset);
  return fmt::format("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n${}\r\n{}\r\n", n.size(), n);
}

}  // namespace

void Connection::settle_master_bytes() {
  if (session_.multi.active || master_->unsettled.empty()) {
    return;
  }
  engine_.replication().feed(master_->unsettled);
  master_->unsettled.clear();
}

void Connection::send_master_ack() {
  std::string ack = ack_command(engine_.replication().offset());
  // Idle between reads: written at once (as a push). Otherwise the coroutine writes it after
  // the input it is applying.
  if (reading_ && !push_sending_ && !coro_sending_ && out_.empty() && !closing_) {
    out_ = std::move(ack);
    start_push_write();
  } else {
    master_->to_master += ack;
  }
}

void Connection::arm_master_ack_timer() {
  if (!master_->ack_timer) {
    master_->ack_timer = std::make_unique<asio::steady_timer>(engine_.shard(shard_).io());
  }
  master_->ack_timer->expires_after(kAckInterval);
  std::weak_ptr<Connection> weak = shared_from_this();
  master_->ack_timer->async_wait([weak](const std::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closing_) {
      return;
    }
    // A master sends at least its keep-alive PING every repl-ping-replica-period; silence for
    // repl-timeout means the link is dead even if TCP has not noticed.
    int64_t timeout_s = self->engine_.config().repl_timeout.load(std::memory_order_relaxed);
    if (unix_ms() - self->last_interaction_ms() > timeout_s * 1000) {
      master_log().warn("the master {} was silent for more than repl-timeout ({} s): "
                        "dropping the link",
                        self->session_.info->addr, timeout_s);
      self->close();
      return;
    }
    self->send_master_ack();
    self->arm_master_ack_timer();
  });
}

asio::awaitable<void> Connection::serve_master_stream() {
  auto self = shared_from_this();
  Replication& repl = engine_.replication();
  arm_master_ack_timer();
  // An acknowledgement at once: a master that streamed its image waits for it before it
  // sends the stream.
  out_ = ack_command(repl.offset());
  if (!co_await write_output()) {
    co_return;
  }
  std::string carried;
  carried.swap(master_->carried);
  for (;;) {
    if (closing_ || shutting_down_) {
      break;
    }
    size_t n = 0;
    if (!carried.empty()) {
      // What MasterLink read past the payload (or the +CONTINUE) comes first.
      std::string_view rest = carried;
      while (!rest.empty()) {
        in_.prepare();
        size_t k = std::min(rest.size(), in_.writable());
        std::memcpy(in_.write_ptr(), rest.data(), k);
        in_.commit(k);
        rest.remove_prefix(k);
      }
      n = carried.size();
      std::string().swap(carried);
    } else {
      in_.prepare();
      reading_ = true;
      auto [ec, got] = co_await read_input();
      reading_ = false;
      if (ec || got == 0) {
        break;
      }
      n = got;
      in_.commit(n);
    }
    KeyspaceStats::bump(engine_.shard(shard_).net_input_bytes(), n);
    const int64_t now = unix_ms();
    session_.info->last_interaction_ms.store(now, std::memory_order_relaxed);
    repl.note_master_io(now);
    repl.set_read_offset(repl.offset() + master_->unsettled.size() + in_.size());
    bool keep = co_await process_master_input();
    repl.set_read_offset(repl.offset() + master_->unsettled.size() + in_.size());
    session_.info->query_buffer.store(in_.size(), std::memory_order_relaxed);
    if (!keep) {
      break;
    }
    // Whatever the commands answered is dropped; only acknowledgements go back.
    out_.clear();
    out_.swap(master_->to_master);
    if (!co_await write_output()) {
      break;
    }
    in_.shrink_if_idle();
  }
  if (master_->ack_timer) {
    master_->ack_timer->cancel();
  }
}

asio::awaitable<bool> Connection::process_master_input() {
  const Plan& plan = plan_;
  std::string& unsettled = master_->unsettled;
  for (;;) {
    if (closing_) {
      // REPLICAOF changed the master: nothing more of this stream is applied.
      co_await flush_window();
      out_.clear();
      settle_master_bytes();
      co_return false;
    }
    size_t consumed = 0;
    args_.clear();
    ParseStatus st = parser_.parse(in_.data(), consumed, args_);
    if (st == ParseStatus::kNeedMore) {
      if (consumed == 0) {
        break;
      }
      unsettled.append(in_.data().substr(0, consumed));  // empty commands count too
      in_.consume(consumed);
      continue;
    }
    if (st == ParseStatus::kError) {
      co_await flush_window();
      master_log().warn("protocol error in the stream of master {}: {}", session_.info->addr,
                        parser_.error());
      co_return false;
    }
    const std::string_view raw = in_.data().substr(0, consumed);
    if (args_.empty()) {
      unsettled.append(raw);
      in_.consume(consumed);
      continue;
    }
    if (is_getack(args_)) {
      // The answer is the offset of everything before this command, all of it applied.
      co_await flush_window();
      out_.clear();
      settle_master_bytes();
      master_->to_master += ack_command(engine_.replication().offset());
      unsettled.append(raw);
      in_.consume(consumed);
      continue;
    }
    std::string rejected;
    ReplyWriter check_writer(rejected, session_.resp);
    const CommandSpec* spec =
        check_command(engine_.table(), args_, session_, engine_, shard_, plan_, check_writer);
    if (spec == nullptr) {
      // Redis too applies its master's stream without answering; a command this server cannot
      // run leaves the data sets apart, so it is at least said.
      master_log().warn("command {} from master {} not applied: {}", args_[0],
                        session_.info->addr, rejected.substr(0, rejected.find('\r')));
      unsettled.append(raw);
      in_.consume(consumed);
      continue;
    }
    session_.info->last_command.store(static_cast<int64_t>(spec->id), std::memory_order_relaxed);
    if (session_.multi.active && queue_in_multi(*spec)) {
      out_.clear();
      unsettled.append(raw);
      in_.consume(consumed);
      continue;
    }
    if (session_.multi.active && (spec->flags & kExec) != 0) {
      co_await flush_window();
      (void)co_await executor_.exec_transaction(caller_);
      out_.clear();
      unsettled.append(raw);
      in_.consume(consumed);
      settle_master_bytes();
      continue;
    }
    caller_ = take_tracking_caller(session_, *spec);
    // A blocking command from the master never blocks (it cannot: no block request is
    // passed), as Redis runs its master's commands.
    const size_t target = plan.shard;
    if (plan.keyed && plan.mode != RunMode::kAtomic && !executor_.window_takes(target, *spec)) {
      co_await flush_window();
    }
    if (plan.keyed && plan.mode != RunMode::kAtomic &&
        (plan.mode == RunMode::kHop || !executor_.window_empty())) {
      executor_.add_to_window(target, *spec, args_, plan.db, caller_);
      unsettled.append(raw);
      in_.consume(consumed);
      if (executor_.full()) {
        co_await flush_window();
        out_.clear();
        settle_master_bytes();
      }
      continue;
    }
    co_await flush_window();
    if (plan.mode == RunMode::kLocal) {
      ReplyWriter w(out_, session_.resp);
      ScopedTrackingCaller as(caller_);
      execute_command(*spec, args_, engine_, engine_.shard(shard_), false, &session_, session_.db,
                      w);
      if (take_rerun_request()) {
        // A script undone: every shard.
        executor_.add_to_atomic_run(*spec, args_, plan.db, caller_, engine_.all_shards());
        co_await flush_window();
      }
    } else if (plan.mode == RunMode::kHop) {
      executor_.add_to_window(plan.shard, *spec, args_, plan.db, caller_);
      co_await flush_window();
    } else {
      executor_.add_to_atomic_run(*spec, args_, plan.db, caller_, plan.shards);
      co_await flush_window();
    }
    out_.clear();
    session_.pushes_while_silenced.clear();
    unsettled.append(raw);
    in_.consume(consumed);
    settle_master_bytes();
  }
  co_await flush_window();
  out_.clear();
  settle_master_bytes();
  co_return !shutting_down_;
}

}  // namespace hotkv
