// One client connection, owned by the thread that accepted it. Its coroutine reads, parses
// every complete command in the buffer, executes each one (inline when its keys are local,
// by message to the owning shard otherwise, or atomically across shards), and writes the
// replies in request order. Consecutive pipelined commands for the same remote shard travel in
// one message, so pipelining stays cheap across threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/net/input_buffer.hpp"
#include "hotkv/resp/parser.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/util/log.hpp"

namespace hotkv {

struct CommandSpec;
class ConnectionSet;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, Engine& engine, size_t shard, ConnectionSet& set);
  ~Connection();

  // The connection's whole life, run on its owner thread; returns when the client is gone. The
  // coroutine frame holds `self`, which keeps the connection alive until then.
  static asio::awaitable<void> serve(std::shared_ptr<Connection> self);
  // Owner thread. Closes the socket; a pending read or write ends at once.
  void close();
  // Owner thread. Graceful shutdown: finish what is being executed and written, then close.
  void shutdown();
  uint64_t id() const { return session_.info->id; }
  int64_t last_interaction_ms() const;

  static RateLimitedLog& protocol_log();

 private:
  asio::awaitable<void> run();

  struct RemoteCommand {
    const CommandSpec* spec;
    std::vector<std::string> args;
  };

  // Executes every complete command in the input buffer. Returns false when the connection
  // must close after its replies are written (QUIT, protocol error, shutdown).
  asio::awaitable<bool> process_input();
  asio::awaitable<void> flush_remote();
  asio::awaitable<bool> write_output();

  asio::ip::tcp::socket socket_;
  Engine& engine_;
  size_t shard_;
  ConnectionSet& set_;
  ClientSession session_;
  InputBuffer in_;
  RequestParser parser_;
  int64_t bulk_limit_;
  std::vector<std::string_view> args_;
  std::vector<size_t> key_scratch_;
  std::string out_;
  size_t remote_shard_ = 0;
  std::vector<RemoteCommand> remote_batch_;
  bool closing_ = false;
  bool shutting_down_ = false;
  bool reading_ = false;
};

// The connections of one thread, for idle timeouts and shutdown.
class ConnectionSet {
 public:
  void add(const std::shared_ptr<Connection>& c);
  void remove(uint64_t id);
  // Closes clients idle for longer than timeout_s (0 = never).
  void close_idle(int64_t now_ms, int64_t timeout_s);
  void shutdown_all();
  size_t size() const { return conns_.size(); }

 private:
  std::vector<std::weak_ptr<Connection>> live() const;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> conns_;
};

}  // namespace hotkv
