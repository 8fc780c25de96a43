// A shard: one thread's event loop, its slice of the keyspace, its timing wheel timer and its
// per-command statistics. Everything here is touched only by the owning thread, except the
// atomics (read by INFO from anywhere) and the lock (see shard_lock.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "hotkv/persist/shard_log.hpp"
#include "hotkv/shard/blocking.hpp"
#include "hotkv/shard/keyspace.hpp"
#include "hotkv/shard/part_queue.hpp"
#include "hotkv/shard/split_seals.hpp"
#include "hotkv/shard/pubsub.hpp"
#include "hotkv/shard/shard_lock.hpp"
#include "hotkv/shard/soldout_index.hpp"
#include "hotkv/shard/tracking.hpp"
#include "hotkv/shard/watch.hpp"
#include "hotkv/util/latency_histogram.hpp"
#include "hotkv/util/latency_monitor.hpp"

namespace hotkv {

struct CommandStat {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> usec{0};
  std::atomic<uint64_t> failed{0};
  // Refused before it ran (INFO commandstats rejected_calls): -OOM so far.
  std::atomic<uint64_t> rejected{0};
  LatencyHistogram latency;  // LATENCY HISTOGRAM
  void reset() {
    calls.store(0);
    usec.store(0);
    failed.store(0);
    rejected.store(0);
    latency.reset();
  }
};

class Shard {
 public:
  // `command_count` sizes the per-command statistics. `now_ms` seeds the timing wheels.
  // `databases`: how many keyspaces (SELECT indexes) this shard keeps, each with this shard's
  // slice of its keys.
  // `seals`: the engine's seals of split operations, which this shard's replies wait for.
  Shard(size_t id, asio::io_context& io, size_t command_count, int64_t now_ms, size_t databases,
        const SplitSeals& seals);
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  size_t id() const { return id_; }
  asio::io_context& io() { return io_; }
  // Database `db`'s slice on this shard. REQUIRES: db < db_count().
  Keyspace& keyspace(uint32_t db) { return *dbs_[db]; }
  size_t db_count() const { return dbs_.size(); }
  // SWAPDB on this shard: the two databases' contents trade places.
  void swap_dbs(uint32_t a, uint32_t b);
  ShardLog& log() { return log_; }
  ShardLock& lock() { return lock_; }
  // Parts of multi-shard operations waiting to run here (part_queue.hpp; Engine::drain_parts).
  PartQueue& parts() { return parts_; }
  // This shard's taint and the replies waiting for it to be sealed (split_seals.hpp).
  SealGate& seal_gate() { return seal_gate_; }
  // Clients blocked on this shard's keys (owner thread, or a coordinator while parked).
  BlockingRegistry& blocking() { return blocking_; }
  WatchRegistry& watches() { return watches_; }
  // Client-side caching: this shard's tracked keys and pending BCAST changes (owner thread,
  // or a coordinator while parked).
  ShardTracking& tracking() { return tracking_; }
  // Sold-out items of every shard this thread may refuse reserves for (owner thread).
  SoldOutIndex& soldout_index() { return soldout_index_; }
  // By statistics slot (Table::stat_slot): a command's id, or one of its subcommands.
  CommandStat& command_stat(size_t slot) { return command_stats_[slot]; }
  std::atomic<uint64_t>& commands_processed() { return commands_processed_; }
  // Bytes read from and written to this thread's clients (per shard, so threads never contend
  // on one counter).
  std::atomic<uint64_t>& net_input_bytes() { return net_input_bytes_; }
  std::atomic<uint64_t>& net_output_bytes() { return net_output_bytes_; }
  // Messages this thread posted to another shard's thread (a batch of commands, its replies,
  // a park for run_atomic), and the commands those batches carried. Owner thread writes.
  std::atomic<uint64_t>& cross_thread_messages() { return cross_thread_messages_; }
  std::atomic<uint64_t>& cross_thread_commands() { return cross_thread_commands_; }
  // Key changes made by commands on this shard (one per CommandContext::notify): Redis's dirty
  // counter, INFO's rdb_changes_since_last_save. Read from any thread.
  const std::atomic<uint64_t>& key_changes() const { return key_changes_; }
  // Only whoever may write this shard's keyspace counts (its owner, or a thread that parked
  // it), so a load and a store suffice: no locked read-modify-write on every write command.
  void count_key_change() {
    key_changes_.store(key_changes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // Owner thread. Completes once everything this shard's commands appended to the log so far
  // is written (and synced, with appendfsync always). Every connection that asks during one
  // event-loop turn shares a single write and fsync: the group commit. Reached through
  // DurabilityBarrier::pass_grouped (as flush_log_now through pass_group_now).
  asio::awaitable<void> log_barrier();
  // Owner thread. The same group write (and fsync) done now, for a caller that holds replies
  // back itself (the end-of-batch reply pass); waiters of log_barrier are released too.
  void flush_log_now();

  // Pushes about writes of this shard (keyspace events, a PUBLISH after a write, client-side
  // caching invalidations) leave only once every record logged here so far is written (and
  // synced, with appendfsync always), so that no client hears of a write a crash could still
  // take back (Redis too sends nothing before its log is written). after_log runs `send` now
  // if nothing is pending and nothing is held, else holds it, in order, until that flush;
  // with `hold` it is held even so, until release_pushes (a multi-shard operation whose
  // writes are pending on other shards). Whoever may write the shard (its owner, or a thread
  // that parked it).
  // They also wait while the shard's replies would (a split part whose operation is not
  // sealed yet, split_seals.hpp): a push can reveal a write as well as a reply can.
  bool pushes_wait() const {
    return log_.needs_flush() || !held_pushes_.empty() || seal_gate_.pending();
  }
  void after_log(std::function<void()> send, bool hold = false);
  void publish_after_log(PubSubHub& hub, std::string_view channel, std::string_view payload);
  // After a multi-shard operation flushed the logs it wrote, on the thread that ran it: the
  // pushes held here leave unless this shard's own log still has records pending.
  void release_pushes();

  // Owner thread only. Runs one bounded round of active expiry now.
  void run_expiry();
  // Owner thread (or a coordinator while the owner is parked): makes sure the expiry timer
  // fires no later than `deadline_ms`.
  void arm_expiry(int64_t deadline_ms);
  // Stops the expiry timer (shutdown).
  void stop();

  // Inventory holds (Keyspace::schedule_hold): the commands layer, which knows what expiring
  // a hold means (the transition, its log effect, notifications), installs the handler at
  // engine start-up (Table::engine_inits). It fires due hold entries at now_ms, at most
  // max_items, and returns how many fired, or nullopt when holds cannot be handled now (the
  // data set is still loading: an expiry must be logged after what is being replayed); the
  // shard then retries every kHoldRetryMs. Owner thread only.
  using HoldExpiryHook = std::function<std::optional<size_t>(int64_t now_ms, size_t max_items)>;
  void set_hold_expiry_hook(HoldExpiryHook hook) { hold_hook_ = std::move(hook); }
  // One bounded round of hold expiry now (run_expiry does it too; tests call it directly).
  std::optional<size_t> expire_holds(int64_t now_ms, size_t max_items);
  static constexpr int64_t kHoldRetryMs = 20;

  // Whether active expiry may run now. A replica's keys and holds expire when its master's
  // DEL (or hold release) arrives through the link, as Redis replicas wait for the master;
  // while the gate is shut the timer only rechecks it every kGateRecheckMs. Set once, before
  // the shard runs; unset, expiry always runs.
  void set_expiry_gate(std::function<bool()> open) { expiry_gate_ = std::move(open); }
  static constexpr int64_t kGateRecheckMs = 500;

  // Where run_expiry reports a slow round ("expire-cycle"); the engine's monitor. Set once,
  // before the shard runs.
  void set_latency_monitor(LatencyMonitor* m) { latency_ = m; }

  // Tests: the time run_expiry and the timer use, instead of the wall clock (the engine's
  // manual clock; see Engine::use_manual_clock).
  void use_manual_clock(const int64_t* now_ms) { manual_clock_ = now_ms; }

  // Keys deleted per expiry round before yielding to the event loop, so a mass expiry cannot
  // stall the shard's clients.
  static constexpr size_t kExpiryBatch = 2000;

  // --- a script running past busy-reply-threshold (docs/scripting.md, "Runaway scripts") ---
  // Set (by the script's thread) while a timed-out script uses this shard's data: the script
  // runs on this thread, or this thread is parked for it. Commands that need the shard get
  // -BUSY and run_atomic refuses it, instead of waiting for a script that may never end.
  bool script_busy() const { return script_busy_.load(std::memory_order_acquire); }
  void set_script_busy(bool on) { script_busy_.store(on, std::memory_order_release); }
  // Owner thread, from inside the busy script (or the park that holds this thread for it):
  // runs a bounded number of the handlers queued on this thread's event loop, other clients'
  // reads and replies and messages from other threads, with serving_while_busy() set, so
  // that anything which would touch this shard's data answers -BUSY or waits for the script
  // to end (defer_until_idle). Does nothing when already serving (no deeper nesting).
  void serve_while_busy();
  bool serving_while_busy() const { return serving_while_busy_; }
  // Owner thread, while serving_while_busy(): `fn` runs once the script is over.
  void defer_until_idle(std::function<void()> fn) { deferred_.push_back(std::move(fn)); }
  // Owner thread: the script is over; what waited for it is posted to the event loop.
  void release_deferred();
  // Handlers serve_while_busy runs per call: the script checks for SCRIPT KILL between calls.
  static constexpr int kBusyHandlersPerServe = 256;

 private:
  void on_timer();
  void run_group_flush();
  // ShardLog's after-flush hook: sends the held pushes once their records are durable;
  // stops the server when a record cannot be made durable under appendfsync always.
  void after_log_flush(bool ok);
  // After a flush: sends the held pushes, or, while a split operation the shard took part in
  // is not sealed, holds them until it is.
  void send_held_pushes();
  int64_t now_ms() const;

  size_t id_;
  asio::io_context& io_;
  std::vector<std::unique_ptr<Keyspace>> dbs_;
  ShardLog log_;
  ShardLock lock_;
  BlockingRegistry blocking_;
  PartQueue parts_;
  SealGate seal_gate_;
  WatchRegistry watches_;
  ShardTracking tracking_;
  SoldOutIndex soldout_index_;
  std::unique_ptr<CommandStat[]> command_stats_;
  std::atomic<uint64_t> commands_processed_{0};
  std::atomic<uint64_t> net_input_bytes_{0};
  std::atomic<uint64_t> net_output_bytes_{0};
  std::atomic<uint64_t> cross_thread_messages_{0};
  std::atomic<uint64_t> cross_thread_commands_{0};
  std::atomic<uint64_t> key_changes_{0};
  asio::steady_timer timer_;
  int64_t armed_at_ms_ = INT64_MAX;
  std::vector<std::function<void()>> barrier_waiters_;
  bool flush_posted_ = false;
  bool stopped_ = false;
  HoldExpiryHook hold_hook_;
  std::function<bool()> expiry_gate_;
  LatencyMonitor* latency_ = nullptr;
  const int64_t* manual_clock_ = nullptr;
  std::atomic<bool> script_busy_{false};
  bool serving_while_busy_ = false;
  std::vector<std::function<void()>> deferred_;
  std::vector<std::function<void()>> held_pushes_;
  bool pushes_wait_for_seal_ = false;
};

}  // namespace hotkv
