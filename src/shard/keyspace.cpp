// Keyspace lookups with lazy expiry plus the active expiry driven by the timing wheel.
#include "hotkv/shard/keyspace.hpp"

#include <array>

#include "hotkv/types/inventory.hpp"
#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {

Keyspace::Keyspace(int64_t now_ms, uint32_t db) : wheel_(now_ms), holds_wheel_(now_ms), db_(db) {}

namespace {

// The clock's random draws for LFU increments: per thread, as each shard thread touches only
// its own keys; a cheap generator is enough for a probability.
double lfu_draw() {
  thread_local uint64_t state = 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(mono_us());
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<double>(state >> 11) * 0x1.0p-53;
}

}  // namespace

void Keyspace::touch(Value& v, int64_t now_ms) {
  if (access_clock_frozen) {
    return;
  }
  const AccessClockSettings& s = access_clock_settings();
  if (s.lfu.load(std::memory_order_relaxed)) {
    v.set_access_clock(lfu_accessed(v.access_clock(), now_ms,
                                    s.lfu_log_factor.load(std::memory_order_relaxed),
                                    s.lfu_decay_time.load(std::memory_order_relaxed), lfu_draw()));
  } else {
    v.set_access_clock(lru_clock(now_ms));
  }
}

Value* Keyspace::find_untouched(std::string_view key, int64_t now_ms) {
  Value* v = dict_.find(key);
  if (v == nullptr) {
    return nullptr;
  }
  if (v->has_expiry() && v->expire_at_ms() <= now_ms) {
    erase_expired(key);
    return nullptr;
  }
  return v;
}

Value* Keyspace::find(std::string_view key, int64_t now_ms) {
  Value* v = find_untouched(key, now_ms);
  if (v != nullptr) {
    touch(*v, now_ms);
  }
  return v;
}

Value* Keyspace::find_read(std::string_view key, int64_t now_ms) {
  Value* v = find(key, now_ms);
  KeyspaceStats::bump(v != nullptr ? stats_.hits : stats_.misses);
  return v;
}

Value* Keyspace::peek(std::string_view key, int64_t now_ms) {
  Value* v = find_untouched(key, now_ms);
  KeyspaceStats::bump(v != nullptr ? stats_.hits : stats_.misses);
  return v;
}

Value& Keyspace::put(std::string_view key, Value value) {
  int64_t deadline = value.expire_at_ms();
  value.set_expire_raw(kNoExpiry);
  if (!value.has_access_clock()) {
    // The precise clock, as the command's own time that OBJECT IDLETIME reads: the coarse one
    // runs a few milliseconds behind, so a key made just before a second turned read as idle
    // for 1 s right after its SET (one time in 150 here).
    const int64_t now_ms = unix_ms();
    if (access_clock_settings().lfu.load(std::memory_order_relaxed)) {
      value.set_access_clock(lfu_clock(now_ms, kLfuInitialCount));
    } else {
      value.set_access_clock(lru_clock(now_ms));
    }
  }
  auto [slot, created] = dict_.try_emplace(key);
  if (!created && slot->has_expiry()) {
    --expires_;
  }
  *slot = std::move(value);
  if (deadline != kNoExpiry) {
    set_expire(key, *slot, deadline);
  }
  if (slot->type() == ValueType::kInventory) {
    schedule_item(key, *slot);
  }
  publish_sizes();
  if (created && on_created_) {
    on_created_(db_, key);
  }
  return *slot;
}

void Keyspace::schedule_item(std::string_view key, const Value& v) {
  v.inventory()->for_each([&](std::string_view id, const Hold& h) {
    schedule_hold(key, id, h.state == HoldState::kHeld ? h.expires_at_ms : h.purge_at_ms);
  });
}

void Keyspace::schedule_hold(std::string_view key, std::string_view hold_id, int64_t at_ms) {
  std::array<char, 4> len{};
  auto size = static_cast<uint32_t>(key.size());
  for (size_t i = 0; i < len.size(); ++i) {
    len[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  }
  holds_wheel_.schedule({std::string_view(len.data(), len.size()), key, hold_id}, at_ms);
  if (on_schedule_) {
    on_schedule_(at_ms);
  }
}

void Keyspace::set_expire(std::string_view key, Value& v, int64_t at_ms) {
  if (v.has_expiry() && at_ms == kNoExpiry) {
    --expires_;
  } else if (!v.has_expiry() && at_ms != kNoExpiry) {
    ++expires_;
  }
  v.set_expire_raw(at_ms);
  if (at_ms != kNoExpiry) {
    // Old wheel entries for this key are not cancelled: when one fires, expire_due compares it
    // with the key's current deadline and ignores it if they differ.
    wheel_.schedule(key, at_ms);
    if (on_schedule_) {
      on_schedule_(at_ms);
    }
  }
  publish_sizes();
}

bool Keyspace::erase(std::string_view key) {
  Value* v = dict_.find(key);
  if (v == nullptr) {
    return false;
  }
  if (v->has_expiry()) {
    --expires_;
  }
  dict_.erase(key);
  publish_sizes();
  return true;
}

void Keyspace::erase_expired(std::string_view key) {
  if (erase(key)) {
    KeyspaceStats::bump(stats_.expired);
    if (on_expired_) {
      on_expired_(db_, key);
    }
  }
}

void Keyspace::swap_contents(Keyspace& other) {
  std::swap(dict_, other.dict_);
  std::swap(wheel_, other.wheel_);
  std::swap(holds_wheel_, other.holds_wheel_);
  std::swap(expires_, other.expires_);
  publish_sizes();
  other.publish_sizes();
}

void Keyspace::clear() {
  dict_.clear();
  wheel_.clear();
  holds_wheel_.clear();
  expires_ = 0;
  publish_sizes();
}

size_t Keyspace::expire_due(int64_t now_ms, size_t max_items) {
  size_t deleted = 0;
  wheel_.advance(now_ms, max_items, [&](std::string_view key, int64_t deadline) {
    const Value* v = dict_.find(key);
    if (v != nullptr && v->expire_at_ms() == deadline && deadline <= now_ms) {
      erase_expired(key);
      ++deleted;
    }
  });
  stats_.backlog.store(wheel_.due_backlog(now_ms), std::memory_order_relaxed);
  return deleted;
}

}  // namespace hotkv
