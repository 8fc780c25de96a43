// Unit tests for key -> slot -> shard routing: Redis Cluster's published slot numbers and
// hash-tag rules, and the even, monotonic split of slots into shard ranges.
#include "hotkv/shard/slot.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/util/crc16.hpp"

using hotkv::crc16;
using hotkv::key_shard;
using hotkv::key_slot;
using hotkv::kSlotCount;
using hotkv::slot_shard;

TEST_CASE("key_slot matches CLUSTER KEYSLOT for plain keys", "[slot]") {
  REQUIRE(key_slot("foo") == 12182);
  REQUIRE(key_slot("bar") == 5061);
  REQUIRE(key_slot("") == 0);
}

TEST_CASE("key_slot follows Redis Cluster's hash tag rules", "[slot]") {
  SECTION("keys sharing a tag share a slot") {
    REQUIRE(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));
    REQUIRE(key_slot("{item:1001}:stock") == key_slot("{item:1001}:buyers"));
    REQUIRE(key_slot("{user1000}.following") == crc16("user1000") % kSlotCount);
  }
  SECTION("an empty tag hashes the whole key") {
    REQUIRE(key_slot("foo{}{bar}") == crc16("foo{}{bar}") % kSlotCount);
  }
  SECTION("the tag runs from the first '{' to the first '}' after it") {
    REQUIRE(key_slot("foo{{bar}}zap") == crc16("{bar") % kSlotCount);
    REQUIRE(key_slot("foo{bar}{zap}") == crc16("bar") % kSlotCount);
  }
  SECTION("an unclosed or reversed brace hashes the whole key") {
    REQUIRE(key_slot("foo{bar") == crc16("foo{bar") % kSlotCount);
    REQUIRE(key_slot("foo}bar{") == crc16("foo}bar{") % kSlotCount);
    REQUIRE(key_slot("{") == crc16("{") % kSlotCount);
    REQUIRE(key_slot("{}") == crc16("{}") % kSlotCount);
  }
  SECTION("a tag at the very end or the whole key works") {
    REQUIRE(key_slot("{bar}") == key_slot("bar"));
    REQUIRE(key_slot("prefix{bar}") == key_slot("bar"));
  }
}

TEST_CASE("key_slot always lands in range", "[slot]") {
  for (int i = 0; i < 10000; ++i) {
    const int slot = key_slot("key:" + std::to_string(i));
    REQUIRE(slot >= 0);
    REQUIRE(slot < kSlotCount);
  }
}

TEST_CASE("slot_shard splits slots into even, contiguous, monotonic ranges", "[slot]") {
  const std::vector<size_t> shard_counts = {1, 2, 3, 4, 5, 7, 8, 12, 16, 64, 100, 1000, 16384};
  for (size_t n : shard_counts) {
    std::vector<size_t> owned(n, 0);
    size_t previous = 0;
    for (int slot = 0; slot < kSlotCount; ++slot) {
      const size_t shard = slot_shard(slot, n);
      REQUIRE(shard < n);
      REQUIRE(shard >= previous);
      REQUIRE(shard - previous <= 1);
      previous = shard;
      ++owned[shard];
    }
    REQUIRE(slot_shard(0, n) == 0);
    REQUIRE(slot_shard(kSlotCount - 1, n) == n - 1);
    const size_t low = static_cast<size_t>(kSlotCount) / n;
    for (size_t count : owned) {
      REQUIRE(count >= low);
      REQUIRE(count <= low + 1);
    }
  }
}

TEST_CASE("key_shard routes tagged keys to one shard", "[slot]") {
  for (size_t n = 1; n <= 8; ++n) {
    REQUIRE(key_shard("{item:1001}:stock", n) == key_shard("{item:1001}:buyers", n));
    REQUIRE(key_shard("foo", n) == slot_shard(12182, n));
  }
}
