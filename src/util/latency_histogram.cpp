// Power-of-two latency buckets (see latency_histogram.hpp).
#include "hotkv/util/latency_histogram.hpp"

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

}  // namespace hotkv
