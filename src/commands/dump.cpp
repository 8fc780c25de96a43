// DUMP and RESTORE: a key's value as Redis's serialized payload (shard/value_dump.hpp), so a
// value moves between HotKV and redis-server 7.0 in either direction, with RESTORE's TTL,
// REPLACE, ABSTTL, IDLETIME and FREQ.
#include <optional>
#include <string>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/value_dump.hpp"
#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/notify.hpp"

namespace hotkv {
namespace {

void cmd_dump(CommandContext& ctx) {
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (v == nullptr) {
    ctx.reply.null();
    return;
  }
  std::optional<std::string> payload = dump_value(*v, EncodingLimits::from(ctx.engine.config()));
  if (!payload) {
    ctx.error(err::kDumpUnsupported);
    return;
  }
  ctx.reply.bulk(*payload);
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void cmd_restore(CommandContext& ctx) {
  bool replace = false;
  bool absttl = false;
  bool idle_given = false;
  bool freq_given = false;
  int64_t idle_seconds = 0;
  int64_t freq = 0;
  for (size_t j = 4; j < ctx.argc(); ++j) {
    const bool has_value = j + 1 < ctx.argc();
    std::string_view a = ctx.arg(j);
    int64_t n = 0;
    if (strcasecmp_view(a, "REPLACE")) {
      replace = true;
    } else if (strcasecmp_view(a, "ABSTTL")) {
      absttl = true;
    } else if (strcasecmp_view(a, "IDLETIME") && has_value && !freq_given) {
      if (!ctx.int_arg_or_reply(++j, n)) {
        return;
      }
      if (n < 0) {
        ctx.error(err::kRestoreIdleTime);
        return;
      }
      idle_given = true;
      idle_seconds = n;
    } else if (strcasecmp_view(a, "FREQ") && has_value && !idle_given) {
      if (!ctx.int_arg_or_reply(++j, n)) {
        return;
      }
      if (n < 0 || n > 255) {
        ctx.error(err::kRestoreFreq);
        return;
      }
      freq_given = true;
      freq = n;
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  std::string_view key = ctx.arg(1);
  Keyspace& db = ctx.db(key);
  if (!replace && db.find(key, ctx.now_ms) != nullptr) {
    ctx.error(err::kBusyKey);
    return;
  }
  int64_t ttl = 0;
  if (!ctx.int_arg_or_reply(2, ttl)) {
    return;
  }
  if (ttl < 0) {
    ctx.error(err::kRestoreTtl);
    return;
  }
  RestoreError why = RestoreError::kNone;
  std::optional<Value> value = restore_value(ctx.arg(3), ctx.engine.config(), why);
  if (!value) {
    ctx.error(why == RestoreError::kChecksum ? err::kDumpPayload
                                             : err::kBadDataFormat);
    return;
  }
  const bool deleted = replace && db.find(key, ctx.now_ms) != nullptr && db.erase(key);
  if (ttl != 0 && !absttl) {
    ttl = ttl > INT64_MAX - ctx.now_ms ? INT64_MAX : ttl + ctx.now_ms;
  }
  if (ttl != 0 && ttl <= ctx.now_ms) {
    // Already expired: nothing is created, and a replaced key is simply gone.
    if (deleted) {
      ctx.log_del(key);
      ctx.notify(kNotifyGeneric, "del", key);
    }
    ctx.reply.ok();
    return;
  }
  // As Redis: each option sets the clock only under the policy that keeps that kind of clock.
  const bool lfu = access_clock_settings().lfu.load(std::memory_order_relaxed);
  if (lfu && freq_given) {
    value->set_access_clock(lfu_clock(ctx.now_ms, static_cast<uint32_t>(freq)));
  } else if (!lfu && idle_given) {
    value->set_access_clock(lru_clock_idle(ctx.now_ms, idle_seconds));
  }
  Value& stored = db.put(key, std::move(*value));
  if (ttl != 0) {
    db.set_expire(key, stored, ttl);
  }
  ctx.log_put(key);
  ctx.notify(kNotifyGeneric, "restore", key);
  ctx.reply.ok();
}

}  // namespace

void register_dump(Table& t) {
  // clang-format off
  t.add({"DUMP",     2, kReadOnly,         keys(1, 1, 1), cmd_dump,    "generic", "DUMP key", "Returns a serialized representation of the value stored at a key."});
  t.add({"RESTORE", -4, kWrite | kDenyOom, keys(1, 1, 1), cmd_restore, "generic", "RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]", "Creates a key from the serialized representation of a value."});
  // clang-format on
}

}  // namespace hotkv
