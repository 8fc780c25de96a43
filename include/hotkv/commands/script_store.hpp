// The scripts the server knows (EVAL, SCRIPT LOAD) and the state of scripts running now.
// One store per engine, shared by every shard: a script loaded through any connection can be
// called by EVALSHA on any shard. Each shard compiles it into its own Lua state on first use
// (ScriptVm, made by the factory the scripting layer installs), so a running script never
// touches another thread's interpreter.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hotkv/commands/script_vm.hpp"

namespace hotkv {

// What the runs of a script (or function) so far showed about its keys, which decides how it
// is routed with several threads (docs/scripting.md, "Keys a script did not declare"):
// unknown: not run yet, runs with every shard parked and is watched; declared: it touched only
// its KEYS, runs on their shards; undeclared: it touched other keys (or needed every shard),
// always runs with every shard parked. Only ever moves unknown -> declared -> undeclared.
enum class KeyMode : uint8_t { kUnknown = 0, kDeclared = 1, kUndeclared = 2 };
using KeyModeCell = std::atomic<KeyMode>;

// A script body with what its shebang line (`#!lua flags=no-writes,...`) declared.
struct Script {
  std::string sha;     // lowercase hex SHA-1 of the body as sent
  std::string source;  // what the interpreter compiles (the shebang line blanked, lines kept)
  bool has_shebang = false;
  bool no_writes = false;
  bool allow_oom = false;  // may write while used memory is over maxmemory
  mutable KeyModeCell key_mode{KeyMode::kUnknown};
};

// Parses a body into a Script; on a bad shebang returns nullptr and sets `error`.
std::shared_ptr<const Script> parse_script(std::string_view body, std::string& error);

// A Redis 7 function library (FUNCTION LOAD): its code and the functions it registered.
struct LibraryFunction {
  std::string name;
  std::string description;  // register_function{description = ...}; FUNCTION LIST shows it
  bool has_description = false;
  bool no_writes = false;
  bool allow_oom = false;
  // Shared by the copies each shard's interpreter makes of the library.
  std::shared_ptr<KeyModeCell> key_mode = std::make_shared<KeyModeCell>(KeyMode::kUnknown);
};
struct Library {
  std::string name;
  std::string code;    // as loaded (shebang included), for FUNCTION LIST WITHCODE and the file
  std::string source;  // what the interpreter compiles (the shebang line blanked)
  std::vector<LibraryFunction> functions;
};

// Parses "#!lua name=<lib>" from a library's first line; nullptr and `error` if absent or bad.
std::shared_ptr<Library> parse_library(std::string_view code, std::string& error);

// Per shard: a script running past busy-reply-threshold, and requests to stop it. Written by
// the shard's thread, read and (kill) written by SCRIPT KILL from any thread.
struct ScriptSlot {
  std::atomic<bool> timed_out{false};
  std::atomic<bool> wrote{false};
  std::atomic<bool> kill{false};
  std::atomic<bool> function{false};  // the script is a function (FCALL): FUNCTION KILL ends it
};

class ScriptStore {
 public:
  explicit ScriptStore(size_t shards);
  ~ScriptStore();

  // Adds (or finds) the script; nullptr with `error` set for a bad shebang.
  std::shared_ptr<const Script> add(std::string_view body, std::string& error);
  std::shared_ptr<const Script> find(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every script; each shard drops its compiled copies on next use.
  void flush();
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t count() const;
  size_t memory_bytes() const;

  // --- function libraries ---
  // Adds a library whose functions `validated` lists (ScriptVm::register_library ran its code).
  // Fails (with Redis's error text) if it exists and !replace, or if one of its functions
  // belongs to another library.
  bool add_library(std::shared_ptr<Library> lib, bool replace, std::string& error);
  // FUNCTION RESTORE: adds `libs` (validated, as for add_library) all or nothing. kFlush
  // replaces every library; kAppend fails on a library name that exists; kReplace replaces
  // libraries of the same name. A function name owned by a library that stays fails all three.
  enum class RestorePolicy { kFlush, kAppend, kReplace };
  bool restore_libraries(std::vector<std::shared_ptr<Library>> libs, RestorePolicy policy,
                         std::string& error);
  bool delete_library(std::string_view name);
  void flush_libraries();
  // The library holding function `name`, and that function; nullptr if none.
  std::shared_ptr<const Library> find_function(std::string_view name,
                                               const LibraryFunction** fn) const;
  std::vector<std::shared_ptr<const Library>> libraries() const;
  uint64_t functions_generation() const {
    return functions_generation_.load(std::memory_order_acquire);
  }
  // Where libraries are kept across restarts ("" = in memory only). Every change rewrites
  // the file (write, fsync, rename); load reads it back at start-up.
  void set_functions_file(std::string path) { functions_file_ = std::move(path); }
  bool save_libraries(std::string& error) const;
  bool read_libraries_file(std::vector<std::string>& codes, std::string& error) const;

  // Makes a shard's interpreter; installed once, before any script runs (install_lua_scripts
  // in scripting/lua_vm.hpp).
  using VmFactory = std::function<std::unique_ptr<ScriptVm>(ScriptStore& store, size_t shard)>;
  void set_vm_factory(VmFactory factory) { vm_factory_ = std::move(factory); }
  // The shard's interpreter, created on first use. Only the shard's own thread may call this.
  ScriptVm& vm(size_t shard);
  // A private interpreter, to validate libraries outside any shard (start-up, RDB loading).
  std::unique_ptr<ScriptVm> make_vm() { return vm_factory_(*this, 0); }
  bool has_vm(size_t shard) const { return vms_[shard] != nullptr; }

  ScriptSlot& slot(size_t shard) { return *slots_[shard]; }
  // True while some script runs past busy-reply-threshold: other commands get -BUSY.
  bool busy() const { return busy_.load(std::memory_order_acquire) > 0; }
  // The script started on `shard` ran past the threshold; `function`: it is an FCALL (named
  // `name`, called by `command`, started at `started_ms`, for FUNCTION STATS).
  void mark_timed_out(size_t shard, bool function, std::string name = {},
                      std::vector<std::string> command = {}, int64_t started_ms = 0);
  // FUNCTION STATS's running_script: the busy function, if one is.
  struct RunningFunction {
    std::string name;
    std::vector<std::string> command;
    int64_t started_ms = 0;
  };
  bool running_function(RunningFunction& out) const;
  void clear_timed_out(size_t shard);
  // The -BUSY text (without '-') for the busy script: EVAL scripts name SCRIPT KILL,
  // functions FUNCTION KILL, as Redis does.
  std::string busy_error() const;
  static std::string busy_error(bool function);
  // SCRIPT KILL (function = false) or FUNCTION KILL (true): "OK", or the error text without
  // '-': NOTBUSY (nothing is busy), BUSY (the busy script is of the other kind), UNKILLABLE
  // (it has written). Sets `ok` when the kill was requested.
  std::string request_kill(bool& ok, bool function);

 private:
  // add_library and restore_libraries: `libs` merged under `policy` on copies of the maps,
  // swapped in only if every library and function fits; `load_texts`: FUNCTION LOAD's error
  // texts rather than RESTORE's.
  bool merge_libraries(std::vector<std::shared_ptr<Library>> libs, RestorePolicy policy,
                       bool load_texts, std::string& error);
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Script>, Hash, std::equal_to<>> scripts_;
  size_t bytes_ = 0;
  std::atomic<uint64_t> generation_{1};
  std::unordered_map<std::string, std::shared_ptr<const Library>, Hash, std::equal_to<>> libraries_;
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> function_owner_;
  std::atomic<uint64_t> functions_generation_{1};
  std::string functions_file_;
  VmFactory vm_factory_;
  std::vector<std::unique_ptr<ScriptVm>> vms_;
  std::vector<std::unique_ptr<ScriptSlot>> slots_;
  mutable std::mutex running_mutex_;
  std::vector<RunningFunction> running_;  // per shard, valid while its slot is timed out
  std::atomic<int> busy_{0};
};

}  // namespace hotkv
