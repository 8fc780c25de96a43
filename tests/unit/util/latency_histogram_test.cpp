// Unit tests for the per-command latency histogram: power-of-two bucket bounds, the last
// bucket catching every longer call, and the cumulative summary LATENCY HISTOGRAM replies.
#include "hotkv/util/latency_histogram.hpp"

#include <catch2/catch.hpp>

using namespace hotkv;

TEST_CASE("Latency buckets are bounded by powers of two microseconds", "[latency]") {
  CHECK(LatencyHistogram::bucket_of(0) == 0);
  CHECK(LatencyHistogram::bucket_of(1) == 0);
  CHECK(LatencyHistogram::bucket_of(2) == 1);
  CHECK(LatencyHistogram::bucket_of(3) == 2);
  CHECK(LatencyHistogram::bucket_of(4) == 2);
  CHECK(LatencyHistogram::bucket_of(5) == 3);
  CHECK(LatencyHistogram::bucket_of(1024) == 10);
  CHECK(LatencyHistogram::bucket_of(1025) == 11);
  SECTION("calls longer than the last bound land in the last bucket") {
    CHECK(LatencyHistogram::bucket_of(uint64_t{1} << 20) == LatencyHistogram::kBuckets - 1);
    CHECK(LatencyHistogram::bucket_of(uint64_t{5} << 30) == LatencyHistogram::kBuckets - 1);
  }
}

TEST_CASE("A latency summary is cumulative and skips empty buckets", "[latency]") {
  LatencyHistogram a;
  LatencyHistogram b;
  a.record(1);
  a.record(3);
  b.record(4);
  b.record(100);
  LatencySum sum;
  sum.add(a);
  sum.add(b);
  LatencySummary s = sum.summary();
  CHECK(s.calls == 4);
  REQUIRE(s.cumulative.size() == 3);
  CHECK(s.cumulative[0] == std::make_pair(uint64_t{1}, uint64_t{1}));
  CHECK(s.cumulative[1] == std::make_pair(uint64_t{4}, uint64_t{3}));
  CHECK(s.cumulative[2] == std::make_pair(uint64_t{128}, uint64_t{4}));
  SECTION("reset empties a histogram") {
    a.reset();
    LatencySum only_a;
    only_a.add(a);
    CHECK(only_a.summary().calls == 0);
    CHECK(only_a.summary().cumulative.empty());
  }
}

TEST_CASE("Latency percentiles interpolate inside the bucket that holds them", "[latency]") {
  LatencySum empty;
  CHECK(empty.percentile(50) == 0);
  LatencyHistogram h;
  for (int i = 0; i < 100; ++i) {
    h.record(3);  // bucket (2, 4]
  }
  LatencySum one;
  one.add(h);
  CHECK(one.percentile(50) == Approx(3.0));
  CHECK(one.percentile(100) == Approx(4.0));
  CHECK(one.percentile(0) == Approx(2.0));
  h.record(1000);  // bucket (512, 1024]: only the top percentile reaches it
  LatencySum two;
  two.add(h);
  CHECK(two.percentile(99) < 4.0);
  CHECK(two.percentile(99.9) > 512.0);
  CHECK(two.percentile(99.9) <= 1024.0);
  CHECK(two.percentile(250) == two.percentile(100));
}
