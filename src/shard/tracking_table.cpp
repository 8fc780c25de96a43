// The per-shard table of tracked keys (see tracking_table.hpp).
#include "hotkv/shard/tracking_table.hpp"

#include <algorithm>

namespace hotkv {

bool TrackingTable::remember(std::string_view key, uint64_t client) {
  auto it = keys_.find(key);
  bool fresh = it == keys_.end();
  if (fresh) {
    it = keys_.emplace(std::string(key), std::vector<uint64_t>{}).first;
    key_count_.fetch_add(1, std::memory_order_relaxed);
  }
  std::vector<uint64_t>& clients = it->second;
  if (std::find(clients.begin(), clients.end(), client) == clients.end()) {
    clients.push_back(client);
    item_count_.fetch_add(1, std::memory_order_relaxed);
  }
  return fresh;
}

std::vector<uint64_t> TrackingTable::take(std::string_view key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    return {};
  }
  std::vector<uint64_t> clients = std::move(it->second);
  keys_.erase(it);
  drop_counts(clients.size());
  return clients;
}

bool TrackingTable::take_any(std::string& key, std::vector<uint64_t>& clients) {
  auto it = keys_.begin();
  if (it == keys_.end()) {
    return false;
  }
  key = it->first;
  clients = std::move(it->second);
  keys_.erase(it);
  drop_counts(clients.size());
  return true;
}

void TrackingTable::clear() {
  keys_.clear();
  key_count_.store(0, std::memory_order_relaxed);
  item_count_.store(0, std::memory_order_relaxed);
}

void TrackingTable::drop_counts(size_t clients) {
  key_count_.fetch_sub(1, std::memory_order_relaxed);
  item_count_.fetch_sub(clients, std::memory_order_relaxed);
}

bool prefixes_overlap(std::string_view a, std::string_view b) {
  return a.starts_with(b) || b.starts_with(a);
}

}  // namespace hotkv
