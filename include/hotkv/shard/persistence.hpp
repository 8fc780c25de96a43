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

  bool enabled() const { return enabled_; }
  const LoadStats& load_stats() const { return load_stats_; }
  uint64_t delayed_fsyncs() const { return delayed_fsync_.load(); }
  std::string directory() const { return dir_path_; }
  std::string manifest_path() const { return dir_path_ + "/" + prefix_ + ".manifest"; }
  uint64_t current_size() const;
  uint64_t base_size() const { return base_size_; }

  // Parses "always|everysec|no".
  static bool parse_policy(const std::string& s, FsyncPolicy& out);

 private:
  std::string replay_segment(const ManifestSegment& seg, const std::string& txn_incomplete_hint);
  void fsync_loop();

  Engine& engine_;
  bool enabled_ = false;
  std::string dir_path_;
  std::string prefix_;
  Manifest manifest_;
  LoadStats load_stats_;
  uint64_t base_size_ = 0;
  std::thread fsync_thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<uint64_t> delayed_fsync_{0};
  std::atomic<bool> abort_{false};
};

}  // namespace hotkv
