// Unit tests for the keyspace's access clock: a new key is stamped when put, lookups that read
// or write record an access, peek does not, and a value that already has a clock (RENAME,
// RESTORE ... IDLETIME) keeps it.
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/shard/keyspace.hpp"
#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/clock.hpp"

using namespace hotkv;

TEST_CASE("keyspace stamps new keys and touches on lookup, not on peek", "[access_clock]") {
  const int64_t now = unix_ms();
  Keyspace ks(now, 0);
  ks.put("k", Value::from_text("v"));
  Value* v = ks.peek("k", now);
  REQUIRE(v != nullptr);
  REQUIRE(v->has_access_clock());
  REQUIRE(lru_idle_ms(v->access_clock(), now + 5'000) <= 6'000);

  v->set_access_clock(lru_clock_idle(now, 100));
  REQUIRE(lru_idle_ms(ks.peek("k", now)->access_clock(), now) == 100'000);
  REQUIRE(lru_idle_ms(ks.find("k", now)->access_clock(), now) == 0);
  v->set_access_clock(lru_clock_idle(now, 100));
  REQUIRE(lru_idle_ms(ks.find_read("k", now)->access_clock(), now) == 0);

  // A value with a clock of its own keeps it through put.
  Value restored = Value::from_text("r");
  restored.set_access_clock(lru_clock_idle(now, 1000));
  ks.put("r", std::move(restored));
  REQUIRE(lru_idle_ms(ks.peek("r", now)->access_clock(), now) == 1'000'000);
}

TEST_CASE("under LFU new keys start at 5 and accesses count", "[access_clock]") {
  auto& settings = access_clock_settings();
  settings.lfu.store(true);
  const int64_t now = unix_ms();
  Keyspace ks(now, 0);
  ks.put("k", Value::from_text("v"));
  REQUIRE(lfu_count(ks.peek("k", now)->access_clock(), now, 1) == kLfuInitialCount);
  ks.find_read("k", now);  // the first access above the initial count always counts
  REQUIRE(lfu_count(ks.peek("k", now)->access_clock(), now, 1) == kLfuInitialCount + 1);
  settings.lfu.store(false);
}
