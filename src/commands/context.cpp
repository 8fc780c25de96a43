// CommandContext's helpers for handlers: argument parsing, and the log, notification and
// wake-up a write leaves (context.hpp).
#include "hotkv/commands/context.hpp"

#include <algorithm>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

bool CommandContext::int_arg_or_reply(size_t i, int64_t& out) {
  auto v = parse_int64(argv[i]);
  if (!v) {
    reply.error(err::kNotInteger);
    return false;
  }
  out = *v;
  return true;
}

namespace {

void note_logged(CommandContext& ctx, size_t shard) {
  if (std::find(ctx.logged_shards.begin(), ctx.logged_shards.end(), shard) ==
      ctx.logged_shards.end()) {
    ctx.logged_shards.push_back(shard);
  }
}

// The log of the key's shard, its open record switched to the command's database.
ShardLog& log_for(CommandContext& ctx, std::string_view key) {
  ShardLog* log = &ctx.shard.log();
  if (ctx.multi_shard) {
    size_t owner = ctx.engine.shard_of(key);
    log = &ctx.engine.shard(owner).log();
    if (log->enabled()) {
      note_logged(ctx, owner);
    }
  }
  if (log->enabled()) {
    log->record().select(ctx.db_index);
  }
  return *log;
}

}  // namespace

void CommandContext::log_put(std::string_view key) {
  ShardLog& log = log_for(*this, key);
  if (!log.enabled()) {
    return;
  }
  encode_replacement(log.record(), key, db(key).find(key, now_ms), scratch);
}

void CommandContext::notify(uint32_t type_flag, std::string_view event, std::string_view key) {
  engine.notify_keyspace_event(db_index, type_flag, event, key);
  Shard& owner = multi_shard ? engine.shard(engine.shard_of(key)) : shard;
  owner.count_key_change();
  signal_key_written(engine, owner, db_index, key);
}

bool CommandContext::logging(std::string_view key) {
  return multi_shard ? engine.shard(engine.shard_of(key)).log().enabled() : shard.log().enabled();
}

void CommandContext::log_op(std::string_view key, OpCode op,
                            std::span<const std::string_view> args) {
  ShardLog& log = log_for(*this, key);
  if (log.enabled()) {
    log.record().add_op(key, static_cast<uint16_t>(op), args);
  }
}

void CommandContext::log_del(std::string_view key) {
  ShardLog& log = log_for(*this, key);
  if (log.enabled()) {
    log.record().add_del(key);
  }
}

void CommandContext::log_expire(std::string_view key, int64_t at_ms) {
  ShardLog& log = log_for(*this, key);
  if (log.enabled()) {
    log.record().add_expire(key, at_ms);
  }
}

void CommandContext::log_flush(Shard& s, uint32_t db) {
  if (s.log().enabled()) {
    if (multi_shard) {
      note_logged(*this, s.id());
    }
    s.log().record().select(db);
    s.log().record().add_flush();
  }
}

void CommandContext::log_swapdb(Shard& s, uint32_t a, uint32_t b) {
  if (s.log().enabled()) {
    if (multi_shard) {
      note_logged(*this, s.id());
    }
    s.log().record().add_swapdb(a, b);
  }
}

void CommandContext::store_or_delete(std::string_view dst, Value value, bool empty, int64_t size,
                                     uint32_t type_flag, std::string_view event) {
  Keyspace& ks = db(dst);
  if (empty) {
    if (ks.find(dst, now_ms) != nullptr && ks.erase(dst)) {
      log_del(dst);
      notify(kNotifyGeneric, "del", dst);
    }
    reply.integer(0);
    return;
  }
  ks.put(dst, std::move(value));
  log_put(dst);
  notify(type_flag, event, dst);
  reply.integer(size);
}

void CommandContext::wrong_arity() {
  reply.error(err::wrong_arity(argv[0]));
}

}  // namespace hotkv
