// Seals of split operations: what lets a write run split (part_queue.hpp) while the shards keep
// a log, without a crash ever taking back a reply.
//
// Replay keeps a shard's log up to its first operation over several shards whose other parts
// are missing, and drops the rest of that file: it cannot know which later writes read the
// missing part's effects. That is sound only if nothing written after such a part was
// acknowledged before the operation was whole. A split part gives its shard no such pause:
// the shard goes on serving while sibling parts still wait on other threads. So every split
// operation, while some shard logs to a file, takes a seal number (consecutive, in the global
// order of operations) and is *sealed* once every part of it has been written to its shard's
// log (and synced, under appendfsync always). A shard that ran a part carries that number as
// its *taint*: any reply leaving it afterwards may reveal the part's effects, so it waits
// until every operation numbered up to the taint is sealed (DurabilityBarrier). Results that
// travel between threads (a hop's batch, call_on, run_atomic, a woken client's reply) carry
// the taint of the shard that made them to the thread that answers the client.
//
// A shard that ran no part since the last seal waits for nothing; with appendonly no nothing
// is numbered and taints stay 0.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

namespace hotkv {

// Engine-wide: which split operations are sealed.
class SplitSeals {
 public:
  // The next operation's number. Under the engine's schedule lock, so numbers follow the
  // global order of operations.
  uint64_t open() { return next_++; }
  // Any thread, once every part of operation `seq` is written. Returns true when the sealed
  // prefix moved (everything below sealed_below() is sealed).
  bool close(uint64_t seq);
  // Every operation numbered below this is sealed. Any thread.
  uint64_t sealed_below() const { return sealed_below_.load(std::memory_order_seq_cst); }

 private:
  uint64_t next_ = 1;  // under the schedule lock
  std::mutex mu_;
  std::deque<bool> closed_;  // from sealed_below_ on, under mu_
  std::atomic<uint64_t> sealed_below_{1};
};

// One shard's taint and the replies waiting for it to be sealed.
class SealGate {
 public:
  SealGate(asio::io_context& io, const SplitSeals& seals) : io_(io), seals_(seals) {}

  // The highest seal number whose effects this shard's replies may reveal; 0 for none.
  uint64_t taint() const { return taint_.load(std::memory_order_acquire); }
  // Owner thread (or a coordinator while it is parked): results from a shard tainted `seq`
  // are about to be answered from here.
  void absorb(uint64_t seq) {
    if (seq > taint_.load(std::memory_order_relaxed)) {
      taint_.store(seq, std::memory_order_release);
    }
  }
  // Whether a reply leaving now would have to wait. A load or two.
  bool pending() const {
    uint64_t t = taint_.load(std::memory_order_relaxed);
    return t != 0 && t >= seals_.sealed_below();
  }
  // Owner thread: completes once everything up to the current taint is sealed.
  asio::awaitable<void> wait();
  // Owner thread: runs `fn` there once everything up to the current taint is sealed (at once
  // if it is).
  void when_sealed(std::function<void()> fn);
  // Any thread, after the sealed prefix moved to `below`: wakes this shard's waiters it
  // covers (one message, only if some wait).
  void advanced(uint64_t below);

 private:
  void run_ready();
  void post_run();

  asio::io_context& io_;
  const SplitSeals& seals_;
  std::atomic<uint64_t> taint_{0};
  // Owner thread: (taint when it began waiting, what to run), in that order.
  std::deque<std::pair<uint64_t, std::function<void()>>> waiters_;
  // The first waiter's taint (0: nobody waits), for advanced() on other threads. Written by
  // the owner, then sealed_below re-read; advanced stores sealed_below first, then reads this:
  // one of the two always sees the other (both sequentially consistent).
  std::atomic<uint64_t> wanted_{0};
  std::atomic<bool> run_posted_{false};
};

}  // namespace hotkv
