// Sold-out answers on every thread (see inventory_soldout.hpp): the item's shard hands out
// beacons, every thread answers from them, and writes that change what a key holds kill them.
#include "hotkv/commands/inventory_soldout.hpp"

#include <memory>
#include <string>
#include <vector>

#include <asio/post.hpp>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/inventory_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/types/soldout_beacon.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {

namespace {

// Items with more hold records than this get no beacon: filling one would stall the shard.
constexpr size_t kMaxBeaconRecords = 1'000'000;

// Runs fn(shard) on every shard's thread: here at once, elsewhere by a posted message.
template <class F>
void on_every_shard(Engine& engine, Shard& here, F fn) {
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    Shard& target = engine.shard(i);
    if (&target == &here) {
      fn(target);
      continue;
    }
    KeyspaceStats::bump(here.cross_thread_messages());
    asio::post(target.io(), [&target, fn] { fn(target); });
  }
}

}  // namespace

void offer_soldout_beacon(CommandContext& ctx, std::string_view key, Inventory& inv) {
  // Items of database 0 only: the client's thread then answers only clients of database 0
  // (Connection::handle), and no key of another database can be mistaken for the item.
  if (ctx.multi_shard || ctx.engine.shard_count() < 2 || ctx.db_index != 0 ||
      inv.hold_records() > kMaxBeaconRecords) {
    return;
  }
  if (inv.beacon() != nullptr && inv.beacon()->alive()) {
    return;
  }
  Value* v = ctx.db(key).find(key, ctx.now_ms);
  if (v == nullptr || v->has_expiry()) {
    return;  // a beacon cannot know when the key's deadline passes
  }
  auto beacon =
      std::make_shared<SoldOutBeacon>(inv.hold_records() + 1024, inv.limits().max_per_owner);
  inv.attach_beacon(beacon);
  on_every_shard(ctx.engine, ctx.shard, [key = std::string(key), beacon](Shard& s) {
    s.soldout_index().put(key, beacon);
  });
}

bool answer_soldout_here(const CommandSpec& spec, std::span<const std::string_view> argv,
                         Engine& engine, Shard& here, ReplyWriter& reply) {
  SoldOutIndex& index = here.soldout_index();
  if (index.empty() || argv.size() < 5 || spec.name != "INV.RESERVE") {
    return false;
  }
  int64_t start = mono_us();
  SoldOutBeacon* beacon = index.find(argv[1]);
  if (beacon == nullptr) {
    return false;
  }
  ReserveArgs a;
  if (!parse_reserve_args(argv, engine.now_ms(), a).empty()) {
    return false;  // the item's shard replies with the error, as it would have
  }
  // The order of these loads is what makes the answer exact (soldout_beacon.hpp).
  int64_t available = beacon->available();
  if (a.qty <= available || beacon->may_have_hold(argv[2])) {
    return false;
  }
  if (beacon->max_per_owner() > 0 && !a.owner.empty() &&
      (a.qty > beacon->max_per_owner() || beacon->may_have_owner(a.owner))) {
    return false;  // MAXPEROWNER is checked before stock: the item's shard decides
  }
  if (!beacon->alive()) {
    return false;
  }
  std::string refusal = soldout_error(argv[1], available, a.qty);
  reply.error(refusal);
  InventoryStats& stats = here.keyspace(0).inventory_stats();
  KeyspaceStats::bump(stats.rejected_soldout);
  KeyspaceStats::bump(stats.soldout_answered_here);
  count_command(spec, argv, engine, here, mono_us() - start, refusal);
  return true;
}

void forget_soldout_beacons(const CommandSpec& spec, std::span<const std::string_view> argv,
                            Engine& engine, Shard& shard, bool multi_shard) {
  // Runs after every successful write: leave at once unless a beacon could be involved.
  if (multi_shard) {
    bool any = false;
    for (size_t i = 0; i < engine.shard_count() && !any; ++i) {
      any = !engine.shard(i).soldout_index().empty();
    }
    if (!any) {
      return;
    }
  } else if (shard.soldout_index().empty()) {
    return;
  }
  if (spec.group == "inventory") {
    return;
  }
  thread_local std::vector<size_t> keys;
  keys.clear();
  Table::key_indexes(spec, argv, keys);
  for (size_t i : keys) {
    std::string_view key = argv[i];
    forget_soldout_beacon(engine, multi_shard ? engine.shard(engine.shard_of(key)) : shard, key);
  }
}

void forget_soldout_beacon(Engine& engine, Shard& home, std::string_view key) {
  SoldOutIndex& index = home.soldout_index();
  if (index.empty()) {
    return;
  }
  std::shared_ptr<SoldOutBeacon> beacon = index.entry(key);
  if (beacon == nullptr) {
    return;
  }
  // The item may now sit under another key (RENAME) or keep its key with a deadline: it
  // keeps the dead beacon until its shard offers a new one.
  beacon->set_alive(false);
  on_every_shard(engine, home, [key = std::string(key), beacon](Shard& s) {
    s.soldout_index().erase(key, beacon.get());
  });
}

}  // namespace hotkv
