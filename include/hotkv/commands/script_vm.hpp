// What the command families need of a shard's script interpreter (EVAL, EVALSHA, FCALL,
// FUNCTION LOAD/RESTORE, the function libraries read at start-up). The interpreter itself
// (scripting/lua_vm.hpp, a layer above: it runs redis.call through execute_command) installs
// a factory in the script store (install_lua_scripts), so commands never include it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace hotkv {

struct CommandContext;
enum class KeyMode : uint8_t;
using KeyModeCell = std::atomic<KeyMode>;
struct Library;
struct LibraryFunction;
struct Script;

class ScriptVm {
 public:
  virtual ~ScriptVm() = default;

  // Runs `script` with KEYS = keys and ARGV = args for the command in `ctx` (EVAL, EVALSHA,
  // their _RO forms), writing the script's result or error into ctx.reply. `read_only`: only
  // commands without the write flag may be called. `key_mode` (the script's) learns from the
  // run whether it stayed within its KEYS.
  virtual void run(CommandContext& ctx, const std::shared_ptr<const Script>& script,
                   std::span<const std::string_view> keys, std::span<const std::string_view> args,
                   bool read_only, KeyModeCell* key_mode) = 0;
  // The script with this id if this interpreter has run it since the last SCRIPT FLUSH
  // (EVALSHA's fast path: no shared lock, no allocation).
  virtual std::shared_ptr<const Script> cached_script(std::string_view sha) = 0;
  // FCALL/FCALL_RO: runs `fn` of `lib` with its KEYS and ARGV as arguments.
  virtual void call_function(CommandContext& ctx, const Library& lib, const LibraryFunction& fn,
                             std::span<const std::string_view> keys,
                             std::span<const std::string_view> args, bool read_only,
                             KeyModeCell* key_mode) = 0;
  // Runs a library's code, collecting what it registers with redis.register_function into
  // lib.functions. With `keep` the functions become callable here. False with `error` set if
  // the code fails or registers nothing valid.
  virtual bool register_library(Library& lib, bool keep, std::string& error) = 0;
};

}  // namespace hotkv
