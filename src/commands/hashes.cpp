// Hashes: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HEXISTS, HLEN,
// HSTRLEN, HINCRBY, HINCRBYFLOAT, HSCAN, HRANDFIELD, and register_hashes. Replies and error
// texts follow Redis 7; a key never holds an empty hash (HDEL of the last field deletes it).
// Every write logs its effect (kHashSet/kHashDel with the final values, op_effects.hpp) and
// publishes Redis's keyspace events (class h: hset, hdel, hincrby, hincrbyfloat).
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <unordered_set>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/random_replies.hpp"
#include "hotkv/commands/scan_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/types/hash.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

namespace {

// Redis would build a reply of any length for HRANDFIELD with a negative count (it repeats
// fields); we refuse counts whose reply could not sensibly fit in memory instead.
constexpr int64_t kMaxRandomRepeats = int64_t{1} << 24;

// Looks the hash up (for reading when `read`: counts hits and misses). Replies WRONGTYPE and
// returns false if the key holds another type; h is nullptr when the key is missing.
bool hash_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, Hash*& h) {
  Keyspace& db = ctx.db(key);
  Value* v = read ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kHash) {
    ctx.error(err::kWrongType);
    return false;
  }
  h = v == nullptr ? nullptr : v->hash();
  return true;
}

// The hash under key, created empty if missing. Call only once every check has passed: the
// caller must put at least one field in it before returning.
Hash& hash_for_write(CommandContext& ctx, std::string_view key, Hash* existing) {
  if (existing != nullptr) {
    return *existing;
  }
  return *ctx.db(key).put(key, Value::from_hash(std::make_unique<Hash>())).hash();
}

void log_set(CommandContext& ctx, std::string_view key, std::string_view field,
             std::string_view value) {
  std::string_view args[] = {field, value};
  ctx.log_op(key, OpCode::kHashSet, args);
}

// HSET key field value [field value ...] and HMSET (which replies OK).
void hset_generic(CommandContext& ctx, bool hmset) {
  if (ctx.argc() % 2 != 0) {
    ctx.wrong_arity();
    return;
  }
  std::string_view key = ctx.arg(1);
  Hash* existing = nullptr;
  if (!hash_lookup_or_reply(ctx, key, false, existing)) {
    return;
  }
  Hash& h = hash_for_write(ctx, key, existing);
  const EncodingLimits limits = EncodingLimits::from(ctx.engine.config());
  int64_t created = 0;
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    created += h.set(ctx.arg(i), ctx.arg(i + 1), limits) ? 1 : 0;
  }
  ctx.log_op(key, OpCode::kHashSet, ctx.argv.subspan(2));
  ctx.notify(kNotifyHash, "hset", key);
  if (hmset) {
    ctx.reply.ok();
  } else {
    ctx.reply.integer(created);
  }
}

void cmd_hset(CommandContext& ctx) { hset_generic(ctx, false); }
void cmd_hmset(CommandContext& ctx) { hset_generic(ctx, true); }

void cmd_hsetnx(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Hash* existing = nullptr;
  if (!hash_lookup_or_reply(ctx, key, false, existing)) {
    return;
  }
  if (existing != nullptr && existing->get(ctx.arg(2)) != nullptr) {
    ctx.reply.integer(0);
    return;
  }
  hash_for_write(ctx, key, existing)
      .set(ctx.arg(2), ctx.arg(3), EncodingLimits::from(ctx.engine.config()));
  log_set(ctx, key, ctx.arg(2), ctx.arg(3));
  ctx.notify(kNotifyHash, "hset", key);
  ctx.reply.integer(1);
}

void cmd_hget(CommandContext& ctx) {
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  const std::string* v = h == nullptr ? nullptr : h->get(ctx.arg(2));
  if (v == nullptr) {
    ctx.reply.null();
  } else {
    ctx.reply.bulk(*v);
  }
}

void cmd_hmget(CommandContext& ctx) {
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  ctx.reply.array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const std::string* v = h == nullptr ? nullptr : h->get(ctx.arg(i));
    if (v == nullptr) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(*v);
    }
  }
}

// HGETALL (a map), HKEYS and HVALS (arrays).
void hgetall_generic(CommandContext& ctx, bool fields, bool values) {
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  size_t n = h == nullptr ? 0 : h->size();
  if (fields && values) {
    ctx.reply.map(n);
  } else {
    ctx.reply.array(n);
  }
  if (h == nullptr) {
    return;
  }
  h->for_each([&](std::string_view f, const std::string& v) {
    if (fields) {
      ctx.reply.bulk(f);
    }
    if (values) {
      ctx.reply.bulk(v);
    }
  });
}

void cmd_hgetall(CommandContext& ctx) { hgetall_generic(ctx, true, true); }
void cmd_hkeys(CommandContext& ctx) { hgetall_generic(ctx, true, false); }
void cmd_hvals(CommandContext& ctx) { hgetall_generic(ctx, false, true); }

void cmd_hdel(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, key, false, h)) {
    return;
  }
  if (h == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<std::string_view> deleted;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (h->erase(ctx.arg(i))) {
      deleted.push_back(ctx.arg(i));
    }
  }
  if (!deleted.empty()) {
    bool emptied = h->empty();
    if (emptied) {
      ctx.db(key).erase(key);
    }
    // Replay of kHashDel removes an emptied hash's key too.
    ctx.log_op(key, OpCode::kHashDel, deleted);
    ctx.notify(kNotifyHash, "hdel", key);
    if (emptied) {
      ctx.notify(kNotifyGeneric, "del", key);
    }
  }
  ctx.reply.integer(static_cast<int64_t>(deleted.size()));
}

void cmd_hexists(CommandContext& ctx) {
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  ctx.reply.integer(h != nullptr && h->get(ctx.arg(2)) != nullptr ? 1 : 0);
}

void cmd_hlen(CommandContext& ctx) {
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  ctx.reply.integer(h == nullptr ? 0 : static_cast<int64_t>(h->size()));
}

void cmd_hstrlen(CommandContext& ctx) {
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  const std::string* v = h == nullptr ? nullptr : h->get(ctx.arg(2));
  ctx.reply.integer(v == nullptr ? 0 : static_cast<int64_t>(v->size()));
}

void cmd_hincrby(CommandContext& ctx) {
  int64_t incr = 0;
  if (!ctx.int_arg_or_reply(3, incr)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  Hash* existing = nullptr;
  if (!hash_lookup_or_reply(ctx, key, false, existing)) {
    return;
  }
  int64_t cur = 0;
  if (const std::string* v = existing == nullptr ? nullptr : existing->get(ctx.arg(2))) {
    auto parsed = parse_int64(*v);
    if (!parsed) {
      ctx.error(err::kHashNotInteger);
      return;
    }
    cur = *parsed;
  }
  int64_t next = 0;
  if (__builtin_add_overflow(cur, incr, &next)) {
    ctx.error(err::kOverflow);
    return;
  }
  ctx.scratch.clear();
  append_int64(ctx.scratch, next);
  hash_for_write(ctx, key, existing)
      .set(ctx.arg(2), ctx.scratch, EncodingLimits::from(ctx.engine.config()));
  log_set(ctx, key, ctx.arg(2), ctx.scratch);
  ctx.notify(kNotifyHash, "hincrby", key);
  ctx.reply.integer(next);
}

void cmd_hincrbyfloat(CommandContext& ctx) {
  auto incr = parse_long_double(ctx.arg(3));
  if (!incr) {
    ctx.error(err::kNotFloat);
    return;
  }
  if (std::isinf(*incr)) {
    ctx.error(err::kIncrNaNOrInf);
    return;
  }
  std::string_view key = ctx.arg(1);
  Hash* existing = nullptr;
  if (!hash_lookup_or_reply(ctx, key, false, existing)) {
    return;
  }
  long double cur = 0;
  if (const std::string* v = existing == nullptr ? nullptr : existing->get(ctx.arg(2))) {
    auto parsed = parse_long_double(*v);
    if (!parsed) {
      ctx.error(err::kHashNotFloat);
      return;
    }
    cur = *parsed;
  }
  long double next = cur + *incr;
  if (std::isnan(next) || std::isinf(next)) {
    ctx.error(err::kIncrFloatNaN);
    return;
  }
  // Logged as the formatted result, so replay stores this exact text (as Redis propagates
  // HINCRBYFLOAT as an HSET of its result).
  std::string text = format_long_double_human(next);
  hash_for_write(ctx, key, existing)
      .set(ctx.arg(2), text, EncodingLimits::from(ctx.engine.config()));
  log_set(ctx, key, ctx.arg(2), text);
  ctx.notify(kNotifyHash, "hincrbyfloat", key);
  ctx.reply.bulk(text);
}

// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]. A listpack hash comes back whole
// with cursor 0; a hashtable is walked bucket by bucket with the Dict cursor (at most COUNT*10
// buckets per call), so a field present for the whole iteration is returned at least once.
void cmd_hscan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!parse_scan_cursor_or_reply(ctx, ctx.arg(2), cursor)) {
    return;
  }
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, ctx.arg(1), true, h)) {
    return;
  }
  if (h == nullptr) {
    reply_empty_scan(ctx);
    return;
  }
  ScanOptions opts;
  if (!parse_scan_options_or_reply(ctx, 3, true, opts)) {
    return;
  }
  // Views of the fields: they live in the table's nodes, unchanged until the reply is written.
  std::vector<std::pair<std::string_view, const std::string*>> found;
  auto take = [&](std::string_view f, const std::string& v) {
    if (!opts.has_pattern || glob_match(opts.pattern, f)) {
      found.emplace_back(f, &v);
    }
  };
  // As Redis, COUNT bounds the reply's elements (a field and its value are two).
  size_t per_pair = opts.novalues ? 1 : 2;
  int64_t budget = opts.count * 10;
  do {
    cursor = h->scan(cursor, take);
  } while (cursor != 0 && --budget > 0 && found.size() * per_pair < static_cast<uint64_t>(opts.count));
  ctx.reply.array(2);
  ctx.reply.bulk(std::to_string(cursor));
  ctx.reply.array(found.size() * per_pair);
  for (const auto& [f, v] : found) {
    ctx.reply.bulk(f);
    if (!opts.novalues) {
      ctx.reply.bulk(*v);
    }
  }
}

// HRANDFIELD key [count [WITHVALUES]]. A negative count may repeat fields; a positive one
// returns distinct fields, at most the whole hash. With WITHVALUES, RESP3 gets [field, value]
// pairs and RESP2 a flat list.
void cmd_hrandfield(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  if (ctx.argc() == 2) {
    Hash* h = nullptr;
    if (!hash_lookup_or_reply(ctx, key, true, h)) {
      return;
    }
    if (h == nullptr) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(h->random_pair(random_reply_engine()).first);
    }
    return;
  }
  int64_t l = 0;
  if (!ctx.int_arg_or_reply(2, l)) {
    return;
  }
  if (l == std::numeric_limits<int64_t>::min()) {
    ctx.error(err::kOutOfRangeLong);
    return;
  }
  bool withvalues = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !strcasecmp_view(ctx.arg(3), "WITHVALUES"))) {
    ctx.error(err::kSyntax);
    return;
  }
  if (ctx.argc() == 4) {
    withvalues = true;
    constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
    if (l < -kHalf || l > kHalf) {
      ctx.error(err::kOutOfRange);
      return;
    }
  }
  if (l < -kMaxRandomRepeats) {
    ctx.error(err::kOutOfRange);
    return;
  }
  Hash* h = nullptr;
  if (!hash_lookup_or_reply(ctx, key, true, h)) {
    return;
  }
  if (h == nullptr || l == 0) {
    ctx.reply.array(0);
    return;
  }
  bool pairs = withvalues && ctx.reply.proto() == 3;
  auto header = [&](size_t n) { ctx.reply.array(withvalues && !pairs ? n * 2 : n); };
  auto emit = [&](std::string_view f, const std::string& v) {
    if (pairs) {
      ctx.reply.array(2);
    }
    ctx.reply.bulk(f);
    if (withvalues) {
      ctx.reply.bulk(v);
    }
  };
  auto& rng = random_reply_engine();
  size_t size = h->size();
  if (l < 0 || l == 1) {
    // Repeats allowed: every pick samples the whole hash.
    auto n = static_cast<size_t>(l < 0 ? -l : l);
    header(n);
    for (size_t i = 0; i < n; ++i) {
      auto [f, v] = h->random_pair(rng);
      emit(f, *v);
    }
    return;
  }
  auto n = static_cast<size_t>(l);
  if (n >= size) {
    header(size);
    h->for_each(emit);
    return;
  }
  // A field's value pointer is stable and unique, so it also tells picks apart.
  std::vector<std::pair<std::string_view, const std::string*>> chosen;
  chosen.reserve(n);
  if (n * 3 > size) {
    // Close to the whole hash: take everything and drop random pairs until n remain.
    h->for_each([&](std::string_view f, const std::string& v) { chosen.emplace_back(f, &v); });
    while (chosen.size() > n) {
      std::uniform_int_distribution<size_t> pick(0, chosen.size() - 1);
      std::swap(chosen[pick(rng)], chosen.back());
      chosen.pop_back();
    }
  } else {
    // Far fewer than the hash holds: random picks, skipping repeats.
    std::unordered_set<const std::string*> seen;
    while (chosen.size() < n) {
      auto p = h->random_pair(rng);
      if (seen.insert(p.second).second) {
        chosen.push_back(p);
      }
    }
  }
  header(n);
  for (const auto& [f, v] : chosen) {
    emit(f, *v);
  }
}

}  // namespace

void register_hashes(Table& t) {
  // clang-format off
  t.add({"HSET",         -4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_hset, "hash", "HSET key field value [field value ...]", "Sets fields of a hash (creating it if missing); returns how many fields were new."});
  t.add({"HSETNX",        4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_hsetnx, "hash", "HSETNX key field value", "Sets a field of a hash only if the field does not exist yet."});
  t.add({"HMSET",        -4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_hmset, "hash", "HMSET key field value [field value ...]", "Sets fields of a hash and replies OK (deprecated form of HSET)."});
  t.add({"HGET",          3, kReadOnly | kFast, keys(1, 1, 1), cmd_hget, "hash", "HGET key field", "Returns the value of a field in a hash."});
  t.add({"HMGET",        -3, kReadOnly | kFast, keys(1, 1, 1), cmd_hmget, "hash", "HMGET key field [field ...]", "Returns the values of the given fields of a hash (nil for missing ones)."});
  t.add({"HGETALL",       2, kReadOnly, keys(1, 1, 1), cmd_hgetall, "hash", "HGETALL key", "Returns every field and value of a hash."});
  t.add({"HKEYS",         2, kReadOnly, keys(1, 1, 1), cmd_hkeys, "hash", "HKEYS key", "Returns every field name of a hash."});
  t.add({"HVALS",         2, kReadOnly, keys(1, 1, 1), cmd_hvals, "hash", "HVALS key", "Returns every value of a hash."});
  t.add({"HDEL",         -3, kWrite | kFast, keys(1, 1, 1), cmd_hdel, "hash", "HDEL key field [field ...]", "Deletes fields of a hash (the key goes with the last one); returns how many existed."});
  t.add({"HEXISTS",       3, kReadOnly | kFast, keys(1, 1, 1), cmd_hexists, "hash", "HEXISTS key field", "Returns whether a field exists in a hash."});
  t.add({"HLEN",          2, kReadOnly | kFast, keys(1, 1, 1), cmd_hlen, "hash", "HLEN key", "Returns the number of fields in a hash."});
  t.add({"HSTRLEN",       3, kReadOnly | kFast, keys(1, 1, 1), cmd_hstrlen, "hash", "HSTRLEN key field", "Returns the length of a field's value in a hash."});
  t.add({"HINCRBY",       4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_hincrby, "hash", "HINCRBY key field increment", "Increments the integer value of a hash field (0 if missing) by an integer."});
  t.add({"HINCRBYFLOAT",  4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_hincrbyfloat, "hash", "HINCRBYFLOAT key field increment", "Increments the numeric value of a hash field (0 if missing) by a floating point number."});
  t.add({"HSCAN",        -3, kReadOnly, keys(1, 1, 1), cmd_hscan, "hash", "HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]", "Iterates over the fields and values of a hash."});
  t.add({"HRANDFIELD",   -2, kReadOnly, keys(1, 1, 1), cmd_hrandfield, "hash", "HRANDFIELD key [count [WITHVALUES]]", "Returns one or more random fields of a hash, optionally with their values."});
  // clang-format on
}

}  // namespace hotkv
