// Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD. Inputs may be
// sorted sets or plain sets (a set member counts with score 1, as in Redis). Like the set
// algebra (set_ops.cpp) these are written once for one keyspace or many: when their keys span
// shards the dispatcher runs them with every involved shard parked and ctx.db(key) finds each
// key's keyspace; a *STORE logs the destination's whole new value (or its deletion) to the
// destination's shard.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/zset_helpers.hpp"
#include "hotkv/types/set.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

enum class ZOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input: a sorted set, a set, or nothing (missing key), with its weight.
struct Source {
  const ZSet* zset = nullptr;
  const Set* set = nullptr;
  double weight = 1;

  size_t size() const {
    return zset != nullptr ? zset->size() : (set != nullptr ? set->size() : 0);
  }
  // fn(member, score) for every member; a set's members score 1.
  template <class F>
  void for_each(F&& fn) const {
    if (zset != nullptr) {
      for (const ZSet::Node* n = zset->first(); n != nullptr; n = n->next()) {
        fn(n->member(), n->score());
      }
    } else if (set != nullptr) {
      set->for_each([&](std::string_view m) { fn(m, 1.0); });
    }
  }
  bool find(std::string_view member, double& score) const {
    if (zset != nullptr) {
      std::optional<double> s = zset->score(member);
      if (s) {
        score = *s;
      }
      return s.has_value();
    }
    score = 1.0;
    return set != nullptr && set->contains(member);
  }
};

// Adds val into target as Redis aggregates: a sum of +inf and -inf counts as 0; MIN and MAX
// keep the target when val is NaN (a comparison with NaN is false).
void aggregate_into(double& target, double val, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      target += val;
      if (std::isnan(target)) {
        target = 0.0;
      }
      break;
    case Aggregate::kMin:
      target = val < target ? val : target;
      break;
    case Aggregate::kMax:
      target = val > target ? val : target;
      break;
  }
}

// A weight times a score; 0 * inf (NaN) counts as 0, as in Redis for the score a member starts
// with (the intersection aggregates the other inputs' raw products).
double weighted(double weight, double score) {
  double s = weight * score;
  return std::isnan(s) ? 0.0 : s;
}

struct AlgebraOptions {
  ZOp op = ZOp::kUnion;
  bool store = false;        // *STORE: argv[1] is the destination
  bool cardinality = false;  // ZINTERCARD
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;  // ZINTERCARD: 0 means no limit
};


// Parses numkeys, looks up the inputs (WRONGTYPE before any option is read, as in Redis) and
// parses the options. Returns false once it has replied with an error.
bool parse_algebra_or_reply(CommandContext& ctx, AlgebraOptions& o, std::vector<Source>& src) {
  size_t numkeys_at = o.store ? 2 : 1;
  int64_t numkeys = 0;
  if (!ctx.int_arg_or_reply(numkeys_at, numkeys)) {
    return false;
  }
  if (numkeys < 1) {
    ctx.error(err::at_least_one_key(ctx.arg(0)));
    return false;
  }
  if (static_cast<uint64_t>(numkeys) > ctx.argc() - numkeys_at - 1) {
    ctx.error(err::kSyntax);
    return false;
  }
  auto n = static_cast<size_t>(numkeys);
  src.resize(n);
  size_t j = numkeys_at + 1;
  for (size_t i = 0; i < n; ++i, ++j) {
    std::string_view key = ctx.arg(j);
    Value* v = ctx.db(key).find_read(key, ctx.now_ms);
    if (v == nullptr) {
      continue;
    }
    if (v->type() == ValueType::kZSet) {
      src[i].zset = v->zset();
    } else if (v->type() == ValueType::kSet) {
      src[i].set = v->set();
    } else {
      ctx.error(err::kWrongType);
      return false;
    }
  }
  bool weighable = o.op != ZOp::kDiff && !o.cardinality;
  while (j < ctx.argc()) {
    size_t remaining = ctx.argc() - j;
    std::string_view a = ctx.arg(j);
    if (weighable && remaining >= n + 1 && strcasecmp_view(a, "WEIGHTS")) {
      ++j;
      for (size_t i = 0; i < n; ++i, ++j) {
        std::optional<double> w = parse_double(ctx.arg(j));
        if (!w) {
          ctx.error(err::kWeightNotFloat);
          return false;
        }
        src[i].weight = *w;
      }
    } else if (weighable && remaining >= 2 && strcasecmp_view(a, "AGGREGATE")) {
      std::string_view how = ctx.arg(j + 1);
      if (strcasecmp_view(how, "SUM")) {
        o.agg = Aggregate::kSum;
      } else if (strcasecmp_view(how, "MIN")) {
        o.agg = Aggregate::kMin;
      } else if (strcasecmp_view(how, "MAX")) {
        o.agg = Aggregate::kMax;
      } else {
        ctx.error(err::kSyntax);
        return false;
      }
      j += 2;
    } else if (!o.store && !o.cardinality && strcasecmp_view(a, "WITHSCORES")) {
      o.withscores = true;
      ++j;
    } else if (o.cardinality && remaining >= 2 && strcasecmp_view(a, "LIMIT")) {
      std::optional<int64_t> l = parse_int64(ctx.arg(j + 1));
      if (!l || *l < 0) {
        ctx.error(err::kLimitNegative);
        return false;
      }
      o.limit = *l;
      j += 2;
    } else {
      ctx.error(err::kSyntax);
      return false;
    }
  }
  return true;
}

// The intersection walks the smallest input and probes the others: fn(member, score) for each
// member in all of them, until fn returns false. REQUIRES: src sorted by size.
template <class F>
void for_each_in_intersection(const std::vector<Source>& src, Aggregate agg, F&& fn) {
  if (src[0].size() == 0) {
    return;
  }
  bool go_on = true;
  src[0].for_each([&](std::string_view m, double s) {
    if (!go_on) {
      return;
    }
    double score = weighted(src[0].weight, s);
    for (size_t i = 1; i < src.size(); ++i) {
      double other = 0;
      if (!src[i].find(m, other)) {
        return;
      }
      aggregate_into(score, src[i].weight * other, agg);
    }
    go_on = fn(m, score);
  });
}

std::unique_ptr<ZSet> compute(CommandContext& ctx, const AlgebraOptions& o,
                              const std::vector<Source>& src) {
  // A reply comes from Redis's skiplist, which keeps -0; a stored result takes the limits.
  std::unique_ptr<ZSet> out = o.store ? new_zset(ctx) : std::make_unique<ZSet>(0, 0);
  switch (o.op) {
    case ZOp::kInter:
      for_each_in_intersection(src, o.agg, [&](std::string_view m, double score) {
        out->set(m, score);
        return true;
      });
      break;
    case ZOp::kUnion: {
      // Scores are aggregated in a hash first (input order: smallest first), then sorted once.
      std::unordered_map<std::string, double> acc;
      for (const Source& s : src) {
        s.for_each([&](std::string_view m, double score) {
          double w = weighted(s.weight, score);
          auto [it, added] = acc.try_emplace(std::string(m), w);
          if (!added) {
            aggregate_into(it->second, w, o.agg);
          }
        });
      }
      for (const auto& [m, score] : acc) {
        out->set(m, score);
      }
      break;
    }
    case ZOp::kDiff:
      // The first input's members found in no other, with their own (unweighted) scores.
      src[0].for_each([&](std::string_view m, double score) {
        double ignored = 0;
        for (size_t i = 1; i < src.size(); ++i) {
          if (src[i].find(m, ignored)) {
            return;
          }
        }
        out->set(m, score);
      });
      break;
  }
  return out;
}

void algebra_generic(CommandContext& ctx, AlgebraOptions o, const char* event) {
  std::vector<Source> src;
  if (!parse_algebra_or_reply(ctx, o, src)) {
    return;
  }
  if (o.op != ZOp::kDiff) {
    // Smallest first, as Redis orders them (it matters for the order a sum adds up).
    std::stable_sort(src.begin(), src.end(),
                     [](const Source& a, const Source& b) { return a.size() < b.size(); });
  }
  if (o.cardinality) {
    int64_t n = 0;
    for_each_in_intersection(src, o.agg, [&](std::string_view, double) { return ++n != o.limit; });
    ctx.reply.integer(n);
    return;
  }
  std::unique_ptr<ZSet> result = compute(ctx, o, src);
  if (!o.store) {
    reply_zset(ctx, *result, o.withscores);
    return;
  }
  zset_store_logged(ctx, ctx.arg(1), std::move(result), event);
}

void cmd_zunion(CommandContext& ctx) { algebra_generic(ctx, {.op = ZOp::kUnion}, nullptr); }
void cmd_zinter(CommandContext& ctx) { algebra_generic(ctx, {.op = ZOp::kInter}, nullptr); }
void cmd_zdiff(CommandContext& ctx) { algebra_generic(ctx, {.op = ZOp::kDiff}, nullptr); }
void cmd_zunionstore(CommandContext& ctx) {
  algebra_generic(ctx, {.op = ZOp::kUnion, .store = true}, "zunionstore");
}
void cmd_zinterstore(CommandContext& ctx) {
  algebra_generic(ctx, {.op = ZOp::kInter, .store = true}, "zinterstore");
}
void cmd_zdiffstore(CommandContext& ctx) {
  algebra_generic(ctx, {.op = ZOp::kDiff, .store = true}, "zdiffstore");
}
void cmd_zintercard(CommandContext& ctx) {
  algebra_generic(ctx, {.op = ZOp::kInter, .cardinality = true}, nullptr);
}

// Keys of "destination numkeys key [key ...] ...": the destination and the numkeys inputs.
void store_numkeys_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() < 3) {
    return;
  }
  auto n = parse_int64(argv[2]);
  if (!n || *n < 1 || static_cast<uint64_t>(*n) > argv.size() - 3) {
    return;
  }
  out.push_back(1);
  for (size_t i = 0; i < static_cast<size_t>(*n); ++i) {
    out.push_back(3 + i);
  }
}

}  // namespace

void register_zset_ops(Table& t) {
  // clang-format off
  t.add({"ZUNION",      -3, kReadOnly, key_finder(0, 0, 0, numkeys_at1_keys), cmd_zunion, "sorted_set", "ZUNION numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]", "Returns the union of sorted sets (sets count with score 1), scores weighted and aggregated."});
  t.add({"ZINTER",      -3, kReadOnly, key_finder(0, 0, 0, numkeys_at1_keys), cmd_zinter, "sorted_set", "ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]", "Returns the intersection of sorted sets (sets count with score 1), scores weighted and aggregated."});
  t.add({"ZDIFF",       -3, kReadOnly, key_finder(0, 0, 0, numkeys_at1_keys), cmd_zdiff, "sorted_set", "ZDIFF numkeys key [key ...] [WITHSCORES]", "Returns the members of the first sorted set that are in none of the others."});
  t.add({"ZUNIONSTORE", -4, kWrite | kDenyOom, key_finder(0, 0, 0, store_numkeys_keys), cmd_zunionstore, "sorted_set", "ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]", "Stores the union of sorted sets in destination; returns its size."});
  t.add({"ZINTERSTORE", -4, kWrite | kDenyOom, key_finder(0, 0, 0, store_numkeys_keys), cmd_zinterstore, "sorted_set", "ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]", "Stores the intersection of sorted sets in destination; returns its size."});
  t.add({"ZDIFFSTORE",  -4, kWrite | kDenyOom, key_finder(0, 0, 0, store_numkeys_keys), cmd_zdiffstore, "sorted_set", "ZDIFFSTORE destination numkeys key [key ...]", "Stores the difference of sorted sets in destination; returns its size."});
  t.add({"ZINTERCARD",  -3, kReadOnly, key_finder(0, 0, 0, numkeys_at1_keys), cmd_zintercard, "sorted_set", "ZINTERCARD numkeys key [key ...] [LIMIT limit]", "Returns the size of the intersection of sorted sets, counting up to LIMIT."});
  // clang-format on
}

}  // namespace hotkv
