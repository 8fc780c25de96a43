// Unit tests for the access clock arithmetic: LRU idle time across the 24-bit wrap, RESTORE's
// IDLETIME, and the LFU counter's logarithmic growth and decay.
#include "hotkv/util/access_clock.hpp"

#include <cstdint>
#include <random>

#include <catch2/catch.hpp>

using namespace hotkv;

namespace {
constexpr int64_t kNow = 1'764'000'000'000;  // a unix ms in 2025
}  // namespace

TEST_CASE("LRU clock counts idle seconds", "[access_clock]") {
  const uint32_t clock = lru_clock(kNow);
  REQUIRE(lru_idle_ms(clock, kNow) == 0);
  REQUIRE(lru_idle_ms(clock, kNow + 999) == 0);
  REQUIRE(lru_idle_ms(clock, kNow + 7'000) == 7'000);
}

TEST_CASE("LRU idle time survives the 24-bit wrap", "[access_clock]") {
  // A key stamped just before the clock wraps to 0 is still a few seconds idle after it.
  const int64_t wrap_ms = (int64_t{1} << 24) * 1000 * 105;
  const uint32_t clock = lru_clock(wrap_ms - 2'000);
  REQUIRE(clock == kAccessClockMax - 1);
  REQUIRE(lru_idle_ms(clock, wrap_ms + 3'000) == 5'000 - 1'000);  // one tick lost at the wrap
}

TEST_CASE("RESTORE IDLETIME sets a clock that far back", "[access_clock]") {
  REQUIRE(lru_idle_ms(lru_clock_idle(kNow, 1000), kNow) == 1'000'000);
  REQUIRE(lru_idle_ms(lru_clock_idle(kNow, 0), kNow) == 0);
  // Older than the clock can hold: wraps, as Redis's does.
  const int64_t huge = static_cast<int64_t>(kAccessClockMax) + 10;
  REQUIRE(lru_idle_ms(lru_clock_idle(kNow, huge), kNow) <= int64_t{kAccessClockMax} * 1000);
}

TEST_CASE("LFU counter starts, is set and decays per decay-time minutes", "[access_clock]") {
  const uint32_t fresh = lfu_clock(kNow, kLfuInitialCount);
  REQUIRE(lfu_count(fresh, kNow, 1) == kLfuInitialCount);
  REQUIRE(lfu_count(lfu_clock(kNow, 100), kNow, 1) == 100);
  REQUIRE(lfu_count(lfu_clock(kNow, 100), kNow + 3 * 60'000, 1) == 97);
  REQUIRE(lfu_count(lfu_clock(kNow, 100), kNow + 10 * 60'000, 2) == 95);
  REQUIRE(lfu_count(lfu_clock(kNow, 3), kNow + 60 * 60'000, 1) == 0);
  // lfu-decay-time 0: never decays.
  REQUIRE(lfu_count(lfu_clock(kNow, 100), kNow + 60 * 60'000, 0) == 100);
  REQUIRE(lfu_count(lfu_clock(kNow, 999), kNow, 1) == 255);
}

TEST_CASE("LFU counter grows logarithmically with accesses", "[access_clock]") {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> draw(0.0, 1.0);
  auto count_after = [&](int accesses, int64_t log_factor) {
    uint32_t clock = lfu_clock(kNow, kLfuInitialCount);
    for (int i = 0; i < accesses; ++i) {
      clock = lfu_accessed(clock, kNow, log_factor, 1, draw(rng));
    }
    return lfu_count(clock, kNow, 1);
  };
  // The first accesses above the initial count always increment.
  REQUIRE(count_after(1, 10) == kLfuInitialCount + 1);
  // With lfu-log-factor 10, Redis's table puts 1000 hits near 18 and 100k near 143; the draws
  // make it approximate.
  const uint32_t k1 = count_after(1'000, 10);
  CHECK(k1 > 10);
  CHECK(k1 < 30);
  const uint32_t k100 = count_after(100'000, 10);
  CHECK(k100 > 120);
  CHECK(k100 < 200);
  // Factor 0: every access counts, up to the 8-bit ceiling.
  REQUIRE(count_after(100, 0) == kLfuInitialCount + 100);
  REQUIRE(count_after(1'000, 0) == 255);
}
