// The logical lock a cross-shard operation takes on each shard it touches. It never blocks a
// thread: a coordinator that finds it held queues a resume callback and keeps its event loop
// running (so it can still serve other coordinators' parks), and is resumed on its own thread
// when the lock is handed to it. Locks are always taken in ascending shard order, and a
// coordinator always includes its own shard, so no cycle of waits can form (see engine.hpp).
#pragma once

#include <deque>
#include <functional>
#include <mutex>

namespace hotkv {

class ShardLock {
 public:
  // Any thread. True if the lock was free and is now held by the caller.
  bool try_acquire();
  // Any thread. Takes the lock now (calling `granted` at once) or queues `granted` to be called
  // by the releasing thread when the lock is handed over; `granted` must only post work.
  void acquire_or_wait(std::function<void()> granted);
  // Any thread; REQUIRES the caller holds the lock. Hands it to the next waiter, if any.
  void release();

 private:
  std::mutex mutex_;
  bool held_ = false;
  std::deque<std::function<void()>> waiters_;
};

}  // namespace hotkv
