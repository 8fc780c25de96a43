// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE and the PFDEBUG/PFSELFTEST internals. The
// value is a plain string in Redis's HLL layout (types/hyperloglog.hpp), so GET/SET/APPEND and
// friends see it as Redis would, and a value copied from redis-server counts the same here.
// PFCOUNT of several keys and PFMERGE may name keys of several shards: the dispatcher then
// parks every involved shard and ctx.db(key) finds each key's keyspace (as set_ops.cpp).
// Effects are logged as the key's final string value.
#include <random>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/types/hyperloglog.hpp"
#include "hotkv/util/config.hpp"
#include "hotkv/util/notify.hpp"

namespace hotkv {
namespace {

size_t sparse_max_bytes(CommandContext& ctx) {
  int64_t n = ctx.engine.config().hll_sparse_max_bytes.load(std::memory_order_relaxed);
  return n < 0 ? 0 : static_cast<size_t>(n);
}

// An existing value that PF* may use: a string (else WRONGTYPE) whose bytes pass Redis's shape
// check (else Redis's "not a valid HyperLogLog" WRONGTYPE). Replies and returns false if not.
bool hll_or_reply(CommandContext& ctx, const Value& v) {
  if (v.type() != ValueType::kString) {
    ctx.error(err::kWrongType);
    return false;
  }
  // An integer-encoded string never holds an HLL (Redis refuses non-sds encodings too).
  if (v.is_int() || !hll::looks_valid(v.str(ctx.scratch))) {
    ctx.error(err::kNotHll);
    return false;
  }
  return true;
}

// Finds key for reading; out is nullptr when it does not exist (an empty HLL).
bool lookup_hll_or_reply(CommandContext& ctx, std::string_view key, Value*& out) {
  out = ctx.db(key).find_read(key, ctx.now_ms);
  return out == nullptr || hll_or_reply(ctx, *out);
}

// Stores a fresh empty HLL under key (which does not exist) and returns its bytes.
std::string& create_hll(CommandContext& ctx, std::string_view key) {
  Value fresh;
  fresh.mutable_raw() = hll::make_empty();
  return ctx.db(key).put(key, std::move(fresh)).mutable_raw();
}

// The value was rewritten in place by a command that does not fire an event of its own
// (PFCOUNT refreshing its cached cardinality, PFDEBUG converting it): log it and let WATCH
// see the change, as Redis's signalModifiedKey does, without publishing anything.
void note_rewritten(CommandContext& ctx, std::string_view key) {
  ctx.log_put(key);
  ctx.notify(0, {}, key);
}

// PFADD key [element ...]: 1 when a register changed or the key was created.
void cmd_pfadd(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Value* v = ctx.db(key).find(key, ctx.now_ms);
  if (v != nullptr && !hll_or_reply(ctx, *v)) {
    return;
  }
  bool changed = v == nullptr;
  std::string& raw = v == nullptr ? create_hll(ctx, key) : v->mutable_raw();
  size_t max_bytes = sparse_max_bytes(ctx);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    hll::Update u = hll::add(raw, ctx.arg(i), max_bytes);
    if (u == hll::Update::kCorrupt) {
      // Only a value that was corrupt already gets here. As Redis, the elements before this
      // one stay added; the log keeps up with what memory holds.
      if (changed) {
        note_rewritten(ctx, key);
      }
      ctx.error(err::kHllCorrupt);
      return;
    }
    changed = changed || u == hll::Update::kChanged;
  }
  if (changed) {
    hll::invalidate_cache(raw);
    ctx.log_put(key);
    ctx.notify(kNotifyString, "pfadd", key);
  }
  ctx.reply.integer(changed ? 1 : 0);
}

// PFCOUNT key [key ...]. One key: the cached cardinality, or a fresh estimate that is cached
// in the value (a write Redis makes too, and logs). Several keys: the estimate of their union,
// computed aside; no key changes.
void cmd_pfcount(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    hll::Registers max{};
    for (size_t i = 1; i < ctx.argc(); ++i) {
      Value* v = nullptr;
      if (!lookup_hll_or_reply(ctx, ctx.arg(i), v)) {
        return;
      }
      if (v != nullptr && !hll::merge_into(v->str(ctx.scratch), max)) {
        ctx.error(err::kHllCorrupt);
        return;
      }
    }
    ctx.reply.integer(static_cast<int64_t>(hll::estimate(hll::histogram(max))));
    return;
  }
  std::string_view key = ctx.arg(1);
  Value* v = nullptr;
  if (!lookup_hll_or_reply(ctx, key, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::string& raw = v->mutable_raw();
  if (hll::cache_valid(raw)) {
    ctx.reply.integer(static_cast<int64_t>(hll::cached_cardinality(raw)));
    return;
  }
  hll::Histogram hist;
  if (!hll::histogram(raw, hist)) {
    ctx.error(err::kHllCorrupt);
    return;
  }
  uint64_t card = hll::estimate(hist);
  hll::set_cached_cardinality(raw, card);
  note_rewritten(ctx, key);
  ctx.reply.integer(static_cast<int64_t>(card));
}

// PFMERGE destkey [sourcekey ...]: destkey (created if missing, keeping its TTL otherwise)
// takes the register-wise maximum of itself and the sources. It turns dense when any input is.
void cmd_pfmerge(CommandContext& ctx) {
  hll::Registers max{};
  bool use_dense = false;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    Value* v = nullptr;
    if (!lookup_hll_or_reply(ctx, ctx.arg(i), v)) {
      return;
    }
    if (v == nullptr) {
      continue;
    }
    std::string_view bytes = v->str(ctx.scratch);
    use_dense = use_dense || hll::encoding_of(bytes) == hll::Encoding::kDense;
    if (!hll::merge_into(bytes, max)) {
      ctx.error(err::kHllCorrupt);
      return;
    }
  }
  std::string_view dst = ctx.arg(1);
  Value* d = ctx.db(dst).find(dst, ctx.now_ms);
  std::string& raw = d == nullptr ? create_hll(ctx, dst) : d->mutable_raw();
  // destkey was merged above, so it is not corrupt and converts.
  if (use_dense && !hll::to_dense(raw)) {
    ctx.error(err::kHllCorrupt);
    return;
  }
  size_t max_bytes = sparse_max_bytes(ctx);
  for (size_t i = 0; i < hll::kRegisters; ++i) {
    if (max[i] != 0) {
      (void)hll::set_register(raw, i, max[i], max_bytes);
    }
  }
  hll::invalidate_cache(raw);
  ctx.log_put(dst);
  // Redis reports a merge as "pfadd": in effect it adds elements.
  ctx.notify(kNotifyString, "pfadd", dst);
  ctx.reply.ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. GETREG and TODENSE convert a sparse value to
// dense for good, as Redis does.
void cmd_pfdebug(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  std::string_view key = ctx.arg(2);
  Value* v = ctx.db(key).find(key, ctx.now_ms);
  if (v == nullptr) {
    ctx.error(err::kHllNoKey);
    return;
  }
  if (!hll_or_reply(ctx, *v)) {
    return;
  }
  std::string& raw = v->mutable_raw();
  bool sparse = hll::encoding_of(raw) == hll::Encoding::kSparse;
  if (strcasecmp_view(sub, "GETREG") || strcasecmp_view(sub, "TODENSE")) {
    if (sparse) {
      if (!hll::to_dense(raw)) {
        ctx.error(err::kHllCorrupt);
        return;
      }
      note_rewritten(ctx, key);
    }
    if (strcasecmp_view(sub, "TODENSE")) {
      ctx.reply.integer(sparse ? 1 : 0);
      return;
    }
    hll::Registers regs;
    (void)hll::registers_of(raw, regs);
    ctx.reply.array(regs.size());
    for (uint8_t r : regs) {
      ctx.reply.integer(r);
    }
  } else if (strcasecmp_view(sub, "DECODE")) {
    if (!sparse) {
      ctx.error(err::kHllNotSparse);
      return;
    }
    ctx.reply.bulk(hll::decode_sparse(raw));
  } else if (strcasecmp_view(sub, "ENCODING")) {
    ctx.reply.simple(sparse ? "sparse" : "dense");
  } else {
    ctx.error(err::unknown_pfdebug(sub));
  }
}

// PFSELFTEST: checks register packing and the estimator (ten million adds: seconds).
void cmd_pfselftest(CommandContext& ctx) {
  std::random_device rd;
  uint64_t seed = (static_cast<uint64_t>(rd()) << 32) | rd();
  std::string failure = hll::self_test(sparse_max_bytes(ctx), seed);
  if (failure.empty()) {
    ctx.reply.ok();
  } else {
    ctx.error(failure);
  }
}

}  // namespace

void register_hyperloglog(Table& t) {
  // clang-format off
  t.add({"PFADD",      -2, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_pfadd, "hyperloglog", "PFADD key [element [element ...]]", "Adds elements to a HyperLogLog; creates the key if it doesn't exist."});
  t.add({"PFCOUNT",    -2, kReadOnly, keys(1, -1, 1), cmd_pfcount, "hyperloglog", "PFCOUNT key [key ...]", "Returns the estimated number of distinct elements of a HyperLogLog, or of the union of several."});
  t.add({"PFMERGE",    -2, kWrite | kDenyOom, keys(1, -1, 1), cmd_pfmerge, "hyperloglog", "PFMERGE destkey [sourcekey [sourcekey ...]]", "Merges HyperLogLogs into the destination key."});
  t.add({"PFDEBUG",     3, kWrite | kDenyOom | kAdmin, keys(2, 2, 1), cmd_pfdebug, "hyperloglog", "PFDEBUG subcommand key", "Internal: shows or converts the representation of a HyperLogLog."});
  t.add({"PFSELFTEST",  1, kAdmin, no_keys(), cmd_pfselftest, "hyperloglog", "PFSELFTEST", "Internal: tests the HyperLogLog implementation."});
  // clang-format on
}

}  // namespace hotkv
