// Per-shard registry of blocked clients (see blocking.hpp).
#include "hotkv/shard/blocking.hpp"

#include <algorithm>
#include <unordered_set>

namespace hotkv {

void BlockingRegistry::add(const std::shared_ptr<BlockedClient>& c) {
  for (const std::string& k : c->keys) {
    auto& list = by_key_[k];
    // A command naming the same key twice waits on it once.
    if (list.empty() || list.back() != c) {
      list.push_back(c);
    }
  }
}

void BlockingRegistry::prune(std::string_view key) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    return;
  }
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [](const std::shared_ptr<BlockedClient>& c) { return c->finished(); }),
             list.end());
  if (list.empty()) {
    by_key_.erase(it);
  }
}

void BlockingRegistry::remove(const BlockedClient& c) {
  for (const std::string& k : c.keys) {
    auto it = by_key_.find(k);
    if (it == by_key_.end()) {
      continue;
    }
    auto& list = it->second;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const std::shared_ptr<BlockedClient>& p) { return p.get() == &c; }),
               list.end());
    if (list.empty()) {
      by_key_.erase(it);
    }
  }
}

bool BlockingRegistry::signal(std::string_view key) {
  if (by_key_.find(key) == by_key_.end()) {
    return false;
  }
  if (std::find(ready_.begin(), ready_.end(), key) == ready_.end()) {
    ready_.emplace_back(key);
  }
  return true;
}

bool BlockingRegistry::signal_all() {
  bool any = false;
  for (const auto& kv : by_key_) {
    any = signal(kv.first) || any;
  }
  return any;
}

std::vector<std::string> BlockingRegistry::take_ready() {
  std::vector<std::string> out;
  out.swap(ready_);
  return out;
}

std::deque<std::shared_ptr<BlockedClient>>* BlockingRegistry::waiters(std::string_view key) {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &it->second;
}

std::vector<std::shared_ptr<BlockedClient>> BlockingRegistry::all() const {
  std::unordered_set<BlockedClient*> seen;
  std::vector<std::shared_ptr<BlockedClient>> out;
  for (const auto& kv : by_key_) {
    for (const auto& c : kv.second) {
      if (seen.insert(c.get()).second) {
        out.push_back(c);
      }
    }
  }
  return out;
}

size_t BlockingRegistry::blocked_count() const {
  std::unordered_set<const BlockedClient*> seen;
  for (const auto& kv : by_key_) {
    for (const auto& c : kv.second) {
      if (!c->finished()) {
        seen.insert(c.get());
      }
    }
  }
  return seen.size();
}

}  // namespace hotkv
