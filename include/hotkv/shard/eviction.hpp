// maxmemory: which keys go when the process holds more than the limit, and how they go
// (docs/operations.md, "Memory"; docs/architecture.md, "Eviction").
//
// One limit for the whole process, one keyspace slice per shard: each shard evicts from its own
// slice only, on its own thread, so eviction takes no lock and moves no key across threads.
// The client's thread evicts from its own shard first; when that shard has nothing its policy
// may evict, the connection asks the other shards in turn (Engine::call_on). Keys are spread
// over the shards by hash, so the oldest keys of each slice are, to sampling's precision, the
// oldest keys of all.
//
// Selection is Redis's approximation: sample maxmemory-samples keys of each database, rank
// them (idle time, 255 - LFU counter, or nearness of the deadline), keep the best sixteen seen
// in a pool that outlives the call, and evict the best of the pool that still exists.
//
// Exempt from every policy: inventory items (their holds and sold-out beacons live inside
// them) and rate limiters (Value::pinned()).
#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/types/value.hpp"
#include "hotkv/util/eviction_policy.hpp"

namespace hotkv {

class Engine;
class Shard;

// Whether `policy` may evict v at all.
bool may_evict(EvictionPolicy policy, const Value& v);
// How much v deserves eviction under `policy` (higher goes first): under an LRU policy the
// distance of its last use from the far future (the longest idle ranks highest, and scores
// taken at different times still compare), 255 minus the decayed access counter under LFU,
// and under volatile-ttl the distance of the deadline from the far future, so the nearest
// deadline ranks highest.
uint64_t eviction_score(EvictionPolicy policy, const Value& v, int64_t now_ms);

struct EvictionCandidate {
  std::string key;
  uint32_t db = 0;
  uint64_t score = 0;
};

// The best candidates sampled so far, at most kSize, kept sorted by score. A key offered again
// keeps one entry with its newest score.
class EvictionPool {
 public:
  static constexpr size_t kSize = 16;

  void offer(std::string_view key, uint32_t db, uint64_t score);
  // The highest-scoring candidate, removed from the pool.
  std::optional<EvictionCandidate> pop_best();
  size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  std::vector<EvictionCandidate> entries_;  // ascending by score
};

// What one call of Eviction::evict_here achieved.
enum class EvictOutcome {
  kUnderLimit,  // used memory is at or below maxmemory (now, or already)
  kRunning,     // keys were evicted but the time budget ran out first
  kFailed,      // still over, and this shard has nothing the policy may evict
};

class Eviction {
 public:
  explicit Eviction(Engine& engine);
  Eviction(const Eviction&) = delete;
  Eviction& operator=(const Eviction&) = delete;

  // The limit, or 0 when there is none or this server must not enforce it (a replica follows
  // its master's deletions, as Redis's replica-ignore-maxmemory yes). One relaxed load when
  // maxmemory is 0.
  uint64_t limit() const;
  // Whether the process holds more than the limit now.
  bool over_limit() const;

  // On shard s's thread (or with it parked): evicts keys of shard s until used memory is back
  // under the limit, the policy finds nothing more here, or the time budget
  // (maxmemory-eviction-tenacity) is spent. Each eviction is logged and replicated as a
  // deletion, announced as the "evicted" keyspace event (which also invalidates client-side
  // caches and WATCHes) and counted in INFO evicted_keys. When the budget ran out with the
  // process still over the limit, a continuation is posted to the shard's loop.
  // quota > 0: a writer's turn (request(), or the writer's own shard): evicts about quota bytes
  // of this shard's keys (by their own size estimates) whatever the others do meanwhile, so
  // every shard gives the same share whichever thread answers first.
  EvictOutcome evict_here(size_t s, uint64_t quota = 0);

  // The verdict of the last check before a command (Redis's pre-command OOM state): over the
  // limit with nothing left to evict. A script without flags that reaches its first write
  // while it is set gets -OOM; any thread.
  bool oom() const { return limit() != 0 && oom_.load(std::memory_order_relaxed); }
  void set_oom(bool v) {
    if (oom_.load(std::memory_order_relaxed) != v) {
      oom_.store(v, std::memory_order_relaxed);
    }
  }

  // False when shard s found nothing to evict within the last kExhaustedMs: the other shards'
  // clients skip asking it meanwhile, so a server out of memory with nothing evictable left
  // does not pay a message per shard on every command. Any thread.
  bool may_have_candidates(size_t s) const;
  static constexpr int64_t kExhaustedMs = 100;

  // Which shard the next eviction should come from: the shards take turns, so that one busy
  // client cannot drain the slice of its own thread while the others keep their oldest keys.
  size_t next_turn() { return turn_.fetch_add(1, std::memory_order_relaxed) % shards_.size(); }
  // Adds quota bytes to what shard s is asked to evict and posts evict_here(s) to its loop
  // unless one is already pending there, which then takes the sum; any thread.
  void request(size_t s, uint64_t quota);
  // A writer's share of the deficit now: what each shard should evict for one over-limit
  // command (the shards take turns). 0 when the turns already asked cover the deficit.
  uint64_t turn_quota() const;
  // A turn's quota from which every shard is asked at once rather than the turn's shard alone:
  // a deficit of many keys (maxmemory lowered, a large value written). Taken turn by turn, each
  // quota is a share of what is left unasked, so the shards whose turns came first would give
  // most of it, their recently used keys before the others' oldest.
  static constexpr uint64_t kSpreadQuotaBytes = 64 * 1024;

  // INFO evicted_keys (any thread).
  uint64_t evicted_keys() const;
  void reset_stats();

 private:
  std::atomic<uint64_t> inflight_{0};  // bytes asked by request() and not yet evicted
  struct PerShard {
    EvictionPool pool;
    std::mt19937_64 rng{std::random_device{}()};
    std::atomic<uint64_t> evicted{0};
    std::atomic<int64_t> exhausted_until_ms{0};  // monotonic ms
    // Bytes asked of this shard by request() and not yet taken by the posted evict_here.
    std::atomic<uint64_t> requested_bytes{0};
    bool continuation_posted = false;
  };
  // Refills the pool from every database of the shard and returns its best live candidate.
  std::optional<EvictionCandidate> next_candidate(Shard& shard, PerShard& ps,
                                                  EvictionPolicy policy, int64_t now_ms);
  // Evicts c; returns the bytes it held by the value's own estimate (0: it was gone).
  uint64_t evict_key(Shard& shard, PerShard& ps, const EvictionCandidate& c);

  Engine& engine_;
  std::vector<std::unique_ptr<PerShard>> shards_;
  std::atomic<bool> oom_{false};
  std::atomic<size_t> turn_{0};
};

// The time one evict_here call may take at a maxmemory-eviction-tenacity (0..100), in
// microseconds; -1 means no limit (100), as Redis scales it: 500 us at 10, growing 15% a step.
int64_t eviction_time_budget_us(int64_t tenacity);

}  // namespace hotkv
