// Lists: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET, LINSERT, LREM,
// LTRIM, LPOS, the family's shared helpers (list_helpers.hpp), and register_lists with every
// list command (LMOVE, LMPOP and the blocking family live in list_moves.cpp). Replies, error
// texts and keyspace events follow Redis 7.0. Every write logs the list operation itself
// with normalised indexes (list_effects.cpp): list commands are deterministic.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/list_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/zset_helpers.hpp"  // clamp_rank_range: LRANGE and ZRANGE clamp alike
#include "hotkv/shard/op_args.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

// ---------------------------------------------------------------------------------------------
// Shared helpers (list_helpers.hpp).

bool list_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, List*& out) {
  Keyspace& db = ctx.db(key);
  Value* v = read ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kList) {
    ctx.error(err::kWrongType);
    return false;
  }
  out = v == nullptr ? nullptr : v->list();
  return true;
}

List& list_create(CommandContext& ctx, std::string_view key) {
  // As in Redis, a list keeps the node size and compress depth it was made with.
  const Config& c = ctx.engine.config();
  auto list = std::make_unique<List>(static_cast<int>(c.list_max_listpack_size.load()),
                                     c.list_compress_depth.load());
  return *ctx.db(key).put(key, Value::from_list(std::move(list))).list();
}

size_t list_push_logged(CommandContext& ctx, std::string_view key, bool head,
                        const std::vector<std::string_view>& elements) {
  Value* v = ctx.db(key).find(key, ctx.now_ms);
  List* l = v != nullptr ? v->list() : &list_create(ctx, key);
  for (std::string_view e : elements) {
    if (head) {
      l->push_front(e);
    } else {
      l->push_back(e);
    }
  }
  if (ctx.logging(key)) {
    ctx.log_op(key, head ? OpCode::kListPushFront : OpCode::kListPushBack, elements);
  }
  ctx.notify(kNotifyList, head ? "lpush" : "rpush", key);
  return l->size();
}

void list_pop_logged(CommandContext& ctx, std::string_view key, List& l, bool head, int64_t count,
                     std::vector<std::string>& out) {
  std::string element;
  int64_t popped = 0;
  for (; popped < count && !l.empty(); ++popped) {
    if (head) {
      l.pop_front(element);
    } else {
      l.pop_back(element);
    }
    out.push_back(std::move(element));
  }
  if (popped == 0) {
    return;
  }
  if (ctx.logging(key)) {
    OpArgs args;
    args.add_int(popped);
    ctx.log_op(key, head ? OpCode::kListPopFront : OpCode::kListPopBack, args.views());
  }
  ctx.notify(kNotifyList, head ? "lpop" : "rpop", key);
  if (l.empty()) {
    ctx.db(key).erase(key);
    ctx.notify(kNotifyGeneric, "del", key);
  }
}

bool parse_side_or_reply(CommandContext& ctx, std::string_view arg, bool& left) {
  if (strcasecmp_view(arg, "LEFT")) {
    left = true;
    return true;
  }
  if (strcasecmp_view(arg, "RIGHT")) {
    left = false;
    return true;
  }
  ctx.error(err::kSyntax);
  return false;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Commands.

// LPUSH/RPUSH key element [element ...]; with `only_existing`, LPUSHX/RPUSHX.
void push_command(CommandContext& ctx, bool head, bool only_existing) {
  std::string_view key = ctx.arg(1);
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, key, false, l)) {
    return;
  }
  if (l == nullptr && only_existing) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<std::string_view> elements(ctx.argv.begin() + 2, ctx.argv.end());
  ctx.reply.integer(static_cast<int64_t>(list_push_logged(ctx, key, head, elements)));
}

void cmd_lpush(CommandContext& ctx) { push_command(ctx, true, false); }
void cmd_rpush(CommandContext& ctx) { push_command(ctx, false, false); }
void cmd_lpushx(CommandContext& ctx) { push_command(ctx, true, true); }
void cmd_rpushx(CommandContext& ctx) { push_command(ctx, false, true); }

// LPOP/RPOP key [count]: one element as a bulk string, or with a count an array (an empty
// array for a count of 0, a null one for a missing key).
void pop_command(CommandContext& ctx, bool head) {
  if (ctx.argc() > 3) {
    ctx.wrong_arity();
    return;
  }
  bool with_count = ctx.argc() == 3;
  int64_t count = 1;
  if (with_count) {
    auto n = parse_int64(ctx.arg(2));
    if (!n || *n < 0) {
      ctx.error(err::kCountPositive);
      return;
    }
    count = *n;
  }
  std::string_view key = ctx.arg(1);
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, key, false, l)) {
    return;
  }
  if (l == nullptr) {
    if (with_count) {
      ctx.reply.null_array();
    } else {
      ctx.reply.null();
    }
    return;
  }
  std::vector<std::string> popped;
  list_pop_logged(ctx, key, *l, head, count, popped);
  if (!with_count) {
    ctx.reply.bulk(popped.front());
    return;
  }
  ctx.reply.array(popped.size());
  for (const std::string& e : popped) {
    ctx.reply.bulk(e);
  }
}

void cmd_lpop(CommandContext& ctx) { pop_command(ctx, true); }
void cmd_rpop(CommandContext& ctx) { pop_command(ctx, false); }

void cmd_llen(CommandContext& ctx) {
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, ctx.arg(1), true, l)) {
    return;
  }
  ctx.reply.integer(l == nullptr ? 0 : static_cast<int64_t>(l->size()));
}

// LRANGE key start stop
void cmd_lrange(CommandContext& ctx) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!ctx.int_arg_or_reply(2, start) || !ctx.int_arg_or_reply(3, stop)) {
    return;
  }
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, ctx.arg(1), true, l)) {
    return;
  }
  if (l == nullptr || !clamp_rank_range(static_cast<int64_t>(l->size()), start, stop)) {
    ctx.reply.array(0);
    return;
  }
  ctx.reply.array(static_cast<size_t>(stop - start + 1));
  l->for_each(static_cast<size_t>(start), [&](size_t i, std::string_view e) {
    ctx.reply.bulk(e);
    return i < static_cast<size_t>(stop);
  });
}

// A Redis list index (negative counts from the tail) as a position in l, or false.
bool normalise_index(const List& l, int64_t index, size_t& out) {
  auto len = static_cast<int64_t>(l.size());
  if (index < 0) {
    index += len;
  }
  if (index < 0 || index >= len) {
    return false;
  }
  out = static_cast<size_t>(index);
  return true;
}

// LINDEX key index
void cmd_lindex(CommandContext& ctx) {
  int64_t index = 0;
  if (!ctx.int_arg_or_reply(2, index)) {
    return;
  }
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, ctx.arg(1), true, l)) {
    return;
  }
  size_t at = 0;
  if (l == nullptr || !normalise_index(*l, index, at)) {
    ctx.reply.null();
    return;
  }
  ctx.reply.bulk(l->at(at));
}

// LSET key index element
void cmd_lset(CommandContext& ctx) {
  int64_t index = 0;
  if (!ctx.int_arg_or_reply(2, index)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, key, false, l)) {
    return;
  }
  if (l == nullptr) {
    ctx.error(err::kNoSuchKey);
    return;
  }
  size_t at = 0;
  if (!normalise_index(*l, index, at)) {
    ctx.error(err::kIndexOutOfRange);
    return;
  }
  l->set(at, ctx.arg(3));
  if (ctx.logging(key)) {
    OpArgs args;
    args.add_int(static_cast<int64_t>(at)).add(ctx.arg(3));
    ctx.log_op(key, OpCode::kListSet, args.views());
  }
  ctx.notify(kNotifyList, "lset", key);
  ctx.reply.ok();
}

// LINSERT key BEFORE|AFTER pivot element: the new length, -1 without the pivot, 0 without
// the key.
void cmd_linsert(CommandContext& ctx) {
  bool after = false;
  if (strcasecmp_view(ctx.arg(2), "AFTER")) {
    after = true;
  } else if (!strcasecmp_view(ctx.arg(2), "BEFORE")) {
    ctx.error(err::kSyntax);
    return;
  }
  std::string_view key = ctx.arg(1);
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, key, false, l)) {
    return;
  }
  if (l == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  if (!list_insert_at_pivot(*l, after, ctx.arg(3), ctx.arg(4))) {
    ctx.reply.integer(-1);
    return;
  }
  if (ctx.logging(key)) {
    OpArgs args;
    args.add(after ? "AFTER" : "BEFORE").add(ctx.arg(3)).add(ctx.arg(4));
    ctx.log_op(key, OpCode::kListInsert, args.views());
  }
  ctx.notify(kNotifyList, "linsert", key);
  ctx.reply.integer(static_cast<int64_t>(l->size()));
}

// LREM key count element
void cmd_lrem(CommandContext& ctx) {
  int64_t count = 0;
  if (!ctx.int_arg_or_reply(2, count)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, key, false, l)) {
    return;
  }
  if (l == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  size_t removed = l->remove(ctx.arg(3), count);
  if (removed > 0) {
    if (ctx.logging(key)) {
      OpArgs args;
      args.add_int(count).add(ctx.arg(3));
      ctx.log_op(key, OpCode::kListRem, args.views());
    }
    ctx.notify(kNotifyList, "lrem", key);
    if (l->empty()) {
      ctx.db(key).erase(key);
      ctx.notify(kNotifyGeneric, "del", key);
    }
  }
  ctx.reply.integer(static_cast<int64_t>(removed));
}

// LTRIM key start stop
void cmd_ltrim(CommandContext& ctx) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!ctx.int_arg_or_reply(2, start) || !ctx.int_arg_or_reply(3, stop)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, key, false, l)) {
    return;
  }
  if (l == nullptr) {
    ctx.reply.ok();
    return;
  }
  size_t before = l->size();
  if (!clamp_rank_range(static_cast<int64_t>(before), start, stop)) {
    // Nothing kept: the key goes.
    ctx.db(key).erase(key);
    ctx.log_del(key);
    ctx.notify(kNotifyList, "ltrim", key);
    ctx.notify(kNotifyGeneric, "del", key);
    ctx.reply.ok();
    return;
  }
  if (start != 0 || static_cast<size_t>(stop) + 1 != before) {
    l->trim(static_cast<size_t>(start), static_cast<size_t>(stop));
    if (ctx.logging(key)) {
      OpArgs args;
      args.add_int(start).add_int(stop);
      ctx.log_op(key, OpCode::kListTrim, args.views());
    }
  }
  // Redis publishes ltrim even when the range kept everything.
  ctx.notify(kNotifyList, "ltrim", key);
  ctx.reply.ok();
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void cmd_lpos(CommandContext& ctx) {
  int64_t rank = 1;
  int64_t count = -1;  // -1: no COUNT, a single integer reply
  int64_t maxlen = 0;
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    std::string_view opt = ctx.arg(i);
    if (i + 1 >= ctx.argc()) {
      ctx.error(err::kSyntax);
      return;
    }
    if (strcasecmp_view(opt, "RANK")) {
      if (!ctx.int_arg_or_reply(i + 1, rank)) {
        return;
      }
      if (rank == 0) {
        ctx.error(err::kRankZero);
        return;
      }
      if (rank == INT64_MIN) {
        ctx.error(err::kOutOfRangeLong);
        return;
      }
    } else if (strcasecmp_view(opt, "COUNT")) {
      if (!ctx.int_arg_or_reply(i + 1, count)) {
        return;
      }
      if (count < 0) {
        ctx.error(err::kCountNegative);
        return;
      }
    } else if (strcasecmp_view(opt, "MAXLEN")) {
      if (!ctx.int_arg_or_reply(i + 1, maxlen)) {
        return;
      }
      if (maxlen < 0) {
        ctx.error(err::kMaxlenNegative);
        return;
      }
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  List* l = nullptr;
  if (!list_lookup_or_reply(ctx, ctx.arg(1), true, l)) {
    return;
  }
  bool with_count = count >= 0;
  std::vector<int64_t> found;
  if (l != nullptr && !l->empty()) {
    std::string_view wanted = ctx.arg(2);
    // COUNT 0 means every match; MAXLEN 0 the whole list.
    auto limit = static_cast<size_t>(with_count && count > 0 ? count : with_count ? -1 : 1);
    int64_t skip = (rank > 0 ? rank : -rank) - 1;
    int64_t compared = 0;
    auto visit = [&](size_t i, std::string_view e) {
      if (maxlen > 0 && compared++ >= maxlen) {
        return false;
      }
      if (e == wanted) {
        if (skip > 0) {
          --skip;
        } else {
          found.push_back(static_cast<int64_t>(i));
          if (found.size() >= limit) {
            return false;
          }
        }
      }
      return true;
    };
    if (rank > 0) {
      l->for_each(0, visit);
    } else {
      l->for_each_reverse(l->size() - 1, visit);
    }
  }
  if (!with_count) {
    if (found.empty()) {
      ctx.reply.null();
    } else {
      ctx.reply.integer(found.front());
    }
    return;
  }
  ctx.reply.array(found.size());
  for (int64_t i : found) {
    ctx.reply.integer(i);
  }
}

}  // namespace

void register_lists(Table& t) {
  // clang-format off
  t.add({"LPUSH",   -3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_lpush, "list", "LPUSH key element [element ...]", "Prepends elements to a list (created if missing); returns its length."});
  t.add({"RPUSH",   -3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_rpush, "list", "RPUSH key element [element ...]", "Appends elements to a list (created if missing); returns its length."});
  t.add({"LPUSHX",  -3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_lpushx, "list", "LPUSHX key element [element ...]", "Prepends elements to a list only if it exists; returns its length."});
  t.add({"RPUSHX",  -3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_rpushx, "list", "RPUSHX key element [element ...]", "Appends elements to a list only if it exists; returns its length."});
  t.add({"LPOP",    -2, kWrite | kFast, keys(1, 1, 1), cmd_lpop, "list", "LPOP key [count]", "Removes and returns the first elements of a list (deleting it once empty)."});
  t.add({"RPOP",    -2, kWrite | kFast, keys(1, 1, 1), cmd_rpop, "list", "RPOP key [count]", "Removes and returns the last elements of a list (deleting it once empty)."});
  t.add({"LLEN",     2, kReadOnly | kFast, keys(1, 1, 1), cmd_llen, "list", "LLEN key", "Returns the length of a list."});
  t.add({"LRANGE",   4, kReadOnly, keys(1, 1, 1), cmd_lrange, "list", "LRANGE key start stop", "Returns a range of elements of a list (negative indexes count from the end)."});
  t.add({"LINDEX",   3, kReadOnly, keys(1, 1, 1), cmd_lindex, "list", "LINDEX key index", "Returns the element at an index of a list."});
  t.add({"LSET",     4, kWrite | kDenyOom, keys(1, 1, 1), cmd_lset, "list", "LSET key index element", "Replaces the element at an index of a list."});
  t.add({"LINSERT",  5, kWrite | kDenyOom, keys(1, 1, 1), cmd_linsert, "list", "LINSERT key BEFORE|AFTER pivot element", "Inserts an element before or after the first occurrence of a pivot."});
  t.add({"LREM",     4, kWrite, keys(1, 1, 1), cmd_lrem, "list", "LREM key count element", "Removes occurrences of an element: the first count (from the tail if negative, all if 0)."});
  t.add({"LTRIM",    4, kWrite, keys(1, 1, 1), cmd_ltrim, "list", "LTRIM key start stop", "Keeps only a range of a list."});
  t.add({"LPOS",    -3, kReadOnly, keys(1, 1, 1), cmd_lpos, "list", "LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]", "Returns the index of matching elements of a list."});
  // clang-format on
  register_list_moves(t);
}

}  // namespace hotkv
