// WATCH: which clients watch which keys of one shard. A write that changes a watched key (any
// change announced through Engine::notify_keyspace_event, expiry included) or a flush marks the
// watchers' flags dirty, and their EXEC then answers null. The registry is touched by the
// shard's own thread on every write, but registered into by WATCH from the client's thread,
// hence the mutex; with nothing watched (the normal case) a write costs one atomic load.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hotkv {

// One client's WATCH state: dirty once any key it watches has changed. Shared by the client
// (which owns it) and the registries of the shards of its keys (which only hold weak pointers,
// so UNWATCH, EXEC and a disconnect just drop it).
struct WatchFlag {
  std::atomic<bool> dirty{false};
};

class WatchRegistry {
 public:
  // Keys are watched in a database (the watcher's SELECT at WATCH time).
  void add(uint32_t db, std::string_view key, const std::shared_ptr<WatchFlag>& flag);
  // Marks every watcher of `key` in `db` dirty and forgets them (a dirty flag stays dirty).
  void touch(uint32_t db, std::string_view key) {
    if (watched_.load(std::memory_order_acquire) != 0) {
      touch_slow(db, key);
    }
  }
  // FLUSHALL/FLUSHDB/SWAPDB, before the keys go: every watcher of a key of `db` for which
  // existed(key) is true (as Redis, a flush does not touch a watched key that was not there);
  // the others stay registered.
  template <class F>
  void touch_existing(uint32_t db, F&& existed) {
    if (watched_.load(std::memory_order_acquire) == 0) {
      return;
    }
    std::lock_guard lock(mutex_);
    if (db >= dbs_.size()) {
      return;
    }
    auto& keys = dbs_[db];
    for (auto it = keys.begin(); it != keys.end();) {
      if (!existed(std::string_view(it->first))) {
        ++it;
        continue;
      }
      for (const auto& w : it->second) {
        if (auto f = w.lock()) {
          f->dirty.store(true, std::memory_order_release);
        }
      }
      it = keys.erase(it);
    }
    publish_count_locked();
  }
  // Keys with at least one registration (possibly of a client that has gone since).
  size_t watched_keys() const { return watched_.load(std::memory_order_acquire); }

 private:
  void touch_slow(uint32_t db, std::string_view key);
  void prune_locked();
  void publish_count_locked();

  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mutex_;
  using KeyMap =
      std::unordered_map<std::string, std::vector<std::weak_ptr<WatchFlag>>, Hash, std::equal_to<>>;
  void prune_map(KeyMap& keys);
  std::vector<KeyMap> dbs_;  // by database index, grown on first WATCH there
  std::atomic<size_t> watched_{0};
  size_t adds_since_prune_ = 0;
};

}  // namespace hotkv
