#include "hotkv/shard/watch.hpp"

#include <algorithm>

namespace hotkv {

namespace {
// Registrations between sweeps for watchers that went away without their key changing; keeps
// the map proportional to the live watches at an amortised O(1) per WATCH.
constexpr size_t kPruneEvery = 1024;
}  // namespace

void WatchRegistry::add(uint32_t db, std::string_view key, const std::shared_ptr<WatchFlag>& flag) {
  std::lock_guard lock(mutex_);
  if (++adds_since_prune_ >= kPruneEvery) {
    prune_locked();
  }
  if (db >= dbs_.size()) {
    dbs_.resize(db + 1);
  }
  KeyMap& keys = dbs_[db];
  auto it = keys.find(key);
  if (it == keys.end()) {
    it = keys.emplace(std::string(key), std::vector<std::weak_ptr<WatchFlag>>{}).first;
  }
  for (const auto& w : it->second) {
    if (w.lock() == flag) {
      return;  // WATCH k k, or WATCH k twice: one registration
    }
  }
  it->second.push_back(flag);
  publish_count_locked();
}

void WatchRegistry::publish_count_locked() {
  size_t n = 0;
  for (const auto& keys : dbs_) {
    n += keys.size();
  }
  watched_.store(n, std::memory_order_release);
}

void WatchRegistry::touch_slow(uint32_t db, std::string_view key) {
  std::lock_guard lock(mutex_);
  if (db >= dbs_.size()) {
    return;
  }
  KeyMap& keys = dbs_[db];
  auto it = keys.find(key);
  if (it == keys.end()) {
    return;
  }
  for (const auto& w : it->second) {
    if (auto f = w.lock()) {
      f->dirty.store(true, std::memory_order_release);
    }
  }
  keys.erase(it);
  publish_count_locked();
}

void WatchRegistry::prune_locked() {
  adds_since_prune_ = 0;
  for (KeyMap& keys : dbs_) {
    prune_map(keys);
  }
  publish_count_locked();
}

void WatchRegistry::prune_map(KeyMap& keys) {
  for (auto it = keys.begin(); it != keys.end();) {
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [](const std::weak_ptr<WatchFlag>& w) {
                             auto f = w.lock();
                             return !f || f->dirty.load(std::memory_order_relaxed);
                           }),
            v.end());
    it = v.empty() ? keys.erase(it) : std::next(it);
  }
}

}  // namespace hotkv
