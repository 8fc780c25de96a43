// TTL commands: EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT (with NX|XX|GT|LT), TTL/PTTL,
// EXPIRETIME/PEXPIRETIME and PERSIST. Deadlines are absolute unix milliseconds; a deadline in
// the past deletes the key at once, as in Redis.
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/notify.hpp"

namespace hotkv {
namespace {

void expire_generic(CommandContext& ctx, bool seconds, bool absolute) {
  int64_t when = 0;
  if (!ctx.int_arg_or_reply(2, when)) {
    return;
  }
  bool nx = false;
  bool xx = false;
  bool gt = false;
  bool lt = false;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view a = ctx.arg(i);
    if (strcasecmp_view(a, "NX")) {
      nx = true;
    } else if (strcasecmp_view(a, "XX")) {
      xx = true;
    } else if (strcasecmp_view(a, "GT")) {
      gt = true;
    } else if (strcasecmp_view(a, "LT")) {
      lt = true;
    } else {
      ctx.error(err::unsupported_option(a));
      return;
    }
  }
  if (nx && (xx || gt || lt)) {
    ctx.error(err::kNxXxGtLt);
    return;
  }
  if (gt && lt) {
    ctx.error(err::kGtAndLt);
    return;
  }
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) {
      ctx.error(err::invalid_expire(ctx.arg(0)));
      return;
    }
    when *= 1000;
  }
  if (!absolute) {
    if (when > INT64_MAX - ctx.now_ms) {
      ctx.error(err::invalid_expire(ctx.arg(0)));
      return;
    }
    when += ctx.now_ms;
  }
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find(ctx.arg(1), ctx.now_ms);
  if (v == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  if (nx && v->has_expiry()) {
    ctx.reply.integer(0);
    return;
  }
  if (xx && !v->has_expiry()) {
    ctx.reply.integer(0);
    return;
  }
  // A key without a TTL counts as an infinite one for GT and LT.
  if (gt && (!v->has_expiry() || when <= v->expire_at_ms())) {
    ctx.reply.integer(0);
    return;
  }
  if (lt && v->has_expiry() && when >= v->expire_at_ms()) {
    ctx.reply.integer(0);
    return;
  }
  if (when <= ctx.now_ms) {
    db.erase(ctx.arg(1));
    ctx.log_del(ctx.arg(1));
    ctx.notify(kNotifyGeneric, "del", ctx.arg(1));
  } else {
    db.set_expire(ctx.arg(1), *v, when);
    ctx.log_expire(ctx.arg(1), when);
    ctx.notify(kNotifyGeneric, "expire", ctx.arg(1));
  }
  ctx.reply.integer(1);
}

void cmd_expire(CommandContext& ctx) { expire_generic(ctx, true, false); }
void cmd_pexpire(CommandContext& ctx) { expire_generic(ctx, false, false); }
void cmd_expireat(CommandContext& ctx) { expire_generic(ctx, true, true); }
void cmd_pexpireat(CommandContext& ctx) { expire_generic(ctx, false, true); }

enum class TtlForm { kRemainingSeconds, kRemainingMillis, kAtSeconds, kAtMillis };

void ttl_generic(CommandContext& ctx, TtlForm form) {
  // Reading a deadline is not an access of the key (its access clock stays).
  Value* v = ctx.db(ctx.arg(1)).peek(ctx.arg(1), ctx.now_ms);
  if (v == nullptr) {
    ctx.reply.integer(-2);
    return;
  }
  if (!v->has_expiry()) {
    ctx.reply.integer(-1);
    return;
  }
  int64_t at = v->expire_at_ms();
  int64_t left = at - ctx.now_ms;
  if (left < 0) {
    left = 0;
  }
  switch (form) {
    case TtlForm::kRemainingSeconds:
      ctx.reply.integer((left + 500) / 1000);
      break;
    case TtlForm::kRemainingMillis:
      ctx.reply.integer(left);
      break;
    case TtlForm::kAtSeconds:
      ctx.reply.integer(at / 1000);
      break;
    case TtlForm::kAtMillis:
      ctx.reply.integer(at);
      break;
  }
}

void cmd_ttl(CommandContext& ctx) { ttl_generic(ctx, TtlForm::kRemainingSeconds); }
void cmd_pttl(CommandContext& ctx) { ttl_generic(ctx, TtlForm::kRemainingMillis); }
void cmd_expiretime(CommandContext& ctx) { ttl_generic(ctx, TtlForm::kAtSeconds); }
void cmd_pexpiretime(CommandContext& ctx) { ttl_generic(ctx, TtlForm::kAtMillis); }

void cmd_persist(CommandContext& ctx) {
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find(ctx.arg(1), ctx.now_ms);
  if (v == nullptr || !v->has_expiry()) {
    ctx.reply.integer(0);
    return;
  }
  db.set_expire(ctx.arg(1), *v, kNoExpiry);
  ctx.log_expire(ctx.arg(1), kNoExpiry);
  ctx.notify(kNotifyGeneric, "persist", ctx.arg(1));
  ctx.reply.integer(1);
}

}  // namespace

void register_expire(Table& t) {
  // clang-format off
  t.add({"EXPIRE",      -3, kWrite | kFast, keys(1, 1, 1), cmd_expire, "generic", "EXPIRE key seconds [NX|XX|GT|LT]", "Sets the expiration time of a key in seconds."});
  t.add({"PEXPIRE",     -3, kWrite | kFast, keys(1, 1, 1), cmd_pexpire, "generic", "PEXPIRE key milliseconds [NX|XX|GT|LT]", "Sets the expiration time of a key in milliseconds."});
  t.add({"EXPIREAT",    -3, kWrite | kFast, keys(1, 1, 1), cmd_expireat, "generic", "EXPIREAT key unix-time-seconds [NX|XX|GT|LT]", "Sets the expiration time of a key to a Unix timestamp."});
  t.add({"PEXPIREAT",   -3, kWrite | kFast, keys(1, 1, 1), cmd_pexpireat, "generic", "PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]", "Sets the expiration time of a key to a Unix milliseconds timestamp."});
  t.add({"TTL",          2, kReadOnly | kFast, keys(1, 1, 1), cmd_ttl, "generic", "TTL key", "Returns the expiration time in seconds of a key."});
  t.add({"PTTL",         2, kReadOnly | kFast, keys(1, 1, 1), cmd_pttl, "generic", "PTTL key", "Returns the expiration time in milliseconds of a key."});
  t.add({"EXPIRETIME",   2, kReadOnly | kFast, keys(1, 1, 1), cmd_expiretime, "generic", "EXPIRETIME key", "Returns the expiration time of a key as a Unix timestamp."});
  t.add({"PEXPIRETIME",  2, kReadOnly | kFast, keys(1, 1, 1), cmd_pexpiretime, "generic", "PEXPIRETIME key", "Returns the expiration time of a key as a Unix milliseconds timestamp."});
  t.add({"PERSIST",      2, kWrite | kFast, keys(1, 1, 1), cmd_persist, "generic", "PERSIST key", "Removes the expiration time of a key."});
  // clang-format on
}

}  // namespace hotkv
