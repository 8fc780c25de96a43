// Sorted-set ranges: ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES) and its older spellings
// ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX; ZCOUNT, ZLEXCOUNT;
// ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX; ZSCAN. One option parser serves every
// range command, as in Redis, so each spelling accepts and refuses exactly what Redis does.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/scan_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/zset_helpers.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

enum class RangeKind { kAuto, kRank, kScore, kLex };

// What a spelling fixes in advance: ZRANGE fixes nothing; ZREVRANGEBYSCORE fixes both.
struct RangeSpelling {
  RangeKind kind;
  bool reverse_fixed;
  bool reverse;
};

// Collects up to `limit` nodes (negative: all) after skipping `offset`, walking from `n`
// towards higher (or, if reverse, lower) ranks while `inside` holds.
template <class Inside>
std::vector<const ZSet::Node*> walk(const ZSet::Node* n, bool reverse, int64_t offset,
                                    int64_t limit, Inside&& inside) {
  std::vector<const ZSet::Node*> out;
  auto step = [&](const ZSet::Node* x) { return reverse ? x->prev() : x->next(); };
  // A negative offset selects nothing, as in Redis.
  if (offset < 0) {
    return out;
  }
  // The offset is skipped without looking (as Redis does; it matters only for lex ranges over
  // mixed scores, where members are not in byte order).
  for (; n != nullptr && offset > 0; --offset) {
    n = step(n);
  }
  for (; n != nullptr && limit != 0 && inside(n); n = step(n)) {
    out.push_back(n);
    if (limit > 0) {
      --limit;
    }
  }
  return out;
}

void reply_nodes(CommandContext& ctx, const std::vector<const ZSet::Node*>& nodes,
                 bool withscores) {
  if (!withscores) {
    ctx.reply.array(nodes.size());
    for (const ZSet::Node* n : nodes) {
      ctx.reply.bulk(n->member());
    }
    return;
  }
  bool nested = ctx.reply.proto() == 3;
  ctx.reply.array(nested ? nodes.size() : nodes.size() * 2);
  for (const ZSet::Node* n : nodes) {
    if (nested) {
      ctx.reply.array(2);
    }
    ctx.reply.bulk(n->member());
    ctx.reply.dbl(n->score());
  }
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES], the older
// spellings with their kind and direction fixed, and ZRANGESTORE dst src start stop [...] (which
// takes no WITHSCORES, as in Redis): `store` shifts every argument by one.
void range_generic(CommandContext& ctx, RangeSpelling sp, bool store = false) {
  const size_t base = store ? 2 : 1;  // where the source key is
  RangeKind kind = sp.kind;
  bool reverse = sp.reverse;
  bool reverse_set = sp.reverse_fixed;
  bool withscores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = base + 3; j < ctx.argc(); ++j) {
    size_t left = ctx.argc() - j - 1;
    std::string_view a = ctx.arg(j);
    if (!store && strcasecmp_view(a, "WITHSCORES")) {
      withscores = true;
    } else if (strcasecmp_view(a, "LIMIT") && left >= 2) {
      if (!ctx.int_arg_or_reply(j + 1, offset) || !ctx.int_arg_or_reply(j + 2, limit)) {
        return;
      }
      j += 2;
    } else if (!reverse_set && strcasecmp_view(a, "REV")) {
      reverse = true;
      reverse_set = true;
    } else if (kind == RangeKind::kAuto && strcasecmp_view(a, "BYLEX")) {
      kind = RangeKind::kLex;
    } else if (kind == RangeKind::kAuto && strcasecmp_view(a, "BYSCORE")) {
      kind = RangeKind::kScore;
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  if (kind == RangeKind::kAuto) {
    kind = RangeKind::kRank;
  }
  if (limit != -1 && kind == RangeKind::kRank) {
    ctx.error(
        err::kZrangeLimitNeedsBy);
    return;
  }
  if (withscores && kind == RangeKind::kLex) {
    ctx.error(err::kZrangeWithscoresBylex);
    return;
  }
  // Score and lex ranges are written max first when reversed.
  size_t min_at = base + 1;
  size_t max_at = base + 2;
  if (reverse && kind != RangeKind::kRank) {
    std::swap(min_at, max_at);
  }
  int64_t start = 0;
  int64_t stop = 0;
  ScoreRange score_range;
  LexRange lex_range;
  switch (kind) {
    case RangeKind::kRank:
      if (!ctx.int_arg_or_reply(min_at, start) || !ctx.int_arg_or_reply(max_at, stop)) {
        return;
      }
      break;
    case RangeKind::kScore:
      if (!parse_score_range_or_reply(ctx, ctx.arg(min_at), ctx.arg(max_at), score_range)) {
        return;
      }
      break;
    case RangeKind::kLex:
      if (!parse_lex_range_or_reply(ctx, ctx.arg(min_at), ctx.arg(max_at), lex_range)) {
        return;
      }
      break;
    case RangeKind::kAuto:
      break;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(base), true, z)) {
    return;
  }
  if (z == nullptr) {
    if (store) {
      zset_store_logged(ctx, ctx.arg(1), new_zset(ctx), "zrangestore");
    } else {
      ctx.reply.array(0);
    }
    return;
  }
  std::vector<const ZSet::Node*> nodes;
  auto len = static_cast<int64_t>(z->size());
  switch (kind) {
    case RangeKind::kRank:
      if (clamp_rank_range(len, start, stop)) {
        const ZSet::Node* n = z->at_rank(static_cast<size_t>(reverse ? len - 1 - start : start));
        nodes = walk(n, reverse, 0, stop - start + 1, [](const ZSet::Node*) { return true; });
      }
      break;
    case RangeKind::kScore:
      if (offset <= 0 || offset < len) {
        const ZSet::Node* n = reverse ? z->last_in(score_range) : z->first_in(score_range);
        nodes = walk(n, reverse, offset, limit, [&](const ZSet::Node* x) {
          return reverse ? score_range.above_min(x->score()) : score_range.below_max(x->score());
        });
      }
      break;
    case RangeKind::kLex:
      if (offset <= 0 || offset < len) {
        const ZSet::Node* n = reverse ? z->last_in(lex_range) : z->first_in(lex_range);
        nodes = walk(n, reverse, offset, limit, [&](const ZSet::Node* x) {
          return reverse ? lex_range.above_min(x->member()) : lex_range.below_max(x->member());
        });
      }
      break;
    case RangeKind::kAuto:
      break;
  }
  if (store) {
    // Built whole before dst is replaced: dst may be the source itself.
    std::unique_ptr<ZSet> result = new_zset(ctx);
    for (const ZSet::Node* n : nodes) {
      result->set(n->member(), n->score());
    }
    nodes.clear();
    zset_store_logged(ctx, ctx.arg(1), std::move(result), "zrangestore");
    return;
  }
  reply_nodes(ctx, nodes, withscores);
}

void cmd_zrangestore(CommandContext& ctx) {
  range_generic(ctx, {RangeKind::kAuto, false, false}, true);
}

void cmd_zrange(CommandContext& ctx) { range_generic(ctx, {RangeKind::kAuto, false, false}); }
void cmd_zrevrange(CommandContext& ctx) { range_generic(ctx, {RangeKind::kRank, true, true}); }
void cmd_zrangebyscore(CommandContext& ctx) {
  range_generic(ctx, {RangeKind::kScore, true, false});
}
void cmd_zrevrangebyscore(CommandContext& ctx) {
  range_generic(ctx, {RangeKind::kScore, true, true});
}
void cmd_zrangebylex(CommandContext& ctx) { range_generic(ctx, {RangeKind::kLex, true, false}); }
void cmd_zrevrangebylex(CommandContext& ctx) { range_generic(ctx, {RangeKind::kLex, true, true}); }

void cmd_zcount(CommandContext& ctx) {
  ScoreRange r;
  if (!parse_score_range_or_reply(ctx, ctx.arg(2), ctx.arg(3), r)) {
    return;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  ctx.reply.integer(z == nullptr ? 0 : static_cast<int64_t>(z->count(r)));
}

void cmd_zlexcount(CommandContext& ctx) {
  LexRange r;
  if (!parse_lex_range_or_reply(ctx, ctx.arg(2), ctx.arg(3), r)) {
    return;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  ctx.reply.integer(z == nullptr ? 0 : z->count(r));
}

// ZREMRANGEBYSCORE / ZREMRANGEBYRANK / ZREMRANGEBYLEX key min max: the range is parsed before
// the key is looked up, so a bad range is an error even on a missing key (as in Redis).
void remrange_generic(CommandContext& ctx, RangeKind kind) {
  ScoreRange score_range;
  LexRange lex_range;
  int64_t start = 0;
  int64_t stop = 0;
  if (kind == RangeKind::kRank) {
    if (!ctx.int_arg_or_reply(2, start) || !ctx.int_arg_or_reply(3, stop)) {
      return;
    }
  } else if (kind == RangeKind::kScore) {
    if (!parse_score_range_or_reply(ctx, ctx.arg(2), ctx.arg(3), score_range)) {
      return;
    }
  } else if (!parse_lex_range_or_reply(ctx, ctx.arg(2), ctx.arg(3), lex_range)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, key, false, z)) {
    return;
  }
  if (z == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<const ZSet::Node*> nodes;
  const char* event = "zremrangebyrank";
  if (kind == RangeKind::kRank) {
    if (clamp_rank_range(static_cast<int64_t>(z->size()), start, stop)) {
      nodes = walk(z->at_rank(static_cast<size_t>(start)), false, 0, stop - start + 1,
                   [](const ZSet::Node*) { return true; });
    }
  } else if (kind == RangeKind::kScore) {
    event = "zremrangebyscore";
    nodes = walk(z->first_in(score_range), false, 0, -1,
                 [&](const ZSet::Node* x) { return score_range.below_max(x->score()); });
  } else {
    event = "zremrangebylex";
    nodes = walk(z->lex_delete_start(lex_range), false, 0, -1,
                 [&](const ZSet::Node* x) { return lex_range.below_max(x->member()); });
  }
  std::vector<std::string> members;
  members.reserve(nodes.size());
  for (const ZSet::Node* n : nodes) {
    members.emplace_back(n->member());
  }
  nodes.clear();  // they dangle once erased
  for (const std::string& m : members) {
    z->erase(m);
  }
  zset_removed_logged(ctx, key, *z, members, event);
  ctx.reply.integer(static_cast<int64_t>(members.size()));
}

void cmd_zremrangebyscore(CommandContext& ctx) { remrange_generic(ctx, RangeKind::kScore); }
void cmd_zremrangebyrank(CommandContext& ctx) { remrange_generic(ctx, RangeKind::kRank); }
void cmd_zremrangebylex(CommandContext& ctx) { remrange_generic(ctx, RangeKind::kLex); }

// ZSCAN key cursor [MATCH pattern] [COUNT count]. A listpack-encoded zset is returned whole
// with cursor 0, as Redis does; a larger one is walked with the member table's cursor, which
// returns every member present for the whole iteration at least once.
void cmd_zscan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!parse_scan_cursor_or_reply(ctx, ctx.arg(2), cursor)) {
    return;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  if (z == nullptr) {
    reply_empty_scan(ctx);
    return;
  }
  ScanOptions opts;
  if (!parse_scan_options_or_reply(ctx, 3, false, opts)) {
    return;
  }
  std::vector<std::pair<std::string, double>> found;
  auto take = [&](std::string_view member, double score) {
    if (!opts.has_pattern || glob_match(opts.pattern, member)) {
      found.emplace_back(member, score);
    }
  };
  uint64_t next = 0;
  if (z->listpack_encoded()) {
    for (const ZSet::Node* n = z->first(); n != nullptr; n = n->next()) {
      take(n->member(), n->score());
    }
  } else {
    // Bound the buckets visited per call so a sparse MATCH cannot stall the shard.
    int64_t budget = opts.count * 10;
    size_t seen = 0;
    next = cursor;
    do {
      next = z->scan(next, [&](std::string_view member, double score) {
        ++seen;
        take(member, score);
      });
    } while (next != 0 && static_cast<int64_t>(seen) < opts.count && --budget > 0);
  }
  ctx.reply.array(2);
  ctx.reply.bulk(std::to_string(next));
  ctx.reply.array(found.size() * 2);
  for (const auto& [member, score] : found) {
    ctx.reply.bulk(member);
    ctx.reply.bulk(format_double(score));  // ZSCAN sends scores as strings in RESP3 too
  }
}

}  // namespace

void register_zset_ranges(Table& t) {
  // clang-format off
  t.add({"ZRANGE",           -4, kReadOnly, keys(1, 1, 1), cmd_zrange, "sorted_set", "ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]", "Returns members in a range of ranks, scores or lexicographic order, optionally reversed."});
  t.add({"ZRANGESTORE",      -5, kWrite | kDenyOom, keys(1, 2, 1), cmd_zrangestore, "sorted_set", "ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]", "Stores a range of a sorted set (as ZRANGE selects it) in dst; returns its size."});
  t.add({"ZREVRANGE",        -4, kReadOnly, keys(1, 1, 1), cmd_zrevrange, "sorted_set", "ZREVRANGE key start stop [WITHSCORES]", "Returns members in a range of ranks, highest score first."});
  t.add({"ZRANGEBYSCORE",    -4, kReadOnly, keys(1, 1, 1), cmd_zrangebyscore, "sorted_set", "ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]", "Returns members whose scores fall within a range, lowest first."});
  t.add({"ZREVRANGEBYSCORE", -4, kReadOnly, keys(1, 1, 1), cmd_zrevrangebyscore, "sorted_set", "ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]", "Returns members whose scores fall within a range, highest first."});
  t.add({"ZRANGEBYLEX",      -4, kReadOnly, keys(1, 1, 1), cmd_zrangebylex, "sorted_set", "ZRANGEBYLEX key min max [LIMIT offset count]", "Returns members within a lexicographic range (for members of equal score)."});
  t.add({"ZREVRANGEBYLEX",   -4, kReadOnly, keys(1, 1, 1), cmd_zrevrangebylex, "sorted_set", "ZREVRANGEBYLEX key max min [LIMIT offset count]", "Returns members within a lexicographic range, in reverse order."});
  t.add({"ZCOUNT",            4, kReadOnly | kFast, keys(1, 1, 1), cmd_zcount, "sorted_set", "ZCOUNT key min max", "Counts the members whose scores fall within a range."});
  t.add({"ZLEXCOUNT",         4, kReadOnly | kFast, keys(1, 1, 1), cmd_zlexcount, "sorted_set", "ZLEXCOUNT key min max", "Counts the members within a lexicographic range."});
  t.add({"ZREMRANGEBYSCORE",  4, kWrite, keys(1, 1, 1), cmd_zremrangebyscore, "sorted_set", "ZREMRANGEBYSCORE key min max", "Removes the members whose scores fall within a range; returns how many."});
  t.add({"ZREMRANGEBYRANK",   4, kWrite, keys(1, 1, 1), cmd_zremrangebyrank, "sorted_set", "ZREMRANGEBYRANK key start stop", "Removes the members within a range of ranks; returns how many."});
  t.add({"ZREMRANGEBYLEX",    4, kWrite, keys(1, 1, 1), cmd_zremrangebylex, "sorted_set", "ZREMRANGEBYLEX key min max", "Removes the members within a lexicographic range; returns how many."});
  t.add({"ZSCAN",            -3, kReadOnly, keys(1, 1, 1), cmd_zscan, "sorted_set", "ZSCAN key cursor [MATCH pattern] [COUNT count]", "Iterates over the members and scores of a sorted set."});
  // clang-format on
}

}  // namespace hotkv
