#include "hotkv/shard/watch.hpp"

#include <algorithm>

namespace hotkv {

namespace {
// Registrations between sweeps for watchers that went away without their key changing; keeps
// the map proportional to the live watches at an amortised O(1) per WATCH.
constexpr size_t kPruneEvery = 1024;
}  // namespace

void WatchRegistry::add(std::string_view key, const std::shared_ptr<WatchFlag>& flag) {
  std::lock_guard lock(mutex_);
  if (++adds_since_prune_ >= kPruneEvery) {
    prune_locked();
  }
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    it = keys_.emplace(std::string(key), std::vector<std::weak_ptr<WatchFlag>>{}).first;
  }
  for (const auto& w : it->second) {
    if (w.lock() == flag) {
      return;  // WATCH k k, or WATCH k twice: one registration
    }
  }
  it->second.push_back(flag);
  watched_.store(keys_.size(), std::memory_order_release);
}

void WatchRegistry::touch_slow(std::string_view key) {
  std::lock_guard lock(mutex_);
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    return;
  }
  for (const auto& w : it->second) {
    if (auto f = w.lock()) {
      f->dirty.store(true, std::memory_order_release);
    }
  }
  keys_.erase(it);
  watched_.store(keys_.size(), std::memory_order_release);
}

void WatchRegistry::prune_locked() {
  adds_since_prune_ = 0;
  for (auto it = keys_.begin(); it != keys_.end();) {
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [](const std::weak_ptr<WatchFlag>& w) {
                             auto f = w.lock();
                             return !f || f->dirty.load(std::memory_order_relaxed);
                           }),
            v.end());
    it = v.empty() ? keys_.erase(it) : std::next(it);
  }
  watched_.store(keys_.size(), std::memory_order_release);
}

}  // namespace hotkv
