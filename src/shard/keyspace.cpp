// Keyspace lookups with lazy expiry plus the active expiry driven by the timing wheel.
#include "hotkv/shard/keyspace.hpp"

#include <array>

#include "hotkv/types/inventory.hpp"

namespace hotkv {

Keyspace::Keyspace(int64_t now_ms, uint32_t db) : wheel_(now_ms), holds_wheel_(now_ms), db_(db) {}

Value* Keyspace::find(std::string_view key, int64_t now_ms) {
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

Value* Keyspace::find_read(std::string_view key, int64_t now_ms) {
  Value* v = find(key, now_ms);
  KeyspaceStats::bump(v != nullptr ? stats_.hits : stats_.misses);
  return v;
}

Value& Keyspace::put(std::string_view key, Value value) {
  int64_t deadline = value.expire_at_ms();
  value.set_expire_raw(kNoExpiry);
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
  v.inventory()->for_each([&](const std::string& id, const Hold& h) {
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
    Value* v = dict_.find(key);
    if (v != nullptr && v->expire_at_ms() == deadline && deadline <= now_ms) {
      erase_expired(key);
      ++deleted;
    }
  });
  stats_.backlog.store(wheel_.due_backlog(now_ms), std::memory_order_relaxed);
  return deleted;
}

}  // namespace hotkv
