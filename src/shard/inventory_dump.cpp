#include "hotkv/shard/inventory_dump.hpp"

#include <string_view>
#include <vector>

#include <absl/container/flat_hash_set.h>

namespace hotkv {
namespace {

constexpr uint64_t kFormatVersion = 1;

// Counters are never negative; lengths carry them.
bool read_count(RdbReader& in, int64_t& out) {
  uint64_t v = 0;
  if (!in.read_length(v) || v > static_cast<uint64_t>(INT64_MAX)) {
    return false;
  }
  out = static_cast<int64_t>(v);
  return true;
}

}  // namespace

void append_inventory_body(std::string& out, const Inventory& inv) {
  rdb_append_length(out, kFormatVersion);
  rdb_append_length(out, static_cast<uint64_t>(inv.total()));
  rdb_append_length(out, static_cast<uint64_t>(inv.sold()));
  out.push_back(inv.sold_out() ? 1 : 0);
  const InventoryLimits& l = inv.limits();
  rdb_append_length(out, static_cast<uint64_t>(l.max_per_owner));
  rdb_append_length(out, static_cast<uint64_t>(l.max_hold_ms));
  rdb_append_string(out, l.events_key);
  rdb_append_length(out, static_cast<uint64_t>(l.max_events));
  rdb_append_length(out, inv.hold_records());
  inv.for_each([&](std::string_view id, const Hold& h) {
    rdb_append_string(out, id);
    rdb_append_string(out, h.owner);
    rdb_append_length(out, static_cast<uint64_t>(h.qty));
    rdb_append_millis(out, h.created_at_ms);
    rdb_append_millis(out, h.expires_at_ms);
    out.push_back(static_cast<char>(h.state));
    rdb_append_millis(out, h.settled_at_ms);
    rdb_append_millis(out, h.purge_at_ms);
  });
  size_t owners = 0;
  inv.for_each_owner_bought([&](const std::string&, int64_t) { ++owners; });
  rdb_append_length(out, owners);
  inv.for_each_owner_bought([&](const std::string& owner, int64_t units) {
    rdb_append_string(out, owner);
    rdb_append_length(out, static_cast<uint64_t>(units));
  });
}

std::unique_ptr<Inventory> read_inventory_body(RdbReader& in) {
  uint64_t version = 0;
  int64_t total = 0;
  int64_t sold = 0;
  uint8_t sold_out = 0;
  InventoryLimits limits;
  if (!in.read_length(version) || version != kFormatVersion || !read_count(in, total) ||
      !read_count(in, sold) || !in.read_byte(sold_out) || sold_out > 1 ||
      !read_count(in, limits.max_per_owner) || !read_count(in, limits.max_hold_ms) ||
      !in.read_string(limits.events_key) || !read_count(in, limits.max_events) || sold > total) {
    return nullptr;
  }
  auto inv = std::make_unique<Inventory>(total, sold, sold_out != 0, std::move(limits));
  uint64_t records = 0;
  if (!in.read_length(records)) {
    return nullptr;
  }
  std::string id;
  absl::flat_hash_set<std::string> seen;
  for (uint64_t r = 0; r < records; ++r) {
    Hold h;
    uint8_t state = 0;
    if (!in.read_string(id) || !in.read_string(h.owner) || !read_count(in, h.qty) ||
        !in.read_millis(h.created_at_ms) || !in.read_millis(h.expires_at_ms) ||
        !in.read_byte(state) || state > static_cast<uint8_t>(HoldState::kExpired) ||
        !in.read_millis(h.settled_at_ms) || !in.read_millis(h.purge_at_ms)) {
      return nullptr;
    }
    h.state = static_cast<HoldState>(state);
    // restore_hold asserts these; a payload is untrusted, so they are checked first.
    const bool live = h.state == HoldState::kHeld;
    if (h.qty <= 0 || (live && h.qty > inv->available()) || !seen.insert(id).second) {
      return nullptr;
    }
    inv->restore_hold(id, std::move(h));
  }
  uint64_t owners = 0;
  if (!in.read_length(owners)) {
    return nullptr;
  }
  std::string owner;
  for (uint64_t o = 0; o < owners; ++o) {
    int64_t units = 0;
    if (!in.read_string(owner) || !read_count(in, units) || owner.empty() || units == 0 ||
        units > inv->sold()) {
      return nullptr;
    }
    inv->restore_owner_bought(owner, units);
  }
  std::vector<std::string> problems;
  inv->audit(problems);
  if (!problems.empty()) {
    return nullptr;
  }
  return inv;
}

}  // namespace hotkv
