// One client connection, owned by the thread that serves it. Its coroutine reads, parses
// every complete command in the buffer, executes each one (inline when its keys are local,
// by message to the owning shard otherwise, or atomically across shards), and writes the
// replies in request order. A pipeline is squashed: each shard's part of it travels to that
// shard in one message, the parts run in parallel, and the replies are put back in request
// order. A connection whose commands keep going to one other shard moves to that shard's
// thread (see Connection::note_route).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/exec/executor.hpp"
#include "hotkv/exec/plan.hpp"
#include "hotkv/exec/shard_courier.hpp"
#include "hotkv/net/client_socket.hpp"
#include "hotkv/net/input_buffer.hpp"
#include "hotkv/net/tls_session.hpp"
#include "hotkv/resp/parser.hpp"
#include "hotkv/shard/blocking.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/pubsub.hpp"
#include "hotkv/util/log.hpp"

namespace hotkv {

struct CommandSpec;
class ConnectionSet;

class Connection;

// Where a client's connection lives now. CLIENT KILL, CLIENT UNBLOCK and tracking messages,
// from any thread, post to it through ClientInfo::control, which is set once; a migration
// re-points this instead, under the mutex.
struct ConnectionOwner final : ClientControl {
  // A hibernated client is woken to be closed (its run() sees kill_requested).
  void kill() override;
  void unblock(bool error) override;
  // A hibernated client (a RESP3 client some other client's tracking redirects to) is woken,
  // and its run() delivers the message as it does after a move.
  void push(std::shared_ptr<const TrackingMessage> m) override;

  std::mutex mutex;
  uint64_t id = 0;  // the client's
  asio::io_context* io = nullptr;
  std::weak_ptr<Connection> conn;
  // Set while the client is hibernated (Connection::hibernate): the set holding it on io's
  // thread, which wakes it for a kill or a push.
  ConnectionSet* hibernated_in = nullptr;
  bool kill_requested = false;  // a kill that arrived while the connection was moving
  // Client-side caching messages that arrived while it was moving (or hibernated), delivered
  // on arrival; made when the first one comes (one pointer per idle client).
  using Messages = std::vector<std::shared_ptr<const TrackingMessage>>;
  std::unique_ptr<Messages> tracking_while_moving;
  void keep_message(std::shared_ptr<const TrackingMessage> m) {
    if (!tracking_while_moving) {
      tracking_while_moving = std::make_unique<Messages>();
    }
    tracking_while_moving->push_back(std::move(m));
  }
};

// A connection on its way to another thread (Connection::migrate): its descriptor, released
// from the old thread's reactor, and everything the client has set on it.
struct ConnectionHandoff {
  int fd = -1;
  asio::ip::tcp protocol = asio::ip::tcp::v4();
  ClientSession session;
  std::shared_ptr<ConnectionOwner> owner;
  int64_t migrated_at_ms = 0;
  // A replica's link to its master, handed over by MasterLink once the sync is done
  // (session.master_link set): the bytes of the command stream read along with the payload,
  // and what to call, on the connection's thread, with the stream's selected database once
  // the link is gone (the cached master keeps it for a partial resync).
  std::string master_input;
  std::function<void(uint32_t db)> on_master_link_closed;
  // A TLS connection's session (its keys and sequence numbers) travels with the descriptor.
  std::unique_ptr<TlsSession> tls;
};

// A hibernated client (Connection::hibernate): an idle connection that gave up its Connection
// object and its coroutine, kept by its thread's ConnectionSet as its descriptor (watched by the
// set's own epoll instance) and the little of its session an idle plain client can have set.
// The rest of what the client set (name, library, NO-EVICT, NO-TOUCH...) is in its ClientInfo.
struct HibernatedConnection {
  int fd = -1;
  bool v6 = false;
  uint8_t resp = 2;
  bool authenticated = false;
  uint32_t db = 0;
  uint64_t acl_epoch = 0;
  std::shared_ptr<ClientInfo> info;
  std::shared_ptr<ConnectionOwner> owner;
  std::shared_ptr<const AclUser> user;  // its name is the session's user name
};

class Connection : public std::enable_shared_from_this<Connection>, private PubSubSink {
 public:
  Connection(asio::ip::tcp::socket socket, Engine& engine, size_t shard, ConnectionSet& set);
  // A connection taken over from another thread, with the session it had there.
  Connection(asio::ip::tcp::socket socket, Engine& engine, size_t shard, ConnectionSet& set,
             ConnectionHandoff&& from);
  ~Connection();

  // The connection's whole life, run on its owner thread; returns when the client is gone. The
  // coroutine frame holds `self`, which keeps the connection alive until then.
  static asio::awaitable<void> serve(std::shared_ptr<Connection> self);
  // Starts serve() on the connection's thread; an internal error that ends it is logged.
  static void spawn(std::shared_ptr<Connection> conn);
  // Owner thread. Closes the socket; a pending read or write ends at once.
  void close();
  // Owner thread. Graceful shutdown: finish what is being executed and written, then close.
  void shutdown();
  uint64_t id() const { return session_.info->id; }
  int64_t last_interaction_ms() const;
  // Owner thread. A connection that has waited for input for kParkAfterMs with nothing
  // buffered gives its buffers back: its pending read is cancelled and the coroutine waits
  // for the socket to become readable without holding an input buffer (see run()).
  void park_if_idle(int64_t now_ms);
  static constexpr int64_t kParkAfterMs = 2000;
  // Owner thread. client-output-buffer-limit normal: a client (not a subscriber, replica or
  // master link) whose unsent replies pass the hard limit, or stay over the soft one for its
  // seconds, is disconnected. True if it was.
  bool over_output_limit(int64_t now_ms);
  // A buffer of this client's grew past kLargeBufferBytes: with maxmemory-clients set, all
  // clients' memory is checked now rather than at the next cron (client_eviction.cpp).
  void note_large_buffer();
  static constexpr size_t kLargeBufferBytes = 64 * 1024;

  static RateLimitedLog& protocol_log();

  // Before serve(): the connection speaks TLS through `session` (connection_tls.cpp).
  void use_tls(std::unique_ptr<TlsSession> session) { tls_ = std::move(session); }
  // Owner thread. A TLS client that has not finished its handshake within
  // kTlsHandshakeMs of connecting is disconnected (a client that connects and sends nothing,
  // or too little, holds no slot for long). True if it was.
  bool tls_handshake_overdue(int64_t now_ms);
  static constexpr int64_t kTlsHandshakeMs = 10000;

 private:
  friend class ConnectionSet;
  friend struct ConnectionOwner;

  asio::awaitable<void> run();

  // Executes every complete command in the input buffer. Returns false when the connection
  // must close after its replies are written (QUIT, protocol error, shutdown).
  // (connection_input.cpp: each command passes the stages below in order; each either hands
  // it on or ends its passage. The stages a plain command passes are plain functions: an
  // awaited stage costs a coroutine frame per command, a fifth of the CPU of a pipelined GET.
  // The awaited ones run only when the command needs them.)
  //
  // What a stage decided: hand the command to the next stage, take the next command (this
  // one is done, queued or refused, and its request consumed), wait for more input, close, or
  // (plain stages) go on through the stage's awaited part.
  asio::awaitable<bool> process_input();
  enum class Next { kGoOn, kNextCommand, kWaitInput, kClose, kAwait };
  // One command's passage: its request's length in in_, the spec it runs, where its reply
  // starts in out_, and how CLIENT REPLY and MONITOR treat it.
  struct CommandPass {
    size_t consumed = 0;
    const CommandSpec* spec = nullptr;
    size_t mark = 0;
    bool suppress = false;  // CLIENT REPLY OFF, or SKIP: the reply is dropped
    bool was_skip = false;
    bool monitor_after = false;  // shown to MONITOR after it ran (SELECT, EXEC)
    bool answered = false;       // answered here without running (a sold-out reserve)
    bool rerun = false;          // a script undone to run again with every shard
    bool over_limit = false;     // the request passed client-query-buffer-limit
  };
  // Parses the next request into args_; kAwait: bad input (close_for_bad_input).
  Next parse_command(CommandPass& pass);
  asio::awaitable<void> close_for_bad_input(const CommandPass& pass);
  // The checks (ACL, arity, state); nullptr with the error in `rejected` when refused.
  const CommandSpec* check_here(std::string& rejected);
  // maxmemory refused `spec`: -OOM in `rejected`, counted in its rejected_calls.
  void refuse_for_memory(const CommandSpec& spec, std::string& rejected);
  // A refused command: its error (rejected) after the window's replies; a transaction it was
  // queued into is doomed, and EXEC refused ends the transaction.
  asio::awaitable<void> refuse_command(std::string rejected, const CommandPass& pass);
  // MULTI's queue, then CLIENT PAUSE (kAwait: wait_out_pause), then announce_command.
  Next admit_command(CommandPass& pass);
  asio::awaitable<Next> wait_out_pause(CommandPass& pass);
  // MONITOR before the run; CLIENT REPLY's silencing.
  void announce_command(CommandPass& pass);
  // EXEC of the open transaction.
  asio::awaitable<Next> run_exec(CommandPass& pass);
  // Reads the command's plan. kGoOn: it runs now, here, with nothing pending before it (the
  // plain case); kAwait: pipeline_command decides.
  Next route_here(CommandPass& pass);
  // A keyed command joins the pipeline window, a multi-shard one the atomic run (both ending
  // its passage); anything else first flushes them.
  asio::awaitable<Next> pipeline_command(CommandPass& pass);
  // Runs a local command here. kAwait: it asks for more (a script to run again with every
  // shard, WAIT's acknowledgements): after_local_run.
  Next run_local(CommandPass& pass);
  asio::awaitable<Next> after_local_run(CommandPass& pass);
  // Runs anything else now: answered, blocking, or alone on its shard or shards.
  asio::awaitable<Next> run_command_now(CommandPass& pass);
  // MONITOR after the run, CLIENT REPLY's trimming, the pushes of a silenced reply.
  Next finish_command(CommandPass& pass);
  // maxmemory, before each command while a limit is set (connection_memory.cpp): evicts what
  // the policy allows, here first and then on the other shards, and answers whether `spec` may
  // run (false: refuse it with -OOM).
  asio::awaitable<bool> memory_allows(const CommandSpec& spec);
  // Everything the executor holds runs now, its replies appended to out_ in request order.
  asio::awaitable<void> flush_window() { return executor_.flush(out_); }
  // Counts where keyed commands go; true once the last kMigrateAfter all went to one other
  // shard and the connection may move there (then migrate_to_ names it).
  void note_route(size_t shard);
  // Between requests, with nothing pending: hands the socket and the session to the thread
  // of migrate_to_ (ConnectionSet::adopt). True if the connection has moved; its coroutine
  // then ends without closing anything.
  bool migrate();
  // Just parked, with a plain session (connection_hibernate.cpp): hands the descriptor and the
  // session to set_ (ConnectionSet::hibernate) and lets this object go. True if it did; the
  // coroutine then ends without closing anything.
  bool hibernate();
  asio::awaitable<bool> write_output();
  // TLS (connection_tls.cpp). read_tls reads and decrypts into in_'s free space, driving the
  // handshake on the way, and returns like read_some: plaintext bytes, or an error (eof once
  // the session is over). read_input is read_some or read_tls (the slow paths' reads).
  asio::awaitable<std::tuple<std::error_code, size_t>> read_tls();
  asio::awaitable<std::tuple<std::error_code, size_t>> read_input();
  // Replaces out_'s plaintext with its records; false (the connection must close) on failure.
  bool encrypt_output();
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

  // Blocking commands (connection_blocking.cpp): runs the command; if it asks to block,
  // waits (without reading further input) until it is served, times out, is unblocked or the
  // client goes away. Returns the reply ("" if the client is gone).
  asio::awaitable<std::string> run_blocking(const CommandSpec& spec);
  // Asks whoever owns the blocked client to complete it with `kind` (owner thread of the
  // in-place shard, or directly for several-shard clients). Connection's thread.
  void cancel_block(WakeKind kind);
  // Watches the socket while blocked so a client that disconnects is noticed at once.
  void watch_disconnect();

  // A replica's link (connection_replica.cpp): after SYNC/PSYNC answered, sends the snapshot
  // (full sync) and then the replication stream until the replica goes away.
  asio::awaitable<void> serve_replica();
  asio::awaitable<bool> send_snapshot(ReplicaSyncPlan& plan);
  // Reads the replica's REPLCONF ACKs while serve_replica writes.
  asio::awaitable<void> read_replica_acks(std::shared_ptr<Connection> self);
  asio::awaitable<bool> write_all(std::string_view bytes);
  // WAIT that could not be answered at once: waits for the acknowledgements or the timeout
  // and returns the reply.
  asio::awaitable<std::string> wait_for_replicas();

  // Pub/sub messages arriving on this thread (connection_pubsub.cpp): queued behind the
  // replies already produced and written at once if the connection is idle, without
  // disturbing a write the coroutine has in flight.
  void deliver(const PubSubMessage& m) override;
  void flush() override;
  // Client-side caching (connection_tracking.cpp): an invalidation or tracking-redir-broken
  // notice, encoded in the protocol the client speaks now and delivered like a pub/sub
  // message, except that one caused by this client's own command, arriving while its input is
  // being executed, waits in held_ until the replies of that input are in out_ (Redis sends it
  // after the command's reply, never inside a MULTI's or a multi-key reply).
  void deliver_tracking(const TrackingMessage& m);
  void start_push_write();
  // After a command ran with its reply silenced (CLIENT REPLY OFF/SKIP) and the reply was
  // dropped: appends the pushes it produced or received meanwhile, which are never silenced.
  void send_pushes_while_silenced();
  // client-output-buffer-limit pubsub: false (and the connection closes) when over it.
  bool within_pubsub_limits();

  // MONITOR (connection_monitor.cpp): shows a command of this client to every monitor (its
  // secrets redacted); registers this connection as a monitor once MONITOR has run; and
  // appends a monitor line that arrived on this thread, written like a pub/sub message.
  void feed_monitors(std::span<const std::string_view> argv, uint32_t db);
  void register_monitor();
  void deliver_monitor(const std::string& line);
  // CLIENT PAUSE (connection_monitor.cpp): whether the command must wait now, and the wait
  // (polled, so CLIENT UNPAUSE from any thread ends it within kPausePollMs).
  bool paused_for(const CommandSpec& spec) const;
  asio::awaitable<void> wait_while_paused(const CommandSpec& spec);

  // A replica's link to its master (connection_master_link.cpp): the master's commands are
  // applied like a client's, unanswered except REPLCONF GETACK, and every byte applied is
  // counted in the replication offset and kept in the backlog. Runs instead of the ordinary
  // read loop; returns when the link is gone.
  asio::awaitable<void> serve_master_stream();
  asio::awaitable<bool> process_master_input();
  // The bytes of commands applied so far, when no MULTI is open, join the offset and the
  // backlog (a transaction counts at its EXEC, so a resync never starts inside one).
  void settle_master_bytes();
  // REPLCONF ACK <offset> to the master, now, without disturbing a write in flight.
  void send_master_ack();
  void arm_master_ack_timer();

  ClientSocket socket_;
  // Set for a TLS client (and a TLS link to a master); null on the plain path, which pays one
  // well-predicted test of it per read and per write.
  std::unique_ptr<TlsSession> tls_;
  std::string tls_scratch_;  // the plaintext buffer encrypt_output swapped out, for reuse
  Engine& engine_;
  size_t shard_;
  ConnectionSet& set_;
  ClientSession session_;
  InputBuffer in_;
  RequestParser parser_;
  int64_t bulk_limit_;
  std::vector<std::string_view> args_;
  Plan plan_;  // args_'s plan, made by the checks (kept: its vectors keep their capacity)
  std::string out_;
  Executor executor_;  // runs the commands (exec/executor.hpp)
  // Migration: the other shard the latest keyed commands all went to, and how many in a row.
  size_t streak_shard_ = 0;
  uint32_t streak_ = 0;
  int64_t migrated_at_ms_ = 0;
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
  bool park_requested_ = false;  // park_if_idle cancelled the read (see run())
  bool parked_ = false;          // holding no input buffer until the client's next bytes
  // Client-side caching: whose command runs (taken per command), whether process_input is
  // running, and this client's own invalidations held until its replies are produced.
  TrackingCaller caller_;
  bool executing_ = false;
  std::string held_;
  // Migration (see note_route): consecutive keyed commands that must all go to one other
  // shard before the connection moves there, and the least time between two moves.
  static constexpr uint32_t kMigrateAfter = 16;
  // Replies are written once this much is pending even if more input is queued, so a huge
  // pipeline does not build an unbounded output buffer.
  static constexpr size_t kFlushThreshold = 256 * 1024;
  static constexpr int64_t kMigrateIntervalMs = 1000;
  // The master link's state (session_.master_link): see ConnectionHandoff.
  struct MasterStream {
    std::string carried;     // stream bytes read before the connection existed
    std::string unsettled;   // applied but not yet counted (inside MULTI)
    std::string to_master;   // ACKs waiting for the coroutine to write them
    std::function<void(uint32_t db)> on_closed;
    std::unique_ptr<asio::steady_timer> ack_timer;
  };
  std::unique_ptr<MasterStream> master_;
  size_t migrate_to_;     // == shard_ unless a move is wanted
  bool adopted_ = false;  // arrived by migration (already in the client registry)
  std::shared_ptr<ConnectionOwner> owner_;
  // Replication (connection_replica.cpp): the timers a replica's stream and a WAIT sleep on,
  // cancelled to wake them (close() cancels both).
  std::shared_ptr<asio::steady_timer> replica_wake_;
  std::shared_ptr<asio::steady_timer> wait_timer_;
  // Set by the first REPLCONF ACK: after a diskless payload the stream waits for it (below).
  bool replica_acked_ = false;
  bool monitor_registered_ = false;
};

// The connections of one thread, for idle timeouts and shutdown.
class ConnectionSet {
 public:
  void add(const std::shared_ptr<Connection>& c);
  void remove(uint64_t id);
  // Closes clients idle for longer than timeout_s (0 = never).
  void close_idle(int64_t now_ms, int64_t timeout_s);
  // Once a second: parks the connections that have been waiting for input a while
  // (Connection::park_if_idle) and disconnects slow readers over their output limit
  // (Connection::over_output_limit).
  void sweep(int64_t now_ms);
  // Connections closed or parked on every thread since the last call (the server returns
  // freed memory to the system after many clients left or went idle at once).
  static uint64_t take_released_count();
  static void count_released();
  void shutdown_all();
  size_t size() const { return conns_.size(); }
  // Owner thread. Queues c's reply for the end-of-batch write (see Connection::run).
  void defer_reply(std::shared_ptr<Connection> c);
  // Owner thread. Counts a completed read (see write_deferred).
  void note_read() { ++reads_; }
  // Owner thread. Keeps a client that gave up its Connection (Connection::hibernate) until it
  // sends again, is killed, times out or the server stops; false if it cannot (the
  // connection then stays as it is). INFO clients' hibernated_clients counts them all.
  bool hibernate(Engine& engine, size_t shard, HibernatedConnection&& h);
  // Owner thread. Rebuilds a hibernated client's Connection and starts it, with `message` to
  // deliver first if there is one; null if the client is not hibernated here.
  std::shared_ptr<Connection> wake(uint64_t id,
                                   std::shared_ptr<const TrackingMessage> message = nullptr);
  // Set by the server: takes a migrating connection over on thread `target` (it posts there).
  // Unset (tests, a single thread), connections never migrate.
  std::function<void(size_t target, ConnectionHandoff)> adopt;
  // Owner thread (shard `shard`'s). Starts a Connection for a descriptor handed to this thread:
  // a migrating connection, or a hibernated one waking. If the reactor cannot watch the
  // descriptor, closes it and forgets the client (null).
  std::shared_ptr<Connection> take_over(Engine& engine, size_t shard, ConnectionHandoff&& h);
  // Owner thread. This thread's batched messages to the other shards (made on first use).
  ShardCourier& courier(Engine& engine, size_t home) {
    if (!courier_) {
      courier_ = std::make_unique<ShardCourier>(engine, home);
    }
    return *courier_;
  }

 private:
  static constexpr int kMaxGroupWaits = 4;
  void write_deferred();
  // A batch whose replies waited for split operations to be sealed (split_seals.hpp).
  void write_held(std::vector<std::shared_ptr<Connection>> batch);
  void hold_until_sealed(Shard& shard, std::vector<std::shared_ptr<Connection>> batch);
  uint64_t reads_ = 0;
  uint64_t reads_at_post_ = 0;
  int64_t last_park_ms_ = 0;
  int waits_ = 0;
  std::vector<std::shared_ptr<Connection>> deferred_;
  std::vector<std::shared_ptr<Connection>> writing_;
  std::vector<std::weak_ptr<Connection>> live() const;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> conns_;
  std::unique_ptr<ShardCourier> courier_;
  // Hibernated clients (connection_hibernate.cpp) by id, and the epoll instance watching their
  // descriptors, itself watched by this thread's reactor while any are hibernated.
  void watch_hibernated();
  void wake_ready();
  void close_hibernated(std::vector<uint64_t> ids);
  std::unordered_map<uint64_t, HibernatedConnection> hibernated_;
  Engine* engine_ = nullptr;
  size_t shard_ = 0;
  std::unique_ptr<asio::posix::stream_descriptor> epoll_;
  bool watching_ = false;
};

}  // namespace hotkv
