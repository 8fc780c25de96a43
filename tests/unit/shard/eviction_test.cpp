// Unit tests for maxmemory eviction: the pool keeps the best candidates, each policy ranks and
// filters keys as Redis does, stock and rate limiters are never candidates, and evict_here
// deletes sampled keys (least recently used first) until used memory is under the limit, with
// the deletion announced as the "evicted" event.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/shard/eviction.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/memory.hpp"
#include "support/test_server.hpp"

using namespace hotkv;
using hotkv::test::TestServer;

TEST_CASE("the eviction pool keeps the sixteen best and gives the best first", "[eviction]") {
  EvictionPool pool;
  for (uint64_t score = 1; score <= 40; ++score) {
    pool.offer("k" + std::to_string(score), 0, score);
  }
  REQUIRE(pool.size() == EvictionPool::kSize);
  pool.offer("k1", 0, 5);  // worse than everything kept: ignored
  REQUIRE(pool.size() == EvictionPool::kSize);
  pool.offer("k30", 0, 100);  // offered again: one entry, newest score
  auto best = pool.pop_best();
  REQUIRE(best);
  REQUIRE(best->key == "k30");
  REQUIRE(best->score == 100);
  REQUIRE(pool.pop_best()->key == "k40");
  REQUIRE(pool.size() == EvictionPool::kSize - 2);
  // Same name in another database is another key.
  pool.clear();
  pool.offer("k", 0, 1);
  pool.offer("k", 1, 2);
  REQUIRE(pool.size() == 2);
}

TEST_CASE("policies filter and rank keys as Redis does", "[eviction]") {
  const int64_t now = 1'700'000'000'000;
  Value plain = Value::from_text("v");
  plain.set_access_clock(lru_clock_idle(now, 100));
  Value expiring = Value::from_text("v");
  expiring.set_access_clock(lru_clock_idle(now, 10));
  expiring.set_expire_raw(now + 5000);
  Value sooner = Value::from_text("v");
  sooner.set_expire_raw(now + 1000);
  Value limiter = Value::from_int(42);
  limiter.set_pinned();
  Value item = Value::from_inventory(std::make_unique<Inventory>(10, 0, false, InventoryLimits{}));

  REQUIRE(may_evict(EvictionPolicy::kAllKeysLru, plain));
  REQUIRE_FALSE(may_evict(EvictionPolicy::kVolatileLru, plain));
  REQUIRE(may_evict(EvictionPolicy::kVolatileRandom, expiring));
  REQUIRE_FALSE(may_evict(EvictionPolicy::kNoEviction, plain));
  for (int p = 0; p < 7; ++p) {
    REQUIRE_FALSE(may_evict(static_cast<EvictionPolicy>(p), limiter));
    REQUIRE_FALSE(may_evict(static_cast<EvictionPolicy>(p), item));
  }
  // LRU: the longer idle ranks higher.
  REQUIRE(eviction_score(EvictionPolicy::kAllKeysLru, plain, now) >
          eviction_score(EvictionPolicy::kAllKeysLru, expiring, now));
  // ... and scores taken at different times still rank the older use first: a key last used
  // 2 s before `now`, scored then, goes before one used 3 s before a scoring 5 s later (the
  // pool keeps candidates between calls; by idle time alone the later one would go first).
  Value early = Value::from_text("v");
  early.set_access_clock(lru_clock_idle(now, 2));
  Value later = Value::from_text("v");
  later.set_access_clock(lru_clock_idle(now + 5000, 3));
  REQUIRE(eviction_score(EvictionPolicy::kAllKeysLru, early, now) >
          eviction_score(EvictionPolicy::kAllKeysLru, later, now + 5000));
  // TTL: the nearer deadline ranks higher.
  REQUIRE(eviction_score(EvictionPolicy::kVolatileTtl, sooner, now) >
          eviction_score(EvictionPolicy::kVolatileTtl, expiring, now));
  // LFU: a lower counter ranks higher.
  Value hot = Value::from_text("v");
  hot.set_access_clock(lfu_clock(now, 200));
  Value cold = Value::from_text("v");
  cold.set_access_clock(lfu_clock(now, 1));
  REQUIRE(eviction_score(EvictionPolicy::kAllKeysLfu, cold, now) >
          eviction_score(EvictionPolicy::kAllKeysLfu, hot, now));
}

TEST_CASE("the tenacity scales the time budget", "[eviction]") {
  REQUIRE(eviction_time_budget_us(10) == 500);
  REQUIRE(eviction_time_budget_us(0) < 500);
  REQUIRE(eviction_time_budget_us(20) > 1000);
  REQUIRE(eviction_time_budget_us(100) == -1);
}

namespace {

// Fills database 0 with `n` keys "old:<i>" last used an hour ago and 8 "hot:<i>" used now.
void fill(TestServer& s, int n) {
  for (int i = 0; i < n; ++i) {
    s.run({"SET", "old:" + std::to_string(i), std::string(200, 'x')});
  }
  for (int i = 0; i < 8; ++i) {
    s.run({"SET", "hot:" + std::to_string(i), std::string(200, 'x')});
  }
  Keyspace& ks = s.engine().shard(0).keyspace(0);
  ks.dict().for_each([&](std::string_view key, Value& v) {
    v.set_access_clock(lru_clock_idle(s.now(), key.starts_with("old:") ? 3600 : 0));
  });
}

}  // namespace

TEST_CASE("allkeys-lru evicts idle keys until under the limit, never hot ones", "[eviction]") {
  TestServer s;
  s.run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  s.run({"CONFIG", "SET", "maxmemory-eviction-tenacity", "100"});  // all in one call
  s.run({"INV.CREATE", "stock:1", "100"});
  s.run({"GCRA.LIMIT", "rate:1", "1000", "10"});
  fill(s, 2000);
  Eviction& ev = s.engine().eviction();
  REQUIRE(ev.evict_here(0) == EvictOutcome::kUnderLimit);  // no limit yet
  // A limit about 100 KB under what is used now: a few hundred keys must go.
  const uint64_t used = used_memory_bytes_here();
  s.config().maxmemory.store(static_cast<int64_t>(used - 100 * 1024));
  const EvictOutcome outcome = ev.evict_here(0);
  CAPTURE(ev.evicted_keys(), s.run({"DBSIZE"}), used_memory_bytes_here(), used);
  REQUIRE(outcome == EvictOutcome::kUnderLimit);
  REQUIRE(used_memory_bytes_here() <= used - 100 * 1024 + 4096);  // + the DBSIZE reply above
  const uint64_t evicted = ev.evicted_keys();
  REQUIRE(evicted > 100);
  REQUIRE(evicted < 2000);
  for (int i = 0; i < 8; ++i) {
    REQUIRE(s.run({"EXISTS", "hot:" + std::to_string(i)}) == hotkv::test::integer(1));
  }
  REQUIRE(s.run({"EXISTS", "stock:1"}) == hotkv::test::integer(1));
  REQUIRE(s.run({"EXISTS", "rate:1"}) == hotkv::test::integer(1));
  REQUIRE(s.run({"DBSIZE"}) == hotkv::test::integer(static_cast<int64_t>(2000 + 8 + 2 - evicted)));
  s.config().maxmemory.store(0);
  s.run({"CONFIG", "SET", "maxmemory-eviction-tenacity", "10"});
}

TEST_CASE("with only exempt keys, or noeviction, eviction fails", "[eviction]") {
  TestServer s;
  for (int i = 0; i < 50; ++i) {
    s.run({"INV.CREATE", "stock:" + std::to_string(i), "100"});
  }
  s.run({"SET", "plain", "v"});
  Eviction& ev = s.engine().eviction();
  s.config().maxmemory.store(1);
  REQUIRE(ev.evict_here(0) == EvictOutcome::kFailed);  // noeviction
  REQUIRE(s.run({"EXISTS", "plain"}) == hotkv::test::integer(1));
  s.run({"CONFIG", "SET", "maxmemory-policy", "volatile-lru"});
  REQUIRE(ev.evict_here(0) == EvictOutcome::kFailed);  // no key has a TTL
  s.run({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
  REQUIRE(ev.evict_here(0) == EvictOutcome::kRunning);  // "plain" went, then nothing left
  REQUIRE(s.run({"EXISTS", "plain"}) == hotkv::test::integer(0));
  REQUIRE(ev.evict_here(0) == EvictOutcome::kFailed);
  REQUIRE(s.run({"DBSIZE"}) == hotkv::test::integer(50));
  s.config().maxmemory.store(0);
  s.run({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
}

TEST_CASE("volatile-ttl evicts the nearest deadline first", "[eviction]") {
  TestServer s;
  s.run({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"});
  s.run({"CONFIG", "SET", "maxmemory-samples", "64"});
  s.run({"SET", "persistent", "v"});
  for (int i = 1; i <= 20; ++i) {
    s.run({"SET", "t:" + std::to_string(i), "v", "PX", std::to_string(i * 100000)});
  }
  Eviction& ev = s.engine().eviction();
  s.config().maxmemory.store(1);
  // Each call evicts until it fails; count how the keys left go: nearest first.
  std::vector<int> order;
  for (int round = 0; round < 20; ++round) {
    uint64_t before = ev.evicted_keys();
    (void)before;
    Keyspace& ks = s.engine().shard(0).keyspace(0);
    int nearest = 0;
    for (int i = 20; i >= 1; --i) {
      if (ks.dict().find("t:" + std::to_string(i)) != nullptr) {
        nearest = i;
      }
    }
    order.push_back(nearest);
    // One eviction at a time: lift the limit just below what is used.
    s.config().maxmemory.store(static_cast<int64_t>(used_memory_bytes_here()) - 1);
    ev.evict_here(0);
    if (ks.dict().find("t:" + std::to_string(nearest)) != nullptr) {
      FAIL("the key with the nearest deadline survived");
    }
  }
  REQUIRE(s.run({"EXISTS", "persistent"}) == hotkv::test::integer(1));
  s.config().maxmemory.store(0);
  s.run({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  s.run({"CONFIG", "SET", "maxmemory-samples", "5"});
}

TEST_CASE("used_memory follows allocations and frees", "[eviction][memory]") {
  REQUIRE(counting_allocator_active());
  const uint64_t before = used_memory_bytes_here();
  std::vector<std::string*> blocks;
  for (int i = 0; i < 4096; ++i) {
    blocks.push_back(new std::string(1000, 'x'));
  }
  const uint64_t grown = used_memory_bytes_here() - before;
  // 4096 strings of 1000 bytes (plus their 32-byte objects): about 4.2 MB.
  REQUIRE(grown > 4096 * 1000);
  REQUIRE(grown < 4096 * 1100);
  for (auto* b : blocks) {
    delete b;
  }
  const uint64_t after = used_memory_bytes_here();
  REQUIRE(after < before + 64 * 1024);
  REQUIRE(used_memory_peak_bytes() >= before + 4096 * 1000 - kFoldBytes);
}

TEST_CASE("a writer's turn evicts its quota even once memory is back under the limit",
          "[eviction]") {
  // Shards answer turns at different moments; the one answering last must still give its
  // share, or the first (the writer's own) gives every key (Connection::memory_allows).
  TestServer s;
  s.run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  s.run({"CONFIG", "SET", "maxmemory-eviction-tenacity", "100"});
  fill(s, 500);
  Eviction& ev = s.engine().eviction();
  const uint64_t used = used_memory_bytes_here();
  s.config().maxmemory.store(static_cast<int64_t>(used - 10 * 1024));
  // One shard: the whole deficit is this turn's quota; a second turn finds nothing asked.
  const uint64_t quota = ev.turn_quota();
  CHECK(quota > 10 * 1024);
  CHECK(quota < 12 * 1024);
  REQUIRE(ev.evict_here(0, quota) != EvictOutcome::kFailed);
  // A quota is counted by the values' own size estimates, which an allocator may round
  // differently (the sanitizers' does): a few more turns at most bring it under.
  for (int turn = 0; turn < 4 && ev.turn_quota() > 0; ++turn) {
    ev.evict_here(0, ev.turn_quota());
  }
  const uint64_t after_first = ev.evicted_keys();
  CHECK(after_first >= 10 * 1024 / 300);
  CHECK(ev.turn_quota() == 0);
  // Under the limit now, a quota asked earlier still takes about its bytes (200-byte values,
  // each counted with its key), but a stale quota stops a whole round under the limit.
  REQUIRE(ev.evict_here(0, 2048) == EvictOutcome::kUnderLimit);
  const uint64_t second = ev.evicted_keys() - after_first;
  CHECK(second >= 5);
  CHECK(second <= 11);
  // Without a quota nothing goes while under the limit.
  REQUIRE(ev.evict_here(0) == EvictOutcome::kUnderLimit);
  CHECK(ev.evicted_keys() - after_first == second);
  for (int i = 0; i < 8; ++i) {
    REQUIRE(s.run({"EXISTS", "hot:" + std::to_string(i)}) == hotkv::test::integer(1));
  }
  s.config().maxmemory.store(0);
  s.run({"CONFIG", "SET", "maxmemory-eviction-tenacity", "10"});
}
