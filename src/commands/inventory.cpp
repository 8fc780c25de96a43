// Inventory items: INV.CREATE, INV.GET, INV.RESTOCK, INV.RESERVE, INV.MRESERVE (a cart across
// shards, all or nothing), INV.AUDIT, and register_inventory with every INV.* command (the
// hold commands live in inventory_holds.cpp). The item and its hold state machine are
// types/inventory.hpp; the model, replies and events are described in docs/inventory.md.
// Every handler validates everything before it mutates anything.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_inventory.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/inventory_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/slot.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

std::string owner_limit_error(std::string_view key, std::string_view owner, int64_t held,
                              int64_t bought, int64_t qty, int64_t limit) {
  return err::owner_limit(key, owner, held, bought, qty, limit);
}

// Replies the error for a reserve that check_reserve refused (and counts it for INFO).
// Returns false if it replied.
bool reserve_allowed_or_reply(CommandContext& ctx, std::string_view key, Inventory& inv,
                              std::string_view id, int64_t qty, std::string_view owner) {
  ReserveCheck check = inv.check_reserve(id, qty, owner, ctx.now_ms);
  if (check == ReserveCheck::kOk) {
    return true;
  }
  InventoryStats& stats = ctx.db(key).inventory_stats();
  switch (check) {
    case ReserveCheck::kOk:
      break;  // answered above; listed so that a new ReserveCheck value must be handled here
    case ReserveCheck::kHoldExists:
      KeyspaceStats::bump(stats.rejected_holdexists);
      ctx.error(hold_exists_error(key, id, effective_state(*inv.find(id, ctx.now_ms), ctx.now_ms)));
      return false;
    case ReserveCheck::kOwnerLimit:
      KeyspaceStats::bump(stats.rejected_ownerlimit);
      ctx.error(owner_limit_error(key, owner, inv.owner_held(owner), inv.owner_bought(owner), qty,
                                  inv.limits().max_per_owner));
      return false;
    case ReserveCheck::kSoldOut:
      KeyspaceStats::bump(stats.rejected_soldout);
      ctx.error(soldout_error(key, inv.available(), qty));
      offer_soldout_beacon(ctx, key, inv);
      return false;
  }
  return false;
}

bool positive_option_or_reply(CommandContext& ctx, size_t i, const char* name, int64_t& out) {
  if (!ctx.int_arg_or_reply(i, out)) {
    return false;
  }
  if (out <= 0) {
    ctx.error(err::must_be_positive(name));
    return false;
  }
  return true;
}

// INV.CREATE key total [MAXPEROWNER n] [MAXHOLD ms] [EVENTS stream_key [MAXEVENTS n]]
void cmd_inv_create(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  int64_t total = 0;
  if (!ctx.int_arg_or_reply(2, total)) {
    return;
  }
  if (total < 0) {
    ctx.error(err::kTotalNonNegative);
    return;
  }
  InventoryLimits limits;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    if (i + 1 >= ctx.argc()) {
      ctx.error(err::kSyntax);
      return;
    }
    ++i;
    if (strcasecmp_view(opt, "MAXPEROWNER")) {
      if (!positive_option_or_reply(ctx, i, "MAXPEROWNER", limits.max_per_owner)) {
        return;
      }
    } else if (strcasecmp_view(opt, "MAXHOLD")) {
      if (!positive_option_or_reply(ctx, i, "MAXHOLD", limits.max_hold_ms)) {
        return;
      }
    } else if (strcasecmp_view(opt, "EVENTS")) {
      limits.events_key = std::string(ctx.arg(i));
    } else if (strcasecmp_view(opt, "MAXEVENTS")) {
      if (!positive_option_or_reply(ctx, i, "MAXEVENTS", limits.max_events)) {
        return;
      }
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  const std::string& events = limits.events_key;
  if (limits.max_events > 0 && events.empty()) {
    ctx.error(err::kMaxEventsNeedsEvents);
    return;
  }
  if (!events.empty()) {
    if (events == key) {
      ctx.error(err::kEventsSameKey);
      return;
    }
    // Events are appended on the item's shard, in the same step as the transition.
    if (key_slot(events) != key_slot(key)) {
      ctx.error(err::events_stream_slot(events, key));
      return;
    }
  }
  Keyspace& db = ctx.db(key);
  if (db.find(key, ctx.now_ms) != nullptr) {
    ctx.error(err::kBusyKey);
    return;
  }
  if (!events.empty()) {
    Value* s = ctx.db(events).find(events, ctx.now_ms);
    if (s != nullptr && s->type() != ValueType::kStream) {
      ctx.error(err::kWrongType);
      return;
    }
  }
  auto inv = std::make_unique<Inventory>(total, 0, total == 0, std::move(limits));
  const Inventory& item = *db.put(key, Value::from_inventory(std::move(inv))).inventory();
  if (ctx.logging(key)) {
    OpArgs args;
    args.add_int(item.total())
        .add_int(0)
        .add_int(item.sold_out() ? 1 : 0)
        .add_int(item.limits().max_per_owner)
        .add_int(item.limits().max_hold_ms)
        .add(item.limits().events_key);
    if (item.limits().max_events > 0) {
      args.add_int(item.limits().max_events);  // older logs end at events_key
    }
    ctx.log_op(key, OpCode::kInvCreate, args.views());
  }
  publish_item_event(ctx, key, item, "inv.created");
  ctx.reply.ok();
}

// INV.GET key: {total, available, held, sold, holds} or null.
void cmd_inv_get(CommandContext& ctx) {
  Inventory* inv = nullptr;
  if (!inventory_lookup_or_reply(ctx, ctx.arg(1), true, inv)) {
    return;
  }
  if (inv == nullptr) {
    ctx.reply.null();
    return;
  }
  ReplyWriter& w = ctx.reply;
  w.map(5);
  w.bulk("total");
  w.integer(inv->total());
  w.bulk("available");
  w.integer(inv->available());
  w.bulk("held");
  w.integer(inv->held());
  w.bulk("sold");
  w.integer(inv->sold());
  w.bulk("holds");
  w.integer(static_cast<int64_t>(inv->live_holds()));
}

// INV.RESTOCK key delta: total += delta (available moves with it). Replies the new total.
void cmd_inv_restock(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  int64_t delta = 0;
  if (!ctx.int_arg_or_reply(2, delta)) {
    return;
  }
  Inventory* inv = nullptr;
  if (!existing_inventory_or_reply(ctx, key, inv)) {
    return;
  }
  int64_t total = 0;
  if (__builtin_add_overflow(inv->total(), delta, &total)) {
    ctx.error(err::kOverflow);
    return;
  }
  if (total < inv->held() + inv->sold()) {
    ctx.error(err::restock_below_settled(total, inv->held() + inv->sold()));
    return;
  }
  if (delta != 0) {
    uint8_t edges = inv->set_total(total);
    if (ctx.logging(key)) {
      OpArgs args;
      args.add_int(total);
      ctx.log_op(key, OpCode::kInvSetTotal, args.views());
    }
    publish_item_event(ctx, key, *inv, "inv.restock");
    publish_edges(ctx, key, *inv, edges);
  }
  ctx.reply.integer(total);
}

// INV.RESERVE key hold_id qty ttl_ms [OWNER id]: replies the units available afterwards.
void cmd_inv_reserve(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  std::string_view id = ctx.arg(2);
  ReserveArgs a;
  if (std::string_view error = parse_reserve_args(ctx.argv, ctx.now_ms, a); !error.empty()) {
    ctx.error(error);
    return;
  }
  Inventory* inv = nullptr;
  if (!existing_inventory_or_reply(ctx, key, inv) ||
      !reserve_allowed_or_reply(ctx, key, *inv, id, a.qty, a.owner)) {
    return;
  }
  reserve_hold(ctx, key, *inv, id, a.qty, a.owner, inv->hold_deadline(ctx.now_ms, a.ttl_ms));
  ctx.reply.integer(inv->available());
}

// Where INV.MRESERVE's cart starts: after "OWNER id" when the fourth argument is OWNER and a
// cart line follows it, else right after ttl_ms. So an item named OWNER can still be reserved
// alone, or anywhere but first in a longer cart.
size_t mreserve_cart_start(std::span<const std::string_view> argv) {
  constexpr size_t kAfterTtl = 3;
  if (argv.size() >= kAfterTtl + 4 && strcasecmp_view(argv[kAfterTtl], "OWNER")) {
    return kAfterTtl + 2;
  }
  return kAfterTtl;
}

// INV.MRESERVE's keys: every other argument from the cart's start.
void mreserve_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  for (size_t i = mreserve_cart_start(argv); i + 1 < argv.size(); i += 2) {
    out.push_back(i);
  }
}

// INV.MRESERVE hold_id ttl_ms [OWNER id] key qty [key qty ...]: one hold id on every item, all
// or nothing. Keys may live on several shards (the dispatcher then parks them all); every item
// is checked (stock, the hold id, the owner's MAXPEROWNER on that item) before any is changed.
// Replies the units available afterwards, per key.
void cmd_inv_mreserve(CommandContext& ctx) {
  const size_t start = mreserve_cart_start(ctx.argv);
  if ((ctx.argc() - start) % 2 != 0) {
    ctx.wrong_arity();
    return;
  }
  std::string_view id = ctx.arg(1);
  int64_t ttl = 0;
  if (!ttl_arg_or_reply(ctx, 2, ttl)) {
    return;
  }
  std::string_view owner;
  if (start > 3) {
    owner = ctx.arg(4);
    if (owner.empty()) {
      ctx.error(err::kOwnerEmpty);
      return;
    }
  }
  struct Line {
    std::string_view key;
    int64_t qty;
    Inventory* inv;
  };
  std::vector<Line> cart;
  for (size_t i = start; i < ctx.argc(); i += 2) {
    Line line{ctx.arg(i), 0, nullptr};
    if (!qty_arg_or_reply(ctx, i + 1, line.qty)) {
      return;
    }
    for (const Line& other : cart) {
      if (other.key == line.key) {
        ctx.error(err::item_twice_in_cart(line.key));
        return;
      }
    }
    cart.push_back(line);
  }
  if (id.empty()) {
    ctx.error(err::kHoldIdEmpty);
    return;
  }
  for (Line& line : cart) {
    if (!existing_inventory_or_reply(ctx, line.key, line.inv) ||
        !reserve_allowed_or_reply(ctx, line.key, *line.inv, id, line.qty, owner)) {
      return;
    }
  }
  for (Line& line : cart) {
    reserve_hold(ctx, line.key, *line.inv, id, line.qty, owner,
                 line.inv->hold_deadline(ctx.now_ms, ttl));
  }
  ctx.reply.array(cart.size());
  for (const Line& line : cart) {
    ctx.reply.integer(line.inv->available());
  }
}

void audit_item(std::string_view key, const Inventory& inv, std::vector<std::string>& out) {
  std::vector<std::string> found;
  inv.audit(found);
  for (auto& text : found) {
    std::string line = "'";
    line.append(key).append("': ").append(text);
    out.push_back(std::move(line));
  }
}

// INV.AUDIT [key]: an array of violations, empty when healthy. Without a key every inventory
// item of every shard is checked (the shards are parked meanwhile).
void cmd_inv_audit(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.error(err::kSyntax);
    return;
  }
  std::vector<std::string> out;
  if (ctx.argc() == 2) {
    Inventory* inv = nullptr;
    if (!existing_inventory_or_reply(ctx, ctx.arg(1), inv)) {
      return;
    }
    audit_item(ctx.arg(1), *inv, out);
  } else {
    size_t shards = ctx.multi_shard ? ctx.engine.shard_count() : 1;
    for (size_t i = 0; i < shards; ++i) {
      Shard& s = ctx.multi_shard ? ctx.engine.shard(i) : ctx.shard;
      s.keyspace(ctx.db_index).dict().for_each([&](std::string_view key, Value& v) {
        if (v.type() == ValueType::kInventory &&
            !(v.has_expiry() && v.expire_at_ms() <= ctx.now_ms)) {
          audit_item(key, *v.inventory(), out);
        }
      });
    }
  }
  ctx.reply.array(out.size());
  for (const auto& text : out) {
    ctx.reply.bulk(text);
  }
}

// INV.CREATE's keys: the item and, after EVENTS, the stream.
void create_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  out.push_back(1);
  for (size_t i = 3; i + 1 < argv.size(); i += 2) {
    if (strcasecmp_view(argv[i], "EVENTS")) {
      out.push_back(i + 1);
    }
  }
}

// INV.AUDIT's key, when one is given.
void audit_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() == 2) {
    out.push_back(1);
  }
}

}  // namespace

void register_inventory(Table& t) {
  // clang-format off
  t.add({"INV.CREATE",   -3, kWrite | kDenyOom | kFast, key_finder(1, 1, 1, create_keys), cmd_inv_create, "inventory", "INV.CREATE key total [MAXPEROWNER n] [MAXHOLD ms] [EVENTS stream_key [MAXEVENTS n]]", "Creates a stock item with `total` units available; optional per-owner limit, longest hold and event stream (same hash slot, trimmed to about MAXEVENTS entries)."});
  t.add({"INV.GET",       2, kReadOnly | kFast, keys(1, 1, 1), cmd_inv_get, "inventory", "INV.GET key", "Returns an item's total, available, held and sold units and its number of live holds."});
  t.add({"INV.RESTOCK",   3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_inv_restock, "inventory", "INV.RESTOCK key delta", "Adds (or with a negative delta removes) units; the total never drops below held + sold. Returns the new total."});
  t.add({"INV.RESERVE",  -5, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_inv_reserve, "inventory", "INV.RESERVE key hold_id qty ttl_ms [OWNER id]", "Atomically takes qty available units into a hold that returns them by itself after ttl_ms. Returns the units left."});
  t.add({"INV.MRESERVE", -5, kWrite | kDenyOom, key_finder(3, -2, 2, mreserve_keys), cmd_inv_mreserve, "inventory", "INV.MRESERVE hold_id ttl_ms [OWNER id] key qty [key qty ...]", "Reserves a multi-item cart under one hold id (and owner), all or nothing, across shards. Returns the units left per item."});
  t.add({"INV.COMMIT",    3, kWrite | kFast, keys(1, 1, 1), cmd_inv_commit, "inventory", "INV.COMMIT key hold_id", "Sells a held hold's units (1), or says it already did (0); -EXPIRED/-RELEASED if the hold ended otherwise."});
  t.add({"INV.RELEASE",   3, kWrite | kFast, keys(1, 1, 1), cmd_inv_release, "inventory", "INV.RELEASE key hold_id", "Returns a held hold's units to available (1), or says it already did (0); -EXPIRED/-COMMITTED if it ended otherwise."});
  t.add({"INV.EXTEND",    4, kWrite | kFast, keys(1, 1, 1), cmd_inv_extend, "inventory", "INV.EXTEND key hold_id ttl_ms", "Moves a held hold's deadline to now + ttl_ms, capped by MAXHOLD from its creation. Returns the milliseconds left."});
  t.add({"INV.HOLD",      3, kReadOnly | kFast, keys(1, 1, 1), cmd_inv_hold, "inventory", "INV.HOLD key hold_id", "Returns a hold's state, quantity, owner, times and remaining TTL, or null."});
  t.add({"INV.HOLDS",    -2, kReadOnly, keys(1, 1, 1), cmd_inv_holds, "inventory", "INV.HOLDS key [cursor] [COUNT count]", "Iterates over an item's live hold ids with a cursor."});
  t.add({"INV.AUDIT",    -1, kReadOnly | kAllShards, key_finder(1, 1, 1, audit_keys), cmd_inv_audit, "inventory", "INV.AUDIT [key]", "Checks available + held + sold = total and the hold sums of one item or of every item. Returns the violations found."});
  // clang-format on
  t.add_engine_init(install_inventory_expiry);
}

}  // namespace hotkv
