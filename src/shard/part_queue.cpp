// A shard's queue of parts of multi-shard operations (see part_queue.hpp).
#include "hotkv/shard/part_queue.hpp"

namespace hotkv {

void PartQueue::push(Part part) {
  std::lock_guard<std::mutex> g(mu_);
  parts_.push_back(std::move(part));
  pending_.fetch_add(1, std::memory_order_release);
}

void PartQueue::take(std::vector<Part>& out) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t limit = limit_.load(std::memory_order_acquire);
  while (!parts_.empty() && parts_.front().order < limit) {
    out.push_back(std::move(parts_.front()));
    parts_.pop_front();
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace hotkv
