// Power-of-two latency buckets (see latency_histogram.hpp).
#include "hotkv/util/latency_histogram.hpp"

#include <algorithm>
#include <bit>

namespace hotkv {

size_t LatencyHistogram::bucket_of(uint64_t usec) {
  if (usec <= 1) {
    return 0;
  }
  // The smallest k with usec <= 2^k: the bit width of usec - 1.
  auto k = static_cast<size_t>(std::bit_width(usec - 1));
  return k < kBuckets ? k : kBuckets - 1;
}

void LatencyHistogram::record(uint64_t usec) {
  std::atomic<uint64_t>& c = counts_[bucket_of(usec)];
  // One writer at a time (see the header): a load and a store, no locked instruction.
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void LatencyHistogram::reset() {
  for (auto& c : counts_) {
    c.store(0, std::memory_order_relaxed);
  }
}

void LatencySum::add(const LatencyHistogram& h) {
  for (size_t k = 0; k < LatencyHistogram::kBuckets; ++k) {
    counts_[k] += h.count(k);
  }
}

LatencySummary LatencySum::summary() const {
  LatencySummary out;
  for (size_t k = 0; k < LatencyHistogram::kBuckets; ++k) {
    if (counts_[k] == 0) {
      continue;
    }
    out.calls += counts_[k];
    out.cumulative.emplace_back(LatencyHistogram::bucket_bound_usec(k), out.calls);
  }
  return out;
}

double LatencySum::percentile(double p) const {
  uint64_t calls = 0;
  for (uint64_t c : counts_) {
    calls += c;
  }
  if (calls == 0) {
    return 0;
  }
  double target = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(calls);
  double below = 0;
  for (size_t k = 0; k < LatencyHistogram::kBuckets; ++k) {
    if (counts_[k] == 0) {
      continue;
    }
    auto in_bucket = static_cast<double>(counts_[k]);
    if (below + in_bucket >= target) {
      double low = k == 0 ? 0.0 : static_cast<double>(LatencyHistogram::bucket_bound_usec(k - 1));
      double high = static_cast<double>(LatencyHistogram::bucket_bound_usec(k));
      return low + (high - low) * std::max(target - below, 0.0) / in_bucket;
    }
    below += in_bucket;
  }
  return static_cast<double>(LatencyHistogram::bucket_bound_usec(LatencyHistogram::kBuckets - 1));
}

}  // namespace hotkv
