// The replica's side of Redis 7.0 replication: while this server is a replica (REPLICAOF, or
// `replicaof` in the config file) it keeps a link to its master. Each attempt connects,
// shakes hands (PING, AUTH with masterauth, REPLCONF listening-port / ip-address / capa eof
// psync2), asks PSYNC with the cached master's id and offset, and then either continues
// (+CONTINUE: nothing is lost) or receives the master's RDB image (+FULLRESYNC), which
// replaces the data set. The socket then becomes a Connection on worker 0 marked as the master
// link (connection_master_link.cpp), which applies the command stream. When that connection
// ends, the link tries again a second later, as Redis's replication cron does.
//
// Everything here runs on worker 0's thread, except the loading of an image: load_rdb_snapshot
// waits for every shard to apply its batches, worker 0's shard among them, so it runs on a
// thread of its own while worker 0 keeps serving (clients get -LOADING meanwhile, as during
// start-up loading).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include "hotkv/net/tls_context.hpp"
#include "hotkv/net/tls_session.hpp"

namespace hotkv {

class Connection;
class ConnectionSet;
class Engine;

class MasterLink {
 public:
  // Spawns a connection's coroutine on `io` (the server's, which reports its errors).
  using Spawner = std::function<void(std::shared_ptr<Connection>)>;
  // `io` and `connections` are worker 0's; `listening_port` is the port this server listens
  // on (REPLCONF listening-port unless replica-announce-port is set).
  // With tls-replication the link speaks TLS, with `tls`'s current client context.
  MasterLink(Engine& engine, asio::io_context& io, ConnectionSet& connections, Spawner spawn,
             uint16_t listening_port, TlsContextHolder& tls);
  ~MasterLink();

  // Worker 0's thread. The role or the master may have changed (start-up, REPLICAOF): drops
  // the current link, if any, and starts a new one if this server is a replica.
  void follow_role();
  // Worker 0's thread (shutdown). No new attempt starts; the loading thread is told to give up.
  void stop();
  // The stream's position for a restart (a clean shutdown saves it): whether there is one, and
  // the database the link had selected.
  bool has_position() const { return have_cached_master_; }
  uint32_t position_db() const { return cached_db_; }

 private:
  // Attempts until one hands a synced link over (or the role changes: `generation` is stale).
  asio::awaitable<void> run(uint64_t generation);
  // One attempt. True if the link now lives on as a Connection.
  asio::awaitable<bool> attempt(uint64_t generation);
  // The attempt's steps; each false after saying why (fail) or when `generation` went stale.
  asio::awaitable<bool> connect(uint64_t generation, const std::string& host, int64_t port);
  asio::awaitable<bool> handshake(const std::string& where);
  // +FULLRESYNC: receives the image, replaces the data set with it, adopts the master's id
  // and offset; `db` gets the stream's selected database.
  asio::awaitable<bool> full_sync(uint64_t generation, std::string_view reply,
                                  const std::string& where, uint32_t& db);
  asio::awaitable<bool> receive_image(uint64_t generation, const std::string& where,
                                      std::string& image);
  asio::awaitable<void> rewrite_log_after_sync();
  // The socket becomes the master's client (a Connection on worker 0).
  void hand_over(uint64_t generation, const std::string& where, uint32_t db);
  bool fail(const std::string& why);
  // Reads one line of a reply (without its CRLF), skipping nothing. "" with `ok` false on a
  // timeout, an error or the link being dropped.
  asio::awaitable<std::string> read_line(bool& ok);
  asio::awaitable<bool> send(const std::string& bytes);
  // tls-replication: the TLS handshake with the master, right after the connect.
  asio::awaitable<bool> start_tls(const std::string& where);
  // One read of the link: plaintext into buf (decrypted with tls-replication).
  asio::awaitable<std::tuple<std::error_code, size_t>> read_some(std::string& buf);
  // Arms the repl-timeout deadline for the next step: the socket is closed when it passes.
  void arm_deadline();
  // The image, loaded on a thread of its own; resumes on worker 0 with "" or why it failed.
  asio::awaitable<std::string> load_image(std::string image, int64_t& stream_db);
  void link_closed(uint64_t generation, uint32_t db);
  void drop_socket();

  Engine& engine_;
  asio::io_context& io_;
  ConnectionSet& connections_;
  Spawner spawn_;
  uint16_t listening_port_;
  uint64_t generation_ = 0;
  bool stopped_ = false;
  bool started_ = false;  // follow_role ran once (the start-up role is known)
  bool was_replica_ = false;
  // The master this server follows (or last followed) and whether Replication's id and offset
  // name a stream a master may continue: after a sync, or a master turned replica (Redis
  // caches its own stream as the master's then, so a failover's old master rejoins partially).
  bool have_cached_master_ = false;
  uint32_t cached_db_ = 0;  // the stream's selected database when the link dropped
  std::shared_ptr<asio::ip::tcp::socket> socket_;  // during an attempt
  TlsContextHolder& tls_contexts_;
  std::unique_ptr<TlsSession> tls_;  // during an attempt with tls-replication
  std::string inbuf_;  // read during the handshake, not yet consumed
  asio::steady_timer deadline_;
  std::weak_ptr<Connection> conn_;
  std::weak_ptr<Connection> closing_conn_;  // the link follow_role closed, until it is gone
  std::thread loader_;
};

}  // namespace hotkv
