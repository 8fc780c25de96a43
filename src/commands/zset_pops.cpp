// Sorted sets, the pops from the first of several keys: ZMPOP and the blocking BZPOPMIN,
// BZPOPMAX and BZMPOP. They block, wake and time out exactly as the list pops do
// (list_moves.cpp, commands/blocking.hpp): re-run in the order clients blocked, served from
// the key that woke them, answering at once inside MULTI as a timeout would.
#include <string>
#include <utility>
#include <vector>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/zset_helpers.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

using Pairs = std::vector<std::pair<std::string, double>>;

// The zset to pop from under `key` for a blocking pop, or nullptr to go on to the next key.
// Replies WRONGTYPE (and sets `replied`) for another type, except on a woken re-run: there
// the client is not served and stays blocked, as on Redis, and only the key that woke it
// is looked at.
ZSet* pop_source(CommandContext& ctx, std::string_view key, bool& replied) {
  std::string_view ready = ctx.ready_key();
  if (!ready.empty()) {
    if (key != ready) {
      return nullptr;
    }
    Value* v = ctx.db(key).find(key, ctx.now_ms);
    return v != nullptr && v->type() == ValueType::kZSet ? v->zset() : nullptr;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, key, false, z)) {
    replied = true;
  }
  return z;
}

// BZPOPMIN/BZPOPMAX key [key ...] timeout: [key, member, score] from the first non-empty key.
void blocking_pop(CommandContext& ctx, bool max) {
  int64_t timeout_ms = 0;
  if (!parse_block_timeout_or_reply(ctx, ctx.arg(ctx.argc() - 1), timeout_ms)) {
    return;
  }
  for (size_t i = 1; i + 1 < ctx.argc(); ++i) {
    std::string_view key = ctx.arg(i);
    bool replied = false;
    ZSet* z = pop_source(ctx, key, replied);
    if (replied) {
      return;
    }
    if (z == nullptr) {
      continue;
    }
    Pairs popped;
    zset_pop_logged(ctx, key, *z, max, 1, popped);
    ctx.reply.array(3);
    ctx.reply.bulk(key);
    ctx.reply.bulk(popped.front().first);
    ctx.reply.dbl(popped.front().second);
    return;
  }
  block_or_timeout(ctx, timeout_ms, false);
}

void cmd_bzpopmin(CommandContext& ctx) { blocking_pop(ctx, false); }
void cmd_bzpopmax(CommandContext& ctx) { blocking_pop(ctx, true); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] from argv[at] (the numkeys): pops from the
// first non-empty zset and replies [key, [[member, score], ...]]. Returns false when every
// zset was empty and nothing was replied (`replied` tells an error apart).
bool multi_pop(CommandContext& ctx, size_t at, bool& replied) {
  replied = true;
  int64_t numkeys = 0;
  if (!parse_numkeys_or_reply(ctx, at, numkeys)) {
    return false;
  }
  size_t where_at = at + 1 + static_cast<size_t>(numkeys);
  bool max = false;
  if (strcasecmp_view(ctx.arg(where_at), "MAX")) {
    max = true;
  } else if (!strcasecmp_view(ctx.arg(where_at), "MIN")) {
    ctx.error(err::kSyntax);
    return false;
  }
  int64_t count = 1;
  if (!parse_mpop_count_or_reply(ctx, where_at + 1, count)) {
    return false;
  }
  for (size_t i = at + 1; i < where_at; ++i) {
    std::string_view key = ctx.arg(i);
    bool failed = false;
    ZSet* z = pop_source(ctx, key, failed);
    if (failed) {
      return false;
    }
    if (z == nullptr) {
      continue;
    }
    Pairs popped;
    zset_pop_logged(ctx, key, *z, max, static_cast<uint64_t>(count), popped);
    // Nested pairs in both protocols (scores as bulk strings in RESP2).
    ctx.reply.array(2);
    ctx.reply.bulk(key);
    ctx.reply.array(popped.size());
    for (const auto& [member, score] : popped) {
      ctx.reply.array(2);
      ctx.reply.bulk(member);
      ctx.reply.dbl(score);
    }
    return true;
  }
  replied = false;
  return false;
}

void cmd_zmpop(CommandContext& ctx) {
  bool replied = false;
  if (!multi_pop(ctx, 1, replied) && !replied) {
    ctx.reply.null_array();
  }
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
void cmd_bzmpop(CommandContext& ctx) {
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

void register_zset_pops(Table& t) {
  // clang-format off
  t.add({"ZMPOP",    -4, kWrite, key_finder(0, 0, 0, numkeys_at1_keys), cmd_zmpop, "sorted_set", "ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]", "Pops the lowest or highest scoring members from the first non-empty sorted set of several."});
  t.add({"BZPOPMIN", -3, kWrite | kBlocking | kFast | kNoScript | kServesReadyKey, keys(1, -2, 1), cmd_bzpopmin, "sorted_set", "BZPOPMIN key [key ...] timeout", "Pops the lowest scoring member of the first non-empty sorted set, waiting up to timeout seconds (0: for ever) for one."});
  t.add({"BZPOPMAX", -3, kWrite | kBlocking | kFast | kNoScript | kServesReadyKey, keys(1, -2, 1), cmd_bzpopmax, "sorted_set", "BZPOPMAX key [key ...] timeout", "Pops the highest scoring member of the first non-empty sorted set, waiting up to timeout seconds (0: for ever) for one."});
  t.add({"BZMPOP",   -5, kWrite | kBlocking | kNoScript | kServesReadyKey, key_finder(0, 0, 0, numkeys_at2_keys), cmd_bzmpop, "sorted_set", "BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]", "ZMPOP that waits up to timeout seconds (0: for ever) for one of the sorted sets to have a member."});
  // clang-format on
}

}  // namespace hotkv
