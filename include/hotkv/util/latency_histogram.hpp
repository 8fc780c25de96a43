// A command's latency distribution, for LATENCY HISTOGRAM: how many calls took at most 1 us,
// 2 us, 4 us ... up to 2^20 us (about a second), counted per bucket. Redis reports the same
// shape (cumulative counts at power-of-two bounds in microseconds); it keeps an HDR histogram
// per command, a fixed array of counters is all that reply needs.
//
// Each shard keeps its own histograms (written by the thread running the command, or by a
// coordinator while the owner is parked); readers on other threads sum them with relaxed
// loads, so a reading may lag a call that is finishing at that moment.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hotkv {

class LatencyHistogram {
 public:
  // Bucket k holds the calls of more than 2^(k-1) and at most 2^k microseconds (bucket 0: at
  // most 1 us); the last bucket also holds every longer call.
  static constexpr size_t kBuckets = 21;
  static constexpr uint64_t bucket_bound_usec(size_t k) { return uint64_t{1} << k; }
  static size_t bucket_of(uint64_t usec);

  // Writer: the thread running the command.
  void record(uint64_t usec);
  // Any thread (CONFIG RESETSTAT); racing calls may survive the reset.
  void reset();
  uint64_t count(size_t bucket) const { return counts_[bucket].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
};

// Several histograms (one command's, summed over the shards) as LATENCY HISTOGRAM answers:
// the total number of calls, and (bound in us, calls that took at most that long) for each
// bucket where the cumulative count grows.
struct LatencySummary {
  uint64_t calls = 0;
  std::vector<std::pair<uint64_t, uint64_t>> cumulative;
};
class LatencySum {
 public:
  void add(const LatencyHistogram& h);
  LatencySummary summary() const;
  // The latency (us) under which `p` percent of the calls finished, for INFO latencystats:
  // the calls of a bucket are taken as spread evenly over it, so the figure is an estimate
  // inside the bucket's factor-of-two range. 0 without calls.
  double percentile(double p) const;

 private:
  std::array<uint64_t, LatencyHistogram::kBuckets> counts_{};
};

}  // namespace hotkv
