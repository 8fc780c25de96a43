// The GCRA core on its own (types/gcra.hpp): exact emission intervals, burst and cost
// accounting, the window bound, a clock moving backwards, overflow, and the two rounding rules
// the commands reply with. The command-level behaviour is in tests/unit/commands/gcra_test.cpp.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/types/gcra.hpp"

namespace gcra = hotkv::gcra;

namespace {

constexpr int64_t kMs = gcra::kNanosPerMilli;

gcra::Limit make(int64_t period_ms, int64_t count, int64_t burst) {
  gcra::Limit l;
  REQUIRE(gcra::make_limit(period_ms, kMs, count, burst, l) == gcra::Error::kNone);
  return l;
}

// One limiter driven by a millisecond clock, as the commands drive it (a stored TAT at or
// before now behaves exactly like the expired key the commands would see).
struct Limiter {
  gcra::Limit limit;
  std::optional<int64_t> tat;

  gcra::Decision at(int64_t now_ms, int64_t cost = 1) {
    gcra::Decision d;
    REQUIRE(gcra::decide(limit, tat, now_ms * kMs, cost, d) == gcra::Error::kNone);
    if (d.store) {
      tat = d.new_tat_ns;
    }
    return d;
  }
};

}  // namespace

TEST_CASE("The emission interval is kept in exact nanoseconds and rounded up otherwise",
          "[ratelimit]") {
  gcra::Limit l = make(10000, 2, 0);
  CHECK(l.emission_ns == 5'000'000'000);
  CHECK(l.limit == 1);
  CHECK(l.tolerance_ns == 5'000'000'000);
  l = make(1000, 3, 4);
  CHECK(l.emission_ns == 333'333'334);  // 333 333 333.33... rounded up: never faster than asked
  CHECK(l.limit == 5);
  CHECK(l.tolerance_ns == 5 * 333'333'334);
  l = make(1, 1'000'000, 0);
  CHECK(l.emission_ns == 1);
  gcra::Limit s;
  REQUIRE(gcra::make_limit(60, gcra::kNanosPerSecond, 30, 15, s) == gcra::Error::kNone);
  CHECK(s.emission_ns == 2'000'000'000);
  CHECK(s.limit == 16);
}

TEST_CASE("Limits with bad arguments or more than one cell per nanosecond are refused",
          "[ratelimit]") {
  gcra::Limit l;
  CHECK(gcra::make_limit(0, kMs, 1, 0, l) == gcra::Error::kBadArgument);
  CHECK(gcra::make_limit(-1, kMs, 1, 0, l) == gcra::Error::kBadArgument);
  CHECK(gcra::make_limit(1000, kMs, 0, 0, l) == gcra::Error::kBadArgument);
  CHECK(gcra::make_limit(1000, kMs, 1, -1, l) == gcra::Error::kBadArgument);
  CHECK(gcra::make_limit(1000, 0, 1, 0, l) == gcra::Error::kBadArgument);
  CHECK(gcra::make_limit(1, kMs, 1'000'001, 0, l) == gcra::Error::kRateTooHigh);
  CHECK(gcra::make_limit(INT64_MAX, kMs, 1, 0, l) == gcra::Error::kOverflow);
  CHECK(gcra::make_limit(1000, kMs, 1, INT64_MAX, l) == gcra::Error::kOverflow);
  CHECK(gcra::make_limit(INT64_MAX, gcra::kNanosPerSecond, 1, INT64_MAX - 1, l) ==
        gcra::Error::kOverflow);
  CHECK(gcra::make_limit(1'000'000'000'000, kMs, 1, 10'000'000, l) == gcra::Error::kOverflow);
  // A period too long for int64 nanoseconds is fine once divided by a large enough count.
  REQUIRE(gcra::make_limit(INT64_MAX, kMs, 1'000'000'000, 0, l) == gcra::Error::kNone);
  CHECK(l.emission_ns == 9'223'372'036'854'776);
}

TEST_CASE("A full burst passes then the next request waits exactly one emission interval",
          "[ratelimit]") {
  Limiter lim{make(1000, 10, 4), std::nullopt};
  const int64_t t0 = 1'700'000'000'000;
  for (int64_t i = 0; i < 5; ++i) {
    gcra::Decision d = lim.at(t0);
    CHECK(d.allowed);
    CHECK(d.remaining == 4 - i);
    CHECK(d.retry_after_ns == -1);
    CHECK(d.reset_after_ns == (i + 1) * 100 * kMs);
    CHECK(d.store);
  }
  gcra::Decision d = lim.at(t0);
  CHECK_FALSE(d.allowed);
  CHECK(d.remaining == 0);
  CHECK(d.retry_after_ns == 100 * kMs);
  CHECK(d.reset_after_ns == 500 * kMs);
  CHECK_FALSE(d.store);
  CHECK_FALSE(lim.at(t0 + 99).allowed);
  CHECK(lim.at(t0 + 100).allowed);
}

TEST_CASE("Refused requests and zero-cost peeks leave the state alone", "[ratelimit]") {
  Limiter lim{make(10000, 2, 0), std::nullopt};
  const int64_t t0 = 1'700'000'000'000;
  gcra::Decision peek = lim.at(t0, 0);
  CHECK(peek.allowed);
  CHECK(peek.remaining == 1);
  CHECK(peek.reset_after_ns == 0);
  CHECK_FALSE(peek.store);
  CHECK_FALSE(lim.tat.has_value());
  REQUIRE(lim.at(t0).allowed);
  const int64_t tat = *lim.tat;
  CHECK(tat == (t0 + 5000) * kMs);
  CHECK_FALSE(lim.at(t0 + 10).allowed);
  peek = lim.at(t0 + 10, 0);
  CHECK(peek.allowed);
  CHECK(peek.remaining == 0);
  CHECK(peek.reset_after_ns == 4990 * kMs);
  CHECK(*lim.tat == tat);
}

TEST_CASE("A request heavier than the whole burst is refused for good", "[ratelimit]") {
  Limiter lim{make(1000, 1, 4), std::nullopt};
  gcra::Decision d = lim.at(0, 6);
  CHECK_FALSE(d.allowed);
  CHECK(d.retry_after_ns == -1);
  CHECK(d.remaining == 5);
  CHECK(d.reset_after_ns == 0);
  d = lim.at(0, 5);
  CHECK(d.allowed);
  CHECK(d.remaining == 0);
  d = lim.at(0, 6);
  CHECK(d.retry_after_ns == -1);
  CHECK(d.reset_after_ns == 5000 * kMs);
}

TEST_CASE("Any window of one period admits at most count plus burst requests", "[ratelimit]") {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 40; ++round) {
    const int64_t period = std::uniform_int_distribution<int64_t>(1, 5000)(rng);
    const int64_t count = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    const int64_t burst = std::uniform_int_distribution<int64_t>(0, 5)(rng);
    INFO("period " << period << " count " << count << " burst " << burst);
    Limiter lim{make(period, count, burst), std::nullopt};
    std::vector<int64_t> admitted;
    int64_t now = 1'700'000'000'000;
    for (int i = 0; i < 3000; ++i) {
      now += std::uniform_int_distribution<int64_t>(0, 2 * period / count + 1)(rng);
      if (lim.at(now).allowed) {
        admitted.push_back(now);
      }
    }
    REQUIRE(!admitted.empty());
    size_t first = 0;
    size_t most = 0;
    for (size_t last = 0; last < admitted.size(); ++last) {
      while (admitted[last] - admitted[first] >= period) {
        ++first;
      }
      most = std::max(most, last - first + 1);
    }
    CHECK(static_cast<int64_t>(most) <= count + burst);
  }
}

TEST_CASE("A saturated limiter with a burst admits count per period over the long run",
          "[ratelimit]") {
  // 3 per second is not a whole number of ms (or ns) apart. With BURST 1 the schedule runs ahead
  // of the clock and accumulates T exactly: an hour of requests every millisecond gets the burst
  // plus exactly 3 per second, with no drift from the rounded-up interval.
  Limiter lim{make(1000, 3, 1), std::nullopt};
  int64_t admitted = 0;
  for (int64_t now = 0; now < 3'600'000; ++now) {
    admitted += lim.at(now).allowed ? 1 : 0;
  }
  CHECK(admitted == 1 + 3 * 3600);
}

TEST_CASE("Without a burst each request waits for whole milliseconds of the server clock",
          "[ratelimit]") {
  // Nothing may run ahead of the clock, so a request passes at the first millisecond at or after
  // the TAT and the schedule restarts there: one request every ceil(333.33) = 334 ms.
  Limiter lim{make(1000, 3, 0), std::nullopt};
  int64_t admitted = 0;
  for (int64_t now = 0; now < 3'600'000; ++now) {
    admitted += lim.at(now).allowed ? 1 : 0;
  }
  CHECK(admitted == 3'600'000 / 334 + 1);
}

TEST_CASE("A clock that steps back never admits more and never gives a negative wait",
          "[ratelimit]") {
  Limiter lim{make(10000, 2, 0), std::nullopt};
  const int64_t t0 = 1'700'000'000'000;
  REQUIRE(lim.at(t0).allowed);
  SECTION("the wait is extended by the step and ends when the clock catches up") {
    gcra::Decision d = lim.at(t0 - 3000);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after_ns == 8000 * kMs);
    CHECK(d.reset_after_ns == 8000 * kMs);  // beyond the 5 s tolerance while the clock is behind
    d = lim.at(t0 - 3000, 0);
    CHECK_FALSE(d.allowed);  // even a peek is refused: the schedule is too far ahead of now
    CHECK(d.retry_after_ns == 3000 * kMs);
    for (int64_t now = t0 - 3000; now < t0 + 5000; now += 7) {
      d = lim.at(now);
      CHECK_FALSE(d.allowed);
      CHECK(d.retry_after_ns > 0);
      CHECK(d.reset_after_ns > 0);
    }
    CHECK(lim.at(t0 + 5000).allowed);
  }
  SECTION("a step back and forth again changes nothing") {
    CHECK_FALSE(lim.at(t0 - 60000).allowed);
    gcra::Decision d = lim.at(t0);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after_ns == 5000 * kMs);
  }
}

TEST_CASE("A new TAT beyond int64 nanoseconds is an overflow", "[ratelimit]") {
  gcra::Limit l = make(9'000'000'000'000, 1, 0);  // 285 years: fits, but not added to now
  gcra::Decision d;
  CHECK(gcra::decide(l, std::nullopt, 1'700'000'000'000 * kMs, 1, d) == gcra::Error::kOverflow);
  CHECK(gcra::decide(l, std::nullopt, 0, 1, d) == gcra::Error::kNone);
  CHECK(gcra::decide(make(1000, 1, 0), std::nullopt, 0, INT64_MAX, d) == gcra::Error::kOverflow);
  CHECK(gcra::decide(make(1000, 1, 0), INT64_MAX - 10, 0, 1, d) == gcra::Error::kOverflow);
  CHECK(gcra::decide(make(1000, 1, 0), std::nullopt, 0, -1, d) == gcra::Error::kBadArgument);
}

TEST_CASE("Milliseconds round up and redis-cell seconds drop sub-millisecond remainders",
          "[ratelimit]") {
  CHECK(gcra::ceil_millis(0) == 0);
  CHECK(gcra::ceil_millis(1) == 1);
  CHECK(gcra::ceil_millis(kMs) == 1);
  CHECK(gcra::ceil_millis(kMs + 1) == 2);
  CHECK(gcra::ceil_millis(-1) == 0);
  CHECK(gcra::ceil_millis(-kMs - 1) == -1);
  CHECK(gcra::ceil_millis(INT64_MAX) == INT64_MAX / kMs + 1);
  CHECK(gcra::redis_cell_seconds(-1) == -1);
  CHECK(gcra::redis_cell_seconds(0) == 0);
  CHECK(gcra::redis_cell_seconds(4000) == 0);
  CHECK(gcra::redis_cell_seconds(999'999) == 0);
  CHECK(gcra::redis_cell_seconds(kMs) == 1);
  CHECK(gcra::redis_cell_seconds(2'000'000'000) == 2);
  CHECK(gcra::redis_cell_seconds(2'000'999'999) == 2);
  CHECK(gcra::redis_cell_seconds(2'001'000'000) == 3);
  CHECK(gcra::redis_cell_seconds(3'900'000'000) == 4);
}
