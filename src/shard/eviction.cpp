// maxmemory eviction: sampling, the pool, and the deletion of a chosen key (eviction.hpp).
#include "hotkv/shard/eviction.hpp"

#include <algorithm>
#include <cmath>

#include <asio/post.hpp>

#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/memory.hpp"
#include "hotkv/util/notify.hpp"

namespace hotkv {

namespace {

// Buckets one sampling pass may walk per wanted key: enough to find volatile keys among many
// without, and to give up quickly on a database of exempt keys.
constexpr size_t kBucketsPerSample = 16;
// Sampling passes over every database that find nothing before a shard reports kFailed.
constexpr int kEmptyRounds = 3;
// Evictions between two looks at the clock.
constexpr size_t kEvictionsPerClockCheck = 16;

}  // namespace

bool may_evict(EvictionPolicy policy, const Value& v) {
  if (policy == EvictionPolicy::kNoEviction || v.pinned()) {
    return false;
  }
  return !policy_volatile_only(policy) || v.has_expiry();
}

uint64_t eviction_score(EvictionPolicy policy, const Value& v, int64_t now_ms) {
  if (policy == EvictionPolicy::kVolatileTtl) {
    return UINT64_MAX - static_cast<uint64_t>(std::max<int64_t>(v.expire_at_ms(), 0));
  }
  if (policy_lfu(policy)) {
    const int64_t decay = access_clock_settings().lfu_decay_time.load(std::memory_order_relaxed);
    return 255 - lfu_count(v.access_clock(), now_ms, decay);
  }
  // A second ahead: a key another thread touched after this thread read the clock would
  // otherwise look like it wrapped round (idle for 194 days) and go first.
  const int64_t idle = lru_idle_ms(v.access_clock(), now_ms + 1000);
  // Ranked by when it was last used, not by how long ago: the pool keeps candidates across
  // calls, and an idle time taken seconds ago would rank a key used since then (a hot key
  // sampled late in a long fill) above the older ones sampled early.
  return UINT64_MAX - static_cast<uint64_t>(std::max<int64_t>(now_ms + 1000 - idle, 0));
}

void EvictionPool::offer(std::string_view key, uint32_t db, uint64_t score) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->db == db && it->key == key) {
      entries_.erase(it);
      break;
    }
  }
  if (entries_.size() == kSize) {
    if (score <= entries_.front().score) {
      return;  // worse than everything kept
    }
    entries_.erase(entries_.begin());
  }
  auto pos = std::upper_bound(entries_.begin(), entries_.end(), score,
                              [](uint64_t s, const EvictionCandidate& c) { return s < c.score; });
  entries_.insert(pos, EvictionCandidate{std::string(key), db, score});
}

std::optional<EvictionCandidate> EvictionPool::pop_best() {
  if (entries_.empty()) {
    return std::nullopt;
  }
  EvictionCandidate best = std::move(entries_.back());
  entries_.pop_back();
  return best;
}

int64_t eviction_time_budget_us(int64_t tenacity) {
  if (tenacity >= 100) {
    return -1;
  }
  return static_cast<int64_t>(500.0 * std::pow(1.15, static_cast<double>(tenacity - 10)));
}

Eviction::Eviction(Engine& engine) : engine_(engine) {
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    shards_.push_back(std::make_unique<PerShard>());
  }
}

uint64_t Eviction::limit() const {
  const int64_t max = engine_.config().maxmemory.load(std::memory_order_relaxed);
  if (max <= 0 || engine_.replication().is_replica()) {
    return 0;
  }
  return static_cast<uint64_t>(max);
}

bool Eviction::over_limit() const {
  const uint64_t max = limit();
  return max != 0 && used_memory_bytes() > max;
}

void Eviction::request(size_t s, uint64_t quota) {
  inflight_.fetch_add(quota, std::memory_order_acq_rel);
  if (shards_[s]->requested_bytes.fetch_add(quota, std::memory_order_acq_rel) > 0) {
    return;  // the evict_here already posted takes this quota too
  }
  asio::post(engine_.shard(s).io(), [this, s] {
    const uint64_t quota = shards_[s]->requested_bytes.exchange(0, std::memory_order_acq_rel);
    evict_here(s, quota);
    inflight_.fetch_sub(quota, std::memory_order_acq_rel);
  });
}

uint64_t Eviction::turn_quota() const {
  const uint64_t max = limit();
  const uint64_t used = used_memory_bytes_here();
  // What is over the limit and not yet asked of a shard: the turns asked and still queued
  // will free their part (counting it again would evict it twice).
  const uint64_t asked = inflight_.load(std::memory_order_acquire);
  if (used <= max || used - max <= asked) {
    return 0;
  }
  return (used - max - asked) / shards_.size() + 1;
}

bool Eviction::may_have_candidates(size_t s) const {
  return shards_[s]->exhausted_until_ms.load(std::memory_order_relaxed) <= mono_ms();
}

uint64_t Eviction::evicted_keys() const {
  uint64_t n = 0;
  for (const auto& ps : shards_) {
    n += ps->evicted.load(std::memory_order_relaxed);
  }
  return n;
}

void Eviction::reset_stats() {
  for (auto& ps : shards_) {
    ps->evicted.store(0, std::memory_order_relaxed);
  }
}

std::optional<EvictionCandidate> Eviction::next_candidate(Shard& shard, PerShard& ps,
                                                          EvictionPolicy policy,
                                                          int64_t now_ms) {
  const auto samples =
      static_cast<size_t>(engine_.config().maxmemory_samples.load(std::memory_order_relaxed));
  const bool volatile_only = policy_volatile_only(policy);
  for (int round = 0; round < kEmptyRounds; ++round) {
    if (policy_random(policy)) {
      // Any one key the policy allows, from a database picked at random among those with one.
      const size_t dbs = shard.db_count();
      const size_t first = std::uniform_int_distribution<size_t>(0, dbs - 1)(ps.rng);
      for (size_t n = 0; n < dbs; ++n) {
        Keyspace& ks = shard.keyspace(static_cast<uint32_t>((first + n) % dbs));
        if (ks.size() == 0 || (volatile_only && ks.expires_count() == 0)) {
          continue;
        }
        std::optional<EvictionCandidate> pick;
        ks.dict().sample(ps.rng, 1, samples * kBucketsPerSample,
                         [&](std::string_view key, Value& v) {
          if (!may_evict(policy, v) || (v.has_expiry() && v.expire_at_ms() <= now_ms)) {
            return false;
          }
          pick = EvictionCandidate{std::string(key), ks.db(), 0};
          return true;
        });
        if (pick) {
          return pick;
        }
      }
      continue;
    }
    for (size_t d = 0; d < shard.db_count(); ++d) {
      Keyspace& ks = shard.keyspace(static_cast<uint32_t>(d));
      if (ks.size() == 0 || (volatile_only && ks.expires_count() == 0)) {
        continue;
      }
      ks.dict().sample(ps.rng, samples, samples * kBucketsPerSample,
                       [&](std::string_view key, Value& v) {
                         if (!may_evict(policy, v)) {
                           return false;
                         }
                         ps.pool.offer(key, ks.db(), eviction_score(policy, v, now_ms));
                         return true;
                       });
    }
    // The best of the pool that is still there and still allowed (a key may have been
    // deleted, or become an exempt value, since it was sampled).
    while (auto c = ps.pool.pop_best()) {
      if (c->db >= shard.db_count()) {
        continue;
      }
      const Value* v = shard.keyspace(c->db).dict().find(c->key);
      if (v != nullptr && may_evict(policy, *v)) {
        return c;
      }
    }
  }
  return std::nullopt;
}

namespace {
// A key's entry besides its name and value, as MEMORY USAGE counts it.
constexpr uint64_t kEntryOverheadBytes = sizeof(void*) + sizeof(uint32_t);
}  // namespace

uint64_t Eviction::evict_key(Shard& shard, PerShard& ps, const EvictionCandidate& c) {
  Keyspace& ks = shard.keyspace(c.db);
  const Value* v = ks.dict().find(c.key);
  if (v == nullptr) {
    return 0;
  }
  // The value's own estimate and the key with its entry (MEMORY USAGE's measure).
  const uint64_t bytes = v->memory_bytes() + c.key.size() + kEntryOverheadBytes;
  if (!ks.erase(c.key)) {
    return 0;
  }
  KeyspaceStats::bump(ps.evicted);
  // A deletion like any other for the log and the replicas (a replica does not evict by
  // itself), joined into one record per evict_here call.
  ShardLog& log = shard.log();
  if (log.enabled() && !engine_.loading()) {
    log.record().select(c.db);
    log.record().add_del(c.key);
  }
  // WATCH, client-side caching (the invalidation leaves before the reply of the command that
  // triggered the eviction) and keyspace notifications.
  engine_.notify_keyspace_event(c.db, kNotifyEvicted, "evicted", c.key);
  return bytes;
}

EvictOutcome Eviction::evict_here(size_t s, uint64_t quota) {
  const uint64_t max = limit();
  // A writer's turn (quota > 0) is taken even when another shard has just brought memory back
  // under the limit, as long as it is not under by a whole round of turns: otherwise the shard
  // that answers first (the writer's own) would give all the keys and lose its recently used
  // ones while the others keep their oldest. A large quota left over from a deficit already
  // made good elsewhere stops at that margin.
  const uint64_t floor =
      quota == 0 ? max : max - std::min<uint64_t>(max, quota * shards_.size());
  if (max == 0 || used_memory_bytes_here() <= floor) {
    return EvictOutcome::kUnderLimit;
  }
  const auto policy = static_cast<EvictionPolicy>(
      engine_.config().maxmemory_policy.load(std::memory_order_relaxed));
  if (policy == EvictionPolicy::kNoEviction) {
    return EvictOutcome::kFailed;
  }
  Shard& shard = engine_.shard(s);
  if (shard.serving_while_busy() || engine_.loading()) {
    return EvictOutcome::kFailed;  // a busy script's half-done data, or a load in progress
  }
  PerShard& ps = *shards_[s];
  const int64_t budget = eviction_time_budget_us(
      engine_.config().maxmemory_eviction_tenacity.load(std::memory_order_relaxed));
  const int64_t start = mono_us();
  const int64_t now_ms = engine_.now_ms();
  size_t evicted = 0;
  EvictOutcome outcome = EvictOutcome::kUnderLimit;
  // Without a quota (a command that must not wait for other shards' turns), this shard's
  // share of the deficit: one call must not take a large deficit from one slice alone.
  const uint64_t start_used = used_memory_bytes_here();
  const uint64_t share = (start_used - std::min(start_used, max)) / shards_.size() + 1;
  bool share_done = false;
  uint64_t freed = 0;
  while (quota > 0 ? freed < quota && used_memory_bytes_here() > floor
                   : used_memory_bytes_here() > max) {
    if (quota == 0 && shards_.size() > 1 &&
        start_used - std::min(start_used, used_memory_bytes_here()) >= share) {
      share_done = true;
      outcome = EvictOutcome::kRunning;
      break;
    }
    std::optional<EvictionCandidate> c = next_candidate(shard, ps, policy, now_ms);
    if (!c) {
      outcome = EvictOutcome::kFailed;
      ps.exhausted_until_ms.store(mono_ms() + kExhaustedMs, std::memory_order_relaxed);
      break;
    }
    freed += evict_key(shard, ps, *c);
    ++evicted;
    if (budget >= 0 && evicted % kEvictionsPerClockCheck == 0 && mono_us() - start > budget) {
      outcome = EvictOutcome::kRunning;
      break;
    }
  }
  if (evicted > 0) {
    shard.log().end_record(0, 1);
    DurabilityBarrier::pass(shard);  // no reply covers these deletions
    fold_thread_memory();
  }
  if (quota > 0 && outcome == EvictOutcome::kUnderLimit && freed >= quota) {
    share_done = true;  // the turn is taken; the next writer's turn asks again
    outcome = used_memory_bytes_here() > max ? EvictOutcome::kRunning : outcome;
  }
  if (outcome == EvictOutcome::kRunning && !share_done && !ps.continuation_posted) {
    // Carry on between client turns, as Redis's eviction time proc does, with what is left of
    // this call's quota or share: a continuation that took a fresh share of the whole deficit
    // each time would keep this shard evicting until the process is under the limit, and the
    // shard whose chain started first would give most of the keys.
    const uint64_t done =
        quota > 0 ? freed : start_used - std::min(start_used, used_memory_bytes_here());
    const uint64_t goal = quota > 0 ? quota : share;
    if (done < goal) {
      ps.continuation_posted = true;
      asio::post(shard.io(), [this, s, rest = goal - done] {
        shards_[s]->continuation_posted = false;
        evict_here(s, rest);
      });
    }
  }
  if (outcome == EvictOutcome::kFailed && evicted > 0) {
    return EvictOutcome::kRunning;  // progress made: let the command through, as Redis does
  }
  return outcome;
}

}  // namespace hotkv
