// Effects as Redis commands: what a stock redis-server needs to receive to reach the state a
// logged effect gives HotKV. The log holds effects (final values, absolute deadlines), not the
// commands clients typed, so each effect maps to commands that are deterministic on any server:
// a put is SET ... PXAT, an INCR is the SET of the value it produced, a ZINCRBY is the ZADD of
// the final score, an SPOP is the SREM of the members it drew. This is the stream a replica
// follows and what `hotkv-check-aof --resp` prints; docs/replication.md has the table.
//
// Each op family gives its translation beside its op (EffectOp::to_commands). Inventory ops have no Redis
// equivalent and become the internal HOTKV.EFFECT command (kEffectApplyCommand), which a HotKV
// replica applies through the same registry replay uses and a redis-server refuses.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/persist/record.hpp"

namespace hotkv {

// The internal command carrying an effect a Redis command cannot express:
// HOTKV.EFFECT <key> <op code> <arg>... (the op's logged arguments, unchanged).
inline constexpr std::string_view kEffectApplyCommand = "HOTKV.EFFECT";

// One command as its argument vector (argv[0] is the command name).
using CommandArgv = std::vector<std::string>;

// Collects the commands effects translate to. Single-threaded.
class CommandSink {
 public:
  // Starts a new command named `name`; arg() appends to it.
  CommandSink& begin(std::string_view name) {
    commands_.emplace_back().emplace_back(name);
    return *this;
  }
  CommandSink& arg(std::string_view a) {
    commands_.back().emplace_back(a);
    return *this;
  }
  CommandSink& arg(int64_t v) { return arg(std::string_view(std::to_string(v))); }
  // Appends every one of `args`.
  template <class Range>
  CommandSink& args(const Range& args) {
    for (const auto& a : args) {
      arg(std::string_view(a));
    }
    return *this;
  }
  std::vector<CommandArgv>& commands() { return commands_; }
  const std::vector<CommandArgv>& commands() const { return commands_; }

 private:
  std::vector<CommandArgv> commands_;
};

// The commands for one effect, without any SELECT (the caller places them in e.db). kFlush
// gives FLUSHDB, kSwapDb SWAPDB. Returns false with `error` set for an unknown op code or
// malformed arguments (nothing is appended then). Any thread.
bool effect_to_commands(const Effect& e, CommandSink& out, std::string& error);
// HOTKV.EFFECT <key> <op> <args...> for `e` (a kOp effect). Any thread.
void internal_effect_command(const Effect& e, CommandSink& out);

// What the receiving connection has selected, kept by the caller from one operation to the
// next so SELECT is sent only when the database changes. -1: unknown (the first command that
// needs a database sends SELECT).
struct CommandStreamState {
  int64_t db = -1;
};

// Translates one operation: a single-shard record, or every part of one cross-shard operation
// (the records sharing its txn_id, one per shard, in any order). Appends its commands, with a
// SELECT before any that needs another database than the one selected, and wrapped in
// MULTI/EXEC when the operation gives more than one command, so a replica applies it
// atomically as HotKV did. Whole-database effects (flush, swapdb), which every part of a
// cross-shard operation repeats for its own keys, are sent once. Returns false with `error`
// set if an effect cannot be translated; `out` and `state` are then unchanged. Any thread.
bool operation_to_commands(std::span<const Record* const> parts, CommandStreamState& state,
                           std::vector<CommandArgv>& out, std::string& error);

// Appends `argv` as a RESP array of bulk strings (what a client sends). Any thread.
void append_resp_command(const CommandArgv& argv, std::string& out);

// operation_to_commands, RESP-encoded onto `out`.
bool operation_to_resp(std::span<const Record* const> parts, CommandStreamState& state,
                       std::string& out, std::string& error);

// Orders the records of the shard logs of one segment (shards[i]: shard i's records, in file
// order) into operations a single command stream can apply: each shard's records stay in
// order, and a cross-shard operation is handed over once, when every shard holding a part has
// reached it, so nothing a shard logged after it is sent before it and nothing before it after.
// `emit` gets each operation's records (one, or every part). Returns how many records were
// left over: the parts of a cross-shard operation that a crash left incomplete and everything
// each shard logged after it (replay drops them too).
size_t merge_shard_logs(std::span<const std::vector<Record>> shards,
                        const std::function<void(std::span<const Record* const>)>& emit);

}  // namespace hotkv
