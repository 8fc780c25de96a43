// This server's place in replication, in Redis 7.0's model: its role (master, or replica of
// host:port), the two replication ids and the offset of the command stream it produces or
// follows, the backlog of that stream kept for partial resyncs, and the replicas attached to
// it. One per engine; any thread. The offset is an atomic read on the data path (WAIT, INFO);
// everything else sits behind one mutex, taken per shard flush, never per command.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

// The last `capacity` bytes of the replication stream, in a ring. Offsets count every byte
// ever appended (Redis's master_repl_offset), so a position stays meaningful after the bytes
// before it were overwritten. Not thread-safe: Replication guards it.
class ReplicationBacklog {
 public:
  explicit ReplicationBacklog(size_t capacity);

  void append(std::string_view bytes);
  // Bytes ever appended: the offset of the stream's end.
  uint64_t end_offset() const { return end_; }
  // How many of the last bytes are still held.
  size_t histlen() const { return histlen_; }
  size_t capacity() const { return ring_.size(); }
  // Redis's repl_backlog_first_byte_offset: the 1-based position of the oldest byte held.
  uint64_t first_byte_offset() const { return end_ - histlen_ + 1; }
  // True if every byte from `offset` (a count of bytes already seen, as a replica's offset) to
  // the end is held: a partial resync from there is possible.
  bool holds_from(uint64_t offset) const { return offset <= end_ && end_ - offset <= histlen_; }
  // Appends to `out` at most `max` bytes starting after `offset` bytes of the stream.
  // REQUIRES: holds_from(offset).
  void copy_from(uint64_t offset, size_t max, std::string& out) const;
  // A new capacity keeps as much of the newest history as fits.
  void resize(size_t capacity);
  // Starts the stream over at `offset` with no history (a replica adopting its master's offset).
  void reset(uint64_t offset);

 private:
  std::string ring_;
  size_t head_ = 0;  // where the next byte goes
  size_t histlen_ = 0;
  uint64_t end_ = 0;
};

enum class ReplicationRole { kMaster, kReplica };

// How a replica's link to its master stands (Redis's repl_state, as ROLE names it).
enum class LinkState { kNone, kConnect, kConnecting, kSync, kConnected };
std::string_view link_state_name(LinkState s);

// A replica attached to this server, as INFO replication's slaveN line and ROLE show it.
struct ReplicaPeer {
  uint64_t client_id = 0;
  std::string ip;
  int64_t listening_port = 0;
  std::string state;  // "wait_bgsave", "send_bulk", "online"
  uint64_t ack_offset = 0;
  int64_t last_ack_ms = 0;
};

// One attached replica's outgoing bytes: the stream from the offset its sync started at,
// appended by every feed until the replica's connection takes them. The connection sets
// `wake` (it posts to the connection's own thread) before attaching; the feed calls it once
// per batch of bytes, not per feed.
struct ReplicaChannel {
  uint64_t client_id = 0;
  size_t limit = 0;  // client-output-buffer-limit replica's hard limit (0: none)
  std::function<void()> wake;
  // Guarded by Replication's mutex.
  std::string pending;
  bool wake_posted = false;
  bool overflowed = false;  // over the limit: the connection drops the replica, as Redis does
};

// A WAIT in progress: woken once `count` replicas acknowledged `offset`.
struct AckWaiter {
  uint64_t offset = 0;
  size_t count = 0;
  std::function<void()> wake;  // posts to the waiting connection's thread
  bool woken = false;          // guarded by Replication's mutex
};

class Replication {
 public:
  Replication();

  ReplicationRole role() const { return role_.load(std::memory_order_relaxed); }
  bool is_replica() const { return role() == ReplicationRole::kReplica; }
  // The stream's offset: bytes produced (master) or applied (replica). Any thread.
  uint64_t offset() const { return offset_.load(std::memory_order_acquire); }

  struct Ids {
    std::string replid;
    std::string replid2;
    int64_t second_offset = -1;  // -1: replid2 is not valid for partial resyncs
  };
  Ids ids() const;

  // REPLICAOF host port: from now on a replica of that master. Keeps the replication id
  // history so the old master can resync partially from its own stream (Redis's shift of
  // replid into replid2 happens on promotion, below).
  void become_replica(std::string host, int64_t port);
  // REPLICAOF NO ONE: a master again. The stream followed so far stays valid under the old id
  // (replid2, up to this offset) and a fresh id starts, so replicas of the old master that
  // follow this one resync partially.
  void become_master();
  std::optional<std::pair<std::string, int64_t>> master() const;
  LinkState link_state() const;
  void set_link_state(LinkState s, int64_t now_ms);
  // When the link went down (for master_link_down_since_seconds), -1 if it never was up.
  int64_t link_down_since_ms() const;
  // The link read or wrote something (master_last_io_seconds_ago).
  void note_master_io(int64_t now_ms);
  int64_t last_io_seconds_ago(int64_t now_s) const;
  // The image a full sync is receiving, for INFO's master_sync_* fields: its announced size
  // (-1 until a sized payload's header, and for a streamed one, as Redis shows it) and the
  // bytes read so far; inactive outside the transfer.
  struct Transfer {
    bool active = false;
    int64_t total = 0;
    int64_t read = 0;
  };
  void note_transfer(const Transfer& t);
  Transfer transfer() const;

  // The backlog exists once a replica has attached (Redis's repl_backlog_active), or always on
  // a replica (it may be promoted). Feeding is skipped while it does not.
  bool backlog_active() const { return backlog_active_.load(std::memory_order_relaxed); }
  void activate_backlog();
  // Appends a piece of the command stream (shard flushes, PINGs to replicas) and returns the
  // offset after it. REQUIRES: backlog_active().
  uint64_t feed(std::string_view resp);
  struct BacklogInfo {
    bool active = false;
    size_t size = 0;
    uint64_t first_byte_offset = 0;
    size_t histlen = 0;
  };
  BacklogInfo backlog_info() const;
  void set_backlog_size(size_t size);
  // The replica's side: after a full sync from a master at (replid, offset), this server's
  // stream is that master's from there on.
  void adopt_master_stream(std::string replid, uint64_t offset);
  // The replica's side, on +CONTINUE <replid> from a master whose id changed (it was promoted):
  // the stream followed so far stays valid under the old id up to here (replid2), and
  // continues under the new one.
  void continue_under_new_id(std::string replid);
  // The replica's side: bytes read from the master's stream, applied or not (INFO's
  // slave_read_repl_offset). Any thread.
  void set_read_offset(uint64_t offset) { read_offset_.store(offset, std::memory_order_relaxed); }
  uint64_t read_offset() const { return read_offset_.load(std::memory_order_relaxed); }
  // Bytes of the stream after `offset`, at most `max`, appended to `out`; false if they are
  // no longer (or not yet) in the backlog.
  bool read_backlog(uint64_t offset, size_t max, std::string& out) const;
  // Can a replica that has seen `offset` bytes of the stream with id `replid` continue from
  // the backlog (Redis's PSYNC checks: the id is ours, or our previous one up to the offset
  // where it ended)?
  bool can_continue(std::string_view replid, uint64_t offset) const;

  // A restart reloaded the data this replica had at a clean shutdown and adopted the stream's
  // position (shard/replication_state.hpp): the link offers it to the master once. Returns the
  // database the stream had selected, or nullopt (then, nothing to offer).
  void set_restored_stream(uint32_t db);
  std::optional<uint32_t> take_restored_stream();

  // Replicas attached to this server.
  void add_replica(ReplicaPeer peer);
  void update_replica(uint64_t client_id, std::string_view state, std::optional<uint64_t> ack,
                      int64_t now_ms);
  void remove_replica(uint64_t client_id);
  std::vector<ReplicaPeer> replicas() const;
  // Online replicas that have acknowledged nothing for longer than `timeout_ms` (their last
  // ACK, or since they went online): the master drops them, as Redis does after repl-timeout.
  std::vector<uint64_t> silent_replicas(int64_t now_ms, int64_t timeout_ms) const;
  // How many replicas have acknowledged at least `offset` (WAIT).
  size_t replicas_acked(uint64_t offset) const;
  // WAIT: `w` is woken by the acknowledgement that brings enough replicas to its offset.
  void add_waiter(std::shared_ptr<AckWaiter> w);
  void remove_waiter(const std::shared_ptr<AckWaiter>& w);

  // The stream to one replica from `from_offset` on (the offset its full sync was taken at, or
  // the one its partial resync continues from): what the backlog holds after it is copied in
  // now and every later feed appends. False if the backlog no longer holds that offset.
  bool attach_channel(std::shared_ptr<ReplicaChannel> channel, uint64_t from_offset);
  // Moves the channel's bytes to `out` (swapped; `out` should be empty) and re-arms its wake.
  // False once the channel overflowed its limit.
  bool take_pending(ReplicaChannel& channel, std::string& out);
  void detach_channel(const ReplicaChannel& channel);
  // Sets what the feed calls when bytes arrive for the channel (under the lock it calls it).
  void set_channel_wake(ReplicaChannel& channel, std::function<void()> wake);
  size_t channels() const;
  // Online replicas whose last acknowledgement is at most `max_lag_s` seconds old
  // (min-replicas-to-write's "good" replicas).
  size_t good_replicas(int64_t now_ms, int64_t max_lag_s) const;

 private:
  mutable std::mutex mu_;
  std::atomic<ReplicationRole> role_{ReplicationRole::kMaster};
  std::atomic<uint64_t> offset_{0};
  std::atomic<uint64_t> read_offset_{0};
  Transfer transfer_;  // guarded by mu_
  std::atomic<bool> backlog_active_{false};
  std::string replid_;
  std::string replid2_;
  int64_t second_offset_ = -1;
  std::string master_host_;
  int64_t master_port_ = 0;
  LinkState link_ = LinkState::kNone;
  int64_t link_down_since_ms_ = -1;
  int64_t master_io_ms_ = 0;
  ReplicationBacklog backlog_;
  std::vector<ReplicaPeer> replicas_;
  std::vector<std::shared_ptr<ReplicaChannel>> channels_;
  std::optional<uint32_t> restored_db_;
  std::vector<std::shared_ptr<AckWaiter>> waiters_;
  size_t acked_locked(uint64_t offset) const;
  void wake_waiters_locked();
};

// 40 random hex characters: a replication id (and INFO's run_id).
std::string random_hex_id();

}  // namespace hotkv
