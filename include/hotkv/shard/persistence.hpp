// Persistence ties the append-only log to the engine: it reads the manifest and replays every
// segment into the shards at start-up (clients get -LOADING meanwhile), opens each shard's log
// file for appending, runs the everysec fsync thread, and reports the INFO persistence fields.
// Replay applies effects (final values, absolute deadlines) and never re-runs a command.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "hotkv/persist/manifest.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/persist/shard_log.hpp"

namespace hotkv {

class Engine;
class Shard;

struct LoadStats {
  uint64_t files = 0;
  uint64_t records = 0;
  uint64_t effects = 0;
  uint64_t expired_on_load = 0;
  uint64_t truncated_bytes = 0;
  int64_t millis = 0;
  uint64_t last_seq = 0;  // the highest record sequence number replayed (0: none, or version 1)
};

class Persistence {
 public:
  explicit Persistence(Engine& engine);
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Loads the data set and opens the logs. REQUIRES: the shards' threads are running (effects
  // are applied on them) and the engine is marked loading. Any thread but a shard's. Returns
  // an empty string, or a fatal message naming the file and offset.
  std::string load_and_open();
  // Any thread: makes a load in progress give up (shutdown during start-up).
  void abort_loading() { abort_.store(true); }
  // Stops the fsync thread and writes and syncs everything pending. Any thread, after the
  // shards stopped.
  void close();

  bool enabled() const { return enabled_.load(); }
  const LoadStats& load_stats() const { return load_stats_; }
  uint64_t delayed_fsyncs() const { return delayed_fsync_.load(); }
  std::string directory() const { return dir_path_; }
  std::string manifest_path() const { return dir_path_ + "/" + prefix_ + ".manifest"; }
  uint64_t current_size() const;
  uint64_t base_size() const { return base_size_.load(); }

  // Compaction. start_rewrite REQUIRES every shard parked (a kAllShards command or
  // run_atomic over all shards): it flushes the logs, switches every shard to a fresh
  // incremental file (recorded in the manifest before anything is written to it), and forks a
  // child that writes a base snapshot of the parked keyspace. Returns "" or the error text.
  std::string start_rewrite();
  // Worker 0's cron: reaps a finished child and, on success, replaces the manifest with the
  // new base plus the fresh incremental files and deletes the old files.
  void poll_rewrite();
  // True if the auto-aof-rewrite thresholds say a rewrite is due.
  bool auto_rewrite_due() const;
  bool rewrite_in_progress() const { return child_pid_.load() > 0; }
  uint64_t rewrites() const { return rewrites_.load(); }
  bool last_rewrite_ok() const { return last_rewrite_ok_.load(); }
  int64_t last_rewrite_ms() const { return last_rewrite_ms_.load(); }
  int64_t rewrite_started_ms() const { return rewrite_started_ms_.load(); }
  int64_t last_save_unix() const { return last_save_unix_.load(); }
  int64_t latest_fork_usec() const { return latest_fork_usec_.load(); }
  // CONFIG SET appendonly, REQUIRES every shard parked. enable_parked switches every shard to
  // a fresh incremental file and forks a rewrite that writes a base of the data set as it is
  // at this instant; the manifest naming both is written only when the base is complete (as
  // Redis does), so until then a restart loads what the directory held before. disable_parked
  // writes, syncs and closes every log and abandons a rewrite in progress. "" or an error.
  std::string enable_parked();
  std::string disable_parked();
  // Any thread, shards running: whether the log directory can be created and written, so
  // that CONFIG SET appendonly yes is refused at once rather than accepted and then failing.
  std::string check_can_enable() const;
  // Writes and fsyncs every shard's log. REQUIRES every shard parked.
  void sync_all_parked();

  // Parses "always|everysec|no".
  static bool parse_policy(const std::string& s, FsyncPolicy& out);

 private:
  // Sets dir_path_ and prefix_ from the configuration and creates the directory. "" or why not.
  std::string prepare_directory();
  // `dir`/`appenddirname` as configured now.
  std::string configured_directory() const;
  // Creates `dir` (and its parents) if missing. "" or why not.
  static std::string create_directory(const std::string& dir);
  std::string start_rewrite_parked();
  void abandon_rewrite();
  std::string replay_segment(const ManifestSegment& seg, const std::string& txn_incomplete_hint);
  void fsync_loop();

  Engine& engine_;
  std::atomic<bool> enabled_{false};
  // Turned on at runtime and no base written yet: the manifest on disk is left as it was
  // until a rewrite completes one (and a failed one is retried by the cron).
  std::atomic<bool> awaiting_base_{false};
  std::string dir_path_;
  std::string prefix_;
  Manifest manifest_;
  LoadStats load_stats_;
  std::atomic<uint64_t> base_size_{0};
  std::thread fsync_thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<uint64_t> delayed_fsync_{0};
  std::atomic<bool> abort_{false};
  // Rewrite state: started on a coordinator thread, finished on worker 0.
  std::mutex rewrite_mutex_;
  Manifest pending_manifest_;  // what the manifest becomes when the child succeeds
  std::atomic<int> child_pid_{0};
  std::atomic<uint64_t> rewrites_{0};
  std::atomic<bool> last_rewrite_ok_{true};
  std::atomic<int64_t> last_rewrite_ms_{-1};
  std::atomic<int64_t> rewrite_started_ms_{0};
  std::atomic<int64_t> last_save_unix_{0};
  std::atomic<int64_t> latest_fork_usec_{0};
  std::atomic<uint64_t> size_at_last_rewrite_{0};
};

}  // namespace hotkv
