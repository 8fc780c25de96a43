// Sorted sets: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK, ZPOPMIN, ZPOPMAX,
// the helpers the family shares (zset_helpers.hpp), and register_zsets with every sorted-set
// command (ranges, counts, range removals and ZSCAN live in zset_range.cpp). Replies and error
// texts follow Redis 7; every mutation logs its effect (op_effects.hpp) with final scores.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/random_replies.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/zset_helpers.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

// ---------------------------------------------------------------------------------------------
// Shared helpers (zset_helpers.hpp).

bool zset_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, ZSet*& out) {
  Keyspace& db = ctx.db(key);
  Value* v = read ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kZSet) {
    ctx.error(err::kWrongType);
    return false;
  }
  out = v == nullptr ? nullptr : v->zset();
  return true;
}

std::unique_ptr<ZSet> new_zset(CommandContext& ctx) {
  const Config& c = ctx.engine.config();
  return std::make_unique<ZSet>(static_cast<size_t>(c.zset_max_listpack_entries.load()),
                                static_cast<size_t>(c.zset_max_listpack_value.load()));
}

void reply_zset(CommandContext& ctx, const ZSet& z, bool withscores) {
  bool nested = withscores && ctx.reply.proto() == 3;
  ctx.reply.array(withscores && !nested ? z.size() * 2 : z.size());
  for (const ZSet::Node* n = z.first(); n != nullptr; n = n->next()) {
    if (nested) {
      ctx.reply.array(2);
    }
    ctx.reply.bulk(n->member());
    if (withscores) {
      ctx.reply.dbl(n->score());
    }
  }
}

void zset_store_logged(CommandContext& ctx, std::string_view dst, std::unique_ptr<ZSet> result,
                       const char* event) {
  bool empty = result->empty();
  auto size = static_cast<int64_t>(result->size());
  ctx.store_or_delete(dst, Value::from_zset(std::move(result)), empty, size, kNotifyZset, event);
}

namespace {

// One end of a score interval, read as Redis reads it: strtod over the whole text (so leading
// spaces, hex and "" (0) pass, as they do in Redis), NaN refused.
bool parse_score_bound(std::string_view arg, double& out, bool& exclusive) {
  exclusive = !arg.empty() && arg[0] == '(';
  std::string text(exclusive ? arg.substr(1) : arg);
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && !std::isnan(out);
}

bool parse_lex_bound(std::string_view arg, LexBound& out) {
  if (arg == "-" || arg == "+") {
    out.kind = arg == "-" ? LexBound::kMinusInf : LexBound::kPlusInf;
    out.exclusive = true;
    return true;
  }
  if (arg.empty() || (arg[0] != '[' && arg[0] != '(')) {
    return false;
  }
  out.kind = LexBound::kValue;
  out.exclusive = arg[0] == '(';
  out.value.assign(arg.substr(1));
  return true;
}

// A score or increment as Redis reads one (string2d): parse_double's rules, and an overflow
// to infinity or an underflow to zero is refused ("1e400", "1e-400"), while "inf" is not.
std::optional<double> parse_score(std::string_view arg) {
  std::optional<double> v = parse_double(arg);
  if (v && (std::isinf(*v) || *v == 0)) {
    // Tells "inf" and "0" apart from an overflow or underflow, which strtod flags with ERANGE.
    std::string text(arg);
    errno = 0;
    std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE) {
      return std::nullopt;
    }
  }
  return v;
}

void log_scores(CommandContext& ctx, std::string_view key,
                const std::vector<std::pair<std::string_view, double>>& changed) {
  if (changed.empty() || !ctx.logging(key)) {
    return;
  }
  OpArgs args;
  for (const auto& [member, score] : changed) {
    args.add(format_double(score)).add(member);
  }
  ctx.log_op(key, OpCode::kZSetAdd, args.views());
}

}  // namespace

bool parse_score_range_or_reply(CommandContext& ctx, std::string_view min, std::string_view max,
                                ScoreRange& out) {
  if (!parse_score_bound(min, out.min, out.min_exclusive) ||
      !parse_score_bound(max, out.max, out.max_exclusive)) {
    ctx.error(err::kZSetMinMaxNotFloat);
    return false;
  }
  return true;
}

bool parse_lex_range_or_reply(CommandContext& ctx, std::string_view min, std::string_view max,
                              LexRange& out) {
  if (!parse_lex_bound(min, out.min) || !parse_lex_bound(max, out.max)) {
    ctx.error(err::kZSetLexRange);
    return false;
  }
  return true;
}

void reply_pairs(ReplyWriter& w, const std::vector<std::pair<std::string, double>>& pairs,
                 bool nested) {
  if (nested && w.proto() == 3) {
    w.array(pairs.size());
    for (const auto& [member, score] : pairs) {
      w.array(2);
      w.bulk(member);
      w.dbl(score);
    }
    return;
  }
  w.array(pairs.size() * 2);
  for (const auto& [member, score] : pairs) {
    w.bulk(member);
    w.dbl(score);
  }
}

void zset_pop_logged(CommandContext& ctx, std::string_view key, ZSet& z, bool max, uint64_t count,
                     std::vector<std::pair<std::string, double>>& out) {
  size_t n = std::min(count, static_cast<uint64_t>(z.size()));
  std::vector<std::string> members;
  const ZSet::Node* node = max ? z.last() : z.first();
  for (size_t i = 0; i < n; ++i, node = max ? node->prev() : node->next()) {
    out.emplace_back(node->member(), node->score());
    members.emplace_back(node->member());
  }
  for (const std::string& m : members) {
    z.erase(m);
  }
  zset_removed_logged(ctx, key, z, members, max ? "zpopmax" : "zpopmin");
}

void zset_removed_logged(CommandContext& ctx, std::string_view key, ZSet& z,
                         const std::vector<std::string>& members, const char* event) {
  if (members.empty()) {
    return;
  }
  bool emptied = z.empty();
  if (emptied) {
    ctx.db(key).erase(key);  // destroys z
  }
  if (ctx.logging(key)) {
    OpArgs args;
    for (const std::string& m : members) {
      args.add(m);
    }
    ctx.log_op(key, OpCode::kZSetRem, args.views());
  }
  ctx.notify(kNotifyZset, event, key);
  if (emptied) {
    ctx.notify(kNotifyGeneric, "del", key);
  }
}

bool clamp_rank_range(int64_t len, int64_t& start, int64_t& stop) {
  if (start < 0) {
    start += len;
  }
  if (stop < 0) {
    stop += len;
  }
  if (start < 0) {
    start = 0;
  }
  if (start > stop || start >= len) {
    return false;
  }
  if (stop >= len) {
    stop = len - 1;
  }
  return true;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Commands.

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
// ZINCRBY key increment member runs the same path as ZADD INCR.
void zadd_generic(CommandContext& ctx, size_t first_pair, ZAddFlags f, const char* event) {
  size_t elements = ctx.argc() - first_pair;
  if (elements == 0 || elements % 2 != 0) {
    ctx.error(err::kSyntax);
    return;
  }
  elements /= 2;
  if (f.nx && f.xx) {
    ctx.error(err::kXxAndNx);
    return;
  }
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt)) {
    ctx.error(err::kGtLtNx);
    return;
  }
  if (f.incr && elements > 1) {
    ctx.error(err::kZaddIncrSinglePair);
    return;
  }
  std::vector<double> scores(elements);
  std::vector<std::string_view> members(elements);
  for (size_t i = 0; i < elements; ++i) {
    std::optional<double> s = parse_score(ctx.arg(first_pair + 2 * i));
    if (!s) {
      ctx.error(err::kNotFloat);
      return;
    }
    scores[i] = *s;
    members[i] = ctx.arg(first_pair + 2 * i + 1);
  }
  zadd_apply(ctx, ctx.arg(1), f, std::move(scores), members, event);
}

}  // namespace

void zadd_apply(CommandContext& ctx, std::string_view key, ZAddFlags f, std::vector<double> scores,
                const std::vector<std::string_view>& members, const char* event) {
  size_t elements = scores.size();
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, key, false, z)) {
    return;
  }
  if (z == nullptr && f.xx) {
    if (f.incr) {
      ctx.reply.null();
    } else {
      ctx.reply.integer(0);
    }
    return;
  }
  // INCR's result is checked before anything changes (it has exactly one element).
  double incr_result = 0;
  bool incr_applied = false;
  if (f.incr) {
    std::string_view member = members[0];
    std::optional<double> cur = z == nullptr ? std::nullopt : z->score(member);
    incr_result = cur ? *cur + scores[0] : scores[0];
    if (std::isnan(incr_result)) {
      ctx.error(err::kZSetScoreNaN);
      return;
    }
    incr_applied =
        cur ? !(f.nx || (f.gt && incr_result <= *cur) || (f.lt && incr_result >= *cur)) : !f.xx;
    scores[0] = incr_result;
  }
  std::unique_ptr<ZSet> created;
  if (z == nullptr) {
    created = new_zset(ctx);
    z = created.get();
  }
  int64_t added = 0;
  int64_t updated = 0;
  std::vector<std::pair<std::string_view, double>> changed;
  for (size_t i = 0; i < elements; ++i) {
    std::string_view member = members[i];
    double score = scores[i];
    std::optional<double> cur = z->score(member);
    if (cur) {
      if (f.nx || (f.gt && score <= *cur) || (f.lt && score >= *cur)) {
        continue;
      }
      if (score != *cur) {
        z->set(member, score, &score);
        ++updated;
        changed.emplace_back(member, score);
      }
    } else if (!f.xx) {
      z->set(member, score, &score);
      ++added;
      changed.emplace_back(member, score);
    }
  }
  if (created && !created->empty()) {
    ctx.db(key).put(key, Value::from_zset(std::move(created)));
  }
  log_scores(ctx, key, changed);
  if (added + updated > 0) {
    ctx.notify(kNotifyZset, event, key);
  }
  if (f.incr) {
    if (incr_applied) {
      ctx.reply.dbl(incr_result);
    } else {
      ctx.reply.null();
    }
    return;
  }
  ctx.reply.integer(f.ch ? added + updated : added);
}

namespace {

void cmd_zadd(CommandContext& ctx) {
  ZAddFlags f;
  size_t i = 2;
  for (; i < ctx.argc(); ++i) {
    std::string_view a = ctx.arg(i);
    if (strcasecmp_view(a, "NX")) {
      f.nx = true;
    } else if (strcasecmp_view(a, "XX")) {
      f.xx = true;
    } else if (strcasecmp_view(a, "GT")) {
      f.gt = true;
    } else if (strcasecmp_view(a, "LT")) {
      f.lt = true;
    } else if (strcasecmp_view(a, "CH")) {
      f.ch = true;
    } else if (strcasecmp_view(a, "INCR")) {
      f.incr = true;
    } else {
      break;
    }
  }
  zadd_generic(ctx, i, f, f.incr ? "zincr" : "zadd");
}

void cmd_zincrby(CommandContext& ctx) {
  ZAddFlags f;
  f.incr = true;
  zadd_generic(ctx, 2, f, "zincr");
}

// ZREM key member [member ...]
void cmd_zrem(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, key, false, z)) {
    return;
  }
  std::vector<std::string> removed;
  if (z != nullptr) {
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (z->erase(ctx.arg(i))) {
        removed.emplace_back(ctx.arg(i));
      }
    }
    zset_removed_logged(ctx, key, *z, removed, "zrem");
  }
  ctx.reply.integer(static_cast<int64_t>(removed.size()));
}

void cmd_zscore(CommandContext& ctx) {
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  std::optional<double> s = z == nullptr ? std::nullopt : z->score(ctx.arg(2));
  if (s) {
    ctx.reply.dbl(*s);
  } else {
    ctx.reply.null();
  }
}

void cmd_zmscore(CommandContext& ctx) {
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  ctx.reply.array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::optional<double> s = z == nullptr ? std::nullopt : z->score(ctx.arg(i));
    if (s) {
      ctx.reply.dbl(*s);
    } else {
      ctx.reply.null();
    }
  }
}

void cmd_zcard(CommandContext& ctx) {
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  ctx.reply.integer(z == nullptr ? 0 : static_cast<int64_t>(z->size()));
}

// ZRANK / ZREVRANK key member [WITHSCORE] (WITHSCORE as Redis 7.2 added it).
void rank_generic(CommandContext& ctx, bool reverse) {
  bool withscore = false;
  if (ctx.argc() > 4) {
    ctx.wrong_arity();
    return;
  }
  if (ctx.argc() == 4) {
    if (!strcasecmp_view(ctx.arg(3), "WITHSCORE")) {
      ctx.error(err::kSyntax);
      return;
    }
    withscore = true;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  std::optional<size_t> r = z == nullptr ? std::nullopt : z->rank(ctx.arg(2));
  if (!r) {
    if (withscore) {
      ctx.reply.null_array();
    } else {
      ctx.reply.null();
    }
    return;
  }
  auto rank = static_cast<int64_t>(reverse ? z->size() - 1 - *r : *r);
  if (!withscore) {
    ctx.reply.integer(rank);
    return;
  }
  ctx.reply.array(2);
  ctx.reply.integer(rank);
  ctx.reply.dbl(*z->score(ctx.arg(2)));
}

void cmd_zrank(CommandContext& ctx) { rank_generic(ctx, false); }
void cmd_zrevrank(CommandContext& ctx) { rank_generic(ctx, true); }

// ZPOPMIN / ZPOPMAX key [count]
void pop_generic(CommandContext& ctx, bool max) {
  if (ctx.argc() > 3) {
    ctx.error(err::kSyntax);
    return;
  }
  int64_t count = 1;
  bool has_count = ctx.argc() == 3;
  if (has_count) {
    std::optional<int64_t> c = parse_int64(ctx.arg(2));
    if (!c || *c < 0) {
      ctx.error(err::kCountPositive);
      return;
    }
    count = *c;
  }
  std::string_view key = ctx.arg(1);
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, key, false, z)) {
    return;
  }
  std::vector<std::pair<std::string, double>> popped;
  if (z != nullptr && count > 0) {
    zset_pop_logged(ctx, key, *z, max, static_cast<uint64_t>(count), popped);
  }
  // RESP3 nests the pairs only when a count was given (Redis 7).
  reply_pairs(ctx.reply, popped, has_count);
}

// ZRANDMEMBER key [count [WITHSCORES]]: a positive count gives distinct members (all of them if
// count >= size), a negative one |count| draws that may repeat.
void cmd_zrandmember(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    ZSet* z = nullptr;
    if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
      return;
    }
    if (z == nullptr) {
      ctx.reply.null();
      return;
    }
    std::uniform_int_distribution<size_t> pick(0, z->size() - 1);
    ctx.reply.bulk(z->at_rank(pick(random_reply_engine()))->member());
    return;
  }
  std::optional<int64_t> l = parse_int64(ctx.arg(2));
  if (!l) {
    ctx.error(err::kNotInteger);
    return;
  }
  if (*l == INT64_MIN) {
    ctx.error(err::kOutOfRangeLong);
    return;
  }
  bool withscores = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !strcasecmp_view(ctx.arg(3), "WITHSCORES"))) {
    ctx.error(err::kSyntax);
    return;
  }
  if (ctx.argc() == 4) {
    withscores = true;
    if (*l < -INT64_MAX / 2 || *l > INT64_MAX / 2) {
      ctx.error(err::kOutOfRange);
      return;
    }
  }
  bool unique = *l >= 0;
  uint64_t count = unique ? static_cast<uint64_t>(*l) : static_cast<uint64_t>(-*l);
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  if (z == nullptr || count == 0) {
    ctx.reply.array(0);
    return;
  }
  std::vector<const ZSet::Node*> picked;
  if (!unique) {
    if (count > kMaxRandomReplies) {
      ctx.error(err::kOutOfRange);
      return;
    }
    std::uniform_int_distribution<size_t> pick(0, z->size() - 1);
    picked.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      picked.push_back(z->at_rank(pick(random_reply_engine())));
    }
  } else if (count >= z->size()) {
    for (const ZSet::Node* n = z->first(); n != nullptr; n = n->next()) {
      picked.push_back(n);
    }
  } else {
    // A partial shuffle of the ranks: count distinct members, uniformly.
    std::vector<size_t> ranks(z->size());
    for (size_t i = 0; i < ranks.size(); ++i) {
      ranks[i] = i;
    }
    for (size_t i = 0; i < count; ++i) {
      std::uniform_int_distribution<size_t> pick(i, ranks.size() - 1);
      std::swap(ranks[i], ranks[pick(random_reply_engine())]);
      picked.push_back(z->at_rank(ranks[i]));
    }
  }
  bool nested = withscores && ctx.reply.proto() == 3;
  ctx.reply.array(withscores && !nested ? picked.size() * 2 : picked.size());
  for (const ZSet::Node* n : picked) {
    if (nested) {
      ctx.reply.array(2);
    }
    ctx.reply.bulk(n->member());
    if (withscores) {
      ctx.reply.dbl(n->score());
    }
  }
}

void cmd_zpopmin(CommandContext& ctx) { pop_generic(ctx, false); }
void cmd_zpopmax(CommandContext& ctx) { pop_generic(ctx, true); }

}  // namespace

void register_zsets(Table& t) {
  // clang-format off
  t.add({"ZADD",             -4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_zadd, "sorted_set", "ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]", "Adds members with scores to a sorted set, or updates their scores (created if missing)."});
  t.add({"ZINCRBY",           4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_zincrby, "sorted_set", "ZINCRBY key increment member", "Adds an increment to a member's score (0 if absent) and returns the new score."});
  t.add({"ZREM",             -3, kWrite | kFast, keys(1, 1, 1), cmd_zrem, "sorted_set", "ZREM key member [member ...]", "Removes members from a sorted set; returns how many existed."});
  t.add({"ZSCORE",            3, kReadOnly | kFast, keys(1, 1, 1), cmd_zscore, "sorted_set", "ZSCORE key member", "Returns a member's score."});
  t.add({"ZMSCORE",          -3, kReadOnly | kFast, keys(1, 1, 1), cmd_zmscore, "sorted_set", "ZMSCORE key member [member ...]", "Returns the scores of several members (nil for absent ones)."});
  t.add({"ZCARD",             2, kReadOnly | kFast, keys(1, 1, 1), cmd_zcard, "sorted_set", "ZCARD key", "Returns the number of members of a sorted set."});
  t.add({"ZRANK",            -3, kReadOnly | kFast, keys(1, 1, 1), cmd_zrank, "sorted_set", "ZRANK key member [WITHSCORE]", "Returns a member's 0-based rank by ascending score, optionally with its score."});
  t.add({"ZREVRANK",         -3, kReadOnly | kFast, keys(1, 1, 1), cmd_zrevrank, "sorted_set", "ZREVRANK key member [WITHSCORE]", "Returns a member's 0-based rank by descending score, optionally with its score."});
  t.add({"ZPOPMIN",          -2, kWrite | kFast, keys(1, 1, 1), cmd_zpopmin, "sorted_set", "ZPOPMIN key [count]", "Removes and returns the members with the lowest scores."});
  t.add({"ZPOPMAX",          -2, kWrite | kFast, keys(1, 1, 1), cmd_zpopmax, "sorted_set", "ZPOPMAX key [count]", "Removes and returns the members with the highest scores."});
  t.add({"ZRANDMEMBER",      -2, kReadOnly, keys(1, 1, 1), cmd_zrandmember, "sorted_set", "ZRANDMEMBER key [count [WITHSCORES]]", "Returns random members: count distinct ones, or with a negative count that many draws that may repeat."});
  // clang-format on
  register_zset_ranges(t);
  register_zset_pops(t);
  register_zset_ops(t);
}

}  // namespace hotkv
