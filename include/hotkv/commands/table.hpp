// The one command table. Every command is a single entry: name, arity, flags, where its keys
// are, its handler and its group, plus the syntax and summary that COMMAND DOCS and
// docs/commands.md show. Routing, COMMAND, auth checks and the docs page all read this table;
// there is no second list.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

namespace asio {
class io_context;
}  // namespace asio

namespace hotkv {

struct CommandContext;
class Engine;
class Config;
class ScriptStore;
class ScriptVm;
using Handler = void (*)(CommandContext&);
// Run by every Engine once its shards exist, for families whose state needs engine-side
// machinery (the inventory installs its hold expiry on each shard). Registered next to the
// family's commands, so there is still one place that lists what a family brings.
using EngineInit = void (*)(Engine&);
// Fills `out` with the argument indexes that are keys (for commands whose keys no
// first/last/step triple can describe).
using KeyFinder = void (*)(std::span<const std::string_view> argv, std::vector<size_t>& out);

enum CommandFlag : uint32_t {
  kWrite = 1u << 0,
  kReadOnly = 1u << 1,
  kDenyOom = 1u << 2,
  kAdmin = 1u << 3,
  kPubSub = 1u << 4,
  kNoScript = 1u << 5,
  kBlocking = 1u << 6,
  kLoading = 1u << 7,  // allowed while loading
  kStale = 1u << 8,
  kFast = 1u << 9,
  kNoAuth = 1u << 10,   // allowed before AUTH
  kNoMulti = 1u << 11,  // refused inside MULTI ("Command not allowed inside a transaction")
  // Served while a script runs past busy-reply-threshold (Redis's allow_busy): what can end the
  // script, or touches nothing but the connection. A container's subcommands that may are
  // CommandSpec::allow_busy_subcommands.
  kAllowBusy = 1u << 12,
  // Engine flags, not shown by COMMAND:
  kAllShards = 1u << 20,   // runs with every shard parked (whole-keyspace commands)
  kConnection = 1u << 21,  // needs the client's session; runs on the client's own thread
  // A blocking command whose woken re-run touches only the key that woke it (BLPOP, BLMPOP):
  // a client blocked on keys of several shards is served on that key's shard, in its turn.
  kServesReadyKey = 1u << 22,
  // Runs a script (EVAL, EVALSHA, FCALL and their _RO forms): one that kept to its KEYS so far
  // may have to run again with every shard (dispatch.hpp, take_rerun_request).
  kRunsScript = 1u << 23,
  // Runs at once inside MULTI instead of being queued (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
  kRunsInMulti = 1u << 24,
  // EXEC: ends a transaction by running the connection's queued commands.
  kExec = 1u << 25,
  // Its keys, each with the arguments after it up to the next key, may run as one call per
  // shard that all answer alike (MSET): a call over several shards runs split, without
  // parking a thread (split_run.hpp).
  kSplitsByKey = 1u << 26,
  // How a split call's parts make its reply (neither: every part answers alike, MSET):
  kSplitSums = 1u << 27,     // the parts' integers added up (DEL, UNLINK, EXISTS, TOUCH)
  kSplitGathers = 1u << 28,  // the parts' elements back in key order (MGET)
};

struct KeySpec {
  int first = 0;  // 0 = the command takes no keys
  int last = 0;   // negative counts from the end (-1 = last argument)
  int step = 0;
  KeyFinder finder = nullptr;
};

inline KeySpec no_keys() { return {}; }
inline KeySpec keys(int first, int last, int step) { return {first, last, step, nullptr}; }
inline KeySpec key_finder(int first, int last, int step, KeyFinder f) {
  return {first, last, step, f};
}

struct CommandSpec {
  std::string name;  // upper case, e.g. "GET"
  int arity;         // negative: at least -arity arguments (the name counts)
  uint32_t flags;
  KeySpec keys;
  Handler handler;
  std::string group;    // "string", "generic", "server", "connection", ...
  std::string syntax;   // e.g. "GET key"
  std::string summary;  // one line
  // Container commands (CLIENT, CONFIG, XINFO...): their subcommands in lower case. Each gets
  // statistics of its own (INFO commandstats and LATENCY HISTOGRAM name them "client|id", as
  // Redis 7 does); the entry and its handler stay one.
  std::vector<std::string> subcommands = {};
  size_t id = 0;         // index in the table, for per-command statistics
  size_t first_sub = 0;  // the statistics slot of subcommands[0] (Table::stat_slot)
  // Optional: true when this call reads or writes keys that no key position names (SORT's
  // BY/GET patterns build key names from the elements). Such a call runs with every shard.
  bool (*reaches_unnamed_keys)(std::span<const std::string_view> argv) = nullptr;
  // The subcommands (lower case) served while a script is busy, as kAllowBusy is for a whole
  // command (SCRIPT KILL, FUNCTION KILL and STATS).
  std::vector<std::string> allow_busy_subcommands = {};
};

// Whether this call may touch keys on any shard, not only its keys' shards: whole-keyspace
// commands (kAllShards) and calls that reach keys through patterns. The dispatcher, EXEC and
// scripts give such calls every shard.
inline bool needs_every_shard(const CommandSpec& spec, std::span<const std::string_view> argv) {
  return (spec.flags & kAllShards) != 0 ||
         (spec.reaches_unnamed_keys != nullptr && spec.reaches_unnamed_keys(argv));
}

class Table {
 public:
  // REQUIRES: name unique, handler non-null. Called at start-up only.
  void add(CommandSpec spec);
  // Case-insensitive lookup; nullptr if unknown. Thread-safe after start-up.
  const CommandSpec* find(std::string_view name) const;
  const std::vector<CommandSpec>& all() const { return commands_; }
  size_t size() const { return commands_.size(); }
  // Per-command statistics slots: one per command (its id), then one per subcommand.
  size_t stat_slots() const { return commands_.size() + subcommand_count_; }
  // The slot a call counts in: its subcommand's when argv[1] names one of spec's, else the
  // command's own (a command without subcommands, or an unknown subcommand).
  size_t stat_slot(const CommandSpec& spec, std::span<const std::string_view> argv) const;
  // The slot of spec.subcommands[i]. REQUIRES: i < spec.subcommands.size().
  size_t subcommand_slot(const CommandSpec& spec, size_t i) const {
    return commands_.size() + spec.first_sub + i;
  }
  // Called at start-up only, from a family's register function.
  void add_engine_init(EngineInit init) { engine_inits_.push_back(init); }
  const std::vector<EngineInit>& engine_inits() const { return engine_inits_; }

  // Appends the indexes of argv that are keys. Returns false if the declared key positions
  // do not fit the arguments (which arity checking normally prevents).
  static bool key_indexes(const CommandSpec& spec, std::span<const std::string_view> argv,
                          std::vector<size_t>& out);

 private:
  std::vector<CommandSpec> commands_;
  std::vector<EngineInit> engine_inits_;
  size_t subcommand_count_ = 0;
  // Transparent hashing so lookups by string_view do not allocate.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
    }
  };
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> index_;
};

// The table with every family registered (built once; immutable afterwards).
const Table& command_table();

// The engine over these io_contexts (one shard each) as the server runs it: per-command
// statistics sized for `table`, the script store with its interpreters made by `script_vms`
// (lua_vm_factory() in scripting/lua_vm.hpp: ScriptStore::VmFactory), and each family's
// engine-side machinery (Table::engine_inits: the inventory's hold expiry, the saved function
// libraries) installed.
std::unique_ptr<Engine> make_engine(
    Config& config, const Table& table, std::vector<asio::io_context*> contexts,
    std::function<std::unique_ptr<ScriptVm>(ScriptStore&, size_t)> script_vms);

// Renders docs/commands.md from the table.
std::string render_commands_markdown(const Table& table);

// Flag names as COMMAND INFO lists them.
std::vector<std::string> flag_names(uint32_t flags);

}  // namespace hotkv
