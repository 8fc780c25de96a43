// Client-side caching, default mode: which clients may hold which keys of one shard in their
// cache. A read-only command of a tracking client remembers its keys here; the first change
// of a key takes its whole entry (every client is told once, then forgotten until it reads the
// key again), as Redis's tracking table does. Keys are remembered by name alone, whatever the
// database, also as in Redis.
//
// Owner thread only (or a coordinator while the shard is parked), except keys() and items(),
// which INFO and the table-size limit read from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hotkv {

class TrackingTable {
 public:
  // Remembers that `client` may cache `key`. Returns true if the key was not tracked before.
  bool remember(std::string_view key, uint64_t client);
  // Forgets `key` and returns the clients that may cache it (empty when untracked).
  std::vector<uint64_t> take(std::string_view key);
  // Forgets one key, any, for the table-size limit: false when the table is empty.
  bool take_any(std::string& key, std::vector<uint64_t>& clients);
  // Calls fn(key) for every tracked key and takes those for which it returns true, calling
  // out(key, clients) for each (SWAPDB: the keys present in either database).
  template <class Pred, class Out>
  void take_if(Pred&& pred, Out&& out) {
    for (auto it = keys_.begin(); it != keys_.end();) {
      if (!pred(std::string_view(it->first))) {
        ++it;
        continue;
      }
      out(std::string_view(it->first), it->second);
      drop_counts(it->second.size());
      it = keys_.erase(it);
    }
  }
  // Forgets everything (FLUSHALL/FLUSHDB: every tracking client is told with one message).
  void clear();
  bool empty() const { return keys_.empty(); }
  // Tracked keys, and (key, client) pairs. Any thread.
  size_t keys() const { return key_count_.load(std::memory_order_relaxed); }
  size_t items() const { return item_count_.load(std::memory_order_relaxed); }

 private:
  void drop_counts(size_t clients);
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // A key is read by one or a few clients in the common case: a vector beats a set.
  std::unordered_map<std::string, std::vector<uint64_t>, Hash, std::equal_to<>> keys_;
  std::atomic<size_t> key_count_{0};
  std::atomic<size_t> item_count_{0};
};

// BCAST prefixes: true when a key could match both (one is a prefix of the other), which Redis
// refuses for the prefixes of one client ("Prefix 'a' overlaps with ...").
bool prefixes_overlap(std::string_view a, std::string_view b);

}  // namespace hotkv
