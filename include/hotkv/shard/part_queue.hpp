// One shard's queue of parts of operations that span several shards (a split MSET, a
// transaction's commands): the way such an operation runs without stopping any thread.
//
// An operation over shards S is scheduled in one step (Engine::schedule_parts): under one
// lock it takes the next number of a single global order and appends one part to the queue
// of each shard in S. Every queue is therefore in that global order. A shard runs its queue's
// parts on its own thread, in order, whenever it comes to them: when the wake-up posted with
// them arrives, and before any command starts there (Engine::drain_parts). A part only
// changes and reads its own shard, never waits, and its operation replies once every part
// ran. So on every shard an operation comes after everything scheduled before it and before
// everything scheduled after it, and a client that saw one part's effect and then reads
// another shard finds that shard has run its part first: nobody observes half of one.
//
// The shards an operation runs on with threads parked (Engine::run_atomic) take a cut of the
// same order: parts scheduled before it still run first, the ones after wait until it ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <vector>

namespace hotkv {

class PartQueue {
 public:
  struct Part {
    uint64_t order = 0;
    // Runs the part on the shard (owner thread, or a coordinator while the shard is parked).
    std::function<void()> run;
    // After the shard's log passed its barrier: serves the clients the part woke and counts
    // the part done (the last one answers the client).
    std::function<void()> finish;
  };

  // Any thread, under the engine's schedule lock.
  void push(Part part);
  // True if parts wait (any thread; a hint, read without the lock).
  bool pending() const { return pending_.load(std::memory_order_acquire) > 0; }
  // Moves the waiting parts numbered below the limit into `out`, in order.
  void take(std::vector<Part>& out);

  // A run_atomic over this shard holds it from the cut on: only parts numbered below `limit`
  // may run until release(). Under the engine's schedule lock.
  void hold(uint64_t limit) { limit_.store(limit, std::memory_order_release); }
  void release() { limit_.store(kNoLimit, std::memory_order_release); }

  // One wake-up in flight is enough: true if the caller must post one.
  bool claim_wake() { return !wake_posted_.exchange(true, std::memory_order_acq_rel); }
  void wake_arrived() { wake_posted_.store(false, std::memory_order_release); }

 private:
  static constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
  std::mutex mu_;
  std::deque<Part> parts_;
  std::atomic<size_t> pending_{0};
  std::atomic<uint64_t> limit_{kNoLimit};
  std::atomic<bool> wake_posted_{false};
};

}  // namespace hotkv
