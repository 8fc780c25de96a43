// Per-shard registry of blocked clients (see blocking.hpp).
#include "hotkv/shard/blocking.hpp"

#include <algorithm>
#include <unordered_set>

namespace hotkv {

void BlockingRegistry::add(const std::shared_ptr<BlockedClient>& c) {
  if (c->db >= by_db_.size()) {
    by_db_.resize(c->db + 1);
  }
  KeyMap& keys = by_db_[c->db];
  for (const std::string& k : c->keys) {
    auto [it, created] = keys.try_emplace(k);
    waiting_keys_ += created ? 1 : 0;
    auto& list = it->second;
    // A command naming the same key twice waits on it once.
    if (list.empty() || list.back() != c) {
      list.push_back(c);
    }
  }
}

void BlockingRegistry::erase_key(KeyMap& keys, KeyMap::iterator it) {
  keys.erase(it);
  --waiting_keys_;
}

void BlockingRegistry::prune(uint32_t db, std::string_view key) {
  KeyMap* keys = map_of(db);
  if (keys == nullptr) {
    return;
  }
  auto it = keys->find(key);
  if (it == keys->end()) {
    return;
  }
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [](const std::shared_ptr<BlockedClient>& c) { return c->finished(); }),
             list.end());
  if (list.empty()) {
    erase_key(*keys, it);
  }
}

void BlockingRegistry::remove(const BlockedClient& c) {
  KeyMap* keys = map_of(c.db);
  if (keys == nullptr) {
    return;
  }
  for (const std::string& k : c.keys) {
    auto it = keys->find(k);
    if (it == keys->end()) {
      continue;
    }
    auto& list = it->second;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const std::shared_ptr<BlockedClient>& p) { return p.get() == &c; }),
               list.end());
    if (list.empty()) {
      erase_key(*keys, it);
    }
  }
}

bool BlockingRegistry::signal(uint32_t db, std::string_view key) {
  KeyMap* keys = map_of(db);
  if (keys == nullptr || keys->find(key) == keys->end()) {
    return false;
  }
  bool queued = std::any_of(ready_.begin(), ready_.end(),
                            [&](const ReadyKey& r) { return r.db == db && r.key == key; });
  if (!queued) {
    ready_.push_back(ReadyKey{db, std::string(key)});
  }
  return true;
}

bool BlockingRegistry::signal_db(uint32_t db) {
  KeyMap* keys = map_of(db);
  if (keys == nullptr) {
    return false;
  }
  bool any = false;
  for (const auto& kv : *keys) {
    any = signal(db, kv.first) || any;
  }
  return any;
}

bool BlockingRegistry::signal_all() {
  bool any = false;
  for (size_t db = 0; db < by_db_.size(); ++db) {
    any = signal_db(static_cast<uint32_t>(db)) || any;
  }
  return any;
}

std::vector<BlockingRegistry::ReadyKey> BlockingRegistry::take_ready() {
  std::vector<ReadyKey> out;
  out.swap(ready_);
  return out;
}

std::deque<std::shared_ptr<BlockedClient>>* BlockingRegistry::waiters(uint32_t db,
                                                                      std::string_view key) {
  KeyMap* keys = map_of(db);
  if (keys == nullptr) {
    return nullptr;
  }
  auto it = keys->find(key);
  return it == keys->end() ? nullptr : &it->second;
}

std::vector<std::shared_ptr<BlockedClient>> BlockingRegistry::all() const {
  std::unordered_set<BlockedClient*> seen;
  std::vector<std::shared_ptr<BlockedClient>> out;
  for (const KeyMap& keys : by_db_) {
    for (const auto& kv : keys) {
      for (const auto& c : kv.second) {
        if (seen.insert(c.get()).second) {
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

size_t BlockingRegistry::blocked_count() const {
  std::unordered_set<const BlockedClient*> seen;
  for (const KeyMap& keys : by_db_) {
    for (const auto& kv : keys) {
      for (const auto& c : kv.second) {
        if (!c->finished()) {
          seen.insert(c.get());
        }
      }
    }
  }
  return seen.size();
}

}  // namespace hotkv
