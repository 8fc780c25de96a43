// Rate limiting: GCRA.LIMIT (HotKV's own command, with millisecond arguments and replies) and
// CL.THROTTLE (redis-cell's command, with its exact replies, so existing clients work
// unchanged). Both run the one GCRA core in types/gcra.hpp. A limiter is a plain string key
// holding its theoretical arrival time (TAT) in unix nanoseconds, int-encoded, whose deadline is
// the moment the limiter is back to full, so an idle limiter expires by itself. Semantics,
// reply fields and worked examples are in docs/rate-limiting.md.
#include <cstdint>
#include <optional>
#include <string_view>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_inventory.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/types/gcra.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

namespace {

// The keyspace event (class $, strings) published when a request changed a limiter: a new TAT
// and a new deadline. Denied requests and COST 0 peeks change nothing and publish nothing.
constexpr const char* kEvent = "gcra";

// The limit for `count` per `period` (in units of unit_ns) with `burst`; replies the error
// (rate_error when the emission interval would be under a nanosecond) and returns false if
// there is none. Shared by GCRA.LIMIT (milliseconds) and CL.THROTTLE (seconds).
bool make_limit_or_reply(CommandContext& ctx, int64_t period, int64_t unit_ns, int64_t count,
                         int64_t burst, const char* rate_error, gcra::Limit& limit) {
  switch (gcra::make_limit(period, unit_ns, count, burst, limit)) {
    case gcra::Error::kNone:
      return true;
    case gcra::Error::kRateTooHigh:
      ctx.error(rate_error);
      return false;
    case gcra::Error::kBadArgument:  // the handlers rule these out before calling
    case gcra::Error::kOverflow:
      break;
  }
  ctx.error(err::kRateOverflow);
  return false;
}

// Runs one request of `cost` cells against the limiter under key and, if it was allowed with a
// non-zero cost, stores the new TAT with its deadline (handler steps 2-3). Replies the error
// and returns false if the key is of the wrong type, holds a non-integer string, or the
// arithmetic overflows; nothing has changed then.
bool apply_or_reply(CommandContext& ctx, const gcra::Limit& limit, int64_t cost,
                    gcra::Decision& d) {
  std::string_view key = ctx.arg(1);
  Keyspace& db = ctx.db(key);
  Value* v = db.find(key, ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return false;
  }
  std::optional<int64_t> tat;
  if (v != nullptr) {
    if (v->is_int()) {
      tat = v->int_value();
    } else {
      // Not silently reset: a key that was SET to something else is a bug worth seeing.
      tat = parse_int64(v->str(ctx.scratch));
      if (!tat) {
        ctx.error(err::kNotRateLimiter);
        return false;
      }
    }
  }
  if (ctx.now_ms > INT64_MAX / gcra::kNanosPerMilli ||
      ctx.now_ms < INT64_MIN / gcra::kNanosPerMilli) {
    ctx.error(err::kRateOverflow);
    return false;
  }
  // Callers have validated cost, so the only possible error left is an overflow.
  if (gcra::decide(limit, tat, ctx.now_ms * gcra::kNanosPerMilli, cost, d) != gcra::Error::kNone) {
    ctx.error(err::kRateOverflow);
    return false;
  }
  if (d.store) {
    // The deadline is the TAT rounded up to the millisecond: the key never disappears while
    // the limiter is still in use (the TAT is after now, so the deadline is too).
    Value next = Value::from_int(d.new_tat_ns);
    next.set_expire_raw(gcra::ceil_millis(d.new_tat_ns));
    // A limiter is never evicted: losing its state would hand a client a fresh burst.
    next.set_pinned();
    db.put(key, std::move(next));
    ctx.log_put(key);
    ctx.notify(kNotifyString, kEvent, key);
  }
  return true;
}

// GCRA.LIMIT key period_ms count [BURST n] [COST n]
void cmd_gcra_limit(CommandContext& ctx) {
  int64_t period = 0;
  int64_t count = 0;
  int64_t burst = 0;
  int64_t cost = 1;
  if (!ctx.int_arg_or_reply(2, period) || !ctx.int_arg_or_reply(3, count)) {
    return;
  }
  bool seen_burst = false;
  bool seen_cost = false;
  for (size_t i = 4; i < ctx.argc(); i += 2) {
    bool is_burst = strcasecmp_view(ctx.arg(i), "BURST");
    bool is_cost = strcasecmp_view(ctx.arg(i), "COST");
    if ((!is_burst && !is_cost) || i + 1 >= ctx.argc() || (is_burst && seen_burst) ||
        (is_cost && seen_cost)) {
      ctx.error(err::kSyntax);
      return;
    }
    if (!ctx.int_arg_or_reply(i + 1, is_burst ? burst : cost)) {
      return;
    }
    (is_burst ? seen_burst : seen_cost) = true;
  }
  if (period <= 0) {
    ctx.error(err::kPeriodPositive);
    return;
  }
  if (count <= 0) {
    ctx.error(err::kRateCountPositive);
    return;
  }
  if (burst < 0) {
    ctx.error(err::kBurstNonNegative);
    return;
  }
  if (cost < 0) {
    ctx.error(err::kCostNonNegative);
    return;
  }
  // "count per period" without BURST: a fresh key lets all count tries through at once and
  // then one every period / count (the seed's "each customer may try twice per 10 seconds").
  if (!seen_burst) {
    burst = count - 1;
  }
  gcra::Limit limit;
  if (!make_limit_or_reply(ctx, period, gcra::kNanosPerMilli, count, burst, err::kRateTooHigh,
                           limit)) {
    return;
  }
  gcra::Decision d;
  if (!apply_or_reply(ctx, limit, cost, d)) {
    return;
  }
  ctx.reply.array(4);
  ctx.reply.integer(d.allowed ? 1 : 0);
  ctx.reply.integer(d.remaining);
  // Rounded up: at now + retry_after_ms the same request is allowed, one ms earlier it is not.
  ctx.reply.integer(d.retry_after_ns < 0 ? -1 : gcra::ceil_millis(d.retry_after_ns));
  ctx.reply.integer(gcra::ceil_millis(d.reset_after_ns));
}

// CL.THROTTLE key max_burst count_per_period period_s [quantity], as redis-cell: the reply is
// [limited, max_burst + 1, remaining, retry_after_s or -1, reset_after_s], with seconds
// rounded as redis-cell rounds them (gcra::redis_cell_seconds).
void cmd_cl_throttle(CommandContext& ctx) {
  if (ctx.argc() > 6) {
    ctx.wrong_arity();
    return;
  }
  int64_t burst = 0;
  int64_t count = 0;
  int64_t period = 0;
  int64_t quantity = 1;
  if (!ctx.int_arg_or_reply(2, burst) || !ctx.int_arg_or_reply(3, count) ||
      !ctx.int_arg_or_reply(4, period) || (ctx.argc() == 6 && !ctx.int_arg_or_reply(5, quantity))) {
    return;
  }
  // Dragonfly reads these as unsigned and so calls a negative value out of range; redis-cell
  // has no check and computes nonsense (a negative quantity refunds cells).
  if (burst < 0 || count < 0 || period < 0 || quantity < 0) {
    ctx.error(err::kNotInteger);
    return;
  }
  // redis-cell: a zero count or period, or an interval that truncates to 0 ns, is a zero rate.
  if (count == 0 || period == 0) {
    ctx.error(err::kZeroRate);
    return;
  }
  gcra::Limit limit;
  if (!make_limit_or_reply(ctx, period, gcra::kNanosPerSecond, count, burst, err::kZeroRate, limit)) {
    return;
  }
  gcra::Decision d;
  if (!apply_or_reply(ctx, limit, quantity, d)) {
    return;
  }
  ctx.reply.array(5);
  ctx.reply.integer(d.allowed ? 0 : 1);
  ctx.reply.integer(limit.limit);
  ctx.reply.integer(d.remaining);
  ctx.reply.integer(gcra::redis_cell_seconds(d.retry_after_ns));
  ctx.reply.integer(gcra::redis_cell_seconds(d.reset_after_ns));
}

}  // namespace

void register_ratelimit(Table& t) {
  // clang-format off
  t.add({"GCRA.LIMIT",  -4, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_gcra_limit, "ratelimit", "GCRA.LIMIT key period_ms count [BURST burst] [COST cost]", "Rate limits a request with the generic cell rate algorithm: count per period_ms, all of them at once on a fresh key unless BURST says otherwise. Replies allowed, remaining, retry_after_ms and reset_after_ms."});
  t.add({"CL.THROTTLE", -5, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_cl_throttle, "ratelimit", "CL.THROTTLE key max_burst count_per_period period [quantity]", "Rate limits a request as redis-cell does. Replies limited, limit, remaining, retry_after and reset_after in seconds."});
  // clang-format on
}

}  // namespace hotkv
