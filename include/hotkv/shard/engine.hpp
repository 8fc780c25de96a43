// The engine: every shard, the shared configuration and client registry, and the two ways a
// connection reaches data it does not own.
//
// - call_on(shard, fn): runs fn on the owning shard's thread and resumes the caller on its own
//   thread with the result (one message each way; arguments and results are copied/moved,
//   never shared).
// - run_atomic(home, shards, fn): runs fn with every listed shard's thread parked, so fn sees
//   and changes all their keys as one atomic step. This is the cross-shard mechanism MSET,
//   MSETNX, multi-key commands (and later transactions, scripts and carts) use.
//
// Why run_atomic cannot deadlock: a coordinator takes the shards' logical locks in ascending
// order without blocking its thread, always including its own shard; only then does it park
// the other shards (each runs a task that blocks its thread until released) and wait for them.
// A thread therefore only ever blocks waiting for shards whose locks it holds, and a shard
// whose lock it holds is either parked for it or running ordinary non-blocking work.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/awaitable.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/shard/client_registry.hpp"
#include "hotkv/shard/error_stats.hpp"
#include "hotkv/shard/monitors.hpp"
#include "hotkv/shard/pubsub.hpp"
#include "hotkv/shard/replication.hpp"
#include "hotkv/shard/replication_feed.hpp"
#include "hotkv/shard/shard.hpp"
#include "hotkv/shard/tracking.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/config.hpp"
#include "hotkv/util/latency_monitor.hpp"
#include "hotkv/util/slow_log.hpp"

namespace hotkv {

class Table;

// Server-wide counters that INFO reports (any thread, relaxed).
struct ServerStats {
  std::atomic<uint64_t> connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> total_error_replies{0};
  std::atomic<uint64_t> atomic_operations{0};  // cross-shard run_atomic calls
  // Connections moved to the thread that owns the keys they keep using.
  std::atomic<uint64_t> connection_migrations{0};
  // Script runs taken back to run again with every shard (docs/scripting.md).
  std::atomic<uint64_t> script_runs_undone{0};
  // Idle clients kept without their connection object now (INFO clients hibernated_clients).
  std::atomic<int64_t> hibernated_clients{0};
  // Replicas' syncs served: full, and partial ones accepted or refused (INFO stats).
  std::atomic<uint64_t> sync_full{0};
  std::atomic<uint64_t> sync_partial_ok{0};
  std::atomic<uint64_t> sync_partial_err{0};
  std::atomic<int64_t> ops_per_sec{0};
  // Network throughput over the last 1.6 s, sampled with ops_per_sec (INFO stats).
  std::atomic<double> input_kbps{0};
  std::atomic<double> output_kbps{0};
  // The most memory in use seen (sampled once a second and at every INFO/MEMORY reading), and
  // what was in use once the server was set up, before any data.
  std::atomic<uint64_t> used_memory_peak{0};
  std::atomic<uint64_t> used_memory_startup{0};
  std::atomic<int64_t> lastsave_unix{0};
  // The sum of the shards' key_changes() when the last SAVE/BGSAVE took its snapshot.
  std::atomic<uint64_t> key_changes_at_save{0};
  // Blocking reads registered on a shard: writes look for readers to wake only while > 0.
  std::atomic<int64_t> blocked_registered{0};
  // INFO's blocked_clients: counted on the client's own thread once it waits, at the moment
  // CLIENT UNBLOCK can reach it (a registration on another shard is one hop earlier).
  std::atomic<int64_t> blocked_clients{0};
};

class ScriptStore;
class AclStore;
class RdbSaver;
class Eviction;

// Thrown by run_atomic when one of its shards is held by a script running past
// busy-reply-threshold; the caller answers -BUSY (ScriptStore::busy_error()).
struct ShardsBusy : std::runtime_error {
  ShardsBusy() : std::runtime_error("a shard is busy running a script") {}
};

class Engine {
 public:
  // One shard per context, each with statistics for `command_count` commands. The table is
  // only held for those who run commands (the shard layer never looks into it); the commands
  // layer's make_engine (commands/table.hpp) also installs the script store and the families'
  // engine-side machinery.
  Engine(Config& config, const Table& table, size_t command_count,
         std::vector<asio::io_context*> contexts);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

  size_t shard_count() const { return shards_.size(); }
  Shard& shard(size_t i) { return *shards_[i]; }
  size_t shard_of(std::string_view key) const;
  // Adds the shard of each key to `shards` and leaves it sorted and without repeats.
  void add_shards_of(std::span<const std::string_view> keys, std::vector<size_t>& shards) const;
  Config& config() { return config_; }
  const Table& table() const { return table_; }
  ClientRegistry& clients() { return clients_; }
  ServerStats& stats() { return stats_; }
  // Key changes since the last SAVE/BGSAVE snapshot (INFO rdb_changes_since_last_save), and
  // the call a snapshot makes when it starts (every shard parked, so the count is exact).
  uint64_t key_changes_since_save();
  void mark_key_changes_saved();
  PubSubHub& pubsub() { return pubsub_; }
  // LATENCY's events (any thread; see latency_monitor.hpp).
  LatencyMonitor& latency() { return latency_; }
  // INFO errorstats (any thread).
  ErrorStats& errors() { return errors_; }
  // SLOWLOG's entries, one ring per shard (any thread; see util/slow_log.hpp).
  SlowLog& slowlog() { return slowlog_; }
  // MONITOR's clients (any thread; see shard/monitors.hpp).
  Monitors& monitors() { return monitors_; }
  // CLIENT PAUSE: until when (unix ms; 0: not paused) and whether only writes wait.
  struct ClientPause {
    std::atomic<int64_t> until_ms{0};
    std::atomic<bool> writes_only{false};
  };
  ClientPause& client_pause() { return client_pause_; }
  // Role, replication ids and offset, backlog and attached replicas (any thread).
  Replication& replication() { return replication_; }
  // The shards' records become the replication stream here (shard/replication_feed.hpp).
  ReplicationFeed& replication_feed() { return *replication_feed_; }
  // Switches every shard log's tap to the feed on or off: on while this server is a master with
  // a backlog, off on a replica (which passes its master's bytes on instead). REQUIRES every
  // shard parked.
  void set_replication_feed_on(bool on);
  // Client-side caching (CLIENT TRACKING): told of every key change by notify_keyspace_event.
  Tracking& tracking() { return *tracking_; }
  // maxmemory: the limit check and each shard's eviction (shard/eviction.hpp).
  Eviction& eviction() { return *eviction_; }
  // Lua scripts known to the server, and each shard's interpreter.
  ScriptStore& scripts() { return *scripts_; }
  // shared_ptr: the shard layer does not know the type it destroys.
  void set_scripts(std::shared_ptr<ScriptStore> s) { scripts_ = std::move(s); }
  // ACL users and ACL LOG (commands/acl_store.hpp); shared_ptr for the same reason.
  AclStore& acl() { return *acl_; }
  void set_acl(std::shared_ptr<AclStore> a) { acl_ = std::move(a); }
  // Publishes a keyspace notification (notify-keyspace-events) if its class is enabled and
  // anybody listens, on database `db`'s channels. Any thread.
  void notify_keyspace_event(uint32_t db, uint32_t type_flag, std::string_view event,
                             std::string_view key);
  // Only the publishing half, for an event that is not itself a change of the key (Redis's
  // "new", announced beside the command's own event): WATCH and tracking are not told.
  void publish_keyspace_event(uint32_t db, uint32_t type_flag, std::string_view event,
                              std::string_view key);
  int64_t start_unix_ms() const { return start_unix_ms_; }
  // True if some client may be blocked on keys (writes then check the shards' registries).
  bool any_blocked() const {
    return stats_.blocked_registered.load(std::memory_order_relaxed) > 0;
  }
  // The time commands see. Tests point it at a manual clock so time only moves when they say.
  int64_t now_ms() const { return manual_clock_ != nullptr ? *manual_clock_ : unix_ms(); }
  void use_manual_clock(const int64_t* now_ms) {
    manual_clock_ = now_ms;
    for (auto& s : shards_) {
      s->use_manual_clock(now_ms);  // active expiry follows the same clock
    }
  }

  // True while the data set is being loaded: only commands flagged kLoading run.
  bool loading() const { return loading_.load(std::memory_order_acquire); }
  void set_loading(bool v) { loading_.store(v, std::memory_order_release); }
  // A fresh id for a cross-shard operation's log records (any thread).
  uint64_t next_txn_id() { return next_txn_.fetch_add(1, std::memory_order_relaxed); }
  void seed_txn_ids(uint64_t above) { next_txn_.store(above + 1); }
  // The errno of the last failed log write on any shard (0: all healthy). Writes are refused
  // with -MISCONF while it is set.
  int persistence_errno();
  class Persistence* persistence() { return persistence_; }
  // SAVE/BGSAVE and their INFO figures (shard/rdb_saver.hpp).
  RdbSaver& rdb_saver() { return *rdb_saver_; }
  void set_persistence(class Persistence* p) { persistence_ = p; }

  // Set by the server; called (from any thread) by SHUTDOWN.
  std::function<void()> shutdown_hook;
  // Set by the server; called (from any thread) after REPLICAOF changed the role or the
  // master, so the link to the master follows (net/master_link.hpp).
  std::function<void()> replication_hook;
  void request_shutdown() {
    if (shutdown_hook) {
      shutdown_hook();
    }
  }

  // Runs fn() on shard `target`'s thread; the awaiting coroutine resumes on its own executor,
  // shard `home`'s thread, which takes in the target's taint (split_seals.hpp): what fn
  // returns may be answered to a client from there.
  template <class F>
  asio::awaitable<std::invoke_result_t<F>> call_on(size_t home, size_t target, F fn) {
    using R = std::invoke_result_t<F>;
    Shard* dest = &shard(target);
    SealGate* back = &shard(home).seal_gate();
    // A named initiation object: GCC 12 mishandles lambda temporaries inside co_await.
    auto initiation = [dest, back, fn = std::move(fn)](auto handler) mutable {
      auto run = [dest, back, fn = std::move(fn), handler = std::move(handler)]() mutable {
        // Both messages, there and back, counted by the one thread that sees both.
        KeyspaceStats::bump(dest->cross_thread_messages(), 2);
        R result = fn();
        uint64_t taint = dest->seal_gate().taint();
        auto ex = asio::get_associated_executor(handler);
        asio::post(ex, [back, taint, handler = std::move(handler),
                        result = std::move(result)]() mutable {
          back->absorb(taint);
          std::move(handler)(std::move(result));
        });
      };
      auto task = std::make_shared<decltype(run)>(std::move(run));
      asio::post(dest->io(), [dest, task] {
        if (dest->serving_while_busy()) {
          // A busy script owns the shard's data: fn runs once it is over.
          dest->defer_until_idle([task] { (*task)(); });
          return;
        }
        (*task)();
      });
    };
    R result = co_await asio::async_initiate<decltype(asio::use_awaitable), void(R)>(
        std::move(initiation), asio::use_awaitable);
    co_return result;
  }

  // Runs fn() on the calling thread (shard `home`) with every shard in `shards` parked.
  // REQUIRES: called on shard `home`'s thread; `shards` sorted ascending, unique, may or may not
  // contain `home` (it is always locked).
  template <class F>
  asio::awaitable<std::invoke_result_t<F>> run_atomic(size_t home, std::vector<size_t> shards,
                                                      F fn) {
    std::vector<size_t> order = lock_order(home, std::move(shards));
    for (size_t s : order) {
      if (!shard(s).lock().try_acquire()) {
        co_await wait_for_lock(s);
      }
    }
    // A shard a timed-out script holds would keep this thread waiting for the script's end.
    if (any_script_busy(home, order)) {
      unlock(order);
      throw ShardsBusy();
    }
    // The cut in the order of split operations (part_queue.hpp): the ones scheduled before
    // it run on each shard before fn (the parked threads run theirs as they park), the ones
    // after it once fn is over.
    hold_parts(order);
    auto parked = park(home, order);
    if (parked->refused.load(std::memory_order_acquire) > 0) {
      unpark(parked);
      release_parts(order);
      unlock(order);
      throw ShardsBusy();
    }
    // Their finishes (serving woken clients, answering) wait for the loop: not with shards
    // parked.
    drain_parts(home, false);
    ParkScope scope(parked.get(), &order);
    stats_.atomic_operations.fetch_add(1, std::memory_order_relaxed);
    if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
      fn();
      spread_taint(order);
      unpark(parked);
      release_parts(order);
      unlock(order);
    } else {
      auto result = fn();
      spread_taint(order);
      unpark(parked);
      release_parts(order);
      unlock(order);
      co_return result;
    }
  }

  // --- split operations (part_queue.hpp): several shards without parking any thread ---
  struct ShardPart {
    size_t shard = 0;
    std::function<void()> run;     // on that shard, in the global order
    std::function<void()> finish;  // after its log passed the barrier
  };
  // Schedules one operation: one part per shard (distinct shards), appended to every queue in
  // one step of the global order. The other shards are woken; the part for `home`, the
  // calling thread's shard, runs before this returns. Owner thread of `home`.
  void schedule_parts(size_t home, std::vector<ShardPart> parts);
  // Runs the parts waiting on shard `s` that may run now (none while a busy script's thread
  // serves other handlers, or while a record is open there). With finish_now their finishes
  // follow at once, after the log's barrier; without, they are posted to the shard's thread
  // (the caller is about to run a command of its own). Owner thread of `s`, or a coordinator
  // while `s` is parked for it.
  void drain_parts(size_t s, bool finish_now);

  std::vector<size_t> all_shards() const;

  // The coordinator's fn (a script) ran past busy-reply-threshold: the threads parked for it
  // start serving their clients' handlers while they wait (Shard::serve_while_busy). Called
  // on the coordinator's thread; does nothing outside a run_atomic.
  static void wake_parked_for_busy();
  // Inside run_atomic's fn: the shards it holds (sorted, the calling thread's own included),
  // so a script may touch exactly those. nullptr outside a run_atomic.
  static const std::vector<size_t>* held_shards();
  // Marks `held` as the shards the calling thread holds, for a driver that holds them by
  // other means than run_atomic (the single-threaded test server).
  struct HeldShards {
    explicit HeldShards(const std::vector<size_t>* held);
    ~HeldShards();
    const std::vector<size_t>* outer;
  };

 private:
  struct ParkState {
    std::atomic<int> arrived{0};
    std::atomic<int> refused{0};  // shards whose thread serves a busy script: not parked
    std::atomic<bool> released{false};
    // Bumped (and notified) on release and when the coordinator's script turns busy: the
    // parked threads wait on it.
    std::atomic<uint32_t> signal{0};
  };
  // Marks the park of the run_atomic running on this thread, for wake_parked_for_busy.
  struct ParkScope {
    ParkScope(ParkState* st, const std::vector<size_t>* held);
    ~ParkScope();
    ParkState* outer;
    const std::vector<size_t>* outer_held;
  };
  bool any_script_busy(size_t home, const std::vector<size_t>& order);
  static std::vector<size_t> lock_order(size_t home, std::vector<size_t> shards);
  asio::awaitable<void> wait_for_lock(size_t s);
  std::shared_ptr<ParkState> park(size_t home, const std::vector<size_t>& order);
  static void unpark(const std::shared_ptr<ParkState>& st);
  // The cut of a run_atomic in the order of split operations, and its end.
  void hold_parts(const std::vector<size_t>& order);
  void release_parts(const std::vector<size_t>& order);
  void wake_parts(size_t s);
  // After an operation with `order` parked: each of those shards now holds records that
  // follow whatever split part any of them ran, so each takes the highest taint among them
  // (split_seals.hpp). Its reply leaves from the home shard, which is always in `order`.
  void spread_taint(const std::vector<size_t>& order);
  // Every part of split operation `seq` is written: wakes the replies that waited for it.
  void seal_closed(uint64_t seq);
  void unlock(const std::vector<size_t>& order);

  Config& config_;
  const Table& table_;
  std::vector<std::unique_ptr<Shard>> shards_;
  ClientRegistry clients_;
  ServerStats stats_;
  PubSubHub pubsub_;
  LatencyMonitor latency_;
  ErrorStats errors_;
  SlowLog slowlog_;
  Monitors monitors_;
  ClientPause client_pause_;
  Replication replication_;
  std::unique_ptr<ReplicationFeed> replication_feed_;
  std::unique_ptr<Tracking> tracking_;
  std::unique_ptr<Eviction> eviction_;
  std::shared_ptr<ScriptStore> scripts_;
  std::shared_ptr<AclStore> acl_;
  int64_t start_unix_ms_;
  const int64_t* manual_clock_ = nullptr;
  std::atomic<bool> loading_{false};
  std::atomic<uint64_t> next_txn_{1};
  // The global order of split operations (part_queue.hpp).
  std::mutex schedule_mu_;
  uint64_t schedule_order_ = 0;
  // Which split operations are written on every shard (split_seals.hpp).
  SplitSeals seals_;
  class Persistence* persistence_ = nullptr;
  std::unique_ptr<RdbSaver> rdb_saver_;
};

}  // namespace hotkv
