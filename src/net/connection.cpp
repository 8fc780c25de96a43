// The connection coroutine (see connection.hpp).
#include "hotkv/net/as_tuple.hpp"
#include "hotkv/net/connection.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include <asio/co_spawn.hpp>
#include <asio/post.hpp>
#include <asio/read.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/client_tracking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/inventory_soldout.hpp"
#include "hotkv/commands/pubsub_session.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/transactions.hpp"
#include "hotkv/exec/shard_courier.hpp"
#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/memory.hpp"

namespace hotkv {
namespace {

ParserLimits limits_from(const Config& c) {
  ParserLimits l;
  l.max_bulk_len = c.proto_max_bulk_len.load(std::memory_order_relaxed);
  l.max_inline_len = static_cast<size_t>(c.max_inline_len.load(std::memory_order_relaxed));
  return l;
}

}  // namespace

RateLimitedLog& Connection::protocol_log() {
  static RateLimitedLog log;
  return log;
}

Connection::Connection(asio::ip::tcp::socket socket, Engine& engine, size_t shard,
                       ConnectionSet& set)
    : socket_(std::move(socket)),
      engine_(engine),
      shard_(shard),
      set_(set),
      parser_(limits_from(engine.config())),
      bulk_limit_(engine.config().proto_max_bulk_len.load(std::memory_order_relaxed)),
      executor_(engine, shard, set.courier(engine, shard), session_),
      block_timer_(engine.shard(shard).io()),
      drain_timer_(engine.shard(shard).io()),
      migrate_to_(shard) {
  std::shared_ptr<ClientInfo> info;
  {
    ClientLifetimeAllocations lifetime;
    info = std::make_shared<ClientInfo>();
  }
  info->id = engine_.clients().next_id();
  std::error_code ec;
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) {
    info->addr = remote.address().to_string() + ":" + std::to_string(remote.port());
  }
  auto local = socket_.local_endpoint(ec);
  if (!ec) {
    info->laddr = local.address().to_string() + ":" + std::to_string(local.port());
  }
  info->fd = socket_.native_handle();
  info->shard = shard;
  info->created_ms = unix_ms();
  info->last_interaction_ms.store(info->created_ms, std::memory_order_relaxed);
  session_.info = info;
  acl_start_session(session_, engine_);
}

Connection::Connection(asio::ip::tcp::socket socket, Engine& engine, size_t shard,
                       ConnectionSet& set, ConnectionHandoff&& from)
    : socket_(std::move(socket)),
      engine_(engine),
      shard_(shard),
      set_(set),
      session_(std::move(from.session)),
      parser_(limits_from(engine.config())),
      bulk_limit_(engine.config().proto_max_bulk_len.load(std::memory_order_relaxed)),
      executor_(engine, shard, set.courier(engine, shard), session_),
      block_timer_(engine.shard(shard).io()),
      drain_timer_(engine.shard(shard).io()),
      migrate_to_(shard),
      adopted_(true),
      owner_(std::move(from.owner)) {
  tls_ = std::move(from.tls);
  migrated_at_ms_ = from.migrated_at_ms;
  session_.info->shard.store(shard, std::memory_order_relaxed);
  if (session_.master_link) {
    master_ = std::make_unique<MasterStream>();
    master_->carried = std::move(from.master_input);
    master_->on_closed = std::move(from.on_master_link_closed);
  }
}

Connection::~Connection() = default;

int64_t Connection::last_interaction_ms() const {
  return session_.info->last_interaction_ms.load(std::memory_order_relaxed);
}

void Connection::park_if_idle(int64_t now_ms) {
  // Only a connection waiting in its ordinary read, with nothing half-received and nothing
  // left to write; a master's link, a replica's and a blocked client never read there.
  if (!reading_ || park_requested_ || closing_ || shutting_down_ || master_ ||
      (tls_ && !tls_->established()) ||
      in_.size() != 0 || in_.capacity() == 0 || !out_.empty() || reply_deferred_ ||
      now_ms - last_interaction_ms() < kParkAfterMs) {
    return;
  }
  // What a request left behind: scratch space sized by the largest request or reply.
  std::string().swap(out_);
  std::string().swap(tls_scratch_);
  std::vector<std::string_view>().swap(args_);
  plan_ = Plan();
  park_requested_ = true;
  std::error_code ec;
  socket_.cancel(ec);
}

void Connection::note_large_buffer() {
  if (uint64_t limit = engine_.config().client_memory_limit(); limit != 0) {
    const ClientInfo& info = *session_.info;
    bool urgent = !info.no_evict && !info.evicted.load(std::memory_order_relaxed) &&
                  ClientRegistry::memory_of(info) > limit;
    engine_.clients().evict_over(limit, unix_ms_coarse(), urgent);
  }
}

bool Connection::over_output_limit(int64_t now_ms) {
  if (closing_ || master_ || session_.replica.sync || !session_.channels.empty() ||
      !session_.patterns.empty()) {
    return false;  // other classes, or watched elsewhere (within_pubsub_limits, the feed)
  }
  const Config& cfg = engine_.config();
  int64_t hard = cfg.normal_buffer_hard.load(std::memory_order_relaxed);
  int64_t soft = cfg.normal_buffer_soft.load(std::memory_order_relaxed);
  if (hard == 0 && soft == 0) {
    return false;
  }
  // What is being written (write_output publishes its size) plus what queued behind it.
  auto pending = static_cast<int64_t>(
      session_.info->output_buffer.load(std::memory_order_relaxed) + deferred_.size());
  bool over = hard > 0 && pending > hard;
  if (!over && soft > 0 && pending > soft) {
    if (soft_limit_since_ms_ == 0) {
      soft_limit_since_ms_ = now_ms;
    }
    int64_t secs = cfg.normal_buffer_soft_seconds.load(std::memory_order_relaxed);
    over = now_ms - soft_limit_since_ms_ >= secs * 1000;
  } else if (!over) {
    soft_limit_since_ms_ = 0;
  }
  if (over) {
    protocol_log().warn("closing client {}: over client-output-buffer-limit normal ({} bytes)",
                        session_.info->addr, pending);
    close();
  }
  return over;
}

void Connection::close() {
  closing_ = true;
  if (blocked_) {
    cancel_block(WakeKind::kCancelled);
  }
  if (replica_wake_) {
    replica_wake_->cancel();
  }
  if (wait_timer_) {
    wait_timer_->cancel();
  }
  std::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

void Connection::shutdown() {
  shutting_down_ = true;
  if (replica_wake_) {
    close();  // a replica's link has nothing to finish
    return;
  }
  // A reply still waiting for the end-of-batch write (or a push being written) is written
  // first; write_deferred_reply and the push write close the connection after it.
  if (blocked_ || (reading_ && out_.empty() && !push_sending_)) {
    close();
  }
}

bool Connection::can_defer_reply() const {
  // Not with a write of ours in flight, nor for a large reply, nor when the thread serves
  // this client alone (the batch would be this one reply and the pass would only add a turn
  // of the loop; write_output's log barrier groups the log writes then).
  return !out_.empty() && !closing_ && !push_sending_ && !coro_sending_ &&
         out_.size() < kFlushThreshold && set_.size() > 1;
}

void Connection::write_deferred_reply() {
  reply_deferred_ = false;
  // The coroutine may have read more input meanwhile: it then writes out_ itself.
  if (closing_ || !reading_ || push_sending_ || out_.empty()) {
    return;
  }
  session_.info->output_buffer.store(0, std::memory_order_relaxed);
  start_push_write();
  if (shutting_down_ && !push_sending_) {
    close();
  }
}

void ConnectionOwner::kill() {
  std::lock_guard lock(mutex);
  kill_requested = true;
  if (io != nullptr) {
    asio::post(*io, [weak = conn, set = hibernated_in, id = id] {
      if (auto c = weak.lock()) {
        c->close();
      } else if (set != nullptr) {
        set->wake(id);
      }
    });
  }
}

void ConnectionOwner::unblock(bool error) {
  std::lock_guard lock(mutex);
  if (io != nullptr) {
    asio::post(*io, [weak = conn, error] {
      if (auto c = weak.lock()) {
        c->cancel_block(error ? WakeKind::kError : WakeKind::kTimeout);
      }
    });
  }
}

void ConnectionOwner::push(std::shared_ptr<const TrackingMessage> m) {
  std::lock_guard lock(mutex);
  if (io == nullptr) {
    keep_message(std::move(m));
    return;
  }
  asio::post(*io, [weak = conn, set = hibernated_in, id = id, m = std::move(m)]() mutable {
    if (auto c = weak.lock()) {
      c->deliver_tracking(*m);
    } else if (set != nullptr) {
      set->wake(id, std::move(m));
    }
  });
}

asio::awaitable<void> Connection::serve(std::shared_ptr<Connection> self) {
  co_await self->run();
}

void Connection::spawn(std::shared_ptr<Connection> conn) {
  asio::io_context& io = conn->engine_.shard(conn->shard_).io();
  asio::co_spawn(io, serve(std::move(conn)), [](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::error("connection ended by an internal error: {}", ex.what());
      }
    }
  });
}

asio::awaitable<void> Connection::run() {
  auto self = shared_from_this();
  asio::io_context& io = engine_.shard(shard_).io();
  bool kill_requested = false;
  std::unique_ptr<ConnectionOwner::Messages> moved_messages;
  if (owner_ == nullptr) {
    {
      ClientLifetimeAllocations lifetime;
      owner_ = std::make_shared<ConnectionOwner>();
    }
    owner_->id = id();
    session_.info->control = owner_;
  }
  {
    std::lock_guard lock(owner_->mutex);
    owner_->io = &io;
    owner_->conn = self;
    kill_requested = owner_->kill_requested;
    moved_messages.swap(owner_->tracking_while_moving);
  }
  if (moved_messages) {
    for (const auto& m : *moved_messages) {
      deliver_tracking(*m);
    }
  }
  if (kill_requested) {
    closing_ = true;
  }
  // A migrated connection has no subscriptions (it would not have moved), so its hub entry
  // is made anew for this thread like a fresh one's; it is already in the client registry.
  auto sub = std::make_shared<PubSubClient>();
  sub->id = session_.info->id;
  sub->io = &io;
  sub->sink = this;  // cleared below, on this thread, before the connection goes away
  session_.pubsub = std::move(sub);
  if (!adopted_) {
    engine_.clients().add(session_.info);
  }
  set_.add(self);
  std::error_code nb_ec;
  socket_.non_blocking(true, nb_ec);
  // Tracking messages that waited for this connection (a move, or a hibernated client woken
  // for them) go out now: the client may not send anything that would make it write.
  if (!out_.empty() && !master_ && !co_await write_output()) {
    closing_ = true;
  }
  if (master_) {
    co_await serve_master_stream();
    closing_ = true;  // the ordinary loop below does not run
  }
  for (;;) {
    if (closing_ || shutting_down_) {
      break;
    }
    if (parked_ && !socket_.readable_now()) {
      // Parked (park_if_idle): wait for the client's next bytes holding no buffer. A new
      // connection reads at once instead: its first command must not pay an extra turn of
      // the loop (a client that sends a blocking command and, on another connection, the
      // write that serves it, counts on the order it sent them in); if it never sends, it is
      // parked like any idle one.
      reading_ = true;
      auto [wait_ec] = co_await socket_.async_wait(asio::ip::tcp::socket::wait_read, kTuple);
      reading_ = false;
      if (wait_ec) {
        break;
      }
      if (closing_ || shutting_down_) {
        break;
      }
    }
    parked_ = false;
    in_.prepare();
    reading_ = true;
    std::error_code ec;
    size_t n = 0;
    if (!tls_) [[likely]] {
      std::tie(ec, n) =
          co_await socket_.read_some(asio::buffer(in_.write_ptr(), in_.writable()), kTuple);
    } else {
      std::tie(ec, n) = co_await read_tls();
    }
    reading_ = false;
    if (ec == asio::error::operation_aborted && park_requested_ && !closing_ && !shutting_down_) {
      // Parked (park_if_idle): the loop's next turn waits for the client's next bytes
      // holding no buffer at all.
      park_requested_ = false;
      parked_ = true;
      in_.release();
      ConnectionSet::count_released();
      if (hibernate()) {
        co_return;
      }
      continue;
    }
    park_requested_ = false;
    if (ec || n == 0) {
      // A client that sent its last commands and shut down its side still gets the replies
      // left for the end-of-batch write.
      if (ec == asio::error::eof && !out_.empty()) {
        co_await write_output();
      }
      break;
    }
    in_.commit(n);
    // CLIENT LIST's qbuf= while this input runs (what is left is stored once it has run).
    session_.info->query_buffer.store(in_.size(), std::memory_order_relaxed);
    if (in_.size() >= kLargeBufferBytes) {
      note_large_buffer();
    }
    set_.note_read();
    // CONFIG SET proto-max-bulk-len applies to connections already open, as in Redis.
    int64_t bulk_limit = engine_.config().proto_max_bulk_len.load(std::memory_order_relaxed);
    if (bulk_limit != bulk_limit_) {
      bulk_limit_ = bulk_limit;
      parser_.set_limits(limits_from(engine_.config()));
    }
    KeyspaceStats::bump(engine_.shard(shard_).net_input_bytes(), n);
    session_.info->last_interaction_ms.store(unix_ms_coarse(), std::memory_order_relaxed);
    executing_ = true;
    bool keep = co_await process_input();
    executing_ = false;
    // This client's own invalidations go after the replies of what caused them.
    if (!held_.empty()) {
      out_ += held_;
      held_.clear();
    }
    session_.info->query_buffer.store(in_.size(), std::memory_order_relaxed);
    if (session_.replica.sync) {
      // SYNC/PSYNC answered: from here on this is the replica's link.
      if (co_await write_output()) {
        co_await serve_replica();
      }
      break;
    }
    // A connection about to move writes its replies itself: it must leave nothing behind.
    if (keep && migrate_to_ == shard_ && can_defer_reply()) {
      if (!reply_deferred_) {
        reply_deferred_ = true;
        set_.defer_reply(self);
      }
    } else if (!co_await write_output() || !keep) {
      break;
    }
    if (migrate_to_ != shard_ && migrate()) {
      co_return;
    }
    in_.shrink_if_idle();
  }
  unsubscribe_all(engine_, session_);
  stop_tracking(engine_, session_);
  if (monitor_registered_) {
    engine_.monitors().remove(id());
  }
  session_.pubsub->sink = nullptr;
  set_.remove(id());
  engine_.clients().remove(id());
  std::error_code ec;
  socket_.close(ec);
  if (master_ && master_->on_closed) {
    master_->on_closed(session_.db);
  }
}

asio::awaitable<bool> Connection::write_output() {
  if (out_.empty() || closing_) {
    co_return !closing_;
  }
  // Nothing is acknowledged before the writes it answers pass the barrier.
  if (DurabilityBarrier::pending(engine_.shard(shard_))) {
    co_await DurabilityBarrier::pass_grouped(engine_.shard(shard_));
  }
  // A reply bigger than the normal class's hard limit is never sent (Redis cuts the client
  // off as soon as its output passes it); the slow-reader case is the cron's (sweep).
  session_.info->output_buffer.store(out_.size(), std::memory_order_relaxed);
  if (over_output_limit(unix_ms_coarse())) {
    co_return false;
  }
  if (out_.size() >= kLargeBufferBytes) {
    note_large_buffer();
  }
  // A pub/sub message being written: our bytes go after it.
  while (push_sending_ && !closing_) {
    drain_timer_.expires_at(asio::steady_timer::time_point::max());
    co_await drain_timer_.async_wait(kTuple);
  }
  std::error_code ec;
  while (!out_.empty() && !ec && !closing_) {
    session_.info->output_buffer.store(out_.size(), std::memory_order_relaxed);
    if (tls_ && !encrypt_output()) [[unlikely]] {
      break;  // closed
    }
    // Try a direct non-blocking write first: usually the socket takes everything, and
    // skipping the asynchronous operation saves a completion hand-off and an epoll round.
    size_t written = socket_.send_now(asio::buffer(out_), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      ec.clear();
      written = 0;
    }
    if (!ec && written < out_.size()) {
      coro_sending_ = true;
      auto [wec, n] = co_await asio::async_write(
          socket_, asio::buffer(out_.data() + written, out_.size() - written), kTuple);
      coro_sending_ = false;
      ec = wec;
      written += n;
    }
    KeyspaceStats::bump(engine_.shard(shard_).net_output_bytes(), written);
    session_.info->output_buffer.store(0, std::memory_order_relaxed);
    if (out_.capacity() > 4 * kFlushThreshold) {
      std::string().swap(out_);
    } else {
      out_.clear();
    }
    // Messages that arrived while the socket was busy with our bytes.
    out_.swap(deferred_);
  }
  co_return !ec && !closing_;
}

void Connection::note_route(size_t shard) {
  if (shard == shard_) {
    streak_ = 0;
    return;
  }
  if (shard != streak_shard_) {
    streak_shard_ = shard;
    streak_ = 0;
  }
  if (++streak_ >= kMigrateAfter && set_.adopt) {
    migrate_to_ = shard;
  }
}

bool Connection::migrate() {
  size_t target = migrate_to_;
  migrate_to_ = shard_;
  streak_ = 0;
  int64_t now = unix_ms_coarse();
  // Nothing may be left half-done on this thread: no input, no output, no wait, no hub entry.
  bool idle = !closing_ && !shutting_down_ && in_.size() == 0 && out_.empty() &&
              deferred_.empty() && inflight_.empty() && !push_sending_ && !coro_sending_ &&
              !reply_deferred_ && !blocked_ && executor_.idle() && session_.subscriptions() == 0 &&
              held_.empty() && !session_.multi.active && !monitor_registered_;
  // At most one move a second, so a client alternating between two shards' keys in bursts
  // cannot make its connection bounce.
  if (!idle || now - migrated_at_ms_ < kMigrateIntervalMs) {
    return false;
  }
  std::error_code ec;
  auto protocol = socket_.local_endpoint(ec).protocol();
  if (ec) {
    return false;
  }
  int fd = socket_.release(ec);
  if (ec || fd < 0) {
    return false;
  }
  {
    // Until the new thread takes over, a kill is remembered rather than posted here.
    std::lock_guard lock(owner_->mutex);
    owner_->io = nullptr;
    owner_->conn.reset();
  }
  session_.pubsub->sink = nullptr;
  uint64_t client_id = id();
  ConnectionHandoff h;
  h.fd = fd;
  h.protocol = protocol;
  h.session = std::move(session_);
  h.owner = std::move(owner_);
  h.tls = std::move(tls_);
  h.migrated_at_ms = now;
  set_.remove(client_id);
  engine_.stats().connection_migrations.fetch_add(1, std::memory_order_relaxed);
  set_.adopt(target, std::move(h));
  return true;
}

void ConnectionSet::add(const std::shared_ptr<Connection>& c) { conns_[c->id()] = c; }

std::shared_ptr<Connection> ConnectionSet::take_over(Engine& engine, size_t shard,
                                                     ConnectionHandoff&& h) {
  // The descriptor joins this thread's reactor; what the client sent meanwhile is still in the
  // kernel and the connection's first read finds it.
  asio::ip::tcp::socket socket(engine.shard(shard).io());
  std::error_code ec;
  {
    ClientLifetimeAllocations lifetime;  // asio's state for the socket, kept in its pool
    socket.assign(h.protocol, h.fd, ec);
  }
  if (ec) {
    Connection::protocol_log().warn("closing client {}: cannot watch its socket here: {}",
                                    h.session.info->addr, ec.message());
    ::close(h.fd);
    engine.clients().remove(h.session.info->id);
    return nullptr;
  }
  auto conn = std::make_shared<Connection>(std::move(socket), engine, shard, *this, std::move(h));
  Connection::spawn(conn);
  return conn;
}

namespace {
std::atomic<uint64_t> g_released_connections{0};
}  // namespace

void ConnectionSet::remove(uint64_t id) {
  if (conns_.erase(id) > 0) {
    count_released();
  }
}

void ConnectionSet::count_released() {
  g_released_connections.fetch_add(1, std::memory_order_relaxed);
}

uint64_t ConnectionSet::take_released_count() {
  return g_released_connections.exchange(0, std::memory_order_relaxed);
}

void ConnectionSet::sweep(int64_t now_ms) {
  if (now_ms - last_park_ms_ < 1000) {
    return;
  }
  last_park_ms_ = now_ms;
  for (auto& w : live()) {
    if (auto c = w.lock()) {
      if (!c->over_output_limit(now_ms) && !c->tls_handshake_overdue(now_ms)) {
        c->park_if_idle(now_ms);
      }
    }
  }
}

std::vector<std::weak_ptr<Connection>> ConnectionSet::live() const {
  std::vector<std::weak_ptr<Connection>> out;
  out.reserve(conns_.size());
  for (const auto& kv : conns_) {
    out.push_back(kv.second);
  }
  return out;
}

void ConnectionSet::close_idle(int64_t now_ms, int64_t timeout_s) {
  if (timeout_s <= 0) {
    return;
  }
  for (auto& w : live()) {
    if (auto c = w.lock()) {
      // The master's link is never idle in that sense: repl-timeout watches it instead.
      if (!c->master_ && now_ms - c->last_interaction_ms() > timeout_s * 1000) {
        c->close();
      }
    }
  }
  std::vector<uint64_t> expired;
  for (const auto& [id, h] : hibernated_) {
    if (now_ms - h.info->last_interaction_ms.load(std::memory_order_relaxed) > timeout_s * 1000) {
      expired.push_back(id);
    }
  }
  close_hibernated(std::move(expired));
}

void ConnectionSet::defer_reply(std::shared_ptr<Connection> c) {
  if (deferred_.empty()) {
    // Posted handlers run after the ready sockets the reactor has already queued, so the pass
    // comes once the current batch has been read and executed.
    reads_at_post_ = reads_;
    waits_ = 0;
    asio::post(c->socket_.get_executor(), [this] { write_deferred(); });
  }
  deferred_.push_back(std::move(c));
}

void ConnectionSet::write_deferred() {
  if (deferred_.empty()) {
    return;
  }
  Connection& any = *deferred_.front();
  Shard& shard = any.engine_.shard(any.shard_);
  // With appendfsync always every pass costs an fsync, during which this thread serves
  // nobody. While the turns of the loop keep bringing new requests (reads since the pass was
  // posted), the pass steps back behind them, a bounded number of times, so that they join
  // this group instead of each costing a group of its own (as a database's commit delay).
  const ShardLog& log = shard.log();
  if (log.policy() == FsyncPolicy::kAlways && log.needs_flush() && reads_ != reads_at_post_ &&
      waits_ < kMaxGroupWaits) {
    reads_at_post_ = reads_;
    ++waits_;
    asio::post(any.socket_.get_executor(), [this] { write_deferred(); });
    return;
  }
  writing_.swap(deferred_);
  // Nothing is acknowledged before the writes it answers pass the barrier: the batch's records
  // go out in one group write first, as write_output's pass would do.
  DurabilityBarrier::pass_group_now(shard);
  if (!DurabilityBarrier::sealed(shard)) {
    hold_until_sealed(shard, std::move(writing_));
    writing_.clear();
    return;
  }
  for (auto& c : writing_) {
    c->write_deferred_reply();
  }
  writing_.clear();
}

void ConnectionSet::write_held(std::vector<std::shared_ptr<Connection>> batch) {
  // Sealed for the taint the batch was held at; its connections may have answered more
  // since (they read on while deferred), so the barrier is passed again.
  Connection& any = *batch.front();
  Shard& shard = any.engine_.shard(any.shard_);
  DurabilityBarrier::pass_group_now(shard);
  if (!DurabilityBarrier::sealed(shard)) {
    hold_until_sealed(shard, std::move(batch));
    return;
  }
  for (auto& c : batch) {
    c->write_deferred_reply();
  }
}

void ConnectionSet::hold_until_sealed(Shard& shard,
                                      std::vector<std::shared_ptr<Connection>> batch) {
  auto held = std::make_shared<std::vector<std::shared_ptr<Connection>>>(std::move(batch));
  DurabilityBarrier::when_sealed(shard, [this, held] { write_held(std::move(*held)); });
}

void ConnectionSet::shutdown_all() {
  for (auto& w : live()) {
    if (auto c = w.lock()) {
      c->shutdown();
    }
  }
  // Hibernated clients have nothing to finish.
  std::vector<uint64_t> all;
  for (const auto& [id, h] : hibernated_) {
    all.push_back(id);
  }
  close_hibernated(std::move(all));
  epoll_.reset();
}

}  // namespace hotkv
