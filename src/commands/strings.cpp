// Strings and counters: GET/SET and friends, multi-key MGET/MSET/MSETNX, ranges, and the
// integer and float counters. Integers stay int64-encoded, so INCR/DECR never format or parse
// text. Every handler parses and validates everything before it mutates anything.
#include <cmath>
#include <cstring>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

bool string_or_reply(CommandContext& ctx, Value* v) {
  if (v != nullptr && v->type() != ValueType::kString) {
    ctx.error(err::kWrongType);
    return false;
  }
  return true;
}

void reply_value(CommandContext& ctx, const Value& v) {
  if (v.is_int()) {
    ctx.reply.bulk_int(v.int_value());
    return;
  }
  ctx.reply.bulk(v.str(ctx.scratch));
}

bool parse_expire_option(CommandContext& ctx, size_t& i, ExpireOption& opt, bool allow_keepttl,
                         bool allow_persist) {
  std::string_view a = ctx.arg(i);
  auto is = [&](const char* name) { return strcasecmp_view(a, name); };
  ExpireUnit unit;
  if (is("EX")) {
    unit = ExpireUnit::kSecondsRelative;
  } else if (is("PX")) {
    unit = ExpireUnit::kMillisRelative;
  } else if (is("EXAT")) {
    unit = ExpireUnit::kSecondsAbsolute;
  } else if (is("PXAT")) {
    unit = ExpireUnit::kMillisAbsolute;
  } else if (allow_keepttl && is("KEEPTTL")) {
    if (opt.kind != ExpireOption::kNone) {
      ctx.error(err::kSyntax);
      return false;
    }
    opt.kind = ExpireOption::kKeep;
    return true;
  } else if (allow_persist && is("PERSIST")) {
    if (opt.kind != ExpireOption::kNone) {
      ctx.error(err::kSyntax);
      return false;
    }
    opt.kind = ExpireOption::kPersist;
    return true;
  } else {
    ctx.error(err::kSyntax);
    return false;
  }
  if (opt.kind != ExpireOption::kNone || i + 1 >= ctx.argc()) {
    ctx.error(err::kSyntax);
    return false;
  }
  ++i;
  int64_t n = 0;
  if (!ctx.int_arg_or_reply(i, n)) {
    return false;
  }
  int64_t at = 0;
  if (!expire_deadline(n, unit, ctx.now_ms, at)) {
    ctx.error(err::invalid_expire(ctx.arg(0)));
    return false;
  }
  opt.kind = ExpireOption::kAt;
  opt.at_ms = at;
  return true;
}

bool expire_deadline(int64_t n, ExpireUnit unit, int64_t now_ms, int64_t& at_ms) {
  bool seconds = unit == ExpireUnit::kSecondsRelative || unit == ExpireUnit::kSecondsAbsolute;
  bool relative = unit == ExpireUnit::kSecondsRelative || unit == ExpireUnit::kMillisRelative;
  if (n <= 0 || (seconds && n > INT64_MAX / 1000)) {
    return false;
  }
  int64_t ms = seconds ? n * 1000 : n;
  if (relative) {
    if (ms > INT64_MAX - now_ms) {
      return false;
    }
    ms += now_ms;
  }
  at_ms = ms;
  return true;
}


bool strcasecmp_view(std::string_view a, const char* b) {
  size_t n = std::strlen(b);
  if (a.size() != n) {
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != static_cast<unsigned char>(b[i])) {
      return false;
    }
  }
  return true;
}

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

namespace {

// Stores `value` under key with the deadline the option asks for (a deadline already in the
// past deletes the key, as Redis does for SET ... PXAT <past>).
void store_string(CommandContext& ctx, Keyspace& db, std::string_view key, Value value,
                  const ExpireOption& opt, Value* old) {
  if (opt.kind == ExpireOption::kAt) {
    if (opt.at_ms <= ctx.now_ms) {
      db.erase(key);
      ctx.log_del(key);
      ctx.notify(kNotifyGeneric, "del", key);
      return;
    }
    value.set_expire_raw(opt.at_ms);
  } else if (opt.kind == ExpireOption::kKeep && old != nullptr) {
    value.set_expire_raw(old->expire_at_ms());
  }
  db.put(key, std::move(value));
  ctx.log_put(key);
  ctx.notify(kNotifyString, "set", key);
  if (opt.kind == ExpireOption::kAt) {
    ctx.notify(kNotifyGeneric, "expire", key);
  }
}

void cmd_get(CommandContext& ctx) {
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.null();
    return;
  }
  reply_value(ctx, *v);
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms|KEEPTTL]
void set_generic(CommandContext& ctx, std::string_view key, std::string_view val, bool nx,
                 bool xx, bool get, const ExpireOption& opt) {
  Keyspace& db = ctx.db(key);
  Value* old = get ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (get && !string_or_reply(ctx, old)) {
    return;
  }
  bool blocked = (nx && old != nullptr) || (xx && old == nullptr);
  if (get) {
    // Reply with the old value before it is replaced.
    if (old == nullptr) {
      ctx.reply.null();
    } else {
      reply_value(ctx, *old);
    }
  }
  if (blocked) {
    if (!get) {
      ctx.reply.null();
    }
    return;
  }
  store_string(ctx, db, key, Value::from_string(val), opt, old);
  if (!get) {
    ctx.reply.ok();
  }
}

void cmd_set(CommandContext& ctx) {
  bool nx = false;
  bool xx = false;
  bool get = false;
  ExpireOption opt;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view a = ctx.arg(i);
    if (strcasecmp_view(a, "NX") && !xx) {
      nx = true;
    } else if (strcasecmp_view(a, "XX") && !nx) {
      xx = true;
    } else if (strcasecmp_view(a, "GET")) {
      get = true;
    } else if (strcasecmp_view(a, "NX") || strcasecmp_view(a, "XX")) {
      ctx.error(err::kSyntax);
      return;
    } else if (!parse_expire_option(ctx, i, opt, true, false)) {
      return;
    }
  }
  set_generic(ctx, ctx.arg(1), ctx.arg(2), nx, xx, get, opt);
}

void cmd_setnx(CommandContext& ctx) {
  Keyspace& db = ctx.db(ctx.arg(1));
  if (db.find(ctx.arg(1), ctx.now_ms) != nullptr) {
    ctx.reply.integer(0);
    return;
  }
  db.put(ctx.arg(1), Value::from_string(ctx.arg(2)));
  ctx.log_put(ctx.arg(1));
  ctx.notify(kNotifyString, "set", ctx.arg(1));
  ctx.reply.integer(1);
}

void setex_generic(CommandContext& ctx, ExpireUnit unit) {
  int64_t n = 0;
  if (!ctx.int_arg_or_reply(2, n)) {
    return;
  }
  ExpireOption opt;
  if (!expire_deadline(n, unit, ctx.now_ms, opt.at_ms)) {
    ctx.error(err::invalid_expire(ctx.arg(0)));
    return;
  }
  opt.kind = ExpireOption::kAt;
  Keyspace& db = ctx.db(ctx.arg(1));
  store_string(ctx, db, ctx.arg(1), Value::from_string(ctx.arg(3)), opt, nullptr);
  ctx.reply.ok();
}

void cmd_setex(CommandContext& ctx) { setex_generic(ctx, ExpireUnit::kSecondsRelative); }
void cmd_psetex(CommandContext& ctx) { setex_generic(ctx, ExpireUnit::kMillisRelative); }

void cmd_getset(CommandContext& ctx) {
  set_generic(ctx, ctx.arg(1), ctx.arg(2), false, false, true, ExpireOption{});
}

void cmd_getdel(CommandContext& ctx) {
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.null();
    return;
  }
  reply_value(ctx, *v);
  db.erase(ctx.arg(1));
  ctx.log_del(ctx.arg(1));
  ctx.notify(kNotifyGeneric, "del", ctx.arg(1));
}

// GETEX key [EX s|PX ms|EXAT ts|PXAT ms|PERSIST]
void cmd_getex(CommandContext& ctx) {
  ExpireOption opt;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (!parse_expire_option(ctx, i, opt, false, true)) {
      return;
    }
  }
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.null();
    return;
  }
  reply_value(ctx, *v);
  if (opt.kind == ExpireOption::kAt) {
    if (opt.at_ms <= ctx.now_ms) {
      db.erase(ctx.arg(1));
      ctx.log_del(ctx.arg(1));
      ctx.notify(kNotifyGeneric, "del", ctx.arg(1));
    } else {
      db.set_expire(ctx.arg(1), *v, opt.at_ms);
      ctx.log_expire(ctx.arg(1), opt.at_ms);
      ctx.notify(kNotifyGeneric, "expire", ctx.arg(1));
    }
  } else if (opt.kind == ExpireOption::kPersist && v->has_expiry()) {
    db.set_expire(ctx.arg(1), *v, kNoExpiry);
    ctx.log_expire(ctx.arg(1), kNoExpiry);
    ctx.notify(kNotifyGeneric, "persist", ctx.arg(1));
  }
}

void cmd_mget(CommandContext& ctx) {
  ctx.reply.array(ctx.argc() - 1);
  for (size_t i = 1; i < ctx.argc(); ++i) {
    Value* v = ctx.db(ctx.arg(i)).find_read(ctx.arg(i), ctx.now_ms);
    if (v == nullptr || v->type() != ValueType::kString) {
      ctx.reply.null();
    } else {
      reply_value(ctx, *v);
    }
  }
}

void cmd_mset(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.wrong_arity();
    return;
  }
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    ctx.db(ctx.arg(i)).put(ctx.arg(i), Value::from_string(ctx.arg(i + 1)));
    ctx.log_put(ctx.arg(i));
    ctx.notify(kNotifyString, "set", ctx.arg(i));
  }
  ctx.reply.ok();
}

void cmd_msetnx(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.wrong_arity();
    return;
  }
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    if (ctx.db(ctx.arg(i)).find(ctx.arg(i), ctx.now_ms) != nullptr) {
      ctx.reply.integer(0);
      return;
    }
  }
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    ctx.db(ctx.arg(i)).put(ctx.arg(i), Value::from_string(ctx.arg(i + 1)));
    ctx.log_put(ctx.arg(i));
    ctx.notify(kNotifyString, "set", ctx.arg(i));
  }
  ctx.reply.integer(1);
}

bool check_string_length_or_reply(CommandContext& ctx, uint64_t total) {
  if (total > static_cast<uint64_t>(
                  ctx.engine.config().proto_max_bulk_len.load(std::memory_order_relaxed))) {
    ctx.error(err::kStringTooLong);
    return false;
  }
  return true;
}

void cmd_append(CommandContext& ctx) {
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    Value& nv = db.put(ctx.arg(1), Value::from_string(ctx.arg(2)));
    ctx.log_put(ctx.arg(1));
    ctx.notify(kNotifyString, "append", ctx.arg(1));
    ctx.reply.integer(static_cast<int64_t>(nv.str_len()));
    return;
  }
  if (!check_string_length_or_reply(ctx, v->str_len() + ctx.arg(2).size())) {
    return;
  }
  std::string& raw = v->mutable_raw();
  raw.append(ctx.arg(2));
  ctx.log_put(ctx.arg(1));
  ctx.notify(kNotifyString, "append", ctx.arg(1));
  ctx.reply.integer(static_cast<int64_t>(v->str_len()));
}

void cmd_strlen(CommandContext& ctx) {
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  ctx.reply.integer(v == nullptr ? 0 : static_cast<int64_t>(v->str_len()));
}

void cmd_getrange(CommandContext& ctx) {
  int64_t start = 0;
  int64_t end = 0;
  if (!ctx.int_arg_or_reply(2, start) || !ctx.int_arg_or_reply(3, end)) {
    return;
  }
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.bulk("");
    return;
  }
  std::string_view s = v->str(ctx.scratch);
  int64_t len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.bulk("");
    return;
  }
  if (start < 0) {
    start += len;
  }
  if (end < 0) {
    end += len;
  }
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  if (end >= len) {
    end = len - 1;
  }
  if (len == 0 || start > end) {
    ctx.reply.bulk("");
    return;
  }
  ctx.reply.bulk(s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

void cmd_setrange(CommandContext& ctx) {
  int64_t offset = 0;
  if (!ctx.int_arg_or_reply(2, offset)) {
    return;
  }
  if (offset < 0) {
    ctx.error(err::kOffsetRange);
    return;
  }
  std::string_view val = ctx.arg(3);
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr && val.empty()) {
    ctx.reply.integer(0);
    return;
  }
  if (!val.empty() &&
      !check_string_length_or_reply(ctx, static_cast<uint64_t>(offset) + val.size())) {
    return;
  }
  if (val.empty()) {
    ctx.reply.integer(static_cast<int64_t>(v->str_len()));
    return;
  }
  if (v == nullptr) {
    v = &db.put(ctx.arg(1), Value::from_string(""));
  }
  std::string& raw = v->mutable_raw();
  size_t need = static_cast<size_t>(offset) + val.size();
  if (raw.size() < need) {
    raw.resize(need, '\0');
  }
  std::memcpy(raw.data() + offset, val.data(), val.size());
  size_t len = raw.size();
  ctx.log_put(ctx.arg(1));
  ctx.notify(kNotifyString, "setrange", ctx.arg(1));
  ctx.reply.integer(static_cast<int64_t>(len));
}

void incr_generic(CommandContext& ctx, int64_t delta) {
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  int64_t cur = 0;
  if (v != nullptr) {
    if (v->is_int()) {
      cur = v->int_value();
    } else {
      auto parsed = parse_int64(v->str(ctx.scratch));
      if (!parsed) {
        ctx.error(err::kNotInteger);
        return;
      }
      cur = *parsed;
    }
  }
  if ((delta < 0 && cur < 0 && delta < INT64_MIN - cur) ||
      (delta > 0 && cur > 0 && delta > INT64_MAX - cur)) {
    ctx.error(err::kOverflow);
    return;
  }
  int64_t next = cur + delta;
  if (v == nullptr) {
    db.put(ctx.arg(1), Value::from_int(next));
  } else {
    v->set_int(next);
  }
  ctx.log_put(ctx.arg(1));
  ctx.notify(kNotifyString, "incrby", ctx.arg(1));
  ctx.reply.integer(next);
}

void cmd_incr(CommandContext& ctx) { incr_generic(ctx, 1); }
void cmd_decr(CommandContext& ctx) { incr_generic(ctx, -1); }

void cmd_incrby(CommandContext& ctx) {
  int64_t d = 0;
  if (ctx.int_arg_or_reply(2, d)) {
    incr_generic(ctx, d);
  }
}

void cmd_decrby(CommandContext& ctx) {
  int64_t d = 0;
  if (!ctx.int_arg_or_reply(2, d)) {
    return;
  }
  if (d == INT64_MIN) {
    ctx.error(err::kDecrOverflow);
    return;
  }
  incr_generic(ctx, -d);
}

void cmd_incrbyfloat(CommandContext& ctx) {
  auto incr = parse_long_double(ctx.arg(2));
  if (!incr) {
    ctx.error(err::kNotFloat);
    return;
  }
  Keyspace& db = ctx.db(ctx.arg(1));
  Value* v = db.find(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  long double cur = 0;
  if (v != nullptr) {
    if (v->is_int()) {
      cur = static_cast<long double>(v->int_value());
    } else {
      auto parsed = parse_long_double(v->str(ctx.scratch));
      if (!parsed) {
        ctx.error(err::kNotFloat);
        return;
      }
      cur = *parsed;
    }
  }
  long double next = cur + *incr;
  if (std::isnan(next) || std::isinf(next)) {
    ctx.error(err::kIncrFloatNaN);
    return;
  }
  std::string text = format_long_double_human(next);
  if (v == nullptr) {
    db.put(ctx.arg(1), Value::from_text(text));
  } else {
    v->set_text(text);
  }
  ctx.log_put(ctx.arg(1));
  ctx.notify(kNotifyString, "incrbyfloat", ctx.arg(1));
  ctx.reply.bulk(text);
}

}  // namespace

void register_strings(Table& t) {
  // clang-format off
  t.add({"GET",         2, kReadOnly | kFast, keys(1, 1, 1), cmd_get, "string", "GET key", "Returns the string value of a key."});
  t.add({"SET",        -3, kWrite | kDenyOom, keys(1, 1, 1), cmd_set, "string", "SET key value [NX|XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."});
  t.add({"SETNX",       3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_setnx, "string", "SETNX key value", "Sets the string value of a key only when the key doesn't exist."});
  t.add({"SETEX",       4, kWrite | kDenyOom, keys(1, 1, 1), cmd_setex, "string", "SETEX key seconds value", "Sets the string value and expiration time of a key."});
  t.add({"PSETEX",      4, kWrite | kDenyOom, keys(1, 1, 1), cmd_psetex, "string", "PSETEX key milliseconds value", "Sets both string value and expiration time in milliseconds of a key."});
  t.add({"GETSET",      3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_getset, "string", "GETSET key value", "Returns the previous string value of a key after setting it to a new value."});
  t.add({"GETDEL",      2, kWrite | kFast, keys(1, 1, 1), cmd_getdel, "string", "GETDEL key", "Returns the string value of a key after deleting the key."});
  t.add({"GETEX",      -2, kWrite | kFast, keys(1, 1, 1), cmd_getex, "string", "GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST]", "Returns the string value of a key after setting its expiration time."});
  t.add({"MGET",       -2, kReadOnly | kFast | kSplitsByKey | kSplitGathers, keys(1, -1, 1), cmd_mget, "string", "MGET key [key ...]", "Atomically returns the string values of one or more keys."});
  t.add({"MSET",       -3, kWrite | kDenyOom | kSplitsByKey, keys(1, -1, 2), cmd_mset, "string", "MSET key value [key value ...]", "Atomically creates or modifies the string values of one or more keys."});
  t.add({"MSETNX",     -3, kWrite | kDenyOom, keys(1, -1, 2), cmd_msetnx, "string", "MSETNX key value [key value ...]", "Atomically modifies the string values of one or more keys only when all keys don't exist."});
  t.add({"APPEND",      3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_append, "string", "APPEND key value", "Appends a string to the value of a key. Creates the key if it doesn't exist."});
  t.add({"STRLEN",      2, kReadOnly | kFast, keys(1, 1, 1), cmd_strlen, "string", "STRLEN key", "Returns the length of a string value."});
  t.add({"GETRANGE",    4, kReadOnly, keys(1, 1, 1), cmd_getrange, "string", "GETRANGE key start end", "Returns a substring of the string stored at a key."});
  t.add({"SUBSTR",      4, kReadOnly, keys(1, 1, 1), cmd_getrange, "string", "SUBSTR key start end", "Returns a substring from a string value (old name of GETRANGE)."});
  t.add({"SETRANGE",    4, kWrite | kDenyOom, keys(1, 1, 1), cmd_setrange, "string", "SETRANGE key offset value", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist."});
  t.add({"INCR",        2, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_incr, "string", "INCR key", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."});
  t.add({"DECR",        2, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_decr, "string", "DECR key", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."});
  t.add({"INCRBY",      3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_incrby, "string", "INCRBY key increment", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist."});
  t.add({"DECRBY",      3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_decrby, "string", "DECRBY key decrement", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist."});
  t.add({"INCRBYFLOAT", 3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_incrbyfloat, "string", "INCRBYFLOAT key increment", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist."});
  // clang-format on
}

}  // namespace hotkv
