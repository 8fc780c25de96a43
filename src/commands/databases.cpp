// Whole databases: DBSIZE, FLUSHDB, FLUSHALL, SWAPDB and MOVE (SELECT is a connection command,
// connection.cpp). Every shard keeps one keyspace per database (Shard::keyspace(db)); a key
// stays on its shard whatever its database, so MOVE never crosses threads, and the
// whole-database commands run with every shard parked (kAllShards) like FLUSHALL always did.
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// A database index argument: an integer naming an existing database, or the error `not_int`
// (Redis words it per command) / the range error.
bool db_index_or_reply(CommandContext& ctx, size_t at, const char* not_int, uint32_t& out) {
  auto v = parse_int64(ctx.arg(at));
  if (!v) {
    ctx.error(not_int);
    return false;
  }
  if (*v < 0 || *v >= static_cast<int64_t>(ctx.shard.db_count())) {
    ctx.error(err::kDbIndexRange);
    return false;
  }
  out = static_cast<uint32_t>(*v);
  return true;
}

// FLUSHALL/FLUSHDB take at most one of ASYNC or SYNC (both free memory at once here).
bool flush_args_or_reply(CommandContext& ctx) {
  if (ctx.argc() > 2 || (ctx.argc() == 2 && !strcasecmp_view(ctx.arg(1), "SYNC") &&
                         !strcasecmp_view(ctx.arg(1), "ASYNC"))) {
    ctx.error(err::kSyntax);
    return false;
  }
  return true;
}

// Empties database `db` on shard `s`: watchers of keys that existed are told (as Redis, not
// those of keys that were not there), then the effect is logged -- by every shard when any of
// them held keys in it (`log_empty`), so the flush is one cross-shard operation with a part in
// every shard's log: whoever merges the shard logs into one command stream (a replica,
// hotkv-check-aof --resp) sees where it falls in each shard's writes, and its single FLUSHDB
// cannot wipe a key a shard without a part wrote after it.
void flush_db(CommandContext& ctx, Shard& s, uint32_t db, bool log_empty) {
  Keyspace& ks = s.keyspace(db);
  if (ks.size() == 0) {
    if (log_empty) {
      ctx.log_flush(s, db);
    }
    return;
  }
  int64_t now = ctx.now_ms;
  s.watches().touch_existing(
      db, [&ks, now](std::string_view key) { return ks.find(key, now) != nullptr; });
  ks.clear();
  ctx.log_flush(s, db);
}

// Whether any shard holds a key (live or not yet reclaimed) in database `db`.
bool any_keys(CommandContext& ctx, uint32_t db) {
  bool any = false;
  for_each_visible_shard(ctx, [&](Shard& s) { any = any || s.keyspace(db).size() != 0; });
  return any;
}

void cmd_dbsize(CommandContext& ctx) {
  uint64_t n = 0;
  for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
    n += ctx.engine.shard(i).keyspace(ctx.db_index).stats().keys.load(std::memory_order_relaxed);
  }
  ctx.reply.integer(static_cast<int64_t>(n));
}

// Client-side caching after a flush: every tracking client hears "everything changed" (a null
// key list), whether or not the database held anything, and the tracked keys are forgotten.
void tell_trackers_flushed(CommandContext& ctx) {
  std::vector<Shard*> held;
  for_each_visible_shard(ctx, [&held](Shard& s) { held.push_back(&s); });
  ctx.engine.tracking().flushed(held);
}

void cmd_flushdb(CommandContext& ctx) {
  if (!flush_args_or_reply(ctx)) {
    return;
  }
  bool log_empty = any_keys(ctx, ctx.db_index);
  for_each_visible_shard(ctx, [&](Shard& s) { flush_db(ctx, s, ctx.db_index, log_empty); });
  tell_trackers_flushed(ctx);
  ctx.reply.ok();
}

void cmd_flushall(CommandContext& ctx) {
  if (!flush_args_or_reply(ctx)) {
    return;
  }
  std::vector<bool> log_empty(ctx.shard.db_count());
  for (uint32_t db = 0; db < log_empty.size(); ++db) {
    log_empty[db] = any_keys(ctx, db);
  }
  for_each_visible_shard(ctx, [&](Shard& s) {
    for (uint32_t db = 0; db < s.db_count(); ++db) {
      flush_db(ctx, s, db, log_empty[db]);
    }
  });
  tell_trackers_flushed(ctx);
  ctx.reply.ok();
}

// SWAPDB index1 index2: on every shard the two keyspaces trade places. Clients connected to
// either database see the other's data at once; watchers of keys present in either are told;
// clients blocked on keys of either are re-run (the dispatcher signals every waited key after
// a whole-keyspace write), so a list that appeared under them serves them.
void cmd_swapdb(CommandContext& ctx) {
  uint32_t a = 0;
  uint32_t b = 0;
  if (!db_index_or_reply(ctx, 1, err::kFirstDbIndex, a) ||
      !db_index_or_reply(ctx, 2, err::kSecondDbIndex, b)) {
    return;
  }
  if (a == b) {
    ctx.reply.ok();
    return;
  }
  for_each_visible_shard(ctx, [&](Shard& s) {
    Keyspace& ka = s.keyspace(a);
    Keyspace& kb = s.keyspace(b);
    int64_t now = ctx.now_ms;
    auto in_either = [&](std::string_view key) {
      return ka.find(key, now) != nullptr || kb.find(key, now) != nullptr;
    };
    s.watches().touch_existing(a, in_either);
    s.watches().touch_existing(b, in_either);
    ctx.engine.tracking().invalidate_existing(s, in_either);
    s.swap_dbs(a, b);
    ctx.log_swapdb(s, a, b);
    if (a == 0 || b == 0) {
      s.soldout_index().kill_all();  // every thread's index: all threads are parked here
    }
  });
  ctx.reply.ok();
}

// MOVE key db: the key goes to the same shard's keyspace of database `db` (its slot does not
// depend on the database), with its deadline; 0 when it is missing or already there.
void cmd_move(CommandContext& ctx) {
  uint32_t target = 0;
  if (!db_index_or_reply(ctx, 2, err::kNotInteger, target)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  if (target == ctx.db_index) {
    ctx.error(err::kSameObject);
    return;
  }
  Keyspace& src = ctx.db(key);
  Value* v = src.find(key, ctx.now_ms);
  if (v == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  Keyspace& dst = ctx.db(key, target);
  if (dst.find(key, ctx.now_ms) != nullptr) {
    ctx.reply.integer(0);
    return;
  }
  Value moved = std::move(*v);
  src.erase(key);
  dst.put(key, std::move(moved));  // the deadline (and an item's holds) travel with it
  ctx.log_del(key);
  ctx.notify(kNotifyGeneric, "move_from", key);
  {
    ScopedDb in_target(ctx, target);
    ctx.log_put(key);
    ctx.notify(kNotifyGeneric, "move_to", key);
  }
  ctx.reply.integer(1);
}

}  // namespace

void register_databases(Table& t) {
  // clang-format off
  t.add({"DBSIZE",    1, kReadOnly | kFast, no_keys(), cmd_dbsize, "server", "DBSIZE", "Returns the number of keys in the selected database."});
  t.add({"FLUSHDB",  -1, kWrite | kAllShards, no_keys(), cmd_flushdb, "server", "FLUSHDB [ASYNC|SYNC]", "Removes all keys from the selected database."});
  t.add({"FLUSHALL", -1, kWrite | kAllShards, no_keys(), cmd_flushall, "server", "FLUSHALL [ASYNC|SYNC]", "Removes all keys from all databases."});
  t.add({"SWAPDB",    3, kWrite | kFast | kAllShards, no_keys(), cmd_swapdb, "server", "SWAPDB index1 index2", "Swaps two databases."});
  t.add({"MOVE",      3, kWrite | kFast, keys(1, 1, 1), cmd_move, "generic", "MOVE key db", "Moves a key to another database."});
  // clang-format on
}

}  // namespace hotkv
