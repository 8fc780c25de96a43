// Lists, the commands that move elements between lists or pop from the first of several:
// LMOVE, RPOPLPUSH, LMPOP, and the blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP.
//
// A blocking command that finds every list empty asks to block (ctx.block) with its own
// arguments; the blocking registry re-runs it, in the order clients blocked, whenever one of
// its keys is written, and the re-run serves it from that key, as Redis serves a client from
// the key that became ready (a first run takes the first non-empty key in argument order). Inside
// MULTI or a script it cannot block and answers at once as a timeout would. A re-run that finds
// nothing changes no key, so it wakes nobody; BLMOVE's push to its destination is announced like
// any write, and a client blocked on the destination is served next, as on Redis.
#include <string>
#include <vector>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/list_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// A woken re-run finds that the key which woke it now holds another type (a transaction
// pushed, deleted and SET it): as on Redis, the client is not served and stays blocked.
bool woken_and_not_a_list(CommandContext& ctx, std::string_view key) {
  if (!ctx.woken) {
    return false;
  }
  Value* v = ctx.db(key).find(key, ctx.now_ms);
  return v != nullptr && v->type() != ValueType::kList;
}

// Moves one element from the head or tail of src to the head or tail of dst (the same list
// rotates), replies it and returns true. Returns false when it did not move: with `replied`
// set after a WRONGTYPE reply, unset when src is missing (the caller answers or blocks).
// Logged as the pop and the push it is; events as Redis publishes them: the push on dst, the
// pop on src, then "del" if src was emptied.
bool move_element(CommandContext& ctx, std::string_view src, std::string_view dst, bool from_left,
                  bool to_left, bool& replied) {
  replied = false;
  List* from = nullptr;
  if (woken_and_not_a_list(ctx, src)) {
    return false;
  }
  if (!list_lookup_or_reply(ctx, src, false, from)) {
    replied = true;
    return false;
  }
  if (from == nullptr) {
    return false;
  }
  List* to = nullptr;
  if (!list_lookup_or_reply(ctx, dst, false, to)) {
    replied = true;
    return false;
  }
  std::string element;
  if (from_left) {
    from->pop_front(element);
  } else {
    from->pop_back(element);
  }
  if (to == nullptr) {
    to = &list_create(ctx, dst);
  }
  if (to_left) {
    to->push_front(element);
  } else {
    to->push_back(element);
  }
  if (ctx.logging(src)) {
    OpArgs one;
    one.add_int(1);
    ctx.log_op(src, from_left ? OpCode::kListPopFront : OpCode::kListPopBack, one.views());
  }
  if (ctx.logging(dst)) {
    std::string_view pushed[] = {element};
    ctx.log_op(dst, to_left ? OpCode::kListPushFront : OpCode::kListPushBack, pushed);
  }
  ctx.notify(kNotifyList, to_left ? "lpush" : "rpush", dst);
  ctx.notify(kNotifyList, from_left ? "lpop" : "rpop", src);
  if (from->empty()) {
    ctx.db(src).erase(src);
    ctx.notify(kNotifyGeneric, "del", src);
  }
  ctx.reply.bulk(element);
  replied = true;
  return true;
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
void cmd_lmove(CommandContext& ctx) {
  bool from_left = false;
  bool to_left = false;
  if (!parse_side_or_reply(ctx, ctx.arg(3), from_left) ||
      !parse_side_or_reply(ctx, ctx.arg(4), to_left)) {
    return;
  }
  bool replied = false;
  if (!move_element(ctx, ctx.arg(1), ctx.arg(2), from_left, to_left, replied) && !replied) {
    ctx.reply.null();
  }
}

// RPOPLPUSH source destination: LMOVE source destination RIGHT LEFT.
void cmd_rpoplpush(CommandContext& ctx) {
  bool replied = false;
  if (!move_element(ctx, ctx.arg(1), ctx.arg(2), false, true, replied) && !replied) {
    ctx.reply.null();
  }
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout; BRPOPLPUSH source destination
// timeout (`sides_at` 0: RIGHT LEFT).
void blocking_move(CommandContext& ctx, size_t sides_at, size_t timeout_at) {
  bool from_left = false;
  bool to_left = true;
  if (sides_at != 0 && (!parse_side_or_reply(ctx, ctx.arg(sides_at), from_left) ||
                        !parse_side_or_reply(ctx, ctx.arg(sides_at + 1), to_left))) {
    return;
  }
  int64_t timeout_ms = 0;
  if (!parse_block_timeout_or_reply(ctx, ctx.arg(timeout_at), timeout_ms)) {
    return;
  }
  bool replied = false;
  if (move_element(ctx, ctx.arg(1), ctx.arg(2), from_left, to_left, replied)) {
    return;
  }
  if (!replied) {
    block_or_timeout(ctx, timeout_ms, true);
  }
}

void cmd_blmove(CommandContext& ctx) { blocking_move(ctx, 3, 5); }
void cmd_brpoplpush(CommandContext& ctx) { blocking_move(ctx, 0, 3); }

// BLPOP/BRPOP key [key ...] timeout: [key, element] from the first non-empty list.
void blocking_pop(CommandContext& ctx, bool head) {
  int64_t timeout_ms = 0;
  if (!parse_block_timeout_or_reply(ctx, ctx.arg(ctx.argc() - 1), timeout_ms)) {
    return;
  }
  std::string_view ready = ctx.ready_key();
  for (size_t i = 1; i + 1 < ctx.argc(); ++i) {
    std::string_view key = ctx.arg(i);
    if (!ready.empty() && key != ready) {
      continue;  // woken: served from the list that became ready
    }
    if (woken_and_not_a_list(ctx, key)) {
      continue;
    }
    List* l = nullptr;
    if (!list_lookup_or_reply(ctx, key, false, l)) {
      return;
    }
    if (l == nullptr) {
      continue;
    }
    std::vector<std::string> popped;
    list_pop_logged(ctx, key, *l, head, 1, popped);
    ctx.reply.array(2);
    ctx.reply.bulk(key);
    ctx.reply.bulk(popped.front());
    return;
  }
  block_or_timeout(ctx, timeout_ms, false);
}

void cmd_blpop(CommandContext& ctx) { blocking_pop(ctx, true); }
void cmd_brpop(CommandContext& ctx) { blocking_pop(ctx, false); }

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] from argv[at] (the numkeys): pops from
// the first non-empty list and replies [key, [element, ...]]. Returns false when every list
// was empty and nothing was replied (`replied` tells an error apart).
bool multi_pop(CommandContext& ctx, size_t at, bool& replied) {
  replied = true;
  int64_t numkeys = 0;
  if (!parse_numkeys_or_reply(ctx, at, numkeys)) {
    return false;
  }
  size_t side_at = at + 1 + static_cast<size_t>(numkeys);
  if (side_at >= ctx.argc()) {
    ctx.error(err::kSyntax);
    return false;
  }
  bool left = false;
  if (!parse_side_or_reply(ctx, ctx.arg(side_at), left)) {
    return false;
  }
  int64_t count = 1;
  if (!parse_mpop_count_or_reply(ctx, side_at + 1, count)) {
    return false;
  }
  std::string_view ready = ctx.ready_key();
  for (size_t i = at + 1; i < side_at; ++i) {
    std::string_view key = ctx.arg(i);
    if (!ready.empty() && key != ready) {
      continue;  // woken: served from the list that became ready
    }
    if (woken_and_not_a_list(ctx, key)) {
      continue;
    }
    List* l = nullptr;
    if (!list_lookup_or_reply(ctx, key, false, l)) {
      return false;
    }
    if (l == nullptr) {
      continue;
    }
    std::vector<std::string> popped;
    list_pop_logged(ctx, key, *l, left, count, popped);
    ctx.reply.array(2);
    ctx.reply.bulk(key);
    ctx.reply.array(popped.size());
    for (const std::string& e : popped) {
      ctx.reply.bulk(e);
    }
    return true;
  }
  replied = false;
  return false;
}

void cmd_lmpop(CommandContext& ctx) {
  bool replied = false;
  if (!multi_pop(ctx, 1, replied) && !replied) {
    ctx.reply.null_array();
  }
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
void cmd_blmpop(CommandContext& ctx) {
  int64_t timeout_ms = 0;
  if (!parse_block_timeout_or_reply(ctx, ctx.arg(1), timeout_ms)) {
    return;
  }
  bool replied = false;
  if (!multi_pop(ctx, 2, replied) && !replied) {
    block_or_timeout(ctx, timeout_ms, false);
  }
}

}  // namespace

void register_list_moves(Table& t) {
  // clang-format off
  t.add({"LMOVE",      5, kWrite | kDenyOom, keys(1, 2, 1), cmd_lmove, "list", "LMOVE source destination LEFT|RIGHT LEFT|RIGHT", "Pops an element from one end of a list and pushes it onto an end of another (or the same) list."});
  t.add({"RPOPLPUSH",  3, kWrite | kDenyOom, keys(1, 2, 1), cmd_rpoplpush, "list", "RPOPLPUSH source destination", "Pops the last element of a list and pushes it at the head of another (LMOVE ... RIGHT LEFT)."});
  t.add({"LMPOP",     -4, kWrite, key_finder(0, 0, 0, numkeys_at1_keys), cmd_lmpop, "list", "LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]", "Pops elements from the first non-empty list of several."});
  t.add({"BLPOP",     -3, kWrite | kBlocking | kNoScript | kServesReadyKey, keys(1, -2, 1), cmd_blpop, "list", "BLPOP key [key ...] timeout", "Pops the first element of the first non-empty list, waiting up to timeout seconds (0: for ever) for one."});
  t.add({"BRPOP",     -3, kWrite | kBlocking | kNoScript | kServesReadyKey, keys(1, -2, 1), cmd_brpop, "list", "BRPOP key [key ...] timeout", "Pops the last element of the first non-empty list, waiting up to timeout seconds (0: for ever) for one."});
  t.add({"BLMOVE",     6, kWrite | kDenyOom | kBlocking | kNoScript, keys(1, 2, 1), cmd_blmove, "list", "BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout", "LMOVE that waits up to timeout seconds (0: for ever) for the source to have an element."});
  t.add({"BRPOPLPUSH", 4, kWrite | kDenyOom | kBlocking | kNoScript, keys(1, 2, 1), cmd_brpoplpush, "list", "BRPOPLPUSH source destination timeout", "RPOPLPUSH that waits up to timeout seconds (0: for ever) for the source to have an element."});
  t.add({"BLMPOP",    -5, kWrite | kBlocking | kNoScript | kServesReadyKey, key_finder(0, 0, 0, numkeys_at2_keys), cmd_blmpop, "list", "BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]", "LMPOP that waits up to timeout seconds (0: for ever) for one of the lists to have an element."});
  // clang-format on
}

}  // namespace hotkv
