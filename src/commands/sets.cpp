// Sets: SADD, SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP, SRANDMEMBER, SSCAN, the
// family's shared helpers, and register_sets with every set command (SMOVE and the set algebra
// live in set_ops.cpp). Replies, error texts and keyspace events follow Redis 7.0 (the version
// the integration tests compare against). Every write logs its effect as the members it added
// or removed (kSetAdd/kSetRem), so SPOP's random choice is replayed, never re-drawn.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
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
#include "hotkv/commands/set_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

// ---------------------------------------------------------------------------------------------
// Shared helpers (set_helpers.hpp).

bool set_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, Set*& out) {
  Keyspace& db = ctx.db(key);
  Value* v = read ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kSet) {
    ctx.error(err::kWrongType);
    return false;
  }
  out = v == nullptr ? nullptr : v->set();
  return true;
}

void reply_members(ReplyWriter& w, const Set& s) {
  w.set(s.size());
  s.for_each([&](std::string_view m) { w.bulk(m); });
}

void log_members(CommandContext& ctx, std::string_view key, OpCode op,
                 std::span<const std::string> members) {
  if (members.empty() || !ctx.logging(key)) {
    return;
  }
  OpArgs args;
  for (const std::string& m : members) {
    args.add(m);
  }
  ctx.log_op(key, op, args.views());
}

bool delete_if_empty(CommandContext& ctx, std::string_view key, const Set& s) {
  if (!s.empty()) {
    return false;
  }
  ctx.db(key).erase(key);
  ctx.notify(kNotifyGeneric, "del", key);
  return true;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Commands.

// SADD key member [member ...]
void cmd_sadd(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  if (s == nullptr) {
    s = ctx.db(key).put(key, Value::from_set(std::make_unique<Set>())).set();
  }
  const EncodingLimits limits = EncodingLimits::from(ctx.engine.config());
  std::vector<std::string> added;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (s->add(ctx.arg(i), limits)) {
      added.emplace_back(ctx.arg(i));
    }
  }
  log_members(ctx, key, OpCode::kSetAdd, added);
  if (!added.empty()) {
    ctx.notify(kNotifySet, "sadd", key);
  }
  ctx.reply.integer(static_cast<int64_t>(added.size()));
}

// SREM key member [member ...]
void cmd_srem(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  std::vector<std::string> removed;
  for (size_t i = 2; s != nullptr && i < ctx.argc() && !s->empty(); ++i) {
    if (s->remove(ctx.arg(i))) {
      removed.emplace_back(ctx.arg(i));
    }
  }
  if (!removed.empty()) {
    log_members(ctx, key, OpCode::kSetRem, removed);
    ctx.notify(kNotifySet, "srem", key);
    delete_if_empty(ctx, key, *s);
  }
  ctx.reply.integer(static_cast<int64_t>(removed.size()));
}

void cmd_sismember(CommandContext& ctx) {
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  ctx.reply.integer(s != nullptr && s->contains(ctx.arg(2)) ? 1 : 0);
}

void cmd_smismember(CommandContext& ctx) {
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  ctx.reply.array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.integer(s != nullptr && s->contains(ctx.arg(i)) ? 1 : 0);
  }
}

void cmd_smembers(CommandContext& ctx) {
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  if (s == nullptr) {
    ctx.reply.set(0);
    return;
  }
  reply_members(ctx.reply, *s);
}

void cmd_scard(CommandContext& ctx) {
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  ctx.reply.integer(s == nullptr ? 0 : static_cast<int64_t>(s->size()));
}

// `count` distinct members chosen uniformly, without changing the set. REQUIRES:
// count < s.size(). A large share is drawn by a partial shuffle of every member; a small one
// by drawing until enough distinct members came up (as Redis switches strategies).
std::vector<std::string> distinct_random_members(const Set& s, size_t count) {
  std::vector<std::string> out;
  if (count * 3 > s.size()) {
    out = s.members();
    for (size_t i = 0; i < count; ++i) {
      std::uniform_int_distribution<size_t> pick(i, out.size() - 1);
      std::swap(out[i], out[pick(random_reply_engine())]);
    }
    out.resize(count);
    return out;
  }
  std::unordered_set<std::string> seen;
  out.reserve(count);
  // Each draw finds a new member with probability > 2/3, so this ends quickly; the bound only
  // guards against a broken generator.
  for (size_t draws = 0; out.size() < count && draws < count * 1000; ++draws) {
    std::string m = s.random_member(random_reply_engine());
    if (seen.insert(m).second) {
      out.push_back(std::move(m));
    }
  }
  return out;
}

// SPOP key [count]
void cmd_spop(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.error(err::kSyntax);
    return;
  }
  std::string_view key = ctx.arg(1);
  bool with_count = ctx.argc() == 3;
  uint64_t count = 1;
  if (with_count) {
    auto n = parse_int64(ctx.arg(2));
    if (!n || *n < 0) {
      ctx.error(err::kCountPositive);
      return;
    }
    count = static_cast<uint64_t>(*n);
  }
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  if (s == nullptr || count == 0) {
    if (with_count) {
      ctx.reply.set(0);
    } else {
      ctx.reply.null();
    }
    return;
  }
  std::vector<std::string> popped;
  if (count >= s->size()) {
    popped = s->members();  // the whole set: the key goes
  } else if (count * 5 > s->size()) {
    popped = distinct_random_members(*s, static_cast<size_t>(count));
  } else {
    // A small share: draw from what is left, one at a time.
    for (uint64_t i = 0; i < count; ++i) {
      popped.push_back(s->random_member(random_reply_engine()));
      s->remove(popped.back());
    }
  }
  for (const std::string& m : popped) {
    s->remove(m);  // (already gone when drawn one at a time)
  }
  log_members(ctx, key, OpCode::kSetRem, popped);
  ctx.notify(kNotifySet, "spop", key);
  delete_if_empty(ctx, key, *s);
  if (!with_count) {
    ctx.reply.bulk(popped.front());
    return;
  }
  ctx.reply.set(popped.size());
  for (const std::string& m : popped) {
    ctx.reply.bulk(m);
  }
}

// SRANDMEMBER key [count]: a negative count may repeat members, a positive one never does.
void cmd_srandmember(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.error(err::kSyntax);
    return;
  }
  bool with_count = ctx.argc() == 3;
  int64_t n = 0;
  if (with_count) {
    if (!ctx.int_arg_or_reply(2, n)) {
      return;
    }
    if (n == INT64_MIN) {
      ctx.error(err::kOutOfRangeLong);
      return;
    }
    if (n < 0 && static_cast<uint64_t>(-n) > kMaxRandomReplies) {
      ctx.error(err::kOutOfRange);
      return;
    }
  }
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  if (!with_count) {
    if (s == nullptr) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(s->random_member(random_reply_engine()));
    }
    return;
  }
  if (s == nullptr || n == 0) {
    ctx.reply.array(0);
    return;
  }
  if (n < 0) {
    auto count = static_cast<size_t>(-n);
    ctx.reply.array(count);
    for (size_t i = 0; i < count; ++i) {
      ctx.reply.bulk(s->random_member(random_reply_engine()));
    }
    return;
  }
  if (static_cast<uint64_t>(n) >= s->size()) {
    ctx.reply.array(s->size());
    s->for_each([&](std::string_view m) { ctx.reply.bulk(m); });
    return;
  }
  std::vector<std::string> picked = distinct_random_members(*s, static_cast<size_t>(n));
  ctx.reply.array(picked.size());
  for (const std::string& m : picked) {
    ctx.reply.bulk(m);
  }
}

// SSCAN key cursor [MATCH pattern] [COUNT count]. As Redis: the cursor is checked first, then
// the key (a missing key ends the scan before options are looked at), then the options.
void cmd_sscan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!parse_scan_cursor_or_reply(ctx, ctx.arg(2), cursor)) {
    return;
  }
  Set* s = nullptr;
  if (!set_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  if (s == nullptr) {
    reply_empty_scan(ctx);
    return;
  }
  ScanOptions opts;
  if (!parse_scan_options_or_reply(ctx, 3, false, opts)) {
    return;
  }
  std::vector<std::string> found;
  // As Redis: visit buckets until COUNT members were collected or 10 x COUNT buckets were
  // visited (so a sparse table cannot stall the shard), then filter by MATCH.
  int64_t budget = opts.count * 10;
  do {
    cursor = s->scan(cursor, [&](std::string_view m) { found.emplace_back(m); });
  } while (cursor != 0 && --budget > 0 && static_cast<int64_t>(found.size()) < opts.count);
  if (opts.has_pattern) {
    std::erase_if(found, [&](const std::string& m) { return !glob_match(opts.pattern, m); });
  }
  ctx.reply.array(2);
  ctx.reply.bulk(std::to_string(cursor));
  ctx.reply.array(found.size());
  for (const std::string& m : found) {
    ctx.reply.bulk(m);
  }
}

}  // namespace

void register_sets(Table& t) {
  // clang-format off
  t.add({"SADD",        -3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_sadd, "set", "SADD key member [member ...]", "Adds members to a set (created if missing); returns how many were new."});
  t.add({"SREM",        -3, kWrite | kFast, keys(1, 1, 1), cmd_srem, "set", "SREM key member [member ...]", "Removes members from a set (deleting it once empty); returns how many were there."});
  t.add({"SISMEMBER",    3, kReadOnly | kFast, keys(1, 1, 1), cmd_sismember, "set", "SISMEMBER key member", "Determines whether a member belongs to a set."});
  t.add({"SMISMEMBER",  -3, kReadOnly | kFast, keys(1, 1, 1), cmd_smismember, "set", "SMISMEMBER key member [member ...]", "Determines whether each of several members belongs to a set."});
  t.add({"SMEMBERS",     2, kReadOnly, keys(1, 1, 1), cmd_smembers, "set", "SMEMBERS key", "Returns every member of a set."});
  t.add({"SCARD",        2, kReadOnly | kFast, keys(1, 1, 1), cmd_scard, "set", "SCARD key", "Returns the number of members in a set."});
  t.add({"SPOP",        -2, kWrite | kFast, keys(1, 1, 1), cmd_spop, "set", "SPOP key [count]", "Removes and returns one or more random members of a set."});
  t.add({"SRANDMEMBER", -2, kReadOnly, keys(1, 1, 1), cmd_srandmember, "set", "SRANDMEMBER key [count]", "Returns random members of a set: distinct for a positive count, possibly repeated for a negative one."});
  t.add({"SSCAN",       -3, kReadOnly, keys(1, 1, 1), cmd_sscan, "set", "SSCAN key cursor [MATCH pattern] [COUNT count]", "Iterates over the members of a set."});
  t.add({"SMOVE",        4, kWrite | kFast, keys(1, 2, 1), cmd_smove, "set", "SMOVE source destination member", "Moves a member from one set to another."});
  t.add({"SINTER",      -2, kReadOnly, keys(1, -1, 1), cmd_sinter, "set", "SINTER key [key ...]", "Returns the intersection of sets."});
  t.add({"SINTERCARD",  -3, kReadOnly, key_finder(0, 0, 0, sintercard_keys), cmd_sintercard, "set", "SINTERCARD numkeys key [key ...] [LIMIT limit]", "Returns the number of members in the intersection of sets, counting up to LIMIT."});
  t.add({"SINTERSTORE", -3, kWrite | kDenyOom, keys(1, -1, 1), cmd_sinterstore, "set", "SINTERSTORE destination key [key ...]", "Stores the intersection of sets in a key; returns its size."});
  t.add({"SUNION",      -2, kReadOnly, keys(1, -1, 1), cmd_sunion, "set", "SUNION key [key ...]", "Returns the union of sets."});
  t.add({"SUNIONSTORE", -3, kWrite | kDenyOom, keys(1, -1, 1), cmd_sunionstore, "set", "SUNIONSTORE destination key [key ...]", "Stores the union of sets in a key; returns its size."});
  t.add({"SDIFF",       -2, kReadOnly, keys(1, -1, 1), cmd_sdiff, "set", "SDIFF key [key ...]", "Returns the members of the first set that are in none of the others."});
  t.add({"SDIFFSTORE",  -3, kWrite | kDenyOom, keys(1, -1, 1), cmd_sdiffstore, "set", "SDIFFSTORE destination key [key ...]", "Stores the difference of sets in a key; returns its size."});
  // clang-format on
}

}  // namespace hotkv
