// What a command handler sees: its arguments, the reply writer, the shard(s) it runs on, the
// clock reading for this command, and (for connection commands only) the client's session.
// Handlers run on the thread that owns their keys, or inside run_atomic with every involved
// shard parked; db(key) returns the right keyspace in both cases.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/op_effects.hpp"

namespace hotkv {

struct CommandSpec;

struct CommandContext {
  std::span<const std::string_view> argv;
  ReplyWriter& reply;
  Engine& engine;
  Shard& shard;            // the executing shard (the caller's own when multi_shard)
  bool multi_shard;        // true inside run_atomic: keys may live on any parked shard
  ClientSession* session;  // non-null only for kConnection commands
  const CommandSpec& spec;
  int64_t now_ms;
  // The client's selected database (SELECT): every key this command names is in it.
  uint32_t db_index = 0;
  // True when a script (EVAL, FCALL) runs this command: its output must not depend on an
  // order that differs between runs (SORT of a set BY a constant sorts by bytes instead).
  bool from_script = false;

  size_t argc() const { return argv.size(); }
  std::string_view arg(size_t i) const { return argv[i]; }

  Keyspace& db(std::string_view key) { return db(key, db_index); }
  // The same key's shard, database `index` (MOVE, COPY ... DB).
  Keyspace& db(std::string_view key, uint32_t index) {
    if (!multi_shard) {
      return shard.keyspace(index);
    }
    return engine.shard(engine.shard_of(key)).keyspace(index);
  }

  void error(std::string_view text) { reply.error(text); }
  // Parses argv[i] as an integer or replies with Redis's "not an integer" error.
  bool int_arg_or_reply(size_t i, int64_t& out);
  // "ERR wrong number of arguments for '<name>' command".
  void wrong_arity();
  // Reusable buffer for formatting integers as strings without allocating per call.
  std::string scratch;

  // The effects a write command made, for the append-only log (step 3 of every handler:
  // after mutating, before replying). They record final states with absolute deadlines, so
  // replay never re-runs a command. No-ops when persistence is off.
  //
  // The key's current value and deadline (or its deletion, if it no longer exists).
  void log_put(std::string_view key);
  void log_del(std::string_view key);
  // An operation on the aggregate value under key, with concrete arguments (op_effects.hpp).
  void log_op(std::string_view key, OpCode op, std::span<const std::string_view> args);
  bool logging(std::string_view key);
  // The key's deadline is now at_ms (kNoExpiry: it has none).
  void log_expire(std::string_view key, int64_t at_ms);
  // Every key of database `db` on `s` is gone (FLUSHDB and FLUSHALL log this on each shard).
  void log_flush(Shard& s, uint32_t db);
  // Databases a and b of `s` traded places (SWAPDB logs this on each shard).
  void log_swapdb(Shard& s, uint32_t a, uint32_t b);
  // The end of every "...STORE destination" command (SUNIONSTORE, ZINTERSTORE, BITOP, ...):
  // `value` (of `size` elements) replaces whatever dst held, is logged and announced as
  // `event` of class `type_flag`; an empty result instead deletes dst ("del" if it existed).
  // Replies the size (0 when empty).
  void store_or_delete(std::string_view dst, Value value, bool empty, int64_t size,
                       uint32_t type_flag, std::string_view event);
  // The one call that says "key changed", made after mutating, like the log: it dirties the
  // key's WATCHes, invalidates the clients tracking it, marks it ready for the clients
  // blocked on it and publishes `event` if the class `type_flag` (a NotifyFlag) is enabled
  // in notify-keyspace-events. A handler never wakes blocked readers any other way.
  void notify(uint32_t type_flag, std::string_view event, std::string_view key);

  // Blocking commands (XREAD/XREADGROUP BLOCK). block_request is non-null when this
  // execution may block (not inside MULTI or a script): a handler with nothing to return
  // calls block() instead of replying, with the arguments to re-run when a key it waits on
  // changes (e.g. XREAD's "$" resolved to the concrete last id). woken is true on such a
  // re-run; a handler that replies nothing again stays blocked. On timeout the client gets
  // a null reply.
  struct BlockRequest {
    bool requested = false;
    int64_t timeout_ms = 0;  // 0: forever
    std::vector<std::string> argv;
    // On a re-run: the written key that woke it. A client blocked on several lists is served
    // from the one that became ready (as on Redis), not the first non-empty one.
    std::string_view ready_key;
  };
  BlockRequest* block_request = nullptr;
  bool woken = false;
  bool can_block() const { return block_request != nullptr; }
  // The key whose write woke this re-run (empty when not woken or unknown).
  std::string_view ready_key() const {
    return woken && block_request != nullptr ? block_request->ready_key : std::string_view();
  }
  void block(int64_t timeout_ms, std::vector<std::string> rerun_argv) {
    block_request->requested = true;
    block_request->timeout_ms = timeout_ms;
    block_request->argv = std::move(rerun_argv);
  }

  // Shards whose logs received effects during a multi-shard command (only those are parked,
  // so only those may be touched when the records are closed).
  std::vector<size_t> logged_shards;
};

// Calls fn(Shard&) for every shard a whole-keyspace command (kAllShards) may see: all shards
// when they are parked for it, otherwise just the executing one (a single-shard server).
template <class F>
void for_each_visible_shard(CommandContext& ctx, F&& fn) {
  if (!ctx.multi_shard) {
    fn(ctx.shard);
    return;
  }
  for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
    fn(ctx.engine.shard(i));
  }
}

// While alive, the command works in database `db` (COPY ... DB, MOVE: the key they write
// lives in another database than the client's), so db(key), the log and notifications agree.
class ScopedDb {
 public:
  ScopedDb(CommandContext& ctx, uint32_t db) : ctx_(ctx), saved_(ctx.db_index) {
    ctx.db_index = db;
  }
  ~ScopedDb() { ctx_.db_index = saved_; }
  ScopedDb(const ScopedDb&) = delete;
  ScopedDb& operator=(const ScopedDb&) = delete;

 private:
  CommandContext& ctx_;
  uint32_t saved_;
};

}  // namespace hotkv
