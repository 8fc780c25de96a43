// The inventory family's shared machinery (see inventory_helpers.hpp): lookups and argument
// parsing with Redis-style replies, the error texts, the transitions with their log effects
// and events, and the timing wheel's hold expiry, which runs on the shard's thread with a
// command context of its own so it logs and publishes exactly as a command would.
#include "hotkv/commands/inventory_helpers.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_inventory.hpp"
#include "hotkv/commands/stream_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/slot.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

bool inventory_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read,
                               Inventory*& out) {
  Keyspace& db = ctx.db(key);
  Value* v = read ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kInventory) {
    ctx.error(err::kWrongType);
    return false;
  }
  out = v == nullptr ? nullptr : v->inventory();
  return true;
}

bool existing_inventory_or_reply(CommandContext& ctx, std::string_view key, Inventory*& out) {
  if (!inventory_lookup_or_reply(ctx, key, false, out)) {
    return false;
  }
  if (out == nullptr) {
    ctx.error(err::kNoSuchKey);
    return false;
  }
  return true;
}

bool ttl_arg_or_reply(CommandContext& ctx, size_t i, int64_t& ttl_ms) {
  int64_t at = 0;
  if (!ctx.int_arg_or_reply(i, ttl_ms)) {
    return false;
  }
  if (!expire_deadline(ttl_ms, ExpireUnit::kMillisRelative, ctx.now_ms, at)) {
    ctx.error(err::invalid_expire(ctx.arg(0)));
    return false;
  }
  return true;
}

bool qty_arg_or_reply(CommandContext& ctx, size_t i, int64_t& qty) {
  if (!ctx.int_arg_or_reply(i, qty)) {
    return false;
  }
  if (qty <= 0) {
    ctx.error(err::kQtyPositive);
    return false;
  }
  return true;
}

std::string_view parse_reserve_args(std::span<const std::string_view> argv, int64_t now_ms,
                                    ReserveArgs& out) {
  auto qty = parse_int64(argv[3]);
  if (!qty) {
    return err::kNotInteger;
  }
  if (*qty <= 0) {
    return err::kQtyPositive;
  }
  auto ttl = parse_int64(argv[4]);
  if (!ttl) {
    return err::kNotInteger;
  }
  int64_t at = 0;
  if (!expire_deadline(*ttl, ExpireUnit::kMillisRelative, now_ms, at)) {
    return err::kReserveInvalidExpire;
  }
  out.qty = *qty;
  out.ttl_ms = *ttl;
  out.owner = {};
  for (size_t i = 5; i < argv.size(); ++i) {
    if (strcasecmp_view(argv[i], "OWNER") && i + 1 < argv.size()) {
      out.owner = argv[++i];
      if (out.owner.empty()) {
        return err::kOwnerEmpty;
      }
    } else {
      return err::kSyntax;
    }
  }
  if (argv[2].empty()) {
    return err::kHoldIdEmpty;
  }
  return {};
}

std::string soldout_error(std::string_view key, int64_t available, int64_t qty) {
  return err::soldout(key, available, qty);
}

HoldState effective_state(const Hold& h, int64_t now_ms) {
  return Inventory::due(h, now_ms) ? HoldState::kExpired : h.state;
}

std::string hold_exists_error(std::string_view key, std::string_view id, HoldState state) {
  return err::hold_exists(key, id, hold_state_name(state));
}

std::string no_hold_error(std::string_view key, std::string_view id) {
  return err::no_hold(key, id);
}

std::string settled_error(std::string_view id, HoldState state) {
  switch (state) {
    case HoldState::kCommitted:
      return err::hold_committed(id);
    case HoldState::kReleased:
      return err::hold_released(id);
    case HoldState::kExpired:
      return err::hold_expired(id);
    case HoldState::kHeld:
      break;
  }
  return err::hold_is_held(id);
}

namespace {

// The context the timing wheel's expiry runs with: not a command of the table, but it needs
// one to log, notify and find keyspaces exactly as the commands do.
void no_handler(CommandContext&) {}
const CommandSpec& expiry_spec() {
  static const CommandSpec spec{"INV.EXPIRY", 1,  kWrite, no_keys(), no_handler,
                                "inventory",  "", "",     {},        0};
  return spec;
}

struct HoldInfo {
  std::string_view id;
  int64_t qty = 0;
  std::string_view owner;
  int64_t expires_at_ms = -1;  // for events that set a deadline (held, extended); else -1
};

// Publishes one event: the keyspace notification on the item key, and an entry in the item's
// EVENTS stream if it has one that lives in the item's slot (a RENAME to another slot leaves
// the stream behind; then only notifications are sent).
void publish(CommandContext& ctx, std::string_view key, const Inventory& inv, const char* event,
             const HoldInfo* hold) {
  ctx.notify(kNotifyModule, event, key);
  const std::string& skey = inv.limits().events_key;
  if (skey.empty() || key_slot(skey) != key_slot(key)) {
    return;
  }
  Keyspace& db = ctx.db(skey);
  Value* v = db.find(skey, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kStream) {
    return;  // replaced by another type since INV.CREATE: nothing to append to
  }
  Stream* s = v == nullptr ? nullptr : v->stream();
  // The id XADD * would give (a new stream's first id is now-0).
  StreamId id{static_cast<uint64_t>(ctx.now_ms), 0};
  if (s != nullptr && !s->next_auto_id(static_cast<uint64_t>(ctx.now_ms), id)) {
    return;  // the stream's ids are exhausted
  }
  if (id.is_zero()) {
    id.seq = 1;
  }
  OpArgs fields;
  fields.add("event").add(event).add("item").add(key);
  if (hold != nullptr) {
    fields.add("hold").add(hold->id).add("qty").add_int(hold->qty);
    if (!hold->owner.empty()) {
      fields.add("owner").add(hold->owner);
    }
    if (hold->expires_at_ms >= 0) {
      fields.add("expires_at").add_int(hold->expires_at_ms);
    }
  } else {
    fields.add("total").add_int(inv.total());
  }
  fields.add("available").add_int(inv.available());
  if (s == nullptr) {
    s = db.put(skey, Value::from_stream(std::make_unique<Stream>())).stream();
  }
  s->append(id, fields.views());
  if (ctx.logging(skey)) {
    OpArgs args;
    args.add(id);
    for (std::string_view f : fields.views()) {
      args.add(f);
    }
    ctx.log_op(skey, OpCode::kStreamAdd, args.views());
  }
  // MAXEVENTS trims as XADD MAXLEN ~ does: whole nodes only, so a trim (and its log record)
  // happens once per node's worth of events, and at least max_events entries stay.
  const int64_t keep = inv.limits().max_events;
  if (keep > 0 && s->length() > static_cast<size_t>(keep) &&
      s->trim_maxlen(static_cast<uint64_t>(keep), true, 100 * Stream::kNodeEntries) > 0) {
    log_trim(ctx, skey, *s);
  }
  ctx.notify(kNotifyStream, "xadd", skey);  // also wakes the stream's blocked readers
}

// Counts a hold's settlement in INFO's inventory section.
void count_settlement(InventoryStats& stats, HoldState to, int64_t qty) {
  switch (to) {
    case HoldState::kCommitted:
      KeyspaceStats::bump(stats.holds_committed);
      KeyspaceStats::bump(stats.units_sold, static_cast<uint64_t>(qty));
      break;
    case HoldState::kReleased:
      KeyspaceStats::bump(stats.holds_released);
      break;
    case HoldState::kExpired:
      KeyspaceStats::bump(stats.holds_expired);
      break;
    case HoldState::kHeld:
      break;
  }
}

}  // namespace

void publish_edges(CommandContext& ctx, std::string_view key, const Inventory& inv, uint8_t edges) {
  if ((edges & kEdgeSoldOut) != 0) {
    publish(ctx, key, inv, "inv.soldout", nullptr);
  }
  if ((edges & kEdgeBackInStock) != 0) {
    publish(ctx, key, inv, "inv.backinstock", nullptr);
  }
}

void publish_item_event(CommandContext& ctx, std::string_view key, const Inventory& inv,
                        const char* event) {
  publish(ctx, key, inv, event, nullptr);
}

void reserve_hold(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id,
                  int64_t qty, std::string_view owner, int64_t expires_at_ms) {
  uint8_t edges = inv.reserve(id, qty, owner, ctx.now_ms, expires_at_ms);
  Keyspace& db = ctx.db(key);
  db.schedule_hold(key, id, expires_at_ms);
  KeyspaceStats::bump(db.inventory_stats().holds_reserved);
  KeyspaceStats::bump(db.inventory_stats().units_reserved, static_cast<uint64_t>(qty));
  if (ctx.logging(key)) {
    OpArgs args;
    args.add(id).add_int(qty).add(owner).add_int(ctx.now_ms).add_int(expires_at_ms);
    ctx.log_op(key, OpCode::kInvReserve, args.views());
  }
  HoldInfo info{id, qty, owner, expires_at_ms};
  publish(ctx, key, inv, "inv.held", &info);
  publish_edges(ctx, key, inv, edges);
}

void settle_hold(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id,
                 HoldState to) {
  int64_t retention =
      ctx.engine.config().inventory_hold_retention_ms.load(std::memory_order_relaxed);
  // An expiry happened at the deadline, however late it is processed (a restart, a backlog):
  // the record says so, and its retention counts from there.
  int64_t settled_at = ctx.now_ms;
  if (to == HoldState::kExpired) {
    settled_at = std::min(settled_at, inv.find_raw(id)->expires_at_ms);
  }
  int64_t purge_at = settled_at + retention;
  uint8_t edges = inv.settle(id, to, settled_at, purge_at);
  const Hold* h = inv.find_raw(id);
  Keyspace& db = ctx.db(key);
  db.schedule_hold(key, id, purge_at);
  count_settlement(db.inventory_stats(), to, h->qty);
  if (ctx.logging(key)) {
    OpArgs args;
    args.add(id).add(hold_state_name(to)).add_int(settled_at).add_int(purge_at);
    ctx.log_op(key, OpCode::kInvSettle, args.views());
  }
  HoldInfo info{id, h->qty, h->owner};
  const char* event = to == HoldState::kCommitted  ? "inv.committed"
                      : to == HoldState::kReleased ? "inv.released"
                                                   : "inv.expired";
  publish(ctx, key, inv, event, &info);
  publish_edges(ctx, key, inv, edges);
}

void extend_hold(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id,
                 int64_t at_ms) {
  inv.extend(id, at_ms);
  ctx.db(key).schedule_hold(key, id, at_ms);
  if (ctx.logging(key)) {
    OpArgs args;
    args.add(id).add_int(at_ms);
    ctx.log_op(key, OpCode::kInvExtend, args.views());
  }
  const Hold* h = inv.find_raw(id);
  HoldInfo info{id, h->qty, h->owner, at_ms};
  publish(ctx, key, inv, "inv.extended", &info);
}

bool expire_if_due(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id) {
  const Hold* h = inv.find_raw(id);
  if (h == nullptr || !Inventory::due(*h, ctx.now_ms)) {
    return false;
  }
  settle_hold(ctx, key, inv, id, HoldState::kExpired);
  return true;
}

std::optional<size_t> expire_due_holds(Engine& engine, Shard& shard, int64_t now_ms,
                                       size_t max_items) {
  if (engine.loading()) {
    // An expiry must be logged after everything being replayed: wait for the load to end.
    return std::nullopt;
  }
  std::string unused;
  ReplyWriter writer(unused, 2);
  CommandContext ctx{.argv = {},
                     .reply = writer,
                     .engine = engine,
                     .shard = shard,
                     .multi_shard = false,
                     .session = nullptr,
                     .spec = expiry_spec(),
                     .now_ms = now_ms,
                     .scratch = {},
                     .block_request = nullptr,
                     .woken = false,
                     .logged_shards = {}};
  size_t fired = 0;
  for (uint32_t db = 0; db < shard.db_count() && fired < max_items; ++db) {
    Keyspace& ks = shard.keyspace(db);
    if (ks.hold_entries() == 0) {
      continue;
    }
    ctx.db_index = db;
    fired +=
        ks.advance_holds(now_ms, max_items - fired, [&](std::string_view key, std::string_view id) {
          Value* v = ks.find(key, now_ms);
          if (v == nullptr || v->type() != ValueType::kInventory) {
            return;  // deleted or replaced since: a stale entry
          }
          Inventory& inv = *v->inventory();
          const Hold* h = inv.find_raw(id);
          if (h == nullptr) {
            return;
          }
          if (Inventory::due(*h, now_ms)) {
            settle_hold(ctx, key, inv, id, HoldState::kExpired);
          } else if (h->state != HoldState::kHeld && h->purge_at_ms <= now_ms) {
            // Not logged: the purge time is in the log already, and replay drops the record
            // the same way once loaded.
            inv.purge(id);
          }
        });
  }
  // One record for the batch; written now, since no connection's reply will flush it.
  shard.log().end_record(0, 1);
  DurabilityBarrier::pass(shard);
  return fired;
}

void install_inventory_expiry(Engine& engine) {
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    Engine* e = &engine;
    Shard* s = &engine.shard(i);
    s->set_hold_expiry_hook([e, s](int64_t now_ms, size_t max_items) {
      return expire_due_holds(*e, *s, now_ms, max_items);
    });
  }
}

}  // namespace hotkv
