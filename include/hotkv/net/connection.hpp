// One client connection, owned by the thread that accepted it. Its coroutine reads, parses
// every complete command in the buffer, executes each one (inline when its keys are local,
// by message to the owning shard otherwise, or atomically across shards), and writes the
// replies in request order. Consecutive pipelined commands for the same remote shard travel in
// one message, so pipelining stays cheap across threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/net/client_socket.hpp"
#include "hotkv/net/input_buffer.hpp"
#include "hotkv/commands/dispatch.hpp"
#include "hotkv/resp/parser.hpp"
#include "hotkv/shard/blocking.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/pubsub.hpp"
#include "hotkv/util/log.hpp"

namespace hotkv {

struct CommandSpec;
class ConnectionSet;

class Connection : public std::enable_shared_from_this<Connection>, private PubSubSink {
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
  friend class ConnectionSet;

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
  // Replies of a request/reply exchange are written at the end of the thread's current batch
  // of ready sockets, all in one pass (ConnectionSet::defer_reply), as Redis writes before it
  // sleeps: a client that is sent its replies in one burst is woken once for them, instead
  // of once per reply spread over the batch. The coroutine meanwhile goes back to reading.
  bool can_defer_reply() const;
  // The pass: writes out_ if the coroutine still waits for input (else it writes it itself).
  void write_deferred_reply();
  // Transactions (connection_multi.cpp). Inside MULTI: true if the command was queued (or
  // refused) here and its reply written to out_; false if it runs now (EXEC, DISCARD, ...).
  bool queue_in_multi(const CommandSpec& spec);
  // EXEC: runs the queued commands atomically where their keys live and returns the reply.
  asio::awaitable<std::string> exec_transaction();

  // Blocking commands (connection_blocking.cpp): runs the command; if it asks to block,
  // waits (without reading further input) until it is served, times out, is unblocked or the
  // client goes away. Returns the reply ("" if the client is gone).
  asio::awaitable<std::string> run_blocking(const CommandSpec& spec, Route route);
  // Asks whoever owns the blocked client to complete it with `kind` (owner thread of the
  // in-place shard, or directly for several-shard clients). Connection's thread.
  void cancel_block(WakeKind kind);
  // Watches the socket while blocked so a client that disconnects is noticed at once.
  void watch_disconnect();

  // Pub/sub messages arriving on this thread (connection_pubsub.cpp): queued behind the
  // replies already produced and written at once if the connection is idle, without
  // disturbing a write the coroutine has in flight.
  void deliver(const PubSubMessage& m) override;
  void flush() override;
  void start_push_write();
  // client-output-buffer-limit pubsub: false (and the connection closes) when over it.
  bool within_pubsub_limits();

  ClientSocket socket_;
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
  std::shared_ptr<BlockedClient> blocked_;
  std::optional<WakeResult> wake_result_;
  asio::steady_timer block_timer_;
  // Output shared with pushes: out_ is written by the coroutine (coro_sending_ while its
  // async write is in flight, when pushes go to deferred_ instead); a push written while the
  // coroutine is idle moves out_ to inflight_ (push_sending_), and the coroutine waits on
  // drain_timer_ before its own next write.
  std::string deferred_;
  std::string inflight_;
  bool coro_sending_ = false;
  bool push_sending_ = false;
  asio::steady_timer drain_timer_;
  int64_t soft_limit_since_ms_ = 0;
  bool closing_ = false;
  bool shutting_down_ = false;
  bool reading_ = false;
  bool reply_deferred_ = false;  // queued in set_ for the end-of-batch write
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
  // Owner thread. Queues c's reply for the end-of-batch write (see Connection::run).
  void defer_reply(std::shared_ptr<Connection> c);
  // Owner thread. Counts a completed read (see write_deferred).
  void note_read() { ++reads_; }

 private:
  static constexpr int kMaxGroupWaits = 4;
  void write_deferred();
  uint64_t reads_ = 0;
  uint64_t reads_at_post_ = 0;
  int waits_ = 0;
  std::vector<std::shared_ptr<Connection>> deferred_;
  std::vector<std::shared_ptr<Connection>> writing_;
  std::vector<std::weak_ptr<Connection>> live() const;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> conns_;
};

}  // namespace hotkv
