// A thread that fdatasyncs one shard's log on request. With appendfsync always the shard hands
// it each group commit and keeps serving while the disk works: the commands that arrive during
// one fsync are executed and written meanwhile and form the next group, so the fsync's latency
// overlaps the shard's CPU work instead of adding to it.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "hotkv/persist/shard_log.hpp"

namespace hotkv {

class LogSyncer {
 public:
  explicit LogSyncer(ShardLog& log) : log_(log) {}
  LogSyncer(const LogSyncer&) = delete;
  LogSyncer& operator=(const LogSyncer&) = delete;
  // Waits for a sync in progress, then stops the thread.
  ~LogSyncer();

  // Owner thread. Syncs everything written to the log so far, then calls `done` on the syncer
  // thread (it posts back to the shard). REQUIRES: the previous request's `done` has run.
  void request(std::function<void()> done);

 private:
  void loop();

  ShardLog& log_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool stop_ = false;
  std::thread thread_;  // started by the first request
};

}  // namespace hotkv
