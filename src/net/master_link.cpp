// The link to the master: handshake, PSYNC, the full sync's image (see master_link.hpp).
#include "hotkv/net/as_tuple.hpp"
#include "hotkv/net/master_link.hpp"

#include <algorithm>
#include <optional>

#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/detached.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "hotkv/commands/replica_sync.hpp"
#include "hotkv/net/connection.hpp"
#include "hotkv/net/sync_payload.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/persistence.hpp"
#include "hotkv/shard/rdb_saver.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/log.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// Redis's cron retries a failed link once a second.
constexpr auto kRetryDelay = std::chrono::seconds(1);
// A handshake reply line longer than this is no reply of a Redis master.
constexpr size_t kMaxLine = 64 * 1024;
constexpr size_t kReadChunk = 64 * 1024;

RateLimitedLog& link_log() {
  static RateLimitedLog log;
  return log;
}

std::string resp_command(std::initializer_list<std::string_view> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

MasterLink::MasterLink(Engine& engine, asio::io_context& io, ConnectionSet& connections,
                       Spawner spawn, uint16_t listening_port, TlsContextHolder& tls)
    : engine_(engine),
      io_(io),
      connections_(connections),
      spawn_(std::move(spawn)),
      listening_port_(listening_port),
      tls_contexts_(tls),
      deadline_(io) {}

MasterLink::~MasterLink() {
  if (loader_.joinable()) {
    loader_.join();
  }
}

void MasterLink::follow_role() {
  Replication& repl = engine_.replication();
  const bool replica = repl.is_replica();
  // A master turned replica offers its own stream as the cached master: the new master, if
  // it followed this one, continues it from its replid2 (a failover's old master rejoins
  // without a full sync). At start-up there is nothing to offer unless a sync happens first.
  if (replica && !was_replica_ && started_) {
    have_cached_master_ = true;
    cached_db_ = 0;
  }
  // A restart that reloaded the data of a clean shutdown offers the position it had then.
  if (auto db = repl.take_restored_stream(); db && replica && !started_) {
    have_cached_master_ = true;
    cached_db_ = *db;
  }
  started_ = true;
  was_replica_ = replica;
  ++generation_;
  drop_socket();
  if (auto c = conn_.lock()) {
    c->close();  // its closing callback sees a stale generation and starts nothing
    closing_conn_ = c;
  }
  conn_.reset();
  if (!replica || stopped_) {
    return;
  }
  repl.set_link_state(LinkState::kConnect, unix_ms());
  asio::co_spawn(io_, run(generation_), asio::detached);
}

void MasterLink::stop() {
  stopped_ = true;
  ++generation_;
  drop_socket();
  engine_.rdb_saver().abort_loading();
}

void MasterLink::drop_socket() {
  deadline_.cancel();
  tls_.reset();
  if (socket_) {
    std::error_code ec;
    socket_->close(ec);
    socket_.reset();
  }
}

void MasterLink::link_closed(uint64_t generation, uint32_t db) {
  // The stream's position is the cached master now (Replication's id and offset).
  have_cached_master_ = true;
  cached_db_ = db;
  if (generation != generation_ || stopped_ || !engine_.replication().is_replica()) {
    return;
  }
  conn_.reset();
  engine_.replication().set_link_state(LinkState::kConnect, unix_ms());
  link_log().warn("connection with master lost: reconnecting");
  asio::co_spawn(io_, run(generation), asio::detached);
}

asio::awaitable<void> MasterLink::run(uint64_t generation) {
  asio::steady_timer pause(io_);
  while (generation == generation_ && !stopped_) {
    if (co_await attempt(generation)) {
      co_return;
    }
    if (generation != generation_ || stopped_) {
      co_return;
    }
    engine_.replication().set_link_state(LinkState::kConnect, unix_ms());
    pause.expires_after(kRetryDelay);
    co_await pause.async_wait(kTuple);
  }
}

void MasterLink::arm_deadline() {
  int64_t timeout_s = engine_.config().repl_timeout.load(std::memory_order_relaxed);
  deadline_.expires_after(std::chrono::seconds(timeout_s));
  std::weak_ptr<asio::ip::tcp::socket> weak = socket_;
  deadline_.async_wait([weak](const std::error_code& ec) {
    if (ec) {
      return;  // re-armed or cancelled
    }
    if (auto s = weak.lock()) {
      std::error_code ignored;
      s->close(ignored);
    }
  });
}

asio::awaitable<bool> MasterLink::send(const std::string& bytes) {
  auto sock = socket_;
  if (!sock) {
    co_return false;
  }
  arm_deadline();
  std::string records;
  if (tls_ && !tls_->encrypt(bytes, records)) {
    co_return false;
  }
  auto [ec, n] = co_await asio::async_write(*sock, asio::buffer(tls_ ? records : bytes), kTuple);
  co_return !ec;
}

asio::awaitable<std::tuple<std::error_code, size_t>> MasterLink::read_some(std::string& buf) {
  auto sock = socket_;
  if (!sock) {
    co_return std::tuple{std::error_code(asio::error::not_connected), size_t{0}};
  }
  for (;;) {
    if (tls_) {
      ssize_t got = tls_->decrypt(buf.data(), buf.size());
      if (got > 0) {
        co_return std::tuple{std::error_code(), static_cast<size_t>(got)};
      }
      if (got < 0) {
        co_return std::tuple{std::error_code(asio::error::eof), size_t{0}};
      }
    }
    auto [ec, n] = co_await sock->async_read_some(asio::buffer(buf), kTuple);
    if (ec || !tls_) {
      co_return std::tuple{ec, n};
    }
    tls_->feed(buf.data(), n);
  }
}

asio::awaitable<bool> MasterLink::start_tls(const std::string& where) {
  auto ctx = tls_contexts_.current();
  if (!ctx) {
    co_return fail("tls-replication is set but TLS is not configured (tls-cert-file, ...)");
  }
  auto sock = socket_;
  tls_ = std::make_unique<TlsSession>(ctx->client(), false);
  std::string buf(16 * 1024, '\0');
  for (;;) {
    ssize_t got = tls_->decrypt(buf.data(), 0);  // the handshake's next step only
    std::string records;
    tls_->take_output(records);
    if (!records.empty()) {
      arm_deadline();
      auto [wec, wn] = co_await asio::async_write(*sock, asio::buffer(records), kTuple);
      if (wec) {
        co_return fail("TLS handshake with " + where + " failed: " + wec.message());
      }
    }
    if (got < 0) {
      co_return fail("TLS handshake with " + where + " failed: " + tls_->error());
    }
    if (tls_->established()) {
      co_return true;
    }
    arm_deadline();
    auto [ec, n] = co_await sock->async_read_some(asio::buffer(buf), kTuple);
    if (ec) {
      co_return fail("TLS handshake with " + where + " failed: " + ec.message());
    }
    tls_->feed(buf.data(), n);
  }
}

asio::awaitable<std::string> MasterLink::read_line(bool& ok) {
  ok = false;
  std::string chunk(4096, '\0');
  for (;;) {
    size_t nl = inbuf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = inbuf_.substr(0, nl);
      inbuf_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') {
        line.pop_back();
      }
      ok = true;
      co_return line;
    }
    auto sock = socket_;
    if (!sock || inbuf_.size() > kMaxLine) {
      co_return "";
    }
    arm_deadline();
    auto [ec, n] = co_await read_some(chunk);
    if (ec) {
      co_return "";
    }
    engine_.replication().note_master_io(unix_ms());
    inbuf_.append(chunk.data(), n);
  }
}

asio::awaitable<std::string> MasterLink::load_image(std::string image, int64_t& stream_db) {
  if (loader_.joinable()) {
    loader_.join();  // the previous load, long finished
  }
  engine_.set_loading(true);
  Engine* engine = &engine_;
  asio::io_context* io = &io_;
  std::thread* loader = &loader_;
  auto initiation = [engine, io, loader, &image](auto handler) {
    *loader = std::thread([engine, io, image = std::move(image),
                           handler = std::move(handler)]() mutable {
      SyncLoadResult r = load_full_sync_image(*engine, image);
      std::string().swap(image);
      asio::post(*io, [handler = std::move(handler), r = std::move(r)]() mutable {
        std::move(handler)(std::move(r));
      });
    });
  };
  SyncLoadResult r = co_await asio::async_initiate<decltype(asio::use_awaitable),
                                                   void(SyncLoadResult)>(std::move(initiation),
                                                                         asio::use_awaitable);
  engine_.set_loading(false);
  stream_db = r.stream_db;
  if (r.error.empty()) {
    spdlog::info("loaded {} keys from the master's image", r.keys);
  }
  co_return r.error;
}

bool MasterLink::fail(const std::string& why) {
  link_log().warn("replication with master: {}", why);
  drop_socket();
  return false;
}

asio::awaitable<bool> MasterLink::connect(uint64_t generation, const std::string& host,
                                          int64_t port) {
  inbuf_.clear();
  socket_ = std::make_shared<asio::ip::tcp::socket>(io_);
  auto sock = socket_;
  const std::string where = host + ":" + std::to_string(port);
  asio::ip::tcp::resolver resolver(io_);
  arm_deadline();
  auto [rec, endpoints] = co_await resolver.async_resolve(host, std::to_string(port), kTuple);
  if (generation != generation_) {
    co_return false;
  }
  if (rec) {
    co_return fail("cannot resolve " + where + ": " + rec.message());
  }
  auto [cec, ep] = co_await asio::async_connect(*sock, endpoints, kTuple);
  if (generation != generation_) {
    co_return false;
  }
  if (cec) {
    co_return fail("cannot connect to " + where + ": " + cec.message());
  }
  std::error_code ignored;
  sock->set_option(asio::ip::tcp::no_delay(true), ignored);
  co_return true;
}

asio::awaitable<bool> MasterLink::handshake(const std::string& where) {
  // PING first: a master that needs a password answers -NOAUTH, which is fine (AUTH follows);
  // any other error means it cannot serve replicas now.
  bool ok = false;
  // (Built before the co_await: GCC 12 cannot keep an initializer list's array across one.)
  const std::string ping = resp_command({"PING"});
  if (!co_await send(ping)) {
    co_return fail("cannot write to " + where);
  }
  std::string reply = co_await read_line(ok);
  if (!ok) {
    co_return fail("no reply to PING from " + where);
  }
  if (starts_with(reply, "-") && !starts_with(reply, "-NOAUTH") &&
      !starts_with(reply, "-NOPERM") && !starts_with(reply, "-ERR operation not permitted")) {
    co_return fail("error reply to PING from " + where + ": " + reply.substr(1));
  }
  // The rest goes in one write; the replies are read in order.
  const Config& cfg = engine_.config();
  const std::string masterauth = cfg.get_string("masterauth");
  const std::string masteruser = cfg.get_string("masteruser");
  const std::string announce_ip = cfg.get_string("replica-announce-ip");
  int64_t announce_port = cfg.replica_announce_port.load(std::memory_order_relaxed);
  // A TLS replica announces its tls-port, the one its own replicas would use, as Redis does.
  int64_t tls_port = cfg.tls_port.load(std::memory_order_relaxed);
  if (announce_port == 0 && tls_port != 0 && cfg.tls_replication.load(std::memory_order_relaxed)) {
    announce_port = tls_port;
  }
  const std::string port = std::to_string(announce_port > 0 ? announce_port : listening_port_);
  std::string request;
  if (!masterauth.empty()) {
    request += masteruser.empty() ? resp_command({"AUTH", masterauth})
                                  : resp_command({"AUTH", masteruser, masterauth});
  }
  request += resp_command({"REPLCONF", "listening-port", port});
  if (!announce_ip.empty()) {
    request += resp_command({"REPLCONF", "ip-address", announce_ip});
  }
  request += resp_command({"REPLCONF", "capa", "eof", "capa", "psync2"});
  if (!co_await send(request)) {
    co_return fail("cannot write to " + where);
  }
  if (!masterauth.empty()) {
    reply = co_await read_line(ok);
    if (!ok || starts_with(reply, "-")) {
      co_return fail("AUTH refused by " + where + ": " + reply);
    }
  }
  // Old masters refuse some REPLCONF options; Redis goes on regardless.
  for (int i = announce_ip.empty() ? 2 : 3; i > 0; --i) {
    reply = co_await read_line(ok);
    if (!ok) {
      co_return fail("no reply to REPLCONF from " + where);
    }
    if (starts_with(reply, "-")) {
      link_log().warn("master {} refused a REPLCONF option: {}", where, reply.substr(1));
    }
  }
  co_return true;
}

asio::awaitable<bool> MasterLink::attempt(uint64_t generation) {
  Replication& repl = engine_.replication();
  auto master = repl.master();
  // Start-up loading (or a load of ours) must end first: one data set is loaded at a time.
  if (!master || engine_.loading()) {
    co_return false;
  }
  repl.set_link_state(LinkState::kConnecting, unix_ms());
  const std::string where = master->first + ":" + std::to_string(master->second);
  if (!co_await connect(generation, master->first, master->second)) {
    co_return false;
  }
  if (engine_.config().tls_replication.load(std::memory_order_relaxed) &&
      !co_await start_tls(where)) {
    co_return false;
  }
  spdlog::info("connected to master {}: starting the replication handshake", where);
  if (!co_await handshake(where)) {
    co_return false;
  }
  // The link being replaced may still be applying what it had read: the offset to ask for is
  // known once it is gone.
  asio::steady_timer pause(io_);
  while (!closing_conn_.expired() && generation == generation_) {
    pause.expires_after(std::chrono::milliseconds(1));
    co_await pause.async_wait(kTuple);
  }
  // PSYNC: continue the cached master's stream if the master still can, else a full sync.
  Replication::Ids ids = repl.ids();
  const std::string next = std::to_string(repl.offset() + 1);
  const std::string psync = have_cached_master_ ? resp_command({"PSYNC", ids.replid, next})
                                                : resp_command({"PSYNC", "?", "-1"});
  if (!co_await send(psync)) {
    co_return fail("cannot write to " + where);
  }
  bool ok = false;
  std::string reply;
  do {  // a master may send newlines while it prepares the reply
    reply = co_await read_line(ok);
  } while (ok && reply.empty());
  if (!ok) {
    co_return fail("no reply to PSYNC from " + where);
  }
  if (generation != generation_) {
    co_return false;
  }
  uint32_t db = cached_db_;
  if (starts_with(reply, "+CONTINUE")) {
    std::string new_id = reply.size() > 10 ? reply.substr(10) : "";
    if (new_id.size() == 40 && new_id != ids.replid) {
      repl.continue_under_new_id(new_id);
      spdlog::info("master {} continues our stream under its new replication id {}", where,
                   new_id);
    }
    spdlog::info("master {} continues our stream from offset {}", where, next);
    repl.set_read_offset(repl.offset());
  } else if (starts_with(reply, "+FULLRESYNC")) {
    if (!co_await full_sync(generation, reply, where, db)) {
      co_return false;
    }
  } else if (starts_with(reply, "-NOMASTERLINK") || starts_with(reply, "-LOADING")) {
    co_return fail("master " + where + " cannot serve a sync yet: " + reply.substr(1));
  } else {
    co_return fail("unexpected reply to PSYNC from " + where + ": " + reply);
  }
  hand_over(generation, where, db);
  co_return true;
}

asio::awaitable<bool> MasterLink::receive_image(uint64_t generation, const std::string& where,
                                                std::string& image) {
  auto sock = socket_;
  SyncPayloadReader payload;
  // INFO's master_sync_*: the size is -1 until a sized payload's header tells it, and stays
  // -1 for a streamed image (its size is not known ahead), as Redis shows them.
  auto progress = [&payload]() -> Replication::Transfer {
    int64_t total = payload.expected_size() > 0 ? static_cast<int64_t>(payload.expected_size())
                                                : -1;
    return {true, total, static_cast<int64_t>(payload.received())};
  };
  inbuf_.erase(0, payload.feed(inbuf_));
  engine_.replication().note_transfer(progress());
  std::string chunk(kReadChunk, '\0');
  while (!payload.done() && !payload.failed()) {
    arm_deadline();
    auto [ec, n] = co_await read_some(chunk);
    if (generation != generation_) {
      engine_.replication().note_transfer({});
      co_return false;
    }
    if (ec) {
      engine_.replication().note_transfer({});
      co_return fail("lost the master " + where + " during the transfer: " + ec.message());
    }
    engine_.replication().note_master_io(unix_ms());
    std::string_view got(chunk.data(), n);
    // Bytes past the image are the start of the stream: the Connection gets them.
    inbuf_.append(got.substr(payload.feed(got)));
    engine_.replication().note_transfer(progress());
  }
  engine_.replication().note_transfer({});
  deadline_.cancel();
  if (payload.failed()) {
    co_return fail(payload.error());
  }
  spdlog::info("received the master's image: {} bytes ({})", payload.received(),
               payload.diskless() ? "streamed" : "from the master's disk");
  image = std::move(payload.body());
  co_return true;
}

asio::awaitable<bool> MasterLink::full_sync(uint64_t generation, std::string_view reply,
                                            const std::string& where, uint32_t& db) {
  Replication& repl = engine_.replication();
  // "+FULLRESYNC <replid> <offset>"
  std::string_view rest = reply.substr(std::min<size_t>(reply.size(), 12));
  size_t space = rest.find(' ');
  auto offset =
      space == std::string_view::npos ? std::nullopt : parse_int64(rest.substr(space + 1));
  if (space != 40 || !offset || *offset < 0) {
    co_return fail("malformed reply to PSYNC from " + where + ": " + std::string(reply));
  }
  const std::string replid(rest.substr(0, 40));
  spdlog::info("full resync from master {}: replication id {}, offset {}", where, replid,
               *offset);
  // The history this server followed is gone once the load starts.
  have_cached_master_ = false;
  repl.set_link_state(LinkState::kSync, unix_ms());
  std::string image;
  if (!co_await receive_image(generation, where, image)) {
    co_return false;
  }
  try {
    co_await engine_.run_atomic(0, engine_.all_shards(), [e = &engine_] {
      empty_data_for_full_sync(*e);
      return 0;
    });
  } catch (const ShardsBusy&) {
    co_return fail("a busy script holds the data set: the sync starts over");
  }
  int64_t stream_db = 0;
  std::string err = co_await load_image(std::move(image), stream_db);
  if (!err.empty()) {
    spdlog::error("the master's image did not load: {}", err);
    co_return fail("full sync failed");
  }
  if (generation != generation_ || stopped_) {
    co_return false;
  }
  repl.adopt_master_stream(replid, static_cast<uint64_t>(*offset));
  repl.set_read_offset(static_cast<uint64_t>(*offset));
  have_cached_master_ = true;
  db = stream_db >= 0 && stream_db < static_cast<int64_t>(engine_.shard(0).db_count())
           ? static_cast<uint32_t>(stream_db)
           : 0;
  co_await rewrite_log_after_sync();
  co_return generation == generation_ && !stopped_;
}

asio::awaitable<void> MasterLink::rewrite_log_after_sync() {
  // Neither the emptying nor the image went through the append-only log: a rewrite makes the
  // log hold this data set again (Redis restarts its log after a sync likewise).
  Persistence* p = engine_.persistence();
  if (p == nullptr || !p->enabled()) {
    co_return;
  }
  try {
    std::string err =
        co_await engine_.run_atomic(0, engine_.all_shards(), [p] { return p->start_rewrite(); });
    if (!err.empty()) {
      spdlog::warn("append only file rewrite after the sync not started: {}", err);
    }
  } catch (const ShardsBusy&) {
    spdlog::warn("append only file rewrite after the sync not started: a script is busy");
  }
}

void MasterLink::hand_over(uint64_t generation, const std::string& where, uint32_t db) {
  Replication& repl = engine_.replication();
  deadline_.cancel();
  auto sock = std::move(socket_);
  auto info = std::make_shared<ClientInfo>();
  info->id = engine_.clients().next_id();
  info->addr = where;
  std::error_code ec;
  if (auto local = sock->local_endpoint(ec); !ec) {
    info->laddr = local.address().to_string() + ":" + std::to_string(local.port());
  }
  if (auto remote = sock->remote_endpoint(ec); !ec) {
    info->addr = remote.address().to_string() + ":" + std::to_string(remote.port());
  }
  info->fd = sock->native_handle();
  info->shard = 0;
  info->created_ms = unix_ms();
  info->last_interaction_ms.store(info->created_ms, std::memory_order_relaxed);
  info->db.store(db, std::memory_order_relaxed);
  info->link.store(ClientInfo::kMasterLink, std::memory_order_relaxed);
  ConnectionHandoff h;
  h.session.info = info;
  h.session.authenticated = true;
  h.session.master_link = true;
  h.session.db = db;
  h.master_input = std::move(inbuf_);
  h.tls = std::move(tls_);
  inbuf_.clear();
  h.on_master_link_closed = [this, generation](uint32_t closed_db) {
    link_closed(generation, closed_db);
  };
  engine_.clients().add(info);
  auto conn = std::make_shared<Connection>(std::move(*sock), engine_, 0, connections_,
                                           std::move(h));
  conn_ = conn;
  repl.note_master_io(unix_ms());
  repl.set_link_state(LinkState::kConnected, unix_ms());
  spdlog::info("in sync with master {}: applying its stream", where);
  spawn_(std::move(conn));
}

}  // namespace hotkv
