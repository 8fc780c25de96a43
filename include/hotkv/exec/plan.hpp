// A command's plan, computed once when it arrives: its keys (each with its position, hash slot
// and shard), its database, the shards it touches and how it runs. Everything that asks "where
// does this run?" reads the plan: the checks (ACL keys, a busy script's shards), the
// connection's pipeline and its atomic and split runs, blocking, the sold-out shortcut, the
// replica link, EXEC and the test server. Nothing else maps a command to shards; the shard
// layer only says where one key lives (Engine::shard_of).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

// How the command runs, seen from the caller's shard (`Plan::home`).
enum class RunMode : uint8_t {
  kLocal,   // here: its keys all live on home, or it names none
  kHop,     // on one other shard (`Plan::shard`), the keys all living there
  kAtomic,  // over `Plan::shards` (keys on several, or the whole keyspace), none observed half-run
};

struct Plan {
  const CommandSpec* spec = nullptr;
  uint32_t db = 0;
  size_t home = 0;
  RunMode mode = RunMode::kLocal;
  // Where a kLocal or kHop command runs (home for kLocal).
  size_t shard = 0;
  // The shards it touches, sorted, without repeats: its keys' shards, or every shard for a
  // whole-keyspace command. Empty for a command that names no key.
  std::vector<size_t> shards;
  // Its keys, one entry per key position in argv, in order (three arrays of one length, so
  // that each can be handed on as a span: the ACL check takes the positions, a split run the
  // shards).
  std::vector<size_t> key_indexes;
  // Redis Cluster's hash slot of each key; left empty with one shard, where every key lives
  // on it and hashing would only cost (until cluster mode needs the slots there too).
  std::vector<int> key_slots;
  std::vector<size_t> key_shards;
  // Names keys and only touches them (not a connection command): may run in its shard's part
  // of a squashed pipeline.
  bool keyed = false;
  // Needs every shard: FLUSHALL, KEYS, ..., or a script that reaches (or may reach) keys it
  // did not declare (script_helpers.hpp).
  bool every_shard = false;
  // A connection command (SELECT, CLIENT, ...): runs on the client's own thread.
  bool session_only = false;
  // May block the client (BLPOP, XREAD BLOCK, ...).
  bool blocking = false;
  // kAtomic over keys on several shards and a command that runs as one call per shard
  // (SplitRun): no shard is parked for it.
  bool splits = false;
};

// Plans `argv` (checked for arity already) for a client on shard `home` using database `db`.
// `plan` keeps its vectors' capacity from one command to the next.
void plan_command(const CommandSpec& spec, std::span<const std::string_view> argv, Engine& engine,
                  size_t home, uint32_t db, Plan& plan);

// The same plan seen from another home (the connection moved to another thread between the
// checks and the run): only the mode and the target change.
void plan_from(size_t home, Plan& plan);

// A transaction's plan at EXEC: the union of its commands' shards and how it runs.
struct TransactionPlan {
  // kLocal: every key here (or none); kHop: all on one other shard (`shard`); kAtomic: over
  // `shards`, as one part per shard when `splits`, else with them parked.
  RunMode mode = RunMode::kLocal;
  size_t shard = 0;
  // The shards it touches (every shard for a whole-keyspace command or a script).
  std::vector<size_t> shards;
  // A queued connection command (SELECT, ...) needs the client's own thread.
  bool needs_home = false;
  // Runs as one part per shard (SplitRun), no thread parked: each command keeps to one shard
  // (or names no key), nothing is WATCHed (checked at one instant, which parts lack) and no
  // keyspace events are wanted (split_run.hpp).
  bool splits = false;
  // Each command's one shard (home when it names no key); complete only when `splits`.
  std::vector<size_t> command_shard;
};

void plan_transaction(std::span<const QueuedCommand> queue, Engine& engine, size_t home,
                      bool watching, TransactionPlan& plan);

}  // namespace hotkv
