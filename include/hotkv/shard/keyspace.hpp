// One shard's slice of the keyspace: the key table, expiry deadlines and the timing wheel that
// removes keys actively. Only the owning shard's thread touches it (or a coordinator while that
// thread is parked, see engine.hpp), so nothing here locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hotkv/ttl/timing_wheel.hpp"
#include "hotkv/types/dict.hpp"
#include "hotkv/types/value.hpp"

namespace hotkv {

// Counters read by INFO from any thread; written only by the owner (relaxed, no RMW needed).
struct KeyspaceStats {
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> expired{0};
  std::atomic<uint64_t> keys{0};
  std::atomic<uint64_t> expires{0};
  std::atomic<uint64_t> backlog{0};

  static void bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

// The hold traffic of this keyspace's inventory items since start, for INFO's inventory
// section. Written by the thread running the command (the owner, or a coordinator while the
// owner is parked), read by INFO on any thread; replayed effects are not counted.
struct InventoryStats {
  std::atomic<uint64_t> holds_reserved{0};
  std::atomic<uint64_t> units_reserved{0};
  std::atomic<uint64_t> holds_committed{0};
  std::atomic<uint64_t> units_sold{0};
  std::atomic<uint64_t> holds_released{0};
  std::atomic<uint64_t> holds_expired{0};
  std::atomic<uint64_t> rejected_soldout{0};
  std::atomic<uint64_t> rejected_ownerlimit{0};
  std::atomic<uint64_t> rejected_holdexists{0};
  // SOLDOUT answers given by the client's own thread for an item another shard keeps (also
  // counted in rejected_soldout).
  std::atomic<uint64_t> soldout_answered_here{0};

  void reset() {  // CONFIG RESETSTAT
    for (auto* c : {&holds_reserved, &units_reserved, &holds_committed, &units_sold,
                    &holds_released, &holds_expired, &rejected_soldout, &rejected_ownerlimit,
                    &rejected_holdexists, &soldout_answered_here}) {
      c->store(0, std::memory_order_relaxed);
    }
  }
};

// The key table: two keys per bucket before it doubles, as the bucket array is a fixed cost of
// every key (docs/architecture.md, "Memory per key"); the bucket filter keeps absent-key lookups
// from walking the longer chains.
using KeyTable = Dict<Value, 2>;

class Keyspace {
 public:
  // `db`: the database this keyspace is (SELECT's index).
  Keyspace(int64_t now_ms, uint32_t db);

  uint32_t db() const { return db_; }
  // SWAPDB: the keys, their deadlines and holds trade places with `other`'s. The keyspace
  // objects stay where they are, so INFO on another thread never sees one replaced.
  void swap_contents(Keyspace& other);

  // Lookup for reading: a missing or expired key is a miss (and an expired one is deleted).
  // A found key's access clock is updated (touch).
  Value* find_read(std::string_view key, int64_t now_ms);
  // Lookup for writing: like find_read but does not count hits or misses.
  Value* find(std::string_view key, int64_t now_ms);
  // Like find_read but leaves the access clock alone: OBJECT, TYPE, EXISTS and the TTL family
  // inspect a key without counting as an access, as in Redis.
  Value* peek(std::string_view key, int64_t now_ms);

  // Records an access to v at now_ms in its access clock (util/access_clock.hpp), by the
  // maxmemory-policy in force: the LRU seconds, or the LFU counter and its minute stamp.
  static void touch(Value& v, int64_t now_ms);

  // Inserts or replaces the value under key; the deadline of the new value (kNoExpiry or an
  // absolute unix ms) is taken from `value`, and so is its access clock if it has one (RENAME,
  // MOVE and RESTORE ... IDLETIME keep or set it); a new object's clock starts now.
  Value& put(std::string_view key, Value value);

  // Sets or clears (kNoExpiry) a key's deadline, keeping the expires count and wheel in step.
  void set_expire(std::string_view key, Value& v, int64_t at_ms);

  bool erase(std::string_view key);
  void clear();

  size_t size() const { return dict_.size(); }
  size_t expires_count() const { return expires_; }
  KeyTable& dict() { return dict_; }

  // Deletes keys whose deadline passed, at most max_items; returns how many were deleted.
  size_t expire_due(int64_t now_ms, size_t max_items);
  size_t expiry_backlog(int64_t now_ms) const { return wheel_.due_backlog(now_ms); }
  std::optional<int64_t> next_deadline_hint() const { return wheel_.next_deadline_hint(); }

  // Inventory holds (types/inventory.hpp) have deadlines of their own inside an item: a hold
  // expires, and a settled hold's record is purged, without the key expiring. They live in a
  // second wheel whose entries name (item key, hold id). Cancellation is lazy, as for keys:
  // whoever handles a fired entry checks the hold's current state and deadline (a deleted,
  // replaced or renamed item, or an extended hold, leaves stale entries that are ignored).
  // Schedules one entry and arms the owner's timer through the schedule hook.
  void schedule_hold(std::string_view key, std::string_view hold_id, int64_t at_ms);
  // Fires hold entries whose deadline <= now_ms, at most max_items, calling
  // fn(std::string_view key, std::string_view hold_id) in deadline order; returns how many
  // fired. fn may schedule new entries but must not clear the keyspace.
  template <class F>
  size_t advance_holds(int64_t now_ms, size_t max_items, F&& fn);
  size_t hold_backlog(int64_t now_ms) const { return holds_wheel_.due_backlog(now_ms); }
  size_t hold_entries() const { return holds_wheel_.size(); }
  std::optional<int64_t> next_hold_deadline_hint() const {
    return holds_wheel_.next_deadline_hint();
  }

  // Called with every newly scheduled deadline so the owner can arm its timer.
  void set_schedule_hook(std::function<void(int64_t)> hook) { on_schedule_ = std::move(hook); }
  // Called with the database and every key deleted because its deadline passed (keyspace
  // notifications).
  void set_expired_hook(std::function<void(uint32_t, std::string_view)> hook) {
    on_expired_ = std::move(hook);
  }
  // Called with the database and every key put() creates (not replaces): Redis's "new"
  // keyspace event.
  void set_created_hook(std::function<void(uint32_t, std::string_view)> hook) {
    on_created_ = std::move(hook);
  }

  KeyspaceStats& stats() { return stats_; }
  const KeyspaceStats& stats() const { return stats_; }
  InventoryStats& inventory_stats() { return inventory_stats_; }
  const InventoryStats& inventory_stats() const { return inventory_stats_; }

 private:
  void erase_expired(std::string_view key);
  Value* find_untouched(std::string_view key, int64_t now_ms);
  void publish_sizes() {
    stats_.keys.store(dict_.size(), std::memory_order_relaxed);
    stats_.expires.store(expires_, std::memory_order_relaxed);
  }

  // Schedules the pending deadlines of an inventory item stored under key (put: RENAME and
  // COPY bring an item's holds to a new key name).
  void schedule_item(std::string_view key, const Value& v);

  KeyTable dict_;
  TimingWheel wheel_;
  TimingWheel holds_wheel_;
  size_t expires_ = 0;
  KeyspaceStats stats_;
  InventoryStats inventory_stats_;
  std::function<void(int64_t)> on_schedule_;
  std::function<void(uint32_t, std::string_view)> on_expired_;
  std::function<void(uint32_t, std::string_view)> on_created_;
  uint32_t db_;
};

// A hold entry's wheel key: the item key's length (4 bytes, little-endian), the item key, then
// the hold id, so any bytes may appear in either.
template <class F>
size_t Keyspace::advance_holds(int64_t now_ms, size_t max_items, F&& fn) {
  return holds_wheel_.advance(now_ms, max_items, [&](std::string_view entry, int64_t) {
    if (entry.size() < 4) {
      return;
    }
    uint32_t len = 0;
    for (int i = 3; i >= 0; --i) {
      len = (len << 8) | static_cast<unsigned char>(entry[static_cast<size_t>(i)]);
    }
    if (entry.size() - 4 < len) {
      return;
    }
    fn(entry.substr(4, len), entry.substr(4 + len));
  });
}

}  // namespace hotkv
