// One shard's Lua interpreter (LuaJIT, Lua 5.1 semantics as in Redis). Scripts run on the
// thread that owns their keys, inside the command that called them, so they are atomic like
// any command: single-shard scripts on their shard, multi-shard ones with every shard of
// their declared KEYS parked. The sandbox has base/table/string/math/bit/cjson and the
// `redis` table; no os, io, require, loadfile, dofile, ffi or jit, and globals are read-only.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/script_vm.hpp"

struct lua_State;
struct lua_Debug;

namespace hotkv {

class ScriptUndo;

// The script store's interpreters: what make_engine is given by whoever builds an engine
// (the server, the tests).
ScriptStore::VmFactory lua_vm_factory();

class LuaVm final : public ScriptVm {
 public:
  LuaVm(ScriptStore& store, size_t shard);
  ~LuaVm() override;
  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;

  // Runs `script` with KEYS = keys and ARGV = args for the command in `ctx` (EVAL, EVALSHA,
  // their _RO forms), writing the script's result or error into ctx.reply. `read_only`: only
  // commands without the write flag may be called.
  // `key_mode` (the script's) learns from the run whether it stayed within its KEYS.
  void run(CommandContext& ctx, const std::shared_ptr<const Script>& script,
           std::span<const std::string_view> keys, std::span<const std::string_view> args,
           bool read_only, KeyModeCell* key_mode) override;
  // The script with this id if this interpreter has run it since the last SCRIPT FLUSH
  // (EVALSHA's fast path: no shared lock, no allocation).
  std::shared_ptr<const Script> cached_script(std::string_view sha) override;

  // FCALL/FCALL_RO: runs `fn` of `lib` with its KEYS and ARGV as arguments.
  void call_function(CommandContext& ctx, const Library& lib, const LibraryFunction& fn,
                     std::span<const std::string_view> keys, std::span<const std::string_view> args,
                     bool read_only, KeyModeCell* key_mode) override;
  // Runs a library's code, collecting what it registers with redis.register_function into
  // lib.functions. With `keep` the functions become callable here. False with `error` set if
  // the code fails or registers nothing valid.
  bool register_library(Library& lib, bool keep, std::string& error) override;
  // Set while a library's code runs (redis.register_function is only allowed then).
  Library* registering() { return registering_; }

  // Bytes the interpreter holds (INFO used_memory_lua).
  size_t memory_bytes() const { return allocated_; }

  // Upper bound on the interpreter's memory; an allocation beyond it fails the script with
  // "not enough memory" instead of growing the server without bound.
  static constexpr size_t kMemoryLimit = size_t{512} << 20;

  // --- used by the redis.* functions (lua_redis_api.cpp) ---
  struct Call;  // the script being run: its context, flags and what it has done so far
  Call* current() { return current_; }
  // Buffers every redis.call reuses, so a warm interpreter allocates nothing per call.
  struct Scratch {
    std::vector<std::string_view> argv;
    std::vector<std::string> numbers;  // numeric arguments formatted as strings
    std::vector<size_t> key_indexes;
    std::string reply;                 // the command's reply before it becomes a Lua value
  };
  Scratch& scratch() { return scratch_; }
  // Table::find with a small cache: a script names the same few commands over and over.
  const struct CommandSpec* lookup_command(const class Table& table, std::string_view name);
  lua_State* state() { return L_; }
  size_t shard() const { return shard_; }
  ScriptStore& store() { return store_; }
  // Checks the running script at every line from now on (a run being stopped).
  static void check_every_line(lua_State* L);

 private:
  static void* allocate(void* ud, void* ptr, size_t old_size, size_t new_size);
  static void hook(lua_State* L, lua_Debug* ar);
  static int message_handler(lua_State* L);
  void open_sandbox();
  // Pushes the compiled function of `script` (compiling it if needed); false with an error
  // reply written if it does not compile.
  bool push_function(CommandContext& ctx, const std::shared_ptr<const Script>& script);
  void check_generation();
  // Runs the function on the stack (above the message handler, with `nargs` arguments) and
  // writes its result or error; `label` names it in errors (sha or function name).
  void invoke(CommandContext& ctx, int nargs, std::span<const std::string_view> keys,
              bool read_only, const std::string& label, const char* chunk,
              const std::string& source, KeyModeCell* key_mode);
  // Makes this state's functions match the store's libraries.
  bool refresh_functions(std::string& error);

  ScriptStore& store_;
  size_t shard_;
  lua_State* L_ = nullptr;
  size_t allocated_ = 0;
  uint64_t generation_ = 0;
  struct CachedScript {
    std::shared_ptr<const Script> script;
    int ref;  // the compiled function in the registry
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, CachedScript, Hash, std::equal_to<>> cache_;
  uint64_t functions_generation_ = 0;
  Library* registering_ = nullptr;
  int64_t load_started_ms_ = 0;
  Call* current_ = nullptr;
  Scratch scratch_;
  std::unique_ptr<ScriptUndo> undo_;  // the running script's journal (buffers reused)
  struct CommandCacheEntry {
    std::string name;  // as the script spelled it
    const struct CommandSpec* spec = nullptr;
  };
  std::array<CommandCacheEntry, 16> command_cache_;
  bool legacy_script_ = false;  // the script invoke() is about to run has no shebang
};

// What a running script is doing (lua_redis_api.cpp reads and updates it).
struct LuaVm::Call {
  CommandContext* ctx = nullptr;
  const char* chunk = "@user_script";  // the chunk name errors are located in
  const std::string* label = nullptr;  // the script's sha or the function's name
  bool read_only = false;
  int resp = 2;                      // redis.setresp
  bool wrote = false;                // a write command succeeded: SCRIPT KILL refuses
  // A script without flags: under maxmemory its first denyoom command gets -OOM if memory was
  // out when it started (scripts with flags were judged before they ran).
  bool oom_on_first_write = false;
  std::vector<size_t> allowed;       // shards whose keys may be touched (sorted): those held
  std::span<const std::string_view> keys;  // the declared KEYS
  bool undeclared = false;                 // touched a key not in KEYS, or needed every shard
  // Holding fewer than every shard, the run keeps what it overwrites (null otherwise);
  // `rerun` set: it reached beyond what it holds, and is being stopped to be undone.
  ScriptUndo* undo = nullptr;
  bool rerun = false;
  std::vector<size_t> logged;        // shards whose log records hold this script's effects
  int64_t started_ms = 0;            // monotonic, for the threshold
  int64_t started_unix_ms = 0;       // wall clock, for FUNCTION STATS
  int error_line = -1;               // where the error that ended the script was raised

};

// The field of an error table that says its error was already counted (lua_redis_api.cpp).
inline constexpr const char* kErrorCountedField = "ignore_error_stats_update";

// Installs the `redis` table scripts and functions see into L (lua_redis_api.cpp).
void open_redis_api(lua_State* L, LuaVm& vm);
// Pushes the `redis` table a library's top level sees at FUNCTION LOAD: register_function,
// log, LOG_* and the version (lua_sandbox.hpp, install_load_environment).
void push_load_redis_api(lua_State* L, LuaVm& vm);
// Writes the Lua value at `index` as a reply (Redis's Lua-to-RESP rules); false if it is
// nested too deeply (the caller replies an error instead). Booleans follow the script's own
// protocol (redis.setresp): true/false with 3, else 1/null, whatever the client speaks.
bool write_lua_value(lua_State* L, int index, class ReplyWriter& w, bool script_resp3,
                     int depth = 0);
// Pushes the reply in `resp` (one complete RESP value) as a Lua value (RESP-to-Lua rules).
// Returns false if it is malformed. An error reply becomes {err=...}; `is_error` tells.
bool push_reply(lua_State* L, std::string_view resp, bool& is_error);

}  // namespace hotkv
