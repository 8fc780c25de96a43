// Inventory effects in the append-only log (op codes 64..127 in op_effects.hpp): one typed
// struct per op code, registered in inventory_effects(); encode_inventory writes the effects that
// rebuild a whole item (the rewrite's snapshot, COPY and RENAME). A replica receives every op as
// the internal HOTKV.EFFECT command (effect_commands.hpp): Redis has nothing that holds an item.
// Effects carry what happened -- the hold id, the quantity, absolute deadlines, the state a hold
// ended in -- so replay never re-runs a reserve: no availability check, no owner limit, no clock.
// Replay also schedules every deadline it restores on the keyspace's hold wheel; holds whose
// deadline passed while the server was down are expired by the wheel once loading is over (that
// expiry is logged like any other).
#include <memory>
#include <string>
#include <vector>

#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_codec.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

bool read_state(OpReader& r, HoldState& out) {
  std::string_view s;
  return r.str(s) && (parse_hold_state(s, out) ||
                      r.fail("bad hold state '" + std::string(s) + "'"));
}

// The item under key, or nullptr if the key is missing or holds another type (then the effect
// is a no-op: a later effect deleted or replaced it).
Inventory* existing_item(Keyspace& ks, std::string_view key, int64_t now_ms) {
  Value* v = ks.find(key, now_ms);
  return v != nullptr && v->type() == ValueType::kInventory ? v->inventory() : nullptr;
}

// [total, sold, sold_out 0|1, max_per_owner, max_hold_ms, events_key, max_events]: the item,
// if the key is missing. max_events is written only when the item has one (> 0), so logs from
// before MAXEVENTS, with six arguments, read the same.
struct InvCreateOp {
  static constexpr OpCode kCode = OpCode::kInvCreate;
  // No Redis command holds an item: HOTKV.EFFECT, which a HotKV replica applies.
  void to_commands(const Effect& e, CommandSink& out) const { internal_effect_command(e, out); }
  int64_t total = 0;
  int64_t sold = 0;
  bool sold_out = false;
  int64_t max_per_owner = 0;
  int64_t max_hold_ms = 0;
  std::string_view events_key;
  int64_t max_events = 0;

  void encode(OpWriter& w) const {
    w.integer(total).integer(sold).integer(sold_out ? 1 : 0).integer(max_per_owner);
    w.integer(max_hold_ms).str(events_key);
    if (max_events > 0) {
      w.integer(max_events);
    }
  }
  static bool decode(OpReader& r, InvCreateOp& out) {
    int64_t sold_out = 0;
    if (!r.integer(out.total) || !r.integer(out.sold) || !r.integer(sold_out) ||
        !r.integer(out.max_per_owner) || !r.integer(out.max_hold_ms) || !r.str(out.events_key) ||
        (!r.at_end() && !r.integer(out.max_events))) {
      return false;
    }
    out.sold_out = sold_out != 0;
    if (out.sold < 0 || out.total < out.sold || out.max_per_owner < 0 || out.max_hold_ms < 0 ||
        out.max_events < 0) {
      return r.fail("inconsistent item counters");
    }
    return true;
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (ks.find(key, ctx.now_ms) != nullptr) {
      return true;
    }
    InventoryLimits limits;
    limits.max_per_owner = max_per_owner;
    limits.max_hold_ms = max_hold_ms;
    limits.max_events = max_events;
    limits.events_key = std::string(events_key);
    ks.put(key, Value::from_inventory(
                    std::make_unique<Inventory>(total, sold, sold_out, std::move(limits))));
    return true;
  }
};

// kInvReserve [hold, qty, owner, created_ms, expires_ms]: available -> held; kInvRestoreHold
// adds [state, settled_ms, purge_ms] and rebuilds a hold or a settled record (no sold-out
// edge). Both leave the hold under its id and its next deadline on the hold wheel.
template <OpCode Code>
struct InvHoldOp {
  static constexpr OpCode kCode = Code;
  // No Redis command holds an item: HOTKV.EFFECT, which a HotKV replica applies.
  void to_commands(const Effect& e, CommandSink& out) const { internal_effect_command(e, out); }
  static constexpr bool kRestore = Code == OpCode::kInvRestoreHold;
  std::string_view id;
  Hold hold;

  void encode(OpWriter& w) const {
    w.str(id).integer(hold.qty).str(hold.owner).integer(hold.created_at_ms);
    w.integer(hold.expires_at_ms);
    if (kRestore) {
      w.str(hold_state_name(hold.state)).integer(hold.settled_at_ms).integer(hold.purge_at_ms);
    }
  }
  static bool decode(OpReader& r, InvHoldOp& out) {
    std::string_view owner;
    if (!r.str(out.id) || !r.integer(out.hold.qty) || !r.str(owner) ||
        !r.integer(out.hold.created_at_ms) || !r.integer(out.hold.expires_at_ms)) {
      return false;
    }
    out.hold.owner = std::string(owner);
    return !kRestore || (read_state(r, out.hold.state) && r.integer(out.hold.settled_at_ms) &&
                         r.integer(out.hold.purge_at_ms));
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx,
             std::string& error) const {
    Inventory* inv = existing_item(ks, key, ctx.now_ms);
    if (inv == nullptr) {
      return true;
    }
    const Hold* old = inv->find_raw(id);
    if (old != nullptr && old->state == HoldState::kHeld) {
      error = "hold '" + std::string(id) + "' is already live";
      return false;
    }
    bool live = hold.state == HoldState::kHeld;
    if (hold.qty <= 0 || (live && hold.qty > inv->available())) {
      error = "hold '" + std::string(id) + "' takes " + std::to_string(hold.qty) + " with " +
              std::to_string(inv->available()) + " available";
      return false;
    }
    int64_t wake = live ? hold.expires_at_ms : hold.purge_at_ms;
    if (kRestore) {
      inv->restore_hold(id, hold);
    } else {
      inv->reserve(id, hold.qty, hold.owner, hold.created_at_ms, hold.expires_at_ms);
    }
    ks.schedule_hold(key, id, wake);
    return true;
  }
};

// [hold, state, settled_ms, purge_ms]: a commit, release or expiry.
struct InvSettleOp {
  static constexpr OpCode kCode = OpCode::kInvSettle;
  // No Redis command holds an item: HOTKV.EFFECT, which a HotKV replica applies.
  void to_commands(const Effect& e, CommandSink& out) const { internal_effect_command(e, out); }
  std::string_view id;
  HoldState state = HoldState::kHeld;
  int64_t settled_ms = 0;
  int64_t purge_ms = 0;

  void encode(OpWriter& w) const {
    w.str(id).str(hold_state_name(state)).integer(settled_ms).integer(purge_ms);
  }
  static bool decode(OpReader& r, InvSettleOp& out) {
    if (!r.str(out.id) || !read_state(r, out.state) || !r.integer(out.settled_ms) ||
        !r.integer(out.purge_ms)) {
      return false;
    }
    return out.state != HoldState::kHeld || r.fail("a hold cannot settle as held");
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx,
             std::string& error) const {
    Inventory* inv = existing_item(ks, key, ctx.now_ms);
    if (inv == nullptr) {
      return true;
    }
    const Hold* h = inv->find_raw(id);
    if (h == nullptr || h->state != HoldState::kHeld) {
      error = "no live hold '" + std::string(id) + "' to settle";
      return false;
    }
    inv->settle(id, state, settled_ms, purge_ms);
    ks.schedule_hold(key, id, purge_ms);
    return true;
  }
};

// [hold, expires_ms]: INV.EXTEND.
struct InvExtendOp {
  static constexpr OpCode kCode = OpCode::kInvExtend;
  // No Redis command holds an item: HOTKV.EFFECT, which a HotKV replica applies.
  void to_commands(const Effect& e, CommandSink& out) const { internal_effect_command(e, out); }
  std::string_view id;
  int64_t expires_ms = 0;

  void encode(OpWriter& w) const { w.str(id).integer(expires_ms); }
  static bool decode(OpReader& r, InvExtendOp& out) {
    return r.str(out.id) && r.integer(out.expires_ms);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx,
             std::string& error) const {
    Inventory* inv = existing_item(ks, key, ctx.now_ms);
    if (inv == nullptr) {
      return true;
    }
    const Hold* h = inv->find_raw(id);
    if (h == nullptr || h->state != HoldState::kHeld) {
      error = "no live hold '" + std::string(id) + "' to extend";
      return false;
    }
    inv->extend(id, expires_ms);
    ks.schedule_hold(key, id, expires_ms);
    return true;
  }
};

// [total]: a restock (available moves with it).
struct InvSetTotalOp {
  static constexpr OpCode kCode = OpCode::kInvSetTotal;
  // No Redis command holds an item: HOTKV.EFFECT, which a HotKV replica applies.
  void to_commands(const Effect& e, CommandSink& out) const { internal_effect_command(e, out); }
  int64_t total = 0;

  void encode(OpWriter& w) const { w.integer(total); }
  static bool decode(OpReader& r, InvSetTotalOp& out) { return r.integer(out.total); }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx,
             std::string& error) const {
    Inventory* inv = existing_item(ks, key, ctx.now_ms);
    if (inv == nullptr) {
      return true;
    }
    if (total < inv->held() + inv->sold()) {
      error = "total " + std::to_string(total) + " is below held + sold";
      return false;
    }
    inv->set_total(total);
    return true;
  }
};

// [owner, units]: what the owner's committed holds took (items with MAXPEROWNER).
struct InvOwnerBoughtOp {
  static constexpr OpCode kCode = OpCode::kInvOwnerBought;
  // No Redis command holds an item: HOTKV.EFFECT, which a HotKV replica applies.
  void to_commands(const Effect& e, CommandSink& out) const { internal_effect_command(e, out); }
  std::string_view owner;
  int64_t units = 0;

  void encode(OpWriter& w) const { w.str(owner).integer(units); }
  static bool decode(OpReader& r, InvOwnerBoughtOp& out) {
    if (!r.str(out.owner) || !r.integer(out.units)) {
      return false;
    }
    return (!out.owner.empty() && out.units > 0) || r.fail("bad owner units");
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Inventory* inv = existing_item(ks, key, ctx.now_ms)) {
      inv->restore_owner_bought(std::string(owner), units);
    }
    return true;
  }
};

}  // namespace

void encode_inventory(RecordEncoder& enc, std::string_view key, const Value& v,
                      const std::function<void()>& checkpoint) {
  // Records of a few hundred effects, so an item with a million holds spreads over many.
  constexpr size_t kEffectsPerCheckpoint = 256;
  const Inventory& inv = *v.inventory();
  const InventoryLimits& limits = inv.limits();
  encode_op(enc, key,
            InvCreateOp{inv.total(), inv.sold(), inv.sold_out(), limits.max_per_owner,
                        limits.max_hold_ms, limits.events_key, limits.max_events});
  size_t since = 0;
  auto count = [&] {
    if (++since >= kEffectsPerCheckpoint) {
      since = 0;
      checkpoint();
    }
  };
  inv.for_each([&](std::string_view id, const Hold& h) {
    encode_op(enc, key, InvHoldOp<OpCode::kInvRestoreHold>{id, h});
    count();
  });
  inv.for_each_owner_bought([&](const std::string& owner, int64_t units) {
    encode_op(enc, key, InvOwnerBoughtOp{owner, units});
    count();
  });
}

const EffectFamily& inventory_effects() {
  static constexpr EffectOp kOps[] = {
      typed_op<InvCreateOp>("inventory.create"),
      typed_op<InvHoldOp<OpCode::kInvReserve>>("inventory.reserve"),
      typed_op<InvSettleOp>("inventory.settle"),
      typed_op<InvExtendOp>("inventory.extend"),
      typed_op<InvSetTotalOp>("inventory.set_total"),
      typed_op<InvHoldOp<OpCode::kInvRestoreHold>>("inventory.restore_hold"),
      typed_op<InvOwnerBoughtOp>("inventory.owner_bought"),
  };
  static const EffectFamily kFamily{"inventory",       ValueType::kInventory, kInventoryOpFirst,
                                    kInventoryOpLast, kOps,                  &encode_inventory};
  return kFamily;
}

}  // namespace hotkv
