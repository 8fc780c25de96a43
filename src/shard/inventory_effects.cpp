// Inventory effects in the append-only log (op codes 64..127 in op_effects.hpp):
// apply_inventory_op replays one, encode_inventory writes the effects that rebuild a whole item
// (the rewrite's snapshot, COPY and RENAME). Effects carry what happened -- the hold id, the
// quantity, absolute deadlines, the state a hold ended in -- so replay never re-runs a reserve:
// no availability check, no owner limit, no clock. Replay also schedules every deadline it
// restores on the keyspace's hold wheel; holds whose deadline passed while the server was down
// are expired by the wheel once loading is over (that expiry is logged like any other).
#include <string>
#include <vector>

#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

bool hold_state_arg(OpArgReader& a, size_t i, HoldState& out) {
  return parse_hold_state(a.str(i), out) || a.fail("bad hold state '" + a.str(i) + "'");
}

// The item under key, or nullptr if the key is missing or holds another type (then the effect
// is a no-op: a later effect deleted or replaced it).
Inventory* existing_item(Keyspace& ks, const Effect& e, int64_t now_ms) {
  Value* v = ks.find(e.key, now_ms);
  return v != nullptr && v->type() == ValueType::kInventory ? v->inventory() : nullptr;
}

bool apply_create(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t total = 0;
  int64_t sold = 0;
  int64_t sold_out = 0;
  InventoryLimits limits;
  // A seventh argument, max_events, is written only when the item has one.
  if (a.size() != 7 && !a.exactly(6)) {
    return false;
  }
  if (!a.integer(0, total) || !a.integer(1, sold) || !a.integer(2, sold_out) ||
      !a.integer(3, limits.max_per_owner) || !a.integer(4, limits.max_hold_ms) ||
      (a.size() == 7 && !a.integer(6, limits.max_events))) {
    return false;
  }
  if (sold < 0 || total < sold || limits.max_per_owner < 0 || limits.max_hold_ms < 0 ||
      limits.max_events < 0) {
    return a.fail("inconsistent item counters");
  }
  limits.events_key = a.str(5);
  if (ks.find(e.key, now_ms) == nullptr) {
    ks.put(e.key, Value::from_inventory(
                      std::make_unique<Inventory>(total, sold, sold_out != 0, std::move(limits))));
  }
  return true;
}

// kInvReserve [hold, qty, owner, created, expires] and kInvRestoreHold [..., state, settled,
// purge]: both leave a hold (live, or a settled record for the latter) under its id.
bool apply_hold(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a, bool restore) {
  Hold h;
  if (!a.exactly(restore ? 8 : 5) || !a.integer(1, h.qty) || !a.integer(3, h.created_at_ms) ||
      !a.integer(4, h.expires_at_ms)) {
    return false;
  }
  if (restore &&
      (!hold_state_arg(a, 5, h.state) || !a.integer(6, h.settled_at_ms) || !a.integer(7, h.purge_at_ms))) {
    return false;
  }
  h.owner = a.str(2);
  Inventory* inv = existing_item(ks, e, now_ms);
  if (inv == nullptr) {
    return true;
  }
  const std::string& id = a.str(0);
  const Hold* old = inv->find_raw(id);
  if (old != nullptr && old->state == HoldState::kHeld) {
    return a.fail("hold '" + id + "' is already live");
  }
  bool live = h.state == HoldState::kHeld;
  if (h.qty <= 0 || (live && h.qty > inv->available())) {
    return a.fail("hold '" + id + "' takes " + std::to_string(h.qty) + " with " +
                  std::to_string(inv->available()) + " available");
  }
  int64_t wake = live ? h.expires_at_ms : h.purge_at_ms;
  if (restore) {
    inv->restore_hold(id, std::move(h));
  } else {
    inv->reserve(id, h.qty, h.owner, h.created_at_ms, h.expires_at_ms);
  }
  ks.schedule_hold(e.key, id, wake);
  return true;
}

bool apply_settle(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  HoldState to = HoldState::kHeld;
  int64_t settled = 0;
  int64_t purge = 0;
  if (!a.exactly(4) || !hold_state_arg(a, 1, to) || !a.integer(2, settled) || !a.integer(3, purge)) {
    return false;
  }
  if (to == HoldState::kHeld) {
    return a.fail("a hold cannot settle as held");
  }
  Inventory* inv = existing_item(ks, e, now_ms);
  if (inv == nullptr) {
    return true;
  }
  const Hold* h = inv->find_raw(a.str(0));
  if (h == nullptr || h->state != HoldState::kHeld) {
    return a.fail("no live hold '" + a.str(0) + "' to settle");
  }
  inv->settle(a.str(0), to, settled, purge);
  ks.schedule_hold(e.key, a.str(0), purge);
  return true;
}

bool apply_extend(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t at = 0;
  if (!a.exactly(2) || !a.integer(1, at)) {
    return false;
  }
  Inventory* inv = existing_item(ks, e, now_ms);
  if (inv == nullptr) {
    return true;
  }
  const Hold* h = inv->find_raw(a.str(0));
  if (h == nullptr || h->state != HoldState::kHeld) {
    return a.fail("no live hold '" + a.str(0) + "' to extend");
  }
  inv->extend(a.str(0), at);
  ks.schedule_hold(e.key, a.str(0), at);
  return true;
}

bool apply_set_total(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t total = 0;
  if (!a.exactly(1) || !a.integer(0, total)) {
    return false;
  }
  Inventory* inv = existing_item(ks, e, now_ms);
  if (inv == nullptr) {
    return true;
  }
  if (total < inv->held() + inv->sold()) {
    return a.fail("total " + std::to_string(total) + " is below held + sold");
  }
  inv->set_total(total);
  return true;
}

bool apply_owner_bought(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t units = 0;
  if (!a.exactly(2) || !a.integer(1, units)) {
    return false;
  }
  if (a.str(0).empty() || units <= 0) {
    return a.fail("bad owner units");
  }
  if (Inventory* inv = existing_item(ks, e, now_ms)) {
    inv->restore_owner_bought(a.str(0), units);
  }
  return true;
}

}  // namespace

bool apply_inventory_op(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error) {
  OpArgReader a(e, error);
  switch (static_cast<OpCode>(e.op)) {
    case OpCode::kInvCreate:
      return apply_create(ks, e, now_ms, a);
    case OpCode::kInvReserve:
      return apply_hold(ks, e, now_ms, a, false);
    case OpCode::kInvRestoreHold:
      return apply_hold(ks, e, now_ms, a, true);
    case OpCode::kInvSettle:
      return apply_settle(ks, e, now_ms, a);
    case OpCode::kInvExtend:
      return apply_extend(ks, e, now_ms, a);
    case OpCode::kInvOwnerBought:
      return apply_owner_bought(ks, e, now_ms, a);
    case OpCode::kInvSetTotal:
      return apply_set_total(ks, e, now_ms, a);
    default:
      break;
  }
  error = "unknown inventory op code " + std::to_string(e.op);
  return false;
}

void encode_inventory(RecordEncoder& enc, std::string_view key, const Value& v,
                      const std::function<void()>& checkpoint) {
  // Records of a few hundred effects, so an item with a million holds spreads over many.
  constexpr size_t kEffectsPerCheckpoint = 256;
  const Inventory& inv = *v.inventory();
  OpArgs args;
  args.add_int(inv.total())
      .add_int(inv.sold())
      .add_int(inv.sold_out() ? 1 : 0)
      .add_int(inv.limits().max_per_owner)
      .add_int(inv.limits().max_hold_ms)
      .add(inv.limits().events_key);
  if (inv.limits().max_events > 0) {
    args.add_int(inv.limits().max_events);
  }
  enc.add_op(key, static_cast<uint16_t>(OpCode::kInvCreate), args.views());
  size_t since = 0;
  inv.for_each([&](std::string_view id, const Hold& h) {
    args.clear();
    args.add(id)
        .add_int(h.qty)
        .add(h.owner)
        .add_int(h.created_at_ms)
        .add_int(h.expires_at_ms)
        .add(hold_state_name(h.state))
        .add_int(h.settled_at_ms)
        .add_int(h.purge_at_ms);
    enc.add_op(key, static_cast<uint16_t>(OpCode::kInvRestoreHold), args.views());
    if (++since >= kEffectsPerCheckpoint) {
      since = 0;
      checkpoint();
    }
  });
  inv.for_each_owner_bought([&](const std::string& owner, int64_t units) {
    args.clear();
    args.add(owner).add_int(units);
    enc.add_op(key, static_cast<uint16_t>(OpCode::kInvOwnerBought), args.views());
    if (++since >= kEffectsPerCheckpoint) {
      since = 0;
      checkpoint();
    }
  });
}

namespace {

// The family's ops are not typed structs yet: each registry entry goes through apply_inventory_op.
bool apply_inventory_entry(Keyspace& ks, const Effect& e, const ReplayContext& ctx,
                       std::string& error) {
  return apply_inventory_op(ks, e, ctx.now_ms, error);
}

}  // namespace

const EffectFamily& inventory_effects() {
  static constexpr EffectOp kOps[] = {
      {static_cast<uint16_t>(OpCode::kInvCreate), "inventory.create", &apply_inventory_entry},
      {static_cast<uint16_t>(OpCode::kInvReserve), "inventory.reserve", &apply_inventory_entry},
      {static_cast<uint16_t>(OpCode::kInvSettle), "inventory.settle", &apply_inventory_entry},
      {static_cast<uint16_t>(OpCode::kInvExtend), "inventory.extend", &apply_inventory_entry},
      {static_cast<uint16_t>(OpCode::kInvSetTotal), "inventory.set_total", &apply_inventory_entry},
      {static_cast<uint16_t>(OpCode::kInvRestoreHold), "inventory.restore_hold", &apply_inventory_entry},
      {static_cast<uint16_t>(OpCode::kInvOwnerBought), "inventory.owner_bought", &apply_inventory_entry},
  };
  static const EffectFamily kFamily{"inventory", ValueType::kInventory, kInventoryOpFirst, kInventoryOpLast, kOps, &encode_inventory};
  return kFamily;
}

}  // namespace hotkv
