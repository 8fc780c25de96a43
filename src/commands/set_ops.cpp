// Set commands over several keys: SMOVE, SINTER, SUNION, SDIFF, their *STORE forms and
// SINTERCARD. They are written once, for one keyspace or many: when their keys span shards the
// dispatcher runs them through Engine::run_atomic with every involved shard parked, ctx.db(key)
// finds each key's keyspace and each effect goes to its key's shard log (one record part per
// shard, applied all or none), so no client sees half of an SMOVE or a *STORE.
#include <algorithm>
#include <memory>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/set_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

enum class SetOp { kInter, kUnion, kDiff };

// Looks up argv[first..] as sets for reading (nullptr: missing). As Redis, every key is
// type-checked before anything is computed, so a WRONGTYPE key fails the command even after a
// missing one.
bool lookup_sets_or_reply(CommandContext& ctx, size_t first, size_t count,
                          std::vector<const Set*>& out) {
  out.reserve(count);
  for (size_t i = first; i < first + count; ++i) {
    Set* s = nullptr;
    if (!set_lookup_or_reply(ctx, ctx.arg(i), true, s)) {
      return false;
    }
    out.push_back(s);
  }
  return true;
}

// Members of the smallest set that are in every other one: fn(member) for each, until fn
// returns false. A missing key is an empty set, so it ends the intersection at once.
template <class F>
void for_each_in_intersection(std::vector<const Set*> sets, F&& fn) {
  if (sets.empty() || std::find(sets.begin(), sets.end(), nullptr) != sets.end()) {
    return;
  }
  std::sort(sets.begin(), sets.end(),
            [](const Set* a, const Set* b) { return a->size() < b->size(); });
  sets[0]->for_each_until([&](std::string_view m) {
    for (size_t i = 1; i < sets.size(); ++i) {
      if (!sets[i]->contains(m)) {
        return true;
      }
    }
    return fn(m);
  });
}

// The result as a fresh set: a new value starts as an intset and converts as members arrive,
// as Redis builds its *STORE destinations.
std::unique_ptr<Set> compute(SetOp op, const std::vector<const Set*>& sets,
                             const EncodingLimits& limits) {
  auto out = std::make_unique<Set>();
  switch (op) {
    case SetOp::kInter:
      for_each_in_intersection(sets, [&](std::string_view m) {
        out->add(m, limits);
        return true;
      });
      break;
    case SetOp::kUnion:
      for (const Set* s : sets) {
        if (s != nullptr) {
          s->for_each([&](std::string_view m) { out->add(m, limits); });
        }
      }
      break;
    case SetOp::kDiff:
      if (sets[0] == nullptr) {
        break;
      }
      sets[0]->for_each([&](std::string_view m) {
        for (size_t i = 1; i < sets.size(); ++i) {
          if (sets[i] != nullptr && sets[i]->contains(m)) {
            return;
          }
        }
        out->add(m, limits);
      });
      break;
  }
  return out;
}

// SINTER/SUNION/SDIFF key [key ...]
void algebra_generic(CommandContext& ctx, SetOp op) {
  std::vector<const Set*> sets;
  if (!lookup_sets_or_reply(ctx, 1, ctx.argc() - 1, sets)) {
    return;
  }
  reply_members(ctx.reply, *compute(op, sets, EncodingLimits::from(ctx.engine.config())));
}

// SINTERSTORE/SUNIONSTORE/SDIFFSTORE destination key [key ...]: the destination is replaced
// whatever it held (its TTL goes too), or deleted when the result is empty. Its effect is the
// resulting set rebuilt from nothing, or the delete.
void store_generic(CommandContext& ctx, SetOp op, const char* event) {
  std::vector<const Set*> sets;
  if (!lookup_sets_or_reply(ctx, 2, ctx.argc() - 2, sets)) {
    return;
  }
  std::unique_ptr<Set> result = compute(op, sets, EncodingLimits::from(ctx.engine.config()));
  bool empty = result->empty();
  auto size = static_cast<int64_t>(result->size());
  ctx.store_or_delete(ctx.arg(1), Value::from_set(std::move(result)), empty, size, kNotifySet,
                      event);
}

// SINTERCARD's numkeys: an integer >= 1 (Redis's wording for anything else).
bool parse_numkeys_or_reply(CommandContext& ctx, int64_t& out) {
  auto n = parse_int64(ctx.arg(1));
  if (!n || *n < 1) {
    ctx.error(err::kNumkeysPositive);
    return false;
  }
  out = *n;
  return true;
}

}  // namespace

// SMOVE source destination member. As Redis 7.0: a missing source answers 0 before any type is
// checked; moving within one key only reports membership.
void cmd_smove(CommandContext& ctx) {
  std::string_view src = ctx.arg(1);
  std::string_view dst = ctx.arg(2);
  std::string_view member = ctx.arg(3);
  Value* src_value = ctx.db(src).find(src, ctx.now_ms);
  if (src_value == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  Value* dst_value = ctx.db(dst).find(dst, ctx.now_ms);
  if (src_value->type() != ValueType::kSet ||
      (dst_value != nullptr && dst_value->type() != ValueType::kSet)) {
    ctx.error(err::kWrongType);
    return;
  }
  Set* from = src_value->set();
  if (src == dst) {
    ctx.reply.integer(from->contains(member) ? 1 : 0);
    return;
  }
  if (!from->remove(member)) {
    ctx.reply.integer(0);
    return;
  }
  std::string m(member);
  log_members(ctx, src, OpCode::kSetRem, {&m, 1});
  ctx.notify(kNotifySet, "srem", src);
  delete_if_empty(ctx, src, *from);
  Set* to = dst_value == nullptr
                ? ctx.db(dst).put(dst, Value::from_set(std::make_unique<Set>())).set()
                : dst_value->set();
  if (to->add(member, EncodingLimits::from(ctx.engine.config()))) {
    log_members(ctx, dst, OpCode::kSetAdd, {&m, 1});
    ctx.notify(kNotifySet, "sadd", dst);
  }
  ctx.reply.integer(1);
}

void cmd_sinter(CommandContext& ctx) { algebra_generic(ctx, SetOp::kInter); }
void cmd_sunion(CommandContext& ctx) { algebra_generic(ctx, SetOp::kUnion); }
void cmd_sdiff(CommandContext& ctx) { algebra_generic(ctx, SetOp::kDiff); }
void cmd_sinterstore(CommandContext& ctx) { store_generic(ctx, SetOp::kInter, "sinterstore"); }
void cmd_sunionstore(CommandContext& ctx) { store_generic(ctx, SetOp::kUnion, "sunionstore"); }
void cmd_sdiffstore(CommandContext& ctx) { store_generic(ctx, SetOp::kDiff, "sdiffstore"); }

// SINTERCARD numkeys key [key ...] [LIMIT limit]: options are checked before any key.
void cmd_sintercard(CommandContext& ctx) {
  int64_t numkeys = 0;
  if (!parse_numkeys_or_reply(ctx, numkeys)) {
    return;
  }
  if (static_cast<uint64_t>(numkeys) > ctx.argc() - 2) {
    ctx.error(err::kKeysMoreThanArgs);
    return;
  }
  int64_t limit = 0;  // 0: no limit
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.argc(); ++i) {
    if (strcasecmp_view(ctx.arg(i), "LIMIT") && i + 1 < ctx.argc()) {
      auto n = parse_int64(ctx.arg(++i));
      if (!n || *n < 0) {
        ctx.error(err::kLimitNegative);
        return;
      }
      limit = *n;
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  std::vector<const Set*> sets;
  if (!lookup_sets_or_reply(ctx, 2, static_cast<size_t>(numkeys), sets)) {
    return;
  }
  int64_t n = 0;
  for_each_in_intersection(sets, [&](std::string_view) { return ++n != limit; });
  ctx.reply.integer(n);
}

void sintercard_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() < 2) {
    return;
  }
  auto n = parse_int64(argv[1]);
  if (!n || *n < 1 || static_cast<uint64_t>(*n) > argv.size() - 2) {
    return;
  }
  for (size_t i = 0; i < static_cast<size_t>(*n); ++i) {
    out.push_back(2 + i);
  }
}

}  // namespace hotkv
