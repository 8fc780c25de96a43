// The inventory item's state machine (see inventory.hpp). Every transition validates its
// REQUIRES with HOTKV_ASSERT (a caller bug must not quietly corrupt stock counts) and checks
// the invariant available + held + sold == total afterwards.
#include "hotkv/types/inventory.hpp"

#include <algorithm>

#include "hotkv/util/assert.hpp"

namespace hotkv {

const char* hold_state_name(HoldState s) {
  switch (s) {
    case HoldState::kHeld:
      return "held";
    case HoldState::kCommitted:
      return "committed";
    case HoldState::kReleased:
      return "released";
    case HoldState::kExpired:
      return "expired";
  }
  return "unknown";
}

bool parse_hold_state(std::string_view s, HoldState& out) {
  for (HoldState st :
       {HoldState::kHeld, HoldState::kCommitted, HoldState::kReleased, HoldState::kExpired}) {
    if (s == hold_state_name(st)) {
      out = st;
      return true;
    }
  }
  return false;
}

Inventory::Inventory(int64_t total, int64_t sold, bool sold_out, InventoryLimits limits)
    : total_(total),
      available_(total - sold),
      sold_(sold),
      sold_out_(sold_out),
      limits_(std::move(limits)) {
  HOTKV_ASSERT(sold >= 0 && sold <= total);
  check_invariant();
}

Inventory::~Inventory() { drop_beacon(); }

void Inventory::attach_beacon(std::shared_ptr<SoldOutBeacon> b) {
  drop_beacon();
  holds_.for_each([&](std::string_view id, Hold& h) {
    b->add_hold(id);
    if (!h.owner.empty()) {
      b->add_owner(h.owner);
    }
  });
  for (const auto& [owner, units] : bought_) {
    b->add_owner(owner);
  }
  b->publish_available(available_);
  b->set_alive(true);
  beacon_ = std::move(b);
}

void Inventory::drop_beacon() {
  if (beacon_ != nullptr) {
    beacon_->set_alive(false);
    beacon_.reset();
  }
}

void Inventory::beacon_add(std::string_view id, std::string_view owner) {
  if (beacon_ == nullptr) {
    return;
  }
  beacon_->add_hold(id);
  if (!owner.empty()) {
    beacon_->add_owner(owner);
  }
  if (beacon_->full()) {
    drop_beacon();  // the owner thread offers a bigger one at the next sold-out answer
  }
}

std::unique_ptr<Inventory> Inventory::clone() const {
  auto out = std::make_unique<Inventory>(total_, sold_, sold_out_, limits_);
  out->available_ = available_;
  out->held_ = held_;
  out->live_ = live_;
  out->owners_ = owners_;
  out->bought_ = bought_;
  holds_.for_each([&](std::string_view id, Hold& h) { out->holds_.insert_or_assign(id, h); });
  out->check_invariant();
  return out;
}

void Inventory::check_invariant() const {
  HOTKV_ASSERT(available_ >= 0 && held_ >= 0 && sold_ >= 0);
  HOTKV_ASSERT(available_ + held_ + sold_ == total_);
}

int64_t Inventory::owner_held(std::string_view owner) const {
  // Debian's Abseil has its own string_view type, not std::string_view.
  auto it = owners_.find(absl::string_view(owner.data(), owner.size()));
  return it == owners_.end() ? 0 : it->second;
}

int64_t Inventory::owner_bought(std::string_view owner) const {
  auto it = bought_.find(absl::string_view(owner.data(), owner.size()));
  return it == bought_.end() ? 0 : it->second;
}

void Inventory::restore_owner_bought(const std::string& owner, int64_t units) {
  HOTKV_ASSERT(!owner.empty() && units > 0);
  if (beacon_ != nullptr) {
    beacon_->add_owner(owner);
  }
  bought_[owner] = units;
}

const Hold* Inventory::find_raw(std::string_view id) const { return holds_.find(id); }

const Hold* Inventory::find(std::string_view id, int64_t now_ms) const {
  const Hold* h = holds_.find(id);
  if (h == nullptr || (h->state != HoldState::kHeld && h->purge_at_ms <= now_ms)) {
    return nullptr;
  }
  return h;
}

ReserveCheck Inventory::check_reserve(std::string_view id, int64_t qty, std::string_view owner,
                                      int64_t now_ms) const {
  if (find(id, now_ms) != nullptr) {
    return ReserveCheck::kHoldExists;
  }
  if (limits_.max_per_owner > 0 && !owner.empty() &&
      qty > limits_.max_per_owner - owner_held(owner) - owner_bought(owner)) {
    return ReserveCheck::kOwnerLimit;
  }
  if (qty > available_) {
    return ReserveCheck::kSoldOut;
  }
  return ReserveCheck::kOk;
}

int64_t Inventory::hold_deadline(int64_t now_ms, int64_t ttl_ms) const {
  if (limits_.max_hold_ms > 0 && ttl_ms > limits_.max_hold_ms) {
    ttl_ms = limits_.max_hold_ms;
  }
  return now_ms + ttl_ms;
}

int64_t Inventory::extended_deadline(const Hold& h, int64_t now_ms, int64_t ttl_ms) const {
  int64_t at = now_ms + ttl_ms;
  // Compared as durations: created + MAXHOLD may not fit in an int64 for a huge MAXHOLD.
  if (limits_.max_hold_ms > 0 && at - h.created_at_ms > limits_.max_hold_ms) {
    at = h.created_at_ms + limits_.max_hold_ms;
  }
  return at;
}

uint8_t Inventory::update_stock_edge() {
  if (!sold_out_ && available_ == 0) {
    sold_out_ = true;
    return kEdgeSoldOut;
  }
  if (sold_out_ && available_ >= back_in_stock_threshold()) {
    sold_out_ = false;
    return kEdgeBackInStock;
  }
  return kEdgeNone;
}

void Inventory::add_owner(const std::string& owner, int64_t qty) {
  if (owner.empty()) {
    return;
  }
  auto it = owners_.find(owner);
  if (it == owners_.end()) {
    HOTKV_ASSERT(qty > 0);
    owners_.emplace(owner, qty);
    return;
  }
  it->second += qty;
  HOTKV_ASSERT(it->second >= 0);
  if (it->second == 0) {
    owners_.erase(it);
  }
}

uint8_t Inventory::reserve(std::string_view id, int64_t qty, std::string_view owner,
                           int64_t created_at_ms, int64_t expires_at_ms) {
  HOTKV_ASSERT(qty > 0 && qty <= available_);
  beacon_add(id, owner);
  auto [slot, created] = holds_.try_emplace(id);
  HOTKV_ASSERT(created || slot->state != HoldState::kHeld);
  *slot = Hold{std::string(owner), qty, created_at_ms, expires_at_ms, -1, -1, HoldState::kHeld};
  available_ -= qty;
  held_ += qty;
  ++live_;
  add_owner(slot->owner, qty);
  beacon_lowered();
  check_invariant();
  return update_stock_edge();
}

uint8_t Inventory::settle(std::string_view id, HoldState to, int64_t settled_at_ms,
                          int64_t purge_at_ms) {
  Hold* h = holds_.find(id);
  HOTKV_ASSERT(h != nullptr && h->state == HoldState::kHeld && to != HoldState::kHeld);
  h->state = to;
  h->settled_at_ms = settled_at_ms;
  h->purge_at_ms = purge_at_ms;
  held_ -= h->qty;
  if (to == HoldState::kCommitted) {
    sold_ += h->qty;
    if (limits_.max_per_owner > 0 && !h->owner.empty()) {
      bought_[h->owner] += h->qty;
    }
  } else {
    beacon_raise(available_ + h->qty);
    available_ += h->qty;
  }
  --live_;
  add_owner(h->owner, -h->qty);
  check_invariant();
  return update_stock_edge();
}

void Inventory::extend(std::string_view id, int64_t expires_at_ms) {
  Hold* h = holds_.find(id);
  HOTKV_ASSERT(h != nullptr && h->state == HoldState::kHeld);
  h->expires_at_ms = expires_at_ms;
}

uint8_t Inventory::set_total(int64_t new_total) {
  HOTKV_ASSERT(new_total >= held_ + sold_);
  if (new_total > total_) {
    beacon_raise(available_ + (new_total - total_));
  }
  available_ += new_total - total_;
  total_ = new_total;
  beacon_lowered();
  check_invariant();
  return update_stock_edge();
}

bool Inventory::purge(std::string_view id) {
  const Hold* h = holds_.find(id);
  if (h == nullptr || h->state == HoldState::kHeld) {
    return false;
  }
  holds_.erase(id);
  return true;
}

void Inventory::restore_hold(std::string_view id, Hold h) {
  beacon_add(id, h.owner);
  auto [slot, created] = holds_.try_emplace(id);
  HOTKV_ASSERT(created || slot->state != HoldState::kHeld);
  if (h.state == HoldState::kHeld) {
    HOTKV_ASSERT(h.qty > 0 && h.qty <= available_);
    available_ -= h.qty;
    held_ += h.qty;
    ++live_;
    add_owner(h.owner, h.qty);
  }
  *slot = std::move(h);
  beacon_lowered();
  check_invariant();
}

void Inventory::audit(std::vector<std::string>& out) const {
  auto say = [&](std::string text) { out.push_back(std::move(text)); };
  auto n = [](int64_t v) { return std::to_string(v); };
  if (available_ + held_ + sold_ != total_) {
    say("available " + n(available_) + " + held " + n(held_) + " + sold " + n(sold_) +
        " != total " + n(total_));
  }
  if (available_ < 0 || held_ < 0 || sold_ < 0) {
    say("negative counter (available " + n(available_) + ", held " + n(held_) + ", sold " +
        n(sold_) + ")");
  }
  int64_t live_sum = 0;
  size_t live = 0;
  absl::flat_hash_map<std::string, int64_t> by_owner;
  holds_.for_each([&](std::string_view id, Hold& h) {
    if (h.qty <= 0) {
      say("hold '" + std::string(id) + "' has quantity " + n(h.qty));
    }
    if (h.state != HoldState::kHeld) {
      return;
    }
    ++live;
    live_sum += h.qty;
    if (!h.owner.empty()) {
      by_owner[h.owner] += h.qty;
    }
  });
  if (live_sum != held_) {
    say("held " + n(held_) + " != sum of live holds " + n(live_sum));
  }
  if (live != live_) {
    say("live hold count " + std::to_string(live_) + " != " + std::to_string(live) +
        " live holds found");
  }
  for (const auto& [owner, qty] : by_owner) {
    if (owner_held(owner) != qty) {
      say("owner '" + owner + "' is counted with " + n(owner_held(owner)) +
          " held but its live holds sum to " + n(qty));
    }
  }
  if (limits_.max_per_owner > 0) {
    auto over = [&](const std::string& owner) {
      int64_t held = by_owner.contains(owner) ? by_owner[owner] : 0;
      int64_t bought = owner_bought(owner);
      if (held + bought > limits_.max_per_owner) {
        say("owner '" + owner + "' holds " + n(held) +
            (bought > 0 ? " and bought " + n(bought) : std::string()) + ", above MAXPEROWNER " +
            n(limits_.max_per_owner));
      }
    };
    for (const auto& [owner, qty] : by_owner) {
      over(owner);
    }
    for (const auto& [owner, units] : bought_) {
      if (!by_owner.contains(owner)) {
        over(owner);
      }
    }
  }
  for (const auto& [owner, qty] : owners_) {
    if (by_owner.find(owner) == by_owner.end()) {
      say("owner '" + owner + "' is counted with " + n(qty) + " held but has no live hold");
    }
  }
}

size_t Inventory::memory_bytes() const {
  size_t owners = (owners_.size() + bought_.size()) * (sizeof(std::string) + sizeof(int64_t) + 1);
  for (const auto& [owner, units] : bought_) {
    owners += owner.capacity();
  }
  size_t owner_text = 0;
  holds_.for_each([&](std::string_view, Hold& h) { owner_text += h.owner.capacity(); });
  size_t beacon = beacon_ != nullptr ? beacon_->memory_bytes() : 0;
  return sizeof(*this) + holds_.memory_bytes() + owners + owner_text + beacon;
}

}  // namespace hotkv
