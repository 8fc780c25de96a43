// SAVE and BGSAVE: the data set as an RDB file at `dir`/`dbfilename`, written to a temporary
// file in the same directory, synced and renamed over the old one, so the file is always
// whole. SAVE writes on the calling thread with every shard parked; BGSAVE forks a child that
// writes the snapshot the parked shards hold at that instant while the parent keeps serving
// (as the log's compaction does, shard/rewrite.cpp), and worker 0's cron reaps it. The state
// INFO persistence and LASTSAVE report lives here.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "hotkv/shard/rdb_snapshot.hpp"

namespace hotkv {

class Engine;

class RdbSaver {
 public:
  explicit RdbSaver(Engine& engine);
  ~RdbSaver();
  RdbSaver(const RdbSaver&) = delete;
  RdbSaver& operator=(const RdbSaver&) = delete;

  // `dir`/`dbfilename` as configured now.
  std::string path() const;

  // SAVE. REQUIRES every shard parked (or stopped). "" on success, else the reason (logged by the caller;
  // Redis answers a bare -ERR).
  std::string save_parked(const RdbSnapshotAux& aux);
  // BGSAVE. REQUIRES every shard parked and no save in progress. "" once the child runs.
  std::string start_bgsave_parked(const RdbSnapshotAux& aux);
  // Worker 0's cron: reaps a finished child and records how it went.
  void poll();
  // Kills a running child and removes its temporary file (shutdown). Any thread.
  void abandon();

  bool in_progress() const { return child_pid_.load() > 0; }
  // BGSAVE SCHEDULE while the log's compaction runs: started by the cron once it is over.
  void schedule() { scheduled_.store(true); }
  bool scheduled() const { return scheduled_.load(); }
  void clear_scheduled() { scheduled_.store(false); }

  // Shutdown during the start-up load: the loader stops waiting for the shards (any thread).
  void abort_loading() { abort_load_.store(true); }
  const std::atomic<bool>& load_abort_flag() const { return abort_load_; }

  // SHUTDOWN SAVE: the server writes the file once its shards have stopped, before exiting.
  void request_save_on_shutdown() { save_on_shutdown_.store(true); }
  bool save_on_shutdown() const { return save_on_shutdown_.load(); }

  // INFO persistence and LASTSAVE (any thread).
  int64_t last_save_unix() const { return last_save_unix_.load(); }
  bool last_bgsave_ok() const { return last_bgsave_ok_.load(); }
  int64_t last_bgsave_seconds() const { return last_bgsave_seconds_.load(); }
  int64_t bgsave_started_ms() const { return started_ms_.load(); }
  uint64_t saves() const { return saves_.load(); }
  // What the last start-up load read (INFO rdb_last_load_keys_loaded/expired).
  void set_load_stats(uint64_t loaded, uint64_t expired) {
    loaded_keys_.store(loaded);
    loaded_expired_.store(expired);
  }
  uint64_t last_load_keys_loaded() const { return loaded_keys_.load(); }
  uint64_t last_load_keys_expired() const { return loaded_expired_.load(); }

 private:
  std::string temp_path(long pid) const;

  Engine& engine_;
  std::mutex mutex_;  // start and reap
  std::atomic<int> child_pid_{0};
  std::atomic<bool> scheduled_{false};
  std::atomic<bool> save_on_shutdown_{false};
  std::atomic<bool> abort_load_{false};
  std::atomic<int64_t> started_ms_{0};
  std::atomic<int64_t> last_save_unix_;
  std::atomic<bool> last_bgsave_ok_{true};
  std::atomic<int64_t> last_bgsave_seconds_{-1};
  std::atomic<uint64_t> saves_{0};
  // The engine's key-change count when the running child took its snapshot: on success the
  // changes since the last save start from there, as Redis's dirty counter does.
  std::atomic<uint64_t> changes_at_fork_{0};
  std::atomic<uint64_t> loaded_keys_{0};
  std::atomic<uint64_t> loaded_expired_{0};
  std::string child_temp_;
};

}  // namespace hotkv
