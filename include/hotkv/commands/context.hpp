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

#include "hotkv/commands/errors.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/engine.hpp"

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

  size_t argc() const { return argv.size(); }
  std::string_view arg(size_t i) const { return argv[i]; }

  Keyspace& db(std::string_view key) {
    if (!multi_shard) {
      return shard.keyspace();
    }
    return engine.shard(engine.shard_of(key)).keyspace();
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
  // The key's deadline is now at_ms (kNoExpiry: it has none).
  void log_expire(std::string_view key, int64_t at_ms);
  // Every key of `s` is gone (FLUSHALL logs this on each shard).
  void log_flush(Shard& s);
  // Shards whose logs received effects during a multi-shard command (only those are parked,
  // so only those may be touched when the records are closed).
  std::vector<size_t> logged_shards;
};

}  // namespace hotkv
