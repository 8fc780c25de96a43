// A connection that became a replica's link (after SYNC/PSYNC), and WAIT. The replica is sent
// the snapshot its full sync needs (forwarded from the forked child's pipe as it is written,
// or from the child's file with its length first) and then the stream from the sync's offset
// on, as the feed hands it over (shard/replication_feed.hpp). Meanwhile a second coroutine
// reads what the replica sends: REPLCONF ACK, which records how far it has applied the stream
// and wakes WAITs; nothing it sends is answered, as Redis answers nothing on this link.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "hotkv/commands/replication.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/net/as_tuple.hpp"
#include "hotkv/net/connection.hpp"
#include "hotkv/shard/replica_snapshot.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

constexpr size_t kChunk = 256 * 1024;
// How often a replica waiting for its disk snapshot is sent a newline, so that its
// repl-timeout does not expire while the child writes (Redis does the same).
constexpr int64_t kKeepAliveMs = 1000;

// The 40 random bytes that end a diskless payload.
std::string eof_mark() { return random_hex_id(); }

}  // namespace

asio::awaitable<bool> Connection::write_all(std::string_view bytes) {
  std::string records;
  if (tls_) {
    if (!tls_->encrypt(bytes, records)) {
      close();
      co_return false;
    }
    bytes = records;
  }
  auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(bytes.data(), bytes.size()),
                                            kTuple);
  KeyspaceStats::bump(engine_.shard(shard_).net_output_bytes(), n);
  co_return !ec && !closing_;
}

asio::awaitable<bool> Connection::send_snapshot(ReplicaSyncPlan& plan) {
  ReplicaSnapshot& snap = plan.snapshot;
  auto executor = co_await asio::this_coro::executor;
  asio::posix::stream_descriptor pipe(executor, snap.pipe_fd);
  snap.pipe_fd = -1;  // owned by `pipe` now
  std::string buf(kChunk, '\0');
  if (snap.diskless) {
    // $EOF:<mark>\r\n <the child's bytes as they come> <mark>: the length is not known ahead.
    std::string mark = eof_mark();
    if (!co_await write_all("$EOF:" + mark + "\r\n")) {
      co_return false;
    }
    for (;;) {
      auto [ec, n] = co_await pipe.async_read_some(asio::buffer(buf), kTuple);
      if (n > 0 && !co_await write_all(std::string_view(buf.data(), n))) {
        co_return false;
      }
      if (ec) {
        break;  // EOF: the child is done (or died; its status says which)
      }
    }
    if (!finish_replica_snapshot(snap, false)) {
      spdlog::warn("Diskless snapshot for replica {} failed", session_.info->addr);
      co_return false;
    }
    co_return co_await write_all(mark);
  }
  // Disk: wait for the child to finish the file, keeping the replica's link alive meanwhile.
  asio::steady_timer tick(executor);
  int64_t last_keepalive = mono_ms();
  bool child_ok = false;
  while (!reap_replica_snapshot(snap, child_ok)) {
    tick.expires_after(std::chrono::milliseconds(10));
    co_await tick.async_wait(kTuple);
    if (closing_) {
      finish_replica_snapshot(snap, true);
      co_return false;
    }
    if (mono_ms() - last_keepalive >= kKeepAliveMs) {
      last_keepalive = mono_ms();
      if (!co_await write_all("\n")) {
        finish_replica_snapshot(snap, true);
        co_return false;
      }
    }
  }
  std::string path = snap.temp_path;
  snap.temp_path.clear();
  bool ok = child_ok;
  finish_replica_snapshot(snap, false);
  int fd = ok ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  ::unlink(path.c_str());  // the open descriptor keeps the bytes
  if (fd < 0) {
    spdlog::warn("Snapshot for replica {} failed", session_.info->addr);
    co_return false;
  }
  struct stat st {};
  ::fstat(fd, &st);
  bool sent = co_await write_all("$" + std::to_string(st.st_size) + "\r\n");
  while (sent) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) {
      sent = n == 0;
      break;
    }
    sent = co_await write_all(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  co_return sent;
}

asio::awaitable<void> Connection::read_replica_acks(std::shared_ptr<Connection> self) {
  (void)self;  // keeps the connection alive while this coroutine runs
  Replication& repl = engine_.replication();
  for (;;) {
    in_.prepare();
    auto [ec, n] = co_await read_input();
    if (ec || n == 0) {
      break;
    }
    in_.commit(n);
    KeyspaceStats::bump(engine_.shard(shard_).net_input_bytes(), n);
    for (;;) {
      size_t consumed = 0;
      args_.clear();
      ParseStatus st = parser_.parse(in_.data(), consumed, args_);
      if (st == ParseStatus::kError) {
        close();
        co_return;
      }
      if (st == ParseStatus::kNeedMore) {
        if (consumed == 0) {
          break;
        }
        in_.consume(consumed);  // empty commands skipped
        continue;
      }
      // REPLCONF ACK <offset> [FACK <offset>]: how far the replica has applied the stream.
      if (args_.size() >= 3 && is_replconf(args_, "ACK")) {
        if (auto off = parse_int64(args_[2]); off && *off >= 0) {
          repl.update_replica(id(), "", static_cast<uint64_t>(*off), engine_.now_ms());
        }
        if (!replica_acked_) {
          replica_acked_ = true;
          if (replica_wake_) {
            replica_wake_->cancel();
          }
        }
      }
      in_.consume(consumed);  // the views above pointed into the buffer
      session_.info->last_interaction_ms.store(unix_ms_coarse(), std::memory_order_relaxed);
    }
  }
  close();
}

asio::awaitable<void> Connection::serve_replica() {
  std::shared_ptr<ReplicaSyncPlan> plan = session_.replica.sync;
  session_.replica.sync.reset();
  Replication& repl = engine_.replication();
  std::shared_ptr<ReplicaChannel> channel = plan->channel;
  auto executor = co_await asio::this_coro::executor;
  replica_wake_ = std::make_shared<asio::steady_timer>(executor);
  std::weak_ptr<asio::steady_timer> weak_wake = replica_wake_;
  // Called by the feed under Replication's lock, from any thread: it only posts. What was fed
  // before it was set is already in the channel (attach_channel queued it).
  repl.set_channel_wake(*channel, [executor, weak_wake] {
    asio::post(executor, [weak_wake] {
      if (auto t = weak_wake.lock()) {
        t->cancel();
      }
    });
  });
  asio::co_spawn(executor, read_replica_acks(shared_from_this()), asio::detached);

  bool ok = true;
  if (plan->full) {
    repl.update_replica(id(), "send_bulk", std::nullopt, engine_.now_ms());
    const bool diskless = plan->snapshot.diskless;
    ok = co_await send_snapshot(*plan);
    // A diskless payload ends with its mark, not a length: a replica that read the mark and
    // the first stream bytes in one read would not see where the payload ends. So the stream
    // starts only once the replica has loaded it and sent its first ACK (as Redis does).
    while (ok && diskless && !replica_acked_ && !closing_ && !shutting_down_) {
      replica_wake_->expires_at(asio::steady_timer::time_point::max());
      co_await replica_wake_->async_wait(kTuple);
    }
    if (ok) {
      spdlog::info("Synchronization with replica {} succeeded", session_.info->addr);
      repl.update_replica(id(), "online", std::nullopt, engine_.now_ms());
    }
  } else if (plan->snapshot.pid > 0) {
    finish_replica_snapshot(plan->snapshot, true);
  }
  std::string batch;
  while (ok && !closing_ && !shutting_down_) {
    batch.clear();
    if (!repl.take_pending(*channel, batch)) {
      spdlog::warn("Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
                   session_.info->addr);
      break;
    }
    if (batch.empty()) {
      replica_wake_->expires_at(asio::steady_timer::time_point::max());
      co_await replica_wake_->async_wait(kTuple);
      continue;
    }
    session_.info->output_buffer.store(batch.size(), std::memory_order_relaxed);
    ok = co_await write_all(batch);
    session_.info->output_buffer.store(0, std::memory_order_relaxed);
    if (batch.capacity() > 4 * kChunk) {
      std::string().swap(batch);
    }
  }
  if (plan->snapshot.pid > 0) {
    finish_replica_snapshot(plan->snapshot, true);
  }
  repl.detach_channel(*channel);
  repl.remove_replica(id());
  spdlog::info("Connection with replica {} lost.", session_.info->addr);
  close();
}

asio::awaitable<std::string> Connection::wait_for_replicas() {
  WaitRequest req = *session_.pending_wait;
  session_.pending_wait.reset();
  Replication& repl = engine_.replication();
  auto executor = co_await asio::this_coro::executor;
  // A timer of its own: a wake posted just before the wait ended must not reach a later wait.
  wait_timer_ = std::make_shared<asio::steady_timer>(executor);
  std::weak_ptr<asio::steady_timer> weak_timer = wait_timer_;
  auto waiter = std::make_shared<AckWaiter>();
  waiter->offset = req.offset;
  waiter->count = req.replicas;
  waiter->wake = [executor, weak_timer] {
    asio::post(executor, [weak_timer] {
      if (auto t = weak_timer.lock()) {
        t->cancel();
      }
    });
  };
  if (req.timeout_ms > 0) {
    wait_timer_->expires_after(std::chrono::milliseconds(req.timeout_ms));
  } else {
    wait_timer_->expires_at(asio::steady_timer::time_point::max());
  }
  repl.add_waiter(waiter);
  // Ends early by the acknowledgement (a cancel), by the timeout, or by close() (a cancel).
  co_await wait_timer_->async_wait(kTuple);
  repl.remove_waiter(waiter);
  wait_timer_.reset();
  std::string out;
  ReplyWriter(out, session_.resp).integer(static_cast<int64_t>(repl.replicas_acked(req.offset)));
  co_return out;
}

}  // namespace hotkv
