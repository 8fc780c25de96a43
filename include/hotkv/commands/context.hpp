// What a command handler sees: its arguments, the reply writer, the shard(s) it runs on, the
// clock reading for this command, and (for connection commands only) the client's session.
// Handlers run on the thread that owns their keys, or inside run_atomic with every involved
// shard parked; db(key) returns the right keyspace in both cases.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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
};

}  // namespace hotkv
