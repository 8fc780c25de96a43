// Server start-up, accept loop, housekeeping and shutdown (see server.hpp).
#include "hotkv/net/as_tuple.hpp"
#include "hotkv/server/server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cstring>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/memory_figures.hpp"
#include "hotkv/commands/rdb_snapshots.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/scripting/lua_vm.hpp"
#include "hotkv/shard/rdb_saver.hpp"
#include "hotkv/shard/replication_state.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/log.hpp"
#include "hotkv/util/memory.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {


RateLimitedLog& refused_log() {
  static RateLimitedLog log;
  return log;
}

}  // namespace

Server::Server(Config& config) : config_(config) {
  size_t n = static_cast<size_t>(config_.threads.load());
  if (n == 0) {
    n = std::max(1u, std::thread::hardware_concurrency());
    config_.threads.store(static_cast<int64_t>(n));
  }
  std::vector<asio::io_context*> contexts;
  for (size_t i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    contexts.push_back(&workers_.back()->io);
  }
  engine_ = make_engine(config_, command_table(), contexts, lua_vm_factory());
  engine_->stats().used_memory_startup.store(used_memory_bytes(), std::memory_order_relaxed);
  engine_->shutdown_hook = [this] { shutdown(); };
  if (n > 1) {
    for (auto& w : workers_) {
      w->connections.adopt = [this](size_t target, ConnectionHandoff h) {
        adopt_connection(target, std::move(h));
      };
    }
  }
  persistence_ = std::make_unique<Persistence>(*engine_);
  engine_->set_persistence(persistence_.get());
  // "replicaof host port" in the config file (written there by CONFIG REWRITE after a
  // REPLICAOF, as redis-sentinel relies on): the server starts as that master's replica.
  std::string replicaof = config_.get_string("replicaof");
  if (size_t space = replicaof.find(' '); space != std::string::npos) {
    if (auto port = parse_int64(std::string_view(replicaof).substr(space + 1))) {
      engine_->replication().become_replica(replicaof.substr(0, space), *port);
      // The data about to be loaded is what a clean shutdown left, at this stream position: the
      // link asks the master to continue from it.
      auto pos = take_replication_position(config_.get_string("dir"));
      const char* source = config_.get_string("appendonly") == "yes" ? "aof" : "rdb";
      if (pos && pos->source == source) {
        engine_->replication().adopt_master_stream(pos->replid, pos->offset);
        engine_->replication().set_restored_stream(pos->db);
        spdlog::info("replication position {}:{} restored from the last shutdown", pos->replid,
                     pos->offset);
      }
    }
  }
}

Server::~Server() {
  config_.set_appendonly_hook(nullptr);
  config_.set_port_hook(nullptr);
  config_.set_tls_port_hook(nullptr);
  config_.set_tls_hook(nullptr);
  for (auto& w : workers_) {
    w->io.stop();
    if (w->thread.joinable()) {
      w->thread.join();
    }
  }
}

namespace {
// Opens, binds and listens: the start-up listener and the one CONFIG SET port moves to.
void open_listener(asio::ip::tcp::acceptor& acc, const asio::ip::address& addr, int64_t port,
                   std::error_code& ec) {
  asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  acc.open(ep.protocol(), ec);
  if (!ec) {
    acc.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  }
  if (!ec) {
    acc.bind(ep, ec);
  }
  if (!ec) {
    acc.listen(511, ec);
  }
}
}  // namespace

std::string Server::listen() {
  if (std::string acl_error = load_acl_at_startup(*engine_, config_); !acl_error.empty()) {
    return acl_error;
  }
  asio::io_context& io = workers_[0]->io;
  std::error_code ec;
  auto addr = asio::ip::make_address(config_.bind(), ec);
  if (ec) {
    return "invalid bind address '" + config_.bind() + "'";
  }
  const int64_t port = config_.port.load();
  const int64_t tls_port = config_.tls_port.load();
  // As Redis: port 0 opens no plain listener (a TLS-only server), and neither port is an error.
  if (port == 0 && tls_port == 0) {
    return "Configured to not listen anywhere, exiting.";
  }
  // The context is built whenever something may need it: the tls-port's clients, or a
  // replica's TLS link to its master.
  if (tls_port != 0 || config_.tls_replication.load() || config_.get_string("tls-cluster") == "yes") {
    if (std::string err = configure_tls(); !err.empty()) {
      return "Failed to configure TLS: " + err;
    }
  }
  if (port != 0) {
    auto acc = std::make_unique<asio::ip::tcp::acceptor>(io);
    open_listener(*acc, addr, port, ec);
    if (ec) {
      return "cannot listen on " + config_.bind() + ":" + std::to_string(port) + ": " +
             ec.message();
    }
    port_ = acc->local_endpoint().port();
    acceptor_ = std::move(acc);
  }
  if (tls_port != 0) {
    auto acc = std::make_unique<asio::ip::tcp::acceptor>(io);
    open_listener(*acc, addr, tls_port, ec);
    if (ec) {
      return "cannot listen on " + config_.bind() + ":" + std::to_string(tls_port) +
             " (tls-port): " + ec.message();
    }
    tls_port_ = acc->local_endpoint().port();
    tls_acceptor_ = std::move(acc);
  }
  return "";
}

std::string Server::configure_tls() {
  std::string err;
  auto ctx = TlsContext::create(TlsSettings::from(config_), err);
  if (!ctx) {
    return err;
  }
  tls_.set(std::move(ctx));
  return "";
}

void Server::configure_socket(asio::ip::tcp::socket& s) {
  std::error_code ec;
  s.set_option(asio::ip::tcp::no_delay(true), ec);
  int64_t keepalive = config_.tcp_keepalive.load(std::memory_order_relaxed);
  if (keepalive > 0) {
    s.set_option(asio::socket_base::keep_alive(true), ec);
    int idle = static_cast<int>(keepalive);
    int intvl = std::max(1, idle / 3);
    int cnt = 3;
    ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  }
}

namespace {
bool is_loopback(const asio::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
  }
  return a.is_loopback();
}
}  // namespace

bool Server::refused_by_protected_mode(asio::ip::tcp::socket& accepted) {
  // As Redis 7: a server nobody set a password on serves only its own host, whatever it is
  // bound to, until protected-mode is turned off.
  if (!config_.protected_mode.load(std::memory_order_relaxed) || !config_.requirepass().empty()) {
    return false;
  }
  std::error_code ec;
  auto remote = accepted.remote_endpoint(ec);
  if (!ec && is_loopback(remote.address())) {
    return false;
  }
  std::string msg = std::string("-") + err::kProtectedMode + "\r\n";
  asio::write(accepted, asio::buffer(msg), ec);
  accepted.close(ec);
  return true;
}

asio::awaitable<void> Server::accept_loop(bool tls) {
  for (;;) {
    size_t target = next_worker_;
    next_worker_ = (next_worker_ + 1) % workers_.size();
    Worker& w = *workers_[target];
    auto& acceptor = tls ? tls_acceptor_ : acceptor_;
    if (!acceptor) {
      co_return;
    }
    auto [ec, accepted] = co_await acceptor->async_accept(kTuple);
    if (stopping_.load()) {
      co_return;
    }
    if (ec) {
      if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) {
        co_return;
      }
      refused_log().warn("accept failed: {}", ec.message());
      continue;
    }
    engine_->stats().connections_received.fetch_add(1, std::memory_order_relaxed);
    if (static_cast<int64_t>(engine_->clients().count()) >=
        config_.maxclients.load(std::memory_order_relaxed)) {
      engine_->stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
      std::error_code rec;
      auto remote = accepted.remote_endpoint(rec);
      refused_log().warn("refused connection from {}: max number of clients reached",
                         rec ? std::string("?") : remote.address().to_string());
      if (!tls) {  // a TLS client could not read it before its handshake
        std::string msg = std::string("-") + err::kMaxClients + "\r\n";
        asio::write(accepted, asio::buffer(msg), rec);
      }
      accepted.close(rec);
      continue;
    }
    if (refused_by_protected_mode(accepted)) {
      continue;
    }
    std::unique_ptr<TlsSession> session;
    if (tls) {
      auto ctx = tls_.current();
      if (!ctx) {
        std::error_code cec;
        accepted.close(cec);
        continue;
      }
      session = std::make_unique<TlsSession>(ctx->server(), true);
    }
    // Re-home the descriptor on the target worker's io_context, so the connection's reads and
    // writes are driven by that worker's reactor alone.
    // The connection gets a duplicate of the descriptor, registered while the accepted one
    // still is: so asio's state for it is made anew among the client-lifetime allocations,
    // rather than being the state the acceptor's thread had just used (which, kept in that
    // thread's pool, would be handed to the next accept and so always come from its arena).
    std::error_code hec;
    auto protocol = accepted.local_endpoint(hec).protocol();
    int fd = hec ? -1 : ::fcntl(accepted.native_handle(), F_DUPFD_CLOEXEC, 0);
    asio::ip::tcp::socket socket(w.io);
    if (fd >= 0) {
      ClientLifetimeAllocations lifetime;  // asio's state for the socket, kept in its pool
      socket.assign(protocol, fd, hec);
    }
    accepted.close(hec);  // the duplicate keeps the connection open
    if (fd < 0 || socket.native_handle() != fd) {
      refused_log().warn("cannot hand over connection: {}",
                         fd < 0 ? std::string(std::strerror(errno)) : hec.message());
      if (fd >= 0) {
        ::close(fd);
      }
      continue;
    }
    configure_socket(socket);
    auto conn = std::make_shared<Connection>(std::move(socket), *engine_, target, w.connections);
    if (session) {
      conn->use_tls(std::move(session));
    }
    Connection::spawn(std::move(conn));
  }
}


void Server::adopt_connection(size_t target, ConnectionHandoff h) {
  Worker* w = workers_[target].get();
  asio::post(w->io, [this, w, target, h = std::move(h)]() mutable {
    if (stopping_.load()) {
      ::close(h.fd);
      engine_->clients().remove(h.session.info->id);
      return;
    }
    w->connections.take_over(*engine_, target, std::move(h));
  });
}

asio::awaitable<void> Server::auto_rewrite() {
  Persistence* p = persistence_.get();
  auto start = [p] {
    std::string err = p->start_rewrite();
    if (!err.empty()) {
      spdlog::warn("automatic append only file rewrite not started: {}", err);
    }
    return 0;
  };
  try {
    co_await engine_->run_atomic(0, engine_->all_shards(), std::move(start));
  } catch (const ShardsBusy&) {
    // A script is busy: the cron tries again later.
  }
  auto_rewrite_running_ = false;
}

asio::awaitable<void> Server::scheduled_bgsave() {
  Engine* engine = engine_.get();
  auto start = [engine] {
    RdbSaver& rdb = engine->rdb_saver();
    if (rdb.in_progress()) {
      rdb.clear_scheduled();
      return 0;
    }
    std::string err = rdb.start_bgsave_parked(rdb_snapshot_aux(*engine));
    if (!err.empty()) {
      spdlog::warn("scheduled background save not started: {}", err);
      rdb.clear_scheduled();
    }
    return 0;
  };
  try {
    co_await engine_->run_atomic(0, engine_->all_shards(), std::move(start));
  } catch (const ShardsBusy&) {
    // A script is busy: the cron tries again later.
  }
  scheduled_bgsave_running_ = false;
}

asio::awaitable<void> Server::switch_appendonly(bool on) {
  Persistence* p = persistence_.get();
  auto task = [p, on] {
    std::string err = on ? p->enable_parked() : p->disable_parked();
    if (!err.empty()) {
      spdlog::warn("CONFIG SET appendonly {}: {}", on ? "yes" : "no", err);
    }
    return err;
  };
  std::string err;
  try {
    err = co_await engine_->run_atomic(0, engine_->all_shards(), std::move(task));
  } catch (const ShardsBusy&) {
    err = "a script is busy";
    spdlog::warn("CONFIG SET appendonly {}: {}", on ? "yes" : "no", err);
  }
  if (on && !err.empty()) {
    // The log could not start after all (its files, the fork of the base): CONFIG GET must
    // not go on saying yes. The hook this calls finds the log off and changes nothing.
    (void)config_.set("appendonly", "no", false);
  }
}

void Server::start_cron(size_t i) {
  Worker& w = *workers_[i];
  w.cron = std::make_unique<asio::steady_timer>(w.io);
  w.cron->expires_after(std::chrono::milliseconds(100));
  w.cron->async_wait([this, i](const std::error_code& ec) {
    if (!ec && !stopping_.load()) {
      on_cron(i);
    }
  });
}

void Server::drop_silent_replicas() {
  // A replica that stopped acknowledging (paused, or its host gone without a FIN) would hold
  // its channel's bytes and count toward WAIT's lag forever; after repl-timeout it is cut off
  // and reconnects by partial resync when it comes back.
  int64_t timeout_ms = config_.repl_timeout.load(std::memory_order_relaxed) * 1000;
  for (uint64_t id : engine_->replication().silent_replicas(engine_->now_ms(), timeout_ms)) {
    if (auto info = engine_->clients().find(id); info && info->control) {
      spdlog::warn("Disconnecting timedout replica (streaming sync): {}", info->addr);
      info->control->kill();
    }
  }
}

void Server::return_freed_memory(int64_t now_ms) {
  // The allocator keeps the pages a thousand departed or parked clients freed for a while
  // (jemalloc: until they decay, 10 s) before handing them back. A purge hands them back now;
  // it takes every arena's lock, so it runs only after many clients left or went idle, and
  // at most once a second.
  released_since_trim_ += ConnectionSet::take_released_count();
  // A thousand at once, at most once a second; fewer, once they stopped coming for a while.
  bool burst = released_since_trim_ >= kTrimAfterReleased && now_ms - last_trim_ms_ >= 1000;
  bool settled = released_since_trim_ >= kTrimAfterReleased / 10 && now_ms - last_trim_ms_ >= 5000;
  if (burst || settled) {
    released_since_trim_ = 0;
    last_trim_ms_ = now_ms;
    release_free_memory();
  }
}

// The network rates (every 100 ms) and the memory peak, on worker 0's cron (before
// last_ops_ms_ moves on).
void Server::sample_rates(int64_t now) {
  uint64_t in = 0;
  uint64_t out = 0;
  for (size_t s = 0; s < engine_->shard_count(); ++s) {
    in += engine_->shard(s).net_input_bytes().load(std::memory_order_relaxed);
    out += engine_->shard(s).net_output_bytes().load(std::memory_order_relaxed);
  }
  // CONFIG RESETSTAT zeroes the counters: a sample across it counts from zero.
  if (last_ops_ms_ > 0 && now > last_ops_ms_) {
    double secs = static_cast<double>(now - last_ops_ms_) / 1000.0;
    auto kbps = [&](uint64_t total, uint64_t last) {
      return static_cast<double>(total >= last ? total - last : total) / 1024.0 / secs;
    };
    input_kbps_samples_[rate_sample_] = kbps(in, last_net_in_);
    output_kbps_samples_[rate_sample_] = kbps(out, last_net_out_);
    rate_sample_ = (rate_sample_ + 1) % kRateSamples;
    auto mean = [](const auto& samples) {
      double sum = 0;
      for (double v : samples) {
        sum += v;
      }
      return sum / static_cast<double>(samples.size());
    };
    engine_->stats().input_kbps.store(mean(input_kbps_samples_), std::memory_order_relaxed);
    engine_->stats().output_kbps.store(mean(output_kbps_samples_), std::memory_order_relaxed);
  }
  last_net_in_ = in;
  last_net_out_ = out;
  // The peak, once a second (INFO and MEMORY also raise it when they read it).
  if (++peak_ticks_ % 10 == 0) {
    note_used_memory(engine_->stats(), used_memory_bytes());
  }
}

void Server::on_cron(size_t i) {
  Worker& w = *workers_[i];
  int64_t now = unix_ms();
  w.connections.close_idle(now, config_.timeout.load(std::memory_order_relaxed));
  w.connections.sweep(now);
  if (i == 0) {
    return_freed_memory(now);
    // Client eviction (maxmemory-clients): slow readers' replies and slow senders' requests
    // grow without a read or write of theirs to notice it.
    if (uint64_t limit = config_.client_memory_limit(); limit != 0) {
      engine_->clients().evict_over(limit, now);
    }
  }
  // A failed log write (disk full) is retried here until the disk accepts again; meanwhile
  // writes are refused with -MISCONF and reads keep working.
  ShardLog& log = engine_->shard(i).log();
  if (!log.healthy() && !log.flush()) {
    refused_log().warn("append only file write still failing: {}", std::strerror(log.last_errno()));
  }
  if (i == 0 && !engine_->loading()) {
    persistence_->poll_rewrite();
    engine_->replication_feed().ping_if_due(
        now, config_.repl_ping_replica_period.load(std::memory_order_relaxed));
    drop_silent_replicas();
    RdbSaver& rdb = engine_->rdb_saver();
    rdb.poll();
    // BGSAVE SCHEDULE waited for the log's compaction to end.
    if (rdb.scheduled() && !rdb.in_progress() && !persistence_->rewrite_in_progress() &&
        !scheduled_bgsave_running_) {
      scheduled_bgsave_running_ = true;
      asio::co_spawn(w.io, scheduled_bgsave(), asio::detached);
    }
    if (!auto_rewrite_running_ && persistence_->auto_rewrite_due()) {
      auto_rewrite_running_ = true;
      asio::co_spawn(w.io, auto_rewrite(), asio::detached);
    }
  }
  if (i == 0) {
    // instantaneous_ops_per_sec, sampled every 100 ms like Redis's serverCron.
    uint64_t total = 0;
    for (size_t s = 0; s < engine_->shard_count(); ++s) {
      total += engine_->shard(s).commands_processed().load(std::memory_order_relaxed);
    }
    if (last_ops_ms_ > 0 && now > last_ops_ms_) {
      int64_t ops = static_cast<int64_t>((total - last_ops_total_) * 1000 /
                                         static_cast<uint64_t>(now - last_ops_ms_));
      engine_->stats().ops_per_sec.store(ops, std::memory_order_relaxed);
    }
    sample_rates(now);
    last_ops_total_ = total;
    last_ops_ms_ = now;
  }
  start_cron(i);
}

std::string Server::move_listener(int64_t port, bool tls) {
  std::shared_ptr<asio::ip::tcp::acceptor> acc;
  if (port != 0) {
    if (tls && !tls_.current()) {
      if (std::string err = configure_tls(); !err.empty()) {
        refused_log().warn("Failed to configure TLS: {}", err);
        return "Unable to update TLS configuration. Check server logs.";
      }
    }
    std::error_code ec;
    auto addr = asio::ip::make_address(config_.bind(), ec);
    acc = std::make_shared<asio::ip::tcp::acceptor>(workers_[0]->io);
    if (!ec) {
      open_listener(*acc, addr, port, ec);
    }
    if (ec) {
      refused_log().warn("CONFIG SET {} {}: {}", tls ? "tls-port" : "port", port, ec.message());
      return "Unable to listen on this port. Check server logs.";
    }
  }
  asio::post(workers_[0]->io, [this, acc, tls] {
    auto& current = tls ? tls_acceptor_ : acceptor_;
    std::error_code cec;
    if (current) {
      current->close(cec);
      current.reset();
    }
    (tls ? tls_port_ : port_) = 0;
    if (acc) {
      current = std::make_unique<asio::ip::tcp::acceptor>(std::move(*acc));
      (tls ? tls_port_ : port_) = current->local_endpoint(cec).port();
      asio::co_spawn(workers_[0]->io, accept_loop(tls), asio::detached);
    }
  });
  return "";
}

int Server::run() {
  signals_ = std::make_unique<asio::signal_set>(workers_[0]->io, SIGINT, SIGTERM);
  signals_->async_wait([this](const std::error_code& ec, int sig) {
    if (!ec) {
      spdlog::info("received {}, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
      shutdown();
    }
  });
  if (acceptor_) {
    asio::co_spawn(workers_[0]->io, accept_loop(false), asio::detached);
  }
  if (tls_acceptor_) {
    asio::co_spawn(workers_[0]->io, accept_loop(true), asio::detached);
  }
  // CONFIG SET port / tls-port: the new listener is bound here, on the calling thread, so a
  // port that cannot be had refuses the change (and CONFIG SET rolls back); worker 0 then
  // swaps it in. The old listener closes, which ends its accept loop; open connections stay.
  config_.set_port_hook([this](int64_t port) { return move_listener(port, false); });
  config_.set_tls_port_hook([this](int64_t port) { return move_listener(port, true); });
  // CONFIG SET tls-*: a new context for new connections (Redis reloads the files even when
  // the names did not change, which is how certificates are rotated).
  config_.set_tls_hook([this]() -> std::string {
    if (config_.tls_port.load() == 0 && !config_.tls_replication.load() &&
        config_.get_string("tls-cluster") != "yes") {
      return "";
    }
    if (std::string err = configure_tls(); !err.empty()) {
      refused_log().warn("Failed to configure TLS: {}", err);
      return "Unable to update TLS configuration. Check server logs.";
    }
    return "";
  });
  // The link to a master follows the role: the start-up one (`replicaof` in the config file)
  // once the loop runs, then every REPLICAOF.
  master_link_ = std::make_unique<MasterLink>(
      *engine_, workers_[0]->io, workers_[0]->connections,
      [](std::shared_ptr<Connection> c) { Connection::spawn(std::move(c)); },
      port_, tls_);
  engine_->replication_hook = [this] {
    asio::post(workers_[0]->io, [this] {
      if (!stopping_.load()) {
        master_link_->follow_role();
      }
    });
  };
  asio::post(workers_[0]->io, [this] { master_link_->follow_role(); });
  // From here on CONFIG SET appendonly switches the log at runtime (the start-up value, from
  // flags or the config file, was read above).
  config_.set_appendonly_hook([this](bool on) -> std::string {
    if (engine_->loading()) {
      return "the data set is still loading";
    }
    if (on) {
      if (std::string err = persistence_->check_can_enable(); !err.empty()) {
        return err;
      }
    }
    asio::co_spawn(workers_[0]->io, switch_appendonly(on), asio::detached);
    return "";
  });
  for (size_t i = 0; i < workers_.size(); ++i) {
    start_cron(i);
  }
  for (size_t i = 1; i < workers_.size(); ++i) {
    Worker* w = workers_[i].get();
    w->thread = std::thread([w] {
      auto guard = asio::make_work_guard(w->io);
      w->io.run();
    });
  }
  if (config_.get_string("appendonly") == "yes") {
    // Load on a separate thread while the workers run: effects are applied on the shards'
    // own threads, and clients that connect meanwhile get -LOADING.
    engine_->set_loading(true);
    loader_ = std::thread([this] {
      std::string err = persistence_->load_and_open();
      if (!err.empty()) {
        spdlog::error("{}", err);
        exit_code_.store(1);
        shutdown();
        return;
      }
      const LoadStats& st = persistence_->load_stats();
      spdlog::info("DB loaded from append only file {}: {} records, {} effects, {} keys "
                   "expired while down, {} ms",
                   persistence_->directory(), st.records, st.effects, st.expired_on_load,
                   st.millis);
      engine_->set_loading(false);
    });
  } else {
    // Without the log, the RDB file (`dir`/`dbfilename`) is the data set, as on Redis: a
    // dump.rdb written by redis-server loads too.
    engine_->set_loading(true);
    loader_ = std::thread([this] {
      std::string err = load_rdb_at_startup(*engine_);
      if (!err.empty() && !stopping_.load()) {  // a shutdown's abort is no failure
        spdlog::error("{}", err);
        exit_code_.store(1);
        shutdown();
        return;
      }
      engine_->set_loading(false);
    });
  }
  {
    auto guard = asio::make_work_guard(workers_[0]->io);
    workers_[0]->io.run();
  }
  for (auto& w : workers_) {
    w->io.stop();
    if (w->thread.joinable()) {
      w->thread.join();
    }
  }
  if (loader_.joinable()) {
    loader_.join();
  }
  // A replica's stream position, taken before the link goes (it knows the selected database).
  // Not while the log's rewrite after a full sync is unfinished: the log may then lack part of
  // the data, and a full sync on restart is the safe way back.
  std::optional<ReplicationPosition> position;
  if (master_link_ && master_link_->has_position() && engine_->replication().is_replica() &&
      !engine_->loading() && !persistence_->rewrite_in_progress()) {
    position = ReplicationPosition{engine_->replication().ids().replid,
                                   engine_->replication().offset(), master_link_->position_db(),
                                   ""};
  }
  // Joins a full sync's loading thread (told to give up by shutdown) while the engine exists.
  master_link_.reset();
  const bool logged = persistence_->enabled();
  persistence_->close();
  bool saved_rdb = false;
  if (engine_->rdb_saver().save_on_shutdown() && !engine_->loading()) {
    // SHUTDOWN SAVE: the shards' threads are gone, so the keyspaces hold still.
    if (engine_->rdb_saver().save_parked(rdb_snapshot_aux(*engine_)).empty()) {
      spdlog::info("DB saved on disk before shutdown");
      saved_rdb = true;
    } else {
      exit_code_.store(1);
    }
  }
  // The workers are gone: write and sync what the last commands logged.
  for (size_t i = 0; i < engine_->shard_count(); ++i) {
    engine_->shard(i).log().flush();
    engine_->shard(i).log().sync();
  }
  // Kept only where the restart will find the same data: the log (appendonly yes) or the
  // RDB file just written (appendonly no).
  if (position && ((logged && config_.get_string("appendonly") == "yes") ||
                             (saved_rdb && config_.get_string("appendonly") != "yes"))) {
    position->source = logged ? "aof" : "rdb";
    if (Status st = save_replication_position(config_.get_string("dir"), *position);
        !st.is_ok()) {
      spdlog::warn("replication position not saved: {}", st.message());
    }
  }
  spdlog::info("HotKV is now ready to exit, bye bye...");
  return exit_code_.load();
}

void Server::wait_for_drain(Worker* w, int64_t deadline_ms,
                            std::shared_ptr<std::atomic<size_t>> remaining) {
  if (w->connections.size() == 0 || unix_ms() > deadline_ms) {
    if (remaining->fetch_sub(1) == 1) {
      for (auto& other : workers_) {
        other->io.stop();
      }
    }
    return;
  }
  if (!w->drain_timer) {
    w->drain_timer = std::make_unique<asio::steady_timer>(w->io);
  }
  w->drain_timer->expires_after(std::chrono::milliseconds(5));
  w->drain_timer->async_wait([this, w, deadline_ms, remaining](const std::error_code&) {
    wait_for_drain(w, deadline_ms, remaining);
  });
}

void Server::shutdown() {
  if (stopping_.exchange(true)) {
    return;
  }
  persistence_->abort_loading();
  engine_->rdb_saver().abort_loading();
  asio::post(workers_[0]->io, [this] {
    if (master_link_) {
      master_link_->stop();
    }
  });
  engine_->rdb_saver().abandon();
  asio::post(workers_[0]->io, [this] {
    std::error_code ec;
    if (acceptor_) {
      acceptor_->close(ec);
    }
    if (tls_acceptor_) {
      tls_acceptor_->close(ec);
    }
    if (signals_) {
      signals_->cancel(ec);
    }
  });
  // Each worker lets its connections finish what they are executing and writing; once every
  // worker's connections are gone (or after a grace period) all workers stop.
  auto remaining = std::make_shared<std::atomic<size_t>>(workers_.size());
  for (auto& worker : workers_) {
    Worker* w = worker.get();
    asio::post(w->io, [this, w, remaining] {
      if (w->cron) {
        w->cron->cancel();
      }
      w->connections.shutdown_all();
      wait_for_drain(w, unix_ms() + 2000, remaining);
    });
  }
  for (size_t i = 0; i < engine_->shard_count(); ++i) {
    Shard* s = &engine_->shard(i);
    asio::post(s->io(), [s] { s->stop(); });
  }
}

}  // namespace hotkv
