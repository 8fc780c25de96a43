// Generic key commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, RENAME, RENAMENX, COPY, KEYS, SCAN,
// RANDOMKEY, OBJECT (MEMORY: memory.cpp; whole databases: databases.cpp). Multi-key commands are
// written once: when keys span shards the dispatcher runs them atomically with the shards
// parked and ctx.db(key) finds each key's keyspace, so the result is exactly what
// single-threaded Redis would give.
#include <random>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

void cmd_del(CommandContext& ctx) {
  int64_t n = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    Keyspace& db = ctx.db(ctx.arg(i));
    if (db.find(ctx.arg(i), ctx.now_ms) != nullptr && db.erase(ctx.arg(i))) {
      ctx.log_del(ctx.arg(i));
      ctx.notify(kNotifyGeneric, "del", ctx.arg(i));
      ++n;
    }
  }
  ctx.reply.integer(n);
}

// EXISTS only inspects (peek); TOUCH is the same count but is an access of each key.
void exists_generic(CommandContext& ctx, bool touch) {
  int64_t n = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    Keyspace& db = ctx.db(ctx.arg(i));
    if ((touch ? db.find_read(ctx.arg(i), ctx.now_ms) : db.peek(ctx.arg(i), ctx.now_ms)) !=
        nullptr) {
      ++n;
    }
  }
  ctx.reply.integer(n);
}

void cmd_exists(CommandContext& ctx) { exists_generic(ctx, false); }
void cmd_touch(CommandContext& ctx) { exists_generic(ctx, true); }

void cmd_type(CommandContext& ctx) {
  Value* v = ctx.db(ctx.arg(1)).peek(ctx.arg(1), ctx.now_ms);
  ctx.reply.simple(v == nullptr ? "none" : value_type_name(v->type()));
}

void rename_generic(CommandContext& ctx, bool nx) {
  std::string_view src = ctx.arg(1);
  std::string_view dst = ctx.arg(2);
  Keyspace& src_db = ctx.db(src);
  Value* v = src_db.find(src, ctx.now_ms);
  if (v == nullptr) {
    ctx.error(err::kNoSuchKey);
    return;
  }
  if (src == dst) {
    if (nx) {
      ctx.reply.integer(0);
    } else {
      ctx.reply.ok();
    }
    return;
  }
  Keyspace& dst_db = ctx.db(dst);
  if (nx && dst_db.find(dst, ctx.now_ms) != nullptr) {
    ctx.reply.integer(0);
    return;
  }
  Value moved = std::move(*v);
  src_db.erase(src);
  dst_db.put(dst, std::move(moved));  // the deadline travels with the value
  ctx.log_del(src);
  ctx.log_put(dst);
  ctx.notify(kNotifyGeneric, "rename_from", src);
  ctx.notify(kNotifyGeneric, "rename_to", dst);
  if (nx) {
    ctx.reply.integer(1);
  } else {
    ctx.reply.ok();
  }
}

void cmd_rename(CommandContext& ctx) { rename_generic(ctx, false); }
void cmd_renamenx(CommandContext& ctx) { rename_generic(ctx, true); }

// COPY source destination [DB destination-db] [REPLACE]
void cmd_copy(CommandContext& ctx) {
  bool replace = false;
  uint32_t target = ctx.db_index;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    if (strcasecmp_view(ctx.arg(i), "REPLACE")) {
      replace = true;
    } else if (strcasecmp_view(ctx.arg(i), "DB") && i + 1 < ctx.argc()) {
      int64_t db = 0;
      if (!ctx.int_arg_or_reply(++i, db)) {
        return;
      }
      if (db < 0 || db >= static_cast<int64_t>(ctx.shard.db_count())) {
        ctx.error(err::kDbIndexRange);
        return;
      }
      target = static_cast<uint32_t>(db);
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  std::string_view src = ctx.arg(1);
  std::string_view dst = ctx.arg(2);
  if (src == dst && target == ctx.db_index) {
    ctx.error(err::kSameObject);
    return;
  }
  Value* v = ctx.db(src).find(src, ctx.now_ms);
  if (v == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  Keyspace& dst_db = ctx.db(dst, target);
  if (!replace && dst_db.find(dst, ctx.now_ms) != nullptr) {
    ctx.reply.integer(0);
    return;
  }
  dst_db.put(dst, v->clone());
  {
    ScopedDb in_target(ctx, target);  // the copy is logged and announced in its database
    ctx.log_put(dst);
    ctx.notify(kNotifyGeneric, "copy_to", dst);
  }
  ctx.reply.integer(1);
}

void cmd_keys(CommandContext& ctx) {
  std::string_view pattern = ctx.arg(1);
  bool all = pattern == "*";
  std::vector<std::string> found;
  for_each_visible_shard(ctx, [&](Shard& s) {
    s.keyspace(ctx.db_index).dict().for_each([&](std::string_view key, Value& v) {
      if (v.has_expiry() && v.expire_at_ms() <= ctx.now_ms) {
        return;
      }
      if (all || glob_match(pattern, key)) {
        found.emplace_back(key);
      }
    });
  });
  ctx.reply.array(found.size());
  for (const auto& k : found) {
    ctx.reply.bulk(k);
  }
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The cursor packs the shard index with
// that shard's table cursor (cursor = table_cursor * shards + shard), so one walk visits every
// shard in turn and inherits the table's guarantee: a key present for the whole scan is
// returned at least once, even while tables grow or shrink between calls.
void cmd_scan(CommandContext& ctx) {
  auto cursor = parse_int64(ctx.arg(1));
  uint64_t ucursor = 0;
  if (!cursor) {
    // Redis accepts any unsigned 64-bit cursor.
    char* end = nullptr;
    std::string text(ctx.arg(1));
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-') {
      ctx.error(err::kInvalidCursor);
      return;
    }
    ucursor = v;
  } else {
    ucursor = static_cast<uint64_t>(*cursor);
  }
  std::string_view pattern;
  bool has_pattern = false;
  int64_t count = 10;
  std::string_view type;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (i + 1 >= ctx.argc()) {
      ctx.error(err::kSyntax);
      return;
    }
    if (strcasecmp_view(ctx.arg(i), "MATCH")) {
      pattern = ctx.arg(++i);
      has_pattern = pattern != "*";
    } else if (strcasecmp_view(ctx.arg(i), "COUNT")) {
      if (!ctx.int_arg_or_reply(++i, count)) {
        return;
      }
      if (count < 1) {
        ctx.error(err::kSyntax);
        return;
      }
    } else if (strcasecmp_view(ctx.arg(i), "TYPE")) {
      type = ctx.arg(++i);
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  size_t shards = ctx.multi_shard ? ctx.engine.shard_count() : 1;
  size_t shard_index = static_cast<size_t>(ucursor % shards);
  uint64_t table_cursor = ucursor / shards;
  std::vector<std::string> found;
  // Bound the buckets visited per call so a sparse MATCH cannot stall the shard.
  int64_t budget = count * 10;
  uint64_t next = 0;
  while (true) {
    Shard& s = ctx.multi_shard ? ctx.engine.shard(shard_index) : ctx.shard;
    Keyspace& ks = s.keyspace(ctx.db_index);
    do {
      table_cursor = ks.dict().scan(table_cursor, [&](std::string_view key, Value& v) {
        if (v.has_expiry() && v.expire_at_ms() <= ctx.now_ms) {
          return;
        }
        if (has_pattern && !glob_match(pattern, key)) {
          return;
        }
        if (!type.empty() && !equals_ignore_case(type, value_type_name(v.type()))) {
          return;
        }
        found.emplace_back(key);
      });
      --budget;
    } while (table_cursor != 0 && static_cast<int64_t>(found.size()) < count && budget > 0);
    if (table_cursor != 0) {
      next = table_cursor * shards + shard_index;
      break;
    }
    if (++shard_index >= shards) {
      next = 0;
      break;
    }
    if (static_cast<int64_t>(found.size()) >= count || budget <= 0) {
      next = shard_index;  // table cursor 0 of the next shard
      break;
    }
  }
  ctx.reply.array(2);
  ctx.reply.bulk(std::to_string(next));
  ctx.reply.array(found.size());
  for (const auto& k : found) {
    ctx.reply.bulk(k);
  }
}

void cmd_randomkey(CommandContext& ctx) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::vector<Keyspace*> candidates;
  for_each_visible_shard(ctx, [&](Shard& s) {
    if (s.keyspace(ctx.db_index).size() > 0) {
      candidates.push_back(&s.keyspace(ctx.db_index));
    }
  });
  // Expired keys found on the way are skipped; bounded so a keyspace of only expired keys
  // cannot loop for long.
  for (int attempt = 0; attempt < 100 && !candidates.empty(); ++attempt) {
    uint64_t total = 0;
    for (Keyspace* ks : candidates) {
      total += ks->size();
    }
    uint64_t pick = rng() % total;
    Keyspace* chosen = candidates.back();
    for (Keyspace* ks : candidates) {
      if (pick < ks->size()) {
        chosen = ks;
        break;
      }
      pick -= ks->size();
    }
    auto* e = chosen->dict().random_entry(rng);
    if (e == nullptr) {
      continue;
    }
    if (e->value.has_expiry() && e->value.expire_at_ms() <= ctx.now_ms) {
      continue;
    }
    ctx.reply.bulk(e->key());
    return;
  }
  ctx.reply.null();
}

void cmd_object(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (strcasecmp_view(sub, "HELP")) {
    static const char* kHelp[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used to store the value",
        "FREQ <key>",
        "    Return the access frequency index of the key <key>.",
        "IDLETIME <key>",
        "    Return the idle time of the key <key>.",
        "REFCOUNT <key>",
        "    Return the number of references of the value (always 1).",
        "HELP",
        "    Print this help."};
    ctx.reply.array(std::size(kHelp));
    for (const char* line : kHelp) {
      ctx.reply.simple(line);
    }
    return;
  }
  if (ctx.argc() != 3) {
    ctx.error(err::subcommand_arity("object", sub));
    return;
  }
  bool encoding = strcasecmp_view(sub, "ENCODING");
  bool numeric = strcasecmp_view(sub, "FREQ") || strcasecmp_view(sub, "IDLETIME") ||
                 strcasecmp_view(sub, "REFCOUNT");
  if (!encoding && !numeric) {
    ctx.error(err::unknown_subcommand("OBJECT", sub));
    return;
  }
  // Inspecting a key is not an access of it: peek leaves the clock as it was.
  Value* v = ctx.db(ctx.arg(2)).peek(ctx.arg(2), ctx.now_ms);
  const AccessClockSettings& clock = access_clock_settings();
  const bool lfu = clock.lfu.load(std::memory_order_relaxed);
  if (v == nullptr) {
    ctx.reply.null();
  } else if (encoding) {
    ctx.reply.bulk(v->encoding_name());
  } else if (strcasecmp_view(sub, "REFCOUNT")) {
    ctx.reply.integer(1);
  } else if (strcasecmp_view(sub, "IDLETIME")) {
    if (lfu) {
      ctx.error(err::kLfuNoIdleTime);
      return;
    }
    ctx.reply.integer(lru_idle_ms(v->access_clock(), ctx.now_ms) / 1000);
  } else {
    if (!lfu) {
      ctx.error(err::kNoLfuNoFreq);
      return;
    }
    ctx.reply.integer(lfu_count(v->access_clock(), ctx.now_ms,
                                clock.lfu_decay_time.load(std::memory_order_relaxed)));
  }
}

// OBJECT's key is its third argument, present only for the subcommands that take one.
void object_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() == 3) {
    out.push_back(2);
  }
}

}  // namespace

void register_keys(Table& t) {
  // clang-format off
  t.add({"DEL",       -2, kWrite | kSplitsByKey | kSplitSums, keys(1, -1, 1), cmd_del, "generic", "DEL key [key ...]", "Deletes one or more keys."});
  t.add({"UNLINK",    -2, kWrite | kFast | kSplitsByKey | kSplitSums, keys(1, -1, 1), cmd_del, "generic", "UNLINK key [key ...]", "Asynchronously deletes one or more keys."});
  t.add({"EXISTS",    -2, kReadOnly | kFast | kSplitsByKey | kSplitSums, keys(1, -1, 1), cmd_exists, "generic", "EXISTS key [key ...]", "Determines whether one or more keys exist."});
  t.add({"TOUCH",     -2, kReadOnly | kFast | kSplitsByKey | kSplitSums, keys(1, -1, 1), cmd_touch,  "generic", "TOUCH key [key ...]", "Returns the number of existing keys out of those specified after updating the time they were last accessed."});
  t.add({"TYPE",       2, kReadOnly | kFast, keys(1, 1, 1), cmd_type, "generic", "TYPE key", "Determines the type of value stored at a key."});
  t.add({"RENAME",     3, kWrite, keys(1, 2, 1), cmd_rename, "generic", "RENAME key newkey", "Renames a key and overwrites the destination."});
  t.add({"RENAMENX",   3, kWrite | kFast, keys(1, 2, 1), cmd_renamenx, "generic", "RENAMENX key newkey", "Renames a key only when the target key name doesn't exist."});
  t.add({"COPY",      -3, kWrite | kDenyOom, keys(1, 2, 1), cmd_copy, "generic", "COPY source destination [DB destination-db] [REPLACE]", "Copies the value of a key to a new key."});
  t.add({"KEYS",       2, kReadOnly | kAllShards, no_keys(), cmd_keys, "generic", "KEYS pattern", "Returns all key names that match a pattern."});
  t.add({"SCAN",      -2, kReadOnly | kAllShards, no_keys(), cmd_scan, "generic", "SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]", "Iterates over the key names in the database."});
  t.add({"RANDOMKEY",  1, kReadOnly | kAllShards, no_keys(), cmd_randomkey, "generic", "RANDOMKEY", "Returns a random key name from the database."});
  t.add({"OBJECT",    -2, kReadOnly, key_finder(2, 2, 1, object_keys), cmd_object, "generic", "OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT key", "Inspects the internals of a value (ENCODING, FREQ, IDLETIME, REFCOUNT, HELP).", {"encoding", "freq", "idletime", "refcount", "help"}});
  // clang-format on
}

}  // namespace hotkv
